//! Validation: raw TOML structs → [`Scene`].
//!
//! Warnings (the scene still loads; each is listed in [`Scene::warnings`]):
//! * **time step vs. size**: `dt > 0.1·sqrt(r_min/|g|)` where `r_min` is the smallest body
//!   radius — a body falls a noticeable part of its radius within a few steps;
//! * **time step vs. speed**: the fastest initial body speed `v` gives `v·dt > 0.2·r_min`;
//! * **outside containers**: when the scene has container boundaries, bodies whose centre is
//!   outside every container (an open top extends a container upwards without limit);
//! * **below a plane**: bodies whose centre is on the solid side of a plane;
//! * **high friction**: a material with `μ > 2`;
//! * **unphysical inertia**: explicit principal moments that violate the triangle
//!   inequality (`Ixx + Iyy ≥ Izz` and permutations).

use std::collections::HashMap;
use std::f64::consts::PI;
use std::ops::Range;
use std::path::{Path, PathBuf};

use glam::{DQuat, DVec3};
use toml::de::DeTable;

use bristlecone_cpu::shapes;
use bristlecone_model::keys::{KeyError, Problem};

use super::gap;
use super::generate::{self, FillTarget, Obstacles, RadiusDist, Region, SphereGrid, MAX_GENERATED};
use super::mesh::load_mesh;
use super::num::Num;
use super::precision::Driver;
use super::raw::*;

mod cylinder;
mod flow;
mod friction;
use super::span::{self, PathIndex, Source};
use super::*;
use bristlecone_model::defaults;
use bristlecone_model::rows::Cone;

type R<T> = Result<T, SceneError>;

/// Names of the fields that are present in a raw table, with their spans.
macro_rules! present {
    ($r:expr; $($f:ident),* $(,)?) => {
        [$((stringify!($f), $r.$f.as_ref().map(|s| s.span()))),*]
    };
}

struct Cx<'a> {
    file: &'a Path,
    /// The shape families a `[[body]]`'s `shape` may name and the friction models a
    /// material's `model.kind` may name.
    registries: Registries<'a>,
    src: Source<'a>,
    warnings: Vec<String>,
}

impl Cx<'_> {
    /// A fixed body or boundary (`what`) must not be given a velocity.
    fn at_rest(
        &self,
        velocity: &O<[f64; 3]>,
        angular_velocity: &O<[f64; 3]>,
        base: &str,
        what: &str,
    ) -> Result<(), SceneError> {
        for (v, name) in [
            (velocity, "velocity"),
            (angular_velocity, "angular_velocity"),
        ] {
            if let Some(v) = v {
                if v.get_ref().iter().any(|&x| x != 0.0) {
                    return Err(self.err(
                        Some(v.span()),
                        format!("{base}.{name}"),
                        format!("a fixed {what} cannot move (use motion = \"kinematic\" for prescribed motion)"),
                    ));
                }
            }
        }
        Ok(())
    }

    fn err(
        &self,
        span: Option<Range<usize>>,
        field: impl Into<String>,
        msg: impl Into<String>,
    ) -> SceneError {
        span::error_at(self.file, &self.src, span, field, msg)
    }

    fn line(&self, span: &Range<usize>) -> usize {
        self.src.line_col(span.start).0
    }

    fn warn(&mut self, span: Option<Range<usize>>, field: &str, msg: impl AsRef<str>) {
        let loc = match span {
            Some(s) => format!("{}:{}", self.file.display(), self.line(&s)),
            None => self.file.display().to_string(),
        };
        self.warnings
            .push(format!("{loc}: {field}: {}", msg.as_ref()));
    }

    fn toml_err(&self, e: &toml::de::Error, index: Option<&PathIndex>, syntax: bool) -> SceneError {
        let (span, field, msg) = span::toml_error_field(e, index);
        let msg = if syntax {
            format!("TOML syntax error: {msg}")
        } else {
            msg
        };
        self.err(span, field, msg)
    }

    fn positive(&self, v: &S<f64>, path: &str) -> R<f64> {
        let x = *v.get_ref();
        if x > 0.0 {
            Ok(x)
        } else {
            Err(self.err(
                Some(v.span()),
                path,
                format!("must be positive (got {})", Num(x)),
            ))
        }
    }

    fn non_negative(&self, v: &S<f64>, path: &str) -> R<f64> {
        let x = *v.get_ref();
        if x >= 0.0 {
            Ok(x)
        } else {
            Err(self.err(
                Some(v.span()),
                path,
                format!("must be non-negative (got {})", Num(x)),
            ))
        }
    }

    fn opt_positive(&self, v: &O<f64>, path: &str, default: f64) -> R<f64> {
        v.as_ref().map_or(Ok(default), |v| self.positive(v, path))
    }

    fn opt_non_negative(&self, v: &O<f64>, path: &str, default: f64) -> R<f64> {
        v.as_ref()
            .map_or(Ok(default), |v| self.non_negative(v, path))
    }

    /// An integer in `min..=max`.
    fn int_range(&self, v: &S<i64>, path: &str, min: i64, max: i64) -> R<u64> {
        let x = *v.get_ref();
        if x < min {
            let what = if min == 1 {
                "must be positive"
            } else {
                "must be non-negative"
            };
            return Err(self.err(Some(v.span()), path, format!("{what} (got {x})")));
        }
        if x > max {
            return Err(self.err(
                Some(v.span()),
                path,
                format!("must be at most {max} (got {x})"),
            ));
        }
        Ok(x as u64)
    }

    fn opt_int(&self, v: &O<i64>, path: &str, min: i64, max: i64, default: u64) -> R<u64> {
        v.as_ref()
            .map_or(Ok(default), |v| self.int_range(v, path, min, max))
    }

    /// Rejects fields that do not apply to `kind`.
    fn only(
        &self,
        base: &str,
        what: &str,
        kind: &str,
        present: &[(&str, Option<Range<usize>>)],
        allowed: &[&str],
    ) -> R<()> {
        for (name, span) in present {
            if let Some(span) = span {
                if !allowed.contains(name) {
                    return Err(self.err(
                        Some(span.clone()),
                        format!("{base}.{name}"),
                        format!("`{name}` does not apply to {what} `{kind}`"),
                    ));
                }
            }
        }
        Ok(())
    }

    fn require<'v, T>(
        &self,
        v: &'v O<T>,
        table: &Range<usize>,
        base: &str,
        name: &str,
        what: &str,
        kind: &str,
    ) -> R<&'v S<T>> {
        v.as_ref().ok_or_else(|| {
            self.err(
                Some(table.clone()),
                format!("{base}.{name}"),
                format!("missing field `{name}` (required for {what} `{kind}`)"),
            )
        })
    }

    fn orientation(&self, q: &O<[f64; 4]>, path: &str) -> R<[f64; 4]> {
        let Some(q) = q else {
            return Ok([0.0, 0.0, 0.0, 1.0]);
        };
        let v = *q.get_ref();
        let n = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        if n.is_nan() || n <= 1e-12 {
            return Err(self.err(
                Some(q.span()),
                path,
                "orientation is a zero quaternion; give a unit quaternion [x, y, z, w]",
            ));
        }
        if (n - 1.0).abs() > 1e-3 {
            return Err(self.err(
                Some(q.span()),
                path,
                format!("orientation is not a unit quaternion (|q| = {}); give a unit quaternion [x, y, z, w]", Num(n)),
            ));
        }
        Ok(v.map(|x| x / n))
    }

    /// A non-zero direction, normalized.
    fn direction(&self, v: &S<[f64; 3]>, path: &str, what: &str) -> R<DVec3> {
        let d = DVec3::from_array(*v.get_ref());
        let n = d.length();
        if n.is_nan() || n <= 1e-12 || !n.is_finite() {
            return Err(self.err(Some(v.span()), path, format!("zero-length {what}")));
        }
        Ok(d / n)
    }

    fn motion(&self, m: &O<String>, path: &str, default: Motion) -> R<Motion> {
        let Some(m) = m else { return Ok(default) };
        match m.get_ref().as_str() {
            "dynamic" => Ok(Motion::Dynamic),
            "kinematic" => Ok(Motion::Kinematic),
            "fixed" => Ok(Motion::Fixed),
            other => Err(self.err(
                Some(m.span()),
                path,
                format!("unknown motion `{other}` (expected one of: dynamic, kinematic, fixed)"),
            )),
        }
    }

    fn material(
        &self,
        m: &O<String>,
        table: &Range<usize>,
        base: &str,
        materials: &[Material],
    ) -> R<usize> {
        let path = format!("{base}.material");
        match m {
            Some(name) => materials
                .iter()
                .position(|mat| mat.name == *name.get_ref())
                .ok_or_else(|| {
                    let known: Vec<&str> = materials.iter().map(|m| m.name.as_str()).collect();
                    self.err(
                        Some(name.span()),
                        path,
                        format!(
                            "unknown material `{}` (defined: {})",
                            name.get_ref(),
                            if known.is_empty() {
                                "none".to_string()
                            } else {
                                known.join(", ")
                            }
                        ),
                    )
                }),
            None if materials.len() == 1 => Ok(0),
            None if materials.is_empty() => Err(self.err(
                Some(table.clone()),
                path,
                "no materials defined: add a [[material]] table",
            )),
            None => Err(self.err(
                Some(table.clone()),
                path,
                "missing field `material` (required when the scene defines more than one material)",
            )),
        }
    }
}

fn vel(v: &O<[f64; 3]>) -> [f64; 3] {
    v.as_ref().map_or([0.0; 3], |v| *v.get_ref())
}

/// Whether the GPU can hold a body of this mass and inertia: it stores the mass, the inertia
/// and their inverses as `f32`, each of which must be a normal number (a grain far below a
/// micrometre, or of a near-zero density, gives an infinite inverse).
fn mass_fits_gpu(mass: f64, inertia: [f64; 3]) -> bool {
    std::iter::once(mass)
        .chain(inertia)
        .all(|x| x > 0.0 && super::num::fits_f32(x) && super::num::fits_f32(1.0 / x))
}

/// Water's density: a body whose shape fits the GPU at it but not at its own material's
/// density has that density to blame.
const REFERENCE_DENSITY: f64 = 1000.0;

/// The refusal of a body or grain whose mass or inertia the GPU cannot hold, at the field to
/// blame: its material's `density` when the same shape at [`REFERENCE_DENSITY`] would fit,
/// else its size (`size`: span and path of the size field).
fn mass_refusal(
    cx: &Cx<'_>,
    density: Option<&S<f64>>,
    material: usize,
    shape: &BodyShape,
    (mass, inertia): (f64, [f64; 3]),
    (span, field): (Range<usize>, String),
) -> SceneError {
    let why = format!(
        "the GPU holds mass, inertia and their inverses as f32, which needs each within \
         {:e}..{:e}",
        f32::MIN_POSITIVE,
        f32::MAX
    );
    let (m, i) = (Num(mass), Num(inertia.into_iter().fold(0.0, f64::max)));
    if let Some(density) = density {
        if mass_fits_gpu_pair(shape.mass_properties(REFERENCE_DENSITY)) {
            return cx.err(
                Some(density.span()),
                format!("material[{material}].density"),
                format!(
                    "density = {} kg/m³ gives a body mass {m} kg and inertia {i} kg·m²: {why}",
                    Num(*density.get_ref())
                ),
            );
        }
    }
    cx.err(
        Some(span),
        field,
        format!("mass {m} kg and inertia {i} kg·m² ({shape:?}): {why}"),
    )
}

fn mass_fits_gpu_pair((mass, inertia): (f64, [f64; 3])) -> bool {
    mass_fits_gpu(mass, inertia)
}

fn sphere_mass(density: f64, r: f64) -> (f64, [f64; 3]) {
    let m = density * 4.0 / 3.0 * PI * r * r * r;
    let i = 0.4 * m * r * r;
    (m, [i; 3])
}

/// Where a body came from, for messages.
struct Origin {
    label: String,
    span: Range<usize>,
    /// The `velocity` field that set the body's initial velocity (path, span), if any.
    velocity: Option<(String, Range<usize>)>,
}

pub(super) fn build(text: &str, file: &Path, scale: f64, registries: Registries<'_>) -> R<Scene> {
    let mut cx = Cx {
        file,
        registries,
        src: Source::new(text),
        warnings: Vec::new(),
    };
    let raw = parse(&cx, text)?;
    let Some(sim_raw) = &raw.simulation else {
        return Err(cx.err(
            None,
            "simulation",
            "missing [simulation] table (it needs `dt` and one of `steps` / `duration`)",
        ));
    };
    let (sim, name) = simulation(&cx, sim_raw, file)?;
    let (materials, other_model) = materials_section(&mut cx, &raw)?;
    let (mut bodies, mut origins) = bodies_section(&mut cx, &raw, &materials, sim.dt)?;
    no_overlap(&cx, &raw, &bodies, &origins)?;
    generators_section(&cx, &raw, &materials, scale, &mut bodies, &mut origins)?;
    if bodies.is_empty() && raw.inflow.is_empty() {
        return Err(cx.err(
            None,
            "body",
            "the scene has no bodies: add [[body]], [[generator]] or [[inflow]] tables",
        ));
    }
    let boundaries = boundaries_section(&cx, &raw, &materials, file, sim.dt)?;
    patch_needs_faces(&cx, &raw, &materials, &bodies)?;
    patch_grids_agree(&cx, &raw, &materials)?;
    let (inflows, outflows) = flow::flow_section(&cx, &raw, &materials, &boundaries, &sim, scale)?;
    let pool_radii = inflows.iter().flat_map(|f| f.pool.iter().map(|g| g.radius));
    let r_min = bodies
        .iter()
        .map(|b| b.shape.bounding_radius())
        .chain(pool_radii)
        .fold(f64::INFINITY, f64::min);
    let solver = solver_section(&cx, &raw, r_min)?;
    lemke_warning(&mut cx, &raw, &solver, bodies.len());
    lemke_refuses_models(&cx, &raw, &solver, &other_model)?;
    gauss_seidel_check(&cx, &raw, &solver)?;
    let output = output_section(&cx, &raw, sim.dt, sim.steps, &name)?;
    let measures = measures_section(
        &cx,
        &raw,
        sim.dt,
        output.frame_every,
        &boundaries,
        &materials,
    )?;
    flow::names_distinct(&cx, &raw, &measures)?;
    let dt_field = &sim_raw.get_ref().dt;
    let gravity_field = sim_raw.get_ref().gravity.as_ref().map(|g| g.span());
    first_step_check(
        &cx,
        dt_field,
        (sim.gravity, gravity_field),
        &bodies,
        &origins,
    )?;
    omega_warning(&mut cx, &raw, &solver);
    step_warnings(&mut cx, dt_field, sim.gravity, r_min, &bodies, &origins);
    container_warnings(&mut cx, &boundaries, &bodies, &origins);
    plane_warnings(&mut cx, &boundaries, &bodies, &origins);
    let run = (sim.dt, sim.steps);
    precision_check(&mut cx, &raw, (&bodies, &origins), &boundaries, r_min, run)?;
    let err = |s: Option<Range<usize>>, f: String, m: String| cx.err(s, f, m);
    let joints = super::joints::parse(&err, &raw.joint, &raw.body, &bodies, &boundaries)?;
    let line = |s: Range<usize>| cx.line(&s);
    // Where body i's position and size are set: a generated grain's region and radius.
    let generator_of = |i: usize| {
        let g = raw.generator.iter().find(|g| g.span() == origins[i].span);
        g.map(|g| g.get_ref())
    };
    let placed = |i: usize| {
        let span = generator_of(i).map_or(origins[i].span.clone(), |g| g.region.span());
        (origins[i].label.clone(), line(span))
    };
    let sized = |i: usize| {
        let span = generator_of(i).map_or(size_span(&raw, &origins, i).0, |g| g.radius.span());
        (origins[i].label.clone(), line(span))
    };
    let periodic_cx = super::periodic::Context {
        bodies: &bodies,
        placed: &placed,
        sized: &sized,
        line: &line,
        boundaries: &boundaries,
        raw_boundaries: &raw.boundary,
        solver: &solver,
    };
    let periodic = super::periodic::parse(&err, raw.periodic.as_ref(), &periodic_cx)?;
    Ok(Scene {
        name,
        sim,
        solver,
        materials,
        bodies,
        boundaries,
        measures,
        joints,
        periodic,
        inflows,
        outflows,
        output,
        warnings: cx.warnings,
    })
}

/// Syntax, then a pre-pass over every value (non-finite floats, beyond f32), then types.
fn parse(cx: &Cx<'_>, text: &str) -> R<RawScene> {
    let doc = match DeTable::parse(text) {
        Ok(doc) => doc,
        Err(e) => {
            let (partial, _) = DeTable::parse_recoverable(text);
            let index = PathIndex::new(partial.get_ref());
            return Err(cx.toml_err(&e, Some(&index), true));
        }
    };
    let index = PathIndex::new(doc.get_ref());
    if let Some((span, path, lit)) = index.non_finite.first() {
        return Err(cx.err(
            Some(span.clone()),
            path.clone(),
            format!("must be a finite number (got `{lit}`)"),
        ));
    }
    if let Some((span, path, x)) = index.beyond_f32.first() {
        return Err(cx.err(
            Some(span.clone()),
            path.clone(),
            format!(
                "{} is beyond the GPU's 32-bit floats (magnitudes from {:.1e} to {:.1e}, or 0)",
                Num(*x),
                f32::MIN_POSITIVE,
                f32::MAX
            ),
        ));
    }
    toml::from_str(text).map_err(|e| cx.toml_err(&e, Some(&index), false))
}

/// Most steps a `duration` may ask for: 2^53, past which `f64` no longer counts every step.
const MAX_DURATION_STEPS: f64 = 9_007_199_254_740_992.0;

/// Most solver sweeps per step and cone problem: the solver keeps a 16-byte record of every
/// sweep of each of up to 64 cone problems (`[solver] max_outer`) in one GPU storage
/// binding, which every adapter allows up to 128 MiB: 100 000 × 64 × 16 B ≈ 98 MiB.
const MAX_ITERATIONS: i64 = 100_000;

/// `[simulation]`: the settings and the scene's name.
fn simulation(cx: &Cx<'_>, sim: &S<RawSimulation>, file: &Path) -> R<(SimSettings, String)> {
    let sim_span = sim.span();
    let sim = sim.get_ref();
    let dt = cx.positive(&sim.dt, "simulation.dt")?;
    let steps = match (&sim.steps, &sim.duration) {
        (Some(_), Some(d)) => {
            return Err(cx.err(
                Some(d.span()),
                "simulation.duration",
                "give either `steps` or `duration`, not both",
            ))
        }
        (None, None) => {
            return Err(cx.err(
                Some(sim_span),
                "simulation.steps",
                "missing `steps` or `duration` (give exactly one)",
            ))
        }
        (Some(s), None) => cx.int_range(s, "simulation.steps", 1, i64::MAX)?,
        (None, Some(d)) => {
            let span = d.span();
            let d = cx.positive(d, "simulation.duration")?;
            let steps = (d / dt - 1e-9).ceil();
            if steps > MAX_DURATION_STEPS {
                return Err(cx.err(
                    Some(span),
                    "simulation.duration",
                    format!(
                        "{} s at dt = {} s is {} steps, more than {} (past 2^53 the step \
                         count and the time t = step·dt lose whole steps)",
                        Num(d),
                        Num(dt),
                        Num(steps),
                        Num(MAX_DURATION_STEPS)
                    ),
                ));
            }
            (steps as u64).max(1)
        }
    };
    let gravity = sim
        .gravity
        .as_ref()
        .map_or([0.0, 0.0, -9.81], |g| *g.get_ref());
    let name = match &sim.name {
        Some(n) if n.get_ref().trim().is_empty() => {
            return Err(cx.err(Some(n.span()), "simulation.name", "must not be empty"))
        }
        Some(n) => n.get_ref().clone(),
        None => file
            .file_stem()
            .and_then(|s| s.to_str())
            .filter(|s| !s.is_empty())
            .unwrap_or("scene")
            .to_string(),
    };
    Ok((SimSettings { dt, steps, gravity }, name))
}

/// The first non-Coulomb friction model: (kind, material index).
type OtherModel = Option<(String, usize)>;

/// `[[material]]`: the materials and the first non-Coulomb model.
fn materials_section(cx: &mut Cx<'_>, raw: &RawScene) -> R<(Vec<Material>, OtherModel)> {
    let mut materials: Vec<Material> = Vec::new();
    let mut material_lines: HashMap<String, usize> = HashMap::new();
    let mut other_model: Option<(String, usize)> = None;
    let mut compliant_form: Option<(&'static str, usize)> = None;
    for (i, m) in raw.material.iter().enumerate() {
        let base = format!("material[{i}]");
        let m = m.get_ref();
        let mname = m.name.get_ref().clone();
        if mname.trim().is_empty() {
            return Err(cx.err(
                Some(m.name.span()),
                format!("{base}.name"),
                "must not be empty",
            ));
        }
        if let Some(line) = material_lines.get(&mname) {
            return Err(cx.err(
                Some(m.name.span()),
                format!("{base}.name"),
                format!("duplicate material name `{mname}` (first defined on line {line})"),
            ));
        }
        material_lines.insert(mname.clone(), cx.line(&m.name.span()));
        let density = cx.positive(&m.density, &format!("{base}.density"))?;
        let friction = cx.non_negative(&m.friction, &format!("{base}.friction"))?;
        if friction > 2.0 {
            cx.warn(
                Some(m.friction.span()),
                &format!("{base}.friction"),
                format!(
                    "friction coefficient {} > 2 is unusually high",
                    Num(friction)
                ),
            );
        }
        let model = match &m.model {
            None => FrictionModel::Coulomb,
            Some(fm) => friction::friction_model(cx, fm, &format!("{base}.model"))?,
        };
        friction::lugre_static_check(cx, m, &model, friction, &base)?;
        // Any two materials may touch, and two different non-Coulomb models have no mixing
        // rule (src/model/rows): refused rather than resolved silently.
        if let (Some(fm), Some((kind0, i0))) = (&m.model, &other_model) {
            let kind = fm.get_ref().kind.get_ref();
            if *kind != "coulomb" && kind != kind0 {
                return Err(cx.err(
                    Some(fm.get_ref().kind.span()),
                    format!("{base}.model.kind"),
                    format!(
                        "friction model `{kind}` differs from material[{i0}]'s `{kind0}`: \
                         a scene may use one non-Coulomb model (there is no rule to mix two)"
                    ),
                ));
            }
        }
        if let (Some(fm), None) = (&m.model, &other_model) {
            let kind = fm.get_ref().kind.get_ref();
            if kind != "coulomb" {
                other_model = Some((kind.clone(), i));
            }
        }
        friction::parameter_set_check(cx, m, &model, &mut compliant_form, i, &base)?;
        let rolling_friction = resistance(cx, &m.rolling_friction, &base, "rolling_friction")?;
        let spinning_friction = resistance(cx, &m.spinning_friction, &base, "spinning_friction")?;
        let cohesion = cohesion_key(cx, &m.cohesion, &model, &format!("{base}.cohesion"))?;
        let adhesion_energy = cohesion_key(
            cx,
            &m.adhesion_energy,
            &model,
            &format!("{base}.adhesion_energy"),
        )?;
        materials.push(Material {
            name: mname,
            density,
            friction,
            model,
            rolling_friction,
            spinning_friction,
            cohesion,
            adhesion_energy,
        });
    }
    Ok((materials, other_model))
}

/// `[[material]] cohesion` (N) or `adhesion_energy` (J/m²), ≥ 0: the shifted normal cone
/// exists for the rigid Coulomb and Kelvin–Voigt rows only
/// (`bristlecone_model::rows::with_cohesion`), so another model refuses them.
fn cohesion_key(cx: &Cx, v: &O<f64>, model: &FrictionModel, field: &str) -> R<f64> {
    let Some(v) = v else {
        return Ok(0.0);
    };
    let force = cx.non_negative(v, field)?;
    let takes = model.takes_cohesion();
    if force > 0.0 && !takes {
        return Err(cx.err(
            Some(v.span()),
            field,
            "cohesion applies to coulomb and compliant (Kelvin–Voigt) materials only: this \
             model's rows have no shifted normal cone",
        ));
    }
    Ok(force)
}

/// `[[body]]`: the explicitly placed bodies and where each came from.
fn bodies_section(
    cx: &mut Cx<'_>,
    raw: &RawScene,
    materials: &[Material],
    dt: f64,
) -> R<(Vec<BodyDesc>, Vec<Origin>)> {
    let mut bodies: Vec<BodyDesc> = Vec::new();
    let mut origins: Vec<Origin> = Vec::new();
    for (i, b) in raw.body.iter().enumerate() {
        let (body, origin) = body(cx, b, i, (materials, &raw.material), dt)?;
        bodies.push(body);
        origins.push(origin);
    }
    Ok((bodies, origins))
}

/// One `[[body]]` table.
fn body(
    cx: &mut Cx<'_>,
    b: &S<RawBody>,
    i: usize,
    (materials, raw_materials): (&[Material], &[S<RawMaterial>]),
    dt: f64,
) -> R<(BodyDesc, Origin)> {
    let base = format!("body[{i}]");
    let span = b.span();
    let b = b.get_ref();
    let shape = body_shape(cx, b, &span, &base)?;
    let material = cx.material(&b.material, &span, &base, materials)?;
    let motion = cx.motion(&b.motion, &format!("{base}.motion"), Motion::Dynamic)?;
    let orientation = cx.orientation(&b.orientation, &format!("{base}.orientation"))?;
    let (position, orientation) =
        super::clumps::body_frame(&shape, *b.position.get_ref(), orientation);
    let velocity = vel(&b.velocity);
    let angular_velocity = vel(&b.angular_velocity);
    if motion == Motion::Fixed {
        cx.at_rest(&b.velocity, &b.angular_velocity, &base, "body")?;
    }
    let (m_default, i_default) = shape.mass_properties(materials[material].density);
    let mass = match &b.mass {
        Some(m) => cx.positive(m, &format!("{base}.mass"))?,
        None => m_default,
    };
    let inertia = match &b.inertia {
        Some(iv) => explicit_inertia(cx, iv, &base)?,
        // An explicit mass scales the shape's moments (uniform density).
        None => i_default.map(|i| i * (mass / m_default)),
    };
    if !mass.is_finite() || inertia.iter().any(|x| !x.is_finite()) {
        return Err(cx.err(
            Some(span),
            &*base,
            "mass or inertia overflows (radius or density too large)",
        ));
    }
    if motion == Motion::Dynamic && !mass_fits_gpu(mass, inertia) {
        let explicit = [
            ("mass", b.mass.as_ref().map(|v| v.span())),
            ("inertia", b.inertia.as_ref().map(|v| v.span())),
        ];
        // Too heavy: the largest size is to blame; too light: the smallest.
        let heavy = inertia.into_iter().fold(mass, f64::max) > 1.0;
        let scalar = |v: &O<f64>| v.as_ref().map(|v| (v.span(), *v.get_ref()));
        let extents = b.half_extents.as_ref().map(|v| {
            let x = v.get_ref();
            let pick = if heavy { f64::max } else { f64::min };
            (v.span(), x.iter().copied().fold(x[0], pick))
        });
        let mut scalars: Vec<(&str, (Range<usize>, f64))> = [
            ("radius", scalar(&b.radius)),
            ("half_extents", extents),
            ("half_length", scalar(&b.half_length)),
            ("height", scalar(&b.height)),
        ]
        .into_iter()
        .filter_map(|(name, v)| Some((name, v?)))
        .collect();
        scalars.sort_by(|a, b| a.1 .1.total_cmp(&b.1 .1));
        let blamed_size = if heavy {
            scalars.last()
        } else {
            scalars.first()
        };
        let lists = [
            ("spheres", b.spheres.as_ref().map(|v| v.span())),
            ("points", b.points.as_ref().map(|v| v.span())),
        ];
        let size = explicit
            .into_iter()
            .find_map(|(name, at)| Some((at?, name)))
            .or_else(|| blamed_size.map(|(name, (at, _))| (at.clone(), *name)))
            .or_else(|| lists.into_iter().find_map(|(name, at)| Some((at?, name))));
        let size = match size {
            Some((at, name)) => (at, format!("{base}.{name}")),
            None => (span, base.clone()),
        };
        // An explicit mass or inertia is used as given: the density plays no part.
        let explicit = b.mass.is_some() || b.inertia.is_some();
        let density = Some(&raw_materials[material].get_ref().density).filter(|_| !explicit);
        let mp = (mass, inertia);
        return Err(mass_refusal(cx, density, material, &shape, mp, size));
    }
    let label = match &b.name {
        Some(n) => format!("{base} (\"{}\")", n.get_ref()),
        None => base.clone(),
    };
    let origin = Origin {
        label,
        span: b.position.span(),
        velocity: b
            .velocity
            .as_ref()
            .map(|v| (format!("{base}.velocity"), v.span())),
    };
    let schedule = schedule(
        cx,
        &b.schedule,
        &base,
        motion,
        dt,
        (velocity, angular_velocity),
        true,
    )?;
    let body = BodyDesc {
        shape,
        position,
        orientation,
        velocity,
        angular_velocity,
        material,
        motion,
        mass,
        inertia,
        schedule,
    };
    Ok((body, origin))
}

/// The `shape` of a `[[body]]`: its family in the registry (the loader's `families`), the
/// keys the family takes, and its shape from them (clumps and hulls are read from their data
/// here).
fn body_shape(cx: &Cx<'_>, b: &RawBody, span: &Range<usize>, base: &str) -> R<BodyShape> {
    let kind = b.shape.as_ref().map_or("sphere", |s| s.get_ref().as_str());
    let fields = present!(b; radius, half_extents, half_length, height, file, spheres, points);
    let Some(family) = shapes::find(cx.registries.shapes, kind) else {
        let unknown = if kind == "mesh" {
            format!(
                "shape `mesh` is not supported yet for bodies (supported: {})",
                shapes::names(cx.registries.shapes)
            )
        } else {
            format!(
                "unknown shape kind `{kind}` (expected one of: {}, mesh)",
                shapes::names(cx.registries.shapes)
            )
        };
        return Err(cx.err(
            b.shape.as_ref().map(|s| s.span()),
            format!("{base}.shape"),
            unknown,
        ));
    };
    let keys = family.keys();
    if let Some(k) = keys.iter().find(|k| !fields.iter().any(|(f, _)| f == *k)) {
        return Err(cx.err(
            b.shape.as_ref().map(|s| s.span()),
            format!("{base}.shape"),
            format!("shape family `{kind}` takes the key `{k}`, which a `[[body]]` does not have"),
        ));
    }
    cx.only(base, "shape", kind, &fields, keys)
        .map_err(|mut e| {
            let list: Vec<String> = keys.iter().map(|k| format!("`{k}`")).collect();
            e.message
                .push_str(&format!(" (its keys: {})", list.join(", ")));
            e
        })?;
    if let Some(shape) = family.parse(b) {
        return shape.map_err(|e| {
            let sizes = present!(b; radius, half_extents, half_length, height);
            let at = sizes
                .into_iter()
                .find(|(f, _)| *f == e.key)
                .and_then(|(_, s)| s);
            key_error(cx, e, at, span, base, ("shape", kind))
        });
    }
    let err = |s: Option<Range<usize>>, f: String, m: String| cx.err(s, f, m);
    match kind {
        "clump" => {
            let list = cx.require(&b.spheres, span, base, "spheres", "shape", kind)?;
            super::clumps::clump_shape(&err, list, base)
        }
        "convex" => super::convex::convex_shape(cx.file, &err, b, span.clone(), base),
        _ => Err(cx.err(
            b.shape.as_ref().map(|s| s.span()),
            format!("{base}.shape"),
            format!("shape family `{kind}` is given by data this loader does not read"),
        )),
    }
}

/// The size keys of a `[[body]]` as its shape family reads them.
impl shapes::ShapeKeys for RawBody {
    fn number(&self, key: &str) -> Option<f64> {
        let v = match key {
            "radius" => &self.radius,
            "half_length" => &self.half_length,
            "height" => &self.height,
            _ => return None,
        };
        v.as_ref().map(|v| *v.get_ref())
    }
    fn vector(&self, key: &str) -> Option<[f64; 3]> {
        (key == "half_extents")
            .then(|| self.half_extents.as_ref().map(|v| *v.get_ref()))
            .flatten()
    }
}

/// A registry entry's key error (a shape family's, a friction model's) as a scene error at
/// the key `at` (at the table for a missing key); `what` and `kind` name the entry.
fn key_error(
    cx: &Cx<'_>,
    e: KeyError,
    at: Option<Range<usize>>,
    table: &Range<usize>,
    base: &str,
    (what, kind): (&str, &str),
) -> SceneError {
    let field = format!("{base}.{}", e.key);
    match e.problem {
        Problem::Missing => cx.err(
            Some(table.clone()),
            field,
            format!("missing field `{}` (required for {what} `{kind}`)", e.key),
        ),
        Problem::NotPositive(x) => cx.err(at, field, format!("must be positive (got {})", Num(x))),
        Problem::Negative(x) => cx.err(at, field, format!("must be non-negative (got {})", Num(x))),
        Problem::Invalid(message) => cx.err(at, field, message),
    }
}

/// The patch models act on contact patches (issues #10, #11): `lugre_reduced` on face–face
/// contacts of box bodies and on the end discs of cylinder bodies against boundaries,
/// `lugre_patch` on box faces only (its cells tile the contact polygon of a box face). A
/// scene naming one with no body it can act on would run it nowhere, so it is refused. (A
/// cylinder–box grain pair gives point contacts, never a patch record.)
fn patch_needs_faces(
    cx: &Cx<'_>,
    raw: &RawScene,
    materials: &[Material],
    bodies: &[BodyDesc],
) -> R<()> {
    let is_box = |b: &BodyDesc| matches!(b.shape, BodyShape::Box { .. });
    let is_cyl = |b: &BodyDesc| matches!(b.shape, BodyShape::Cylinder { .. });
    let model_span = |i: usize| {
        raw.material[i]
            .get_ref()
            .model
            .as_ref()
            .map(|m| m.get_ref().kind.span())
    };
    for (i, m) in materials.iter().enumerate() {
        let (ok, what) = match m.model {
            FrictionModel::LuGreReduced { .. } => (
                bodies.iter().any(|b| is_box(b) || is_cyl(b)),
                "`lugre_reduced` acts on face–face contacts of box bodies and on the end \
                 discs of cylinder bodies (contact patches), and this scene has neither",
            ),
            FrictionModel::LuGrePatch { .. } => (
                bodies.iter().any(is_box),
                "`lugre_patch` acts on face–face contacts of box bodies (contact patches), \
                 and this scene has no box body",
            ),
            _ => continue,
        };
        if !ok {
            return Err(cx.err(
                model_span(i),
                format!("material[{i}].model.kind"),
                format!("friction model {what}: use `lugre` for spheres"),
            ));
        }
    }
    Ok(())
}

/// The `lugre_patch` cells of every patch live in one buffer of one grid side: two
/// materials with different `cells` are refused, naming the second.
fn patch_grids_agree(cx: &Cx<'_>, raw: &RawScene, materials: &[Material]) -> R<()> {
    let mut first: Option<u32> = None;
    for (i, m) in materials.iter().enumerate() {
        let FrictionModel::LuGrePatch { cells, .. } = m.model else {
            continue;
        };
        match first {
            None => first = Some(cells),
            Some(c) if c != cells => {
                let span = raw.material[i]
                    .get_ref()
                    .model
                    .as_ref()
                    .and_then(|m| m.get_ref().span_of("cells"));
                return Err(cx.err(
                    span,
                    format!("material[{i}].model.cells"),
                    format!(
                        "every lugre_patch material must use the same grid: an earlier one has \
                         {c} cells, this one {cells}"
                    ),
                ));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// An explicit `inertia = [Ixx, Iyy, Izz]`: positive, with a warning when it violates the
/// triangle inequality.
fn explicit_inertia(cx: &mut Cx<'_>, iv: &S<[f64; 3]>, base: &str) -> R<[f64; 3]> {
    let v = *iv.get_ref();
    if let Some(&x) = v.iter().find(|&&x| x.is_nan() || x <= 0.0) {
        return Err(cx.err(
            Some(iv.span()),
            format!("{base}.inertia"),
            format!("principal moments must be positive (got {})", Num(x)),
        ));
    }
    let [a, bb, c] = v;
    if a + bb < c || a + c < bb || bb + c < a {
        cx.warn(
            Some(iv.span()),
            &format!("{base}.inertia"),
            "principal moments violate the triangle inequality (no real body has them)",
        );
    }
    Ok(v)
}

/// Explicit bodies must not overlap: spheres by a grid; any other shape against every body
/// whose bounding sphere it meets, exactly (the narrow phase at zero envelope). Touching,
/// within [`gap::touch_tolerance`], is not overlapping.
fn no_overlap(cx: &Cx<'_>, raw: &RawScene, bodies: &[BodyDesc], origins: &[Origin]) -> R<()> {
    if bodies.is_empty() {
        return Ok(());
    }
    // Either body's size may be what is wrong (a radius of 1e30 overlaps everything).
    let sizes = |i: usize, j: usize| {
        let line = |k| cx.line(&size_span(raw, origins, k).0);
        format!(" (sizes set on line {} and line {})", line(i), line(j))
    };
    let r_max = bodies
        .iter()
        .map(|b| b.shape.bounding_radius())
        .fold(0.0, f64::max);
    let mut grid = SphereGrid::new(r_max);
    let any_clump = bodies
        .iter()
        .any(|b| matches!(b.shape, BodyShape::Clump(_)));
    // Body j overlaps the earlier body i by `depth`.
    let overlap = |i: usize, j: usize, depth: f64| {
        cx.err(
            Some(origins[j].span.clone()),
            format!("body[{j}].position"),
            format!(
                "{} overlaps {} defined on line {} by {}{}",
                origins[j].label,
                origins[i].label,
                cx.line(&origins[i].span),
                Num(depth),
                sizes(i, j)
            ),
        )
    };
    for (j, b) in bodies.iter().enumerate() {
        if any_clump {
            if let Some((i, depth)) =
                (0..j).find_map(|i| super::clumps::overlap(&bodies[i], b).map(|d| (i, d)))
            {
                return Err(overlap(i, j, depth));
            }
            if matches!(b.shape, BodyShape::Clump(_)) {
                continue;
            }
        }
        if !matches!(b.shape, BodyShape::Sphere { .. }) {
            if let Some((i, depth)) =
                (0..j).find_map(|i| box_overlap(&bodies[i], b).map(|d| (i, d)))
            {
                return Err(overlap(i, j, depth));
            }
            continue;
        }
        if let Some((i, depth)) = (0..j)
            .filter(|&i| !matches!(bodies[i].shape, BodyShape::Sphere { .. }))
            .find_map(|i| box_overlap(&bodies[i], b).map(|d| (i, d)))
        {
            return Err(overlap(i, j, depth));
        }
        let r = b.shape.bounding_radius();
        if let Some(k) = grid.find_overlap(b.position, r) {
            let i = grid.ids[k];
            let d = DVec3::from_array(b.position).distance(DVec3::from_array(bodies[i].position));
            return Err(cx.err(
                Some(origins[j].span.clone()),
                format!("body[{j}].position"),
                format!(
                    "{} overlaps {} defined on line {}: centre distance {} < sum of radii {}{}",
                    origins[j].label,
                    origins[i].label,
                    cx.line(&origins[i].span),
                    Num(d),
                    Num(r + bodies[i].shape.bounding_radius()),
                    sizes(i, j)
                ),
            ));
        }
        grid.insert(b.position, r, j);
    }
    Ok(())
}

/// The penetration depth of two bodies of which one at least is not a sphere, when they
/// overlap by more than [`gap::touch_tolerance`] (clumps: `clumps::overlap`).
fn box_overlap(a: &BodyDesc, b: &BodyDesc) -> Option<f64> {
    use bristlecone_cpu::reference::boxes::{box_box, Obb};
    let (pa, pb) = (DVec3::from_array(a.position), DVec3::from_array(b.position));
    if pa.distance(pb) >= a.shape.bounding_radius() + b.shape.bounding_radius() {
        return None;
    }
    let obb = |d: &BodyDesc, h: [f64; 3]| {
        Obb::new(
            DVec3::from_array(d.position),
            DQuat::from_array(d.orientation),
            DVec3::from_array(h),
        )
    };
    let gap = match (&a.shape, &b.shape) {
        (BodyShape::Box { half_extents: ha }, BodyShape::Box { half_extents: hb }) => {
            box_box(&obb(a, *ha), &obb(b, *hb), 0.0)
                .pts
                .iter()
                .map(|p| p.gap)
                .fold(f64::INFINITY, f64::min)
        }
        // A sphere against any shape: the same gap that generated grains are kept clear by.
        (BodyShape::Sphere { radius }, _) => gap::Placed::of(b).sphere_gap(pa, *radius).1,
        (_, BodyShape::Sphere { radius }) => gap::Placed::of(a).sphere_gap(pb, *radius).1,
        (BodyShape::Cylinder { .. }, _) | (_, BodyShape::Cylinder { .. }) => {
            cylinder::cylinder_gap(a, b)
        }
        (BodyShape::Convex(_), _) | (_, BodyShape::Convex(_)) => super::convex::convex_gap(a, b),
        _ => capsule_gap(a, b),
    };
    let tol = gap::touch_tolerance(a.shape.bounding_radius(), b.shape.bounding_radius());
    (gap < -tol).then_some(-gap)
}

/// The smallest gap between two bodies of which one at least is a capsule (the capsule
/// narrow phase at zero envelope); infinity for other pairs.
fn capsule_gap(a: &BodyDesc, b: &BodyDesc) -> f64 {
    use bristlecone_cpu::reference::boxes::Obb;
    use bristlecone_cpu::reference::capsule::{
        capsule_box, capsule_capsule, capsule_sphere, Capsule,
    };
    let pose = |d: &BodyDesc| {
        (
            DVec3::from_array(d.position),
            DQuat::from_array(d.orientation),
        )
    };
    let (c, o) = match (&a.shape, &b.shape) {
        (BodyShape::Capsule { .. }, _) => (a, b),
        (_, BodyShape::Capsule { .. }) => (b, a),
        _ => return f64::INFINITY,
    };
    let BodyShape::Capsule {
        radius,
        half_length,
    } = c.shape
    else {
        return f64::INFINITY;
    };
    let (pc, qc) = pose(c);
    let cap = Capsule::new(pc, qc, half_length, radius);
    let (po, qo) = pose(o);
    let pts = match o.shape {
        BodyShape::Sphere { radius } => capsule_sphere(&cap, po, radius, 0.0),
        BodyShape::Box { half_extents } => capsule_box(
            &cap,
            &Obb::new(po, qo, DVec3::from_array(half_extents)),
            0.0,
        ),
        BodyShape::Capsule {
            radius,
            half_length,
        } => capsule_capsule(&cap, &Capsule::new(po, qo, half_length, radius), 0.0),
        // Cylinders and hulls go to `cylinder_gap` and `convex_gap` first; clumps per member.
        BodyShape::Clump(_) | BodyShape::Cylinder { .. } | BodyShape::Convex(_) => {
            return f64::INFINITY
        }
    };
    pts.iter().map(|p| p.gap).fold(f64::INFINITY, f64::min)
}

/// A body whose actual shape holds the whole of `region`'s box, so that no grain of a
/// generator fits there. Only a sure answer counts: a region this misses (one a clump's
/// members hold together, a cylinder region inside a body that does not hold its box) is
/// caught by the generator placing no grain.
fn covering_body(bodies: &[BodyDesc], region: &Region) -> Option<usize> {
    let (lo, hi) = region.aabb();
    bodies.iter().position(|b| {
        let r = b.shape.bounding_radius();
        // Broad phase: a body holds the box only if its bounding sphere does.
        let far = DVec3::from_array([0, 1, 2].map(|i| {
            (b.position[i] - lo[i])
                .abs()
                .max((hi[i] - b.position[i]).abs())
        }));
        far.length() <= r && gap::Placed::of(b).holds_box(lo, hi, gap::touch_tolerance(r, 0.0))
    })
}

/// `[[generator]]`: appends the generated spheres to `bodies`.
fn generators_section(
    cx: &Cx<'_>,
    raw: &RawScene,
    materials: &[Material],
    scale: f64,
    bodies: &mut Vec<BodyDesc>,
    origins: &mut Vec<Origin>,
) -> R<()> {
    for (gi, g) in raw.generator.iter().enumerate() {
        let base = format!("generator[{gi}]");
        let span = g.span();
        let g = g.get_ref();
        let kind = g.kind.get_ref().as_str();
        let region = region(cx, &g.region, &format!("{base}.region"))?;
        let dist = radius_dist(cx, &g.radius, &format!("{base}.radius"))?;
        // A radius whose grains' mass or inertia f32 cannot hold is the radius's fault, and
        // is refused before the region is judged against it.
        if let Some(r) = [dist.min(), dist.max()]
            .into_iter()
            .find(|&r| !mass_fits_gpu_pair(sphere_mass(REFERENCE_DENSITY, r)))
        {
            let (m, i) = sphere_mass(REFERENCE_DENSITY, r);
            return Err(cx.err(
                Some(g.radius.span()),
                format!("{base}.radius"),
                format!(
                    "grains of radius {} m have a mass ({m:.3e} kg at {REFERENCE_DENSITY} \
                     kg/m³) or moment of inertia ({:.3e} kg·m²) that the GPU's 32-bit floats \
                     cannot hold",
                    Num(r),
                    i[0]
                ),
            ));
        }
        if let Some(m) = super::precision::check_region(&region, &dist) {
            let radius_line = cx.line(&g.radius.span());
            return Err(cx.err(
                Some(g.region.span()),
                format!("{base}.region"),
                format!("{m} (radius on line {radius_line})"),
            ));
        }
        if let Some(k) = covering_body(bodies, &region) {
            let (size, field) = size_span(raw, origins, k);
            return Err(cx.err(
                Some(size),
                field,
                format!(
                    "{} holds the whole region of {base} (line {}) inside its shape: no grain \
                     of it can be placed",
                    origins[k].label,
                    cx.line(&g.region.span())
                ),
            ));
        }
        let material = cx.material(&g.material, &span, &base, materials)?;
        let seed = cx.opt_int(&g.seed, &format!("{base}.seed"), 0, i64::MAX, 0)?;
        let centers: Vec<[f64; 3]> = bodies.iter().map(|b| b.position).collect();
        let radii: Vec<f64> = bodies.iter().map(|b| b.shape.bounding_radius()).collect();
        // A grain may sit inside a body's bounding sphere but clear of its shape (beads on
        // a slab): the bounding spheres are only the broad phase. The shapes are placed
        // once each, when a grain first meets one's bounding sphere.
        let known: &[BodyDesc] = bodies;
        let placed_shapes = std::cell::RefCell::new(HashMap::<usize, gap::Placed>::new());
        let exact = |i: usize, c: [f64; 3], r: f64| {
            let b = &known[i];
            if matches!(b.shape, BodyShape::Sphere { .. }) {
                return None;
            }
            let mut shapes = placed_shapes.borrow_mut();
            let shape = shapes.entry(i).or_insert_with(|| gap::Placed::of(b));
            let (n, gap) = shape.sphere_gap(DVec3::from_array(c), r);
            Some((n.to_array(), gap))
        };
        let obstacles = Obstacles {
            centers: &centers,
            radii: &radii,
            exact: &exact,
        };
        let gx = GenCx {
            g,
            base: &base,
            span: &span,
            region: &region,
            seed,
            scale,
            obstacles: &obstacles,
        };
        let placed: Vec<([f64; 3], f64)> = match kind {
            "lattice" => lattice(cx, &gx, dist)?,
            "random_fill" => random_fill(cx, &gx, dist)?,
            other => {
                return Err(cx.err(
                    Some(g.kind.span()),
                    format!("{base}.kind"),
                    format!(
                        "unknown generator kind `{other}` (expected one of: lattice, random_fill)"
                    ),
                ))
            }
        };
        let velocity = vel(&g.velocity);
        let angular_velocity = vel(&g.angular_velocity);
        let density = materials[material].density;
        let template = grain_template(cx, g, &span, &base)?;
        let mut orientations = super::clumps::Orientations::new(seed);
        for (k, (c, r)) in placed.into_iter().enumerate() {
            let (shape, orientation, (mass, inertia)) = match &template {
                // A template fills the drawn bounding sphere, at a random orientation.
                Some(t) => {
                    let shape = t.scaled(r / t.bounding_radius());
                    let mp = shape.mass_properties(density);
                    (shape, orientations.next(), mp)
                }
                None => (
                    BodyShape::Sphere { radius: r },
                    [0.0, 0.0, 0.0, 1.0],
                    sphere_mass(density, r),
                ),
            };
            if !mass_fits_gpu(mass, inertia) {
                // A template whose sphere of the same radius would fit is too thin in some
                // direction: its own size fields are at fault, not the drawn radius.
                let sphere_fits = mass_fits_gpu_pair(sphere_mass(REFERENCE_DENSITY, r));
                let size = match &g.template {
                    Some(t) if sphere_fits => (t.span(), format!("{base}.template")),
                    _ => (g.radius.span(), format!("{base}.radius")),
                };
                let density = Some(&raw.material[material].get_ref().density);
                let mp = (mass, inertia);
                return Err(mass_refusal(cx, density, material, &shape, mp, size));
            }
            origins.push(Origin {
                label: format!("{base} grain #{k}"),
                span: span.clone(),
                velocity: g
                    .velocity
                    .as_ref()
                    .map(|v| (format!("{base}.velocity"), v.span())),
            });
            bodies.push(BodyDesc {
                shape,
                position: c,
                orientation,
                velocity,
                angular_velocity,
                material,
                motion: Motion::Dynamic,
                mass,
                inertia,
                schedule: Vec::new(),
            });
        }
    }
    Ok(())
}

/// A generator's grain shape: a clump from `spheres`, any body shape from `template`
/// (its body frame as `[[body]]` would build it), or None for plain spheres.
fn grain_template(
    cx: &Cx<'_>,
    g: &RawGenerator,
    span: &Range<usize>,
    base: &str,
) -> R<Option<BodyShape>> {
    let err = |s: Option<Range<usize>>, f: String, m: String| cx.err(s, f, m);
    match (&g.spheres, &g.template) {
        (Some(_), Some(t)) => Err(cx.err(
            Some(t.span()),
            format!("{base}.template"),
            "give either `spheres` (a clump) or `template`, not both".to_string(),
        )),
        (Some(l), None) => {
            let c = super::clumps::clump_mass(&err, l, base)?;
            Ok(Some(BodyShape::Clump(std::sync::Arc::new(c))))
        }
        (None, Some(t)) => {
            let body = t.get_ref().as_body(t.span());
            let at = format!("{base}.template");
            body_shape(cx, &body, span, &at).map(Some)
        }
        (None, None) => Ok(None),
    }
}

/// What a generator kind needs from its `[[generator]]` table.
struct GenCx<'a> {
    g: &'a RawGenerator,
    base: &'a str,
    span: &'a Range<usize>,
    region: &'a Region,
    seed: u64,
    scale: f64,
    obstacles: &'a Obstacles<'a>,
}

/// A `lattice` generator: the placed centres and radii.
fn lattice(cx: &Cx<'_>, gx: &GenCx<'_>, dist: RadiusDist) -> R<Vec<([f64; 3], f64)>> {
    let (g, base, region) = (gx.g, gx.base, gx.region);
    let kind = g.kind.get_ref().as_str();
    let fields = present!(g; spacing, jitter, max_count, count, volume_fraction, max_attempts);
    cx.only(
        base,
        "generator",
        kind,
        &fields,
        &["spacing", "jitter", "max_count"],
    )?;
    let RadiusDist::Constant(r) = dist else {
        return Err(cx.err(
            Some(g.radius.span()),
            format!("{base}.radius"),
            "a lattice needs a single radius (a number)",
        ));
    };
    let jitter = cx.opt_non_negative(&g.jitter, &format!("{base}.jitter"), 0.0)?;
    let min_spacing = 2.0 * r + 2.0 * jitter;
    let spacing = match &g.spacing {
        None => min_spacing + 0.02 * r,
        Some(s) => {
            let v = cx.positive(s, &format!("{base}.spacing"))?;
            if v < min_spacing {
                return Err(cx.err(
                    Some(s.span()),
                    format!("{base}.spacing"),
                    format!("must be at least 2·radius + 2·jitter = {} so that spheres cannot overlap (got {})", Num(min_spacing), Num(v)),
                ));
            }
            v
        }
    };
    let max_count = g
        .max_count
        .as_ref()
        .map(|m| cx.int_range(m, &format!("{base}.max_count"), 1, MAX_GENERATED as i64))
        .transpose()?
        .map(|m| m as usize);
    let (lo, hi) = region.aabb();
    let sites: f64 = (0..3)
        .map(|k| ((hi[k] - lo[k]) / spacing).max(0.0) + 1.0)
        .product();
    if sites > MAX_GENERATED as f64 && max_count.is_none() {
        return Err(cx.err(
            Some(g.region.span()),
            format!("{base}.region"),
            format!("the lattice would have more than {MAX_GENERATED} sites in this region; set `max_count` or enlarge `spacing`"),
        ));
    }
    let out = generate::lattice(region, r, spacing, jitter, max_count, gx.seed, gx.obstacles);
    if out.is_empty() {
        return Err(cx.err(
            Some(g.region.span()),
            format!("{base}.region"),
            format!(
                "the region holds no free lattice site for spheres of radius {} ({base}.radius, \
                 line {}) with jitter = {}",
                Num(r),
                cx.line(&g.radius.span()),
                Num(jitter)
            ),
        ));
    }
    let keep = scaled_count(out.len(), gx.scale);
    Ok(out.into_iter().take(keep).map(|c| (c, r)).collect())
}

/// A `random_fill` generator: the placed centres and radii.
fn random_fill(cx: &Cx<'_>, gx: &GenCx<'_>, dist: RadiusDist) -> R<Vec<([f64; 3], f64)>> {
    let (g, base, span, region) = (gx.g, gx.base, gx.span, gx.region);
    let kind = g.kind.get_ref().as_str();
    let fields = present!(g; spacing, jitter, max_count, count, volume_fraction, max_attempts);
    cx.only(
        base,
        "generator",
        kind,
        &fields,
        &["count", "volume_fraction", "max_attempts"],
    )?;
    let count = g
        .count
        .as_ref()
        .map(|c| cx.int_range(c, &format!("{base}.count"), 1, MAX_GENERATED as i64))
        .transpose()?
        .map(|c| c as usize);
    let fraction = match &g.volume_fraction {
        None => None,
        Some(f) => {
            let v = cx.positive(f, &format!("{base}.volume_fraction"))?;
            if v >= 1.0 {
                return Err(cx.err(
                    Some(f.span()),
                    format!("{base}.volume_fraction"),
                    format!("must be below 1 (got {})", Num(v)),
                ));
            }
            let r_min = match dist {
                RadiusDist::Constant(r) => r,
                RadiusDist::Uniform { min, .. } => min,
            };
            if count.is_none()
                && v * region.volume() / (4.0 / 3.0 * PI * r_min.powi(3)) > MAX_GENERATED as f64
            {
                return Err(cx.err(
                    Some(f.span()),
                    format!("{base}.volume_fraction"),
                    format!(
                        "would generate more than {MAX_GENERATED} spheres; set `count` as well"
                    ),
                ));
            }
            Some(v)
        }
    };
    if count.is_none() && fraction.is_none() {
        return Err(cx.err(
            Some(span.clone()),
            format!("{base}.count"),
            "random_fill needs `count` and/or `volume_fraction`",
        ));
    }
    if !region.fits_radius(dist.max()) {
        return Err(cx.err(
            Some(g.region.span()),
            format!("{base}.region"),
            format!(
                "the region is too small for spheres of radius {} ({base}.radius, line {})",
                Num(dist.max()),
                cx.line(&g.radius.span())
            ),
        ));
    }
    let attempts = cx.opt_int(
        &g.max_attempts,
        &format!("{base}.max_attempts"),
        1,
        1 << 40,
        1000,
    )?;
    let target = FillTarget {
        count: count.map(|n| scaled_count(n, gx.scale)),
        volume_fraction: match count {
            Some(_) => fraction,
            None => fraction.map(|f| f * gx.scale),
        },
    };
    generate::random_fill(
        region,
        dist,
        &target,
        attempts as usize,
        gx.seed,
        gx.obstacles,
    )
    .map_err(|s| {
        let (fspan, fname) = match (&g.count, &g.volume_fraction) {
            (Some(c), _) => (c.span(), "count"),
            (None, Some(f)) => (f.span(), "volume_fraction"),
            _ => (span.clone(), "count"),
        };
        cx.err(
            Some(fspan),
            format!("{base}.{fname}"),
            format!(
                "could place only {} of {} spheres (solid fraction {:.3} of the region; random_fill reaches {}{}): enlarge the region or lower count/volume_fraction; for a denser bed use a lattice, or let a fill settle in a run and resume from its checkpoint",
                s.placed,
                s.wanted,
                s.fraction,
                generate::RANDOM_FILL_REACHES,
                match s.sweeps {
                    0 => String::new(),
                    n => format!("; overlap removal gave up after {n} sweeps"),
                }
            ),
        )
    })
}

/// `[[boundary]]`.
fn boundaries_section(
    cx: &Cx<'_>,
    raw: &RawScene,
    materials: &[Material],
    file: &Path,
    dt: f64,
) -> R<Vec<Boundary>> {
    raw.boundary
        .iter()
        .enumerate()
        .map(|(i, b)| boundary(cx, b, i, materials, file, dt))
        .collect()
}

/// `[output]`.
fn output_section(
    cx: &Cx<'_>,
    raw: &RawScene,
    dt: f64,
    steps: u64,
    name: &str,
) -> R<OutputSettings> {
    let default = RawOutput {
        dir: None,
        frame_every: None,
        frame_interval: None,
        vtk: None,
        contacts: None,
        contact_force_min: None,
        checkpoint_every: None,
        keep: None,
        stats_every: None,
    };
    let o = raw.output.as_ref().map_or(&default, |o| o.get_ref());
    let frame_every = match (&o.frame_every, &o.frame_interval) {
        (Some(_), Some(fi)) => {
            return Err(cx.err(
                Some(fi.span()),
                "output.frame_interval",
                "give either `frame_every` or `frame_interval`, not both",
            ))
        }
        (Some(f), None) => cx.int_range(f, "output.frame_every", 1, i64::MAX)?,
        (None, Some(fi)) => {
            let t = cx.positive(fi, "output.frame_interval")?;
            ((t / dt).round() as u64).max(1)
        }
        (None, None) => steps.div_ceil(50).max(1),
    };
    let contacts = o.contacts.as_ref().is_some_and(|v| *v.get_ref());
    let contact_force_min = match &o.contact_force_min {
        Some(m) if !contacts => {
            return Err(cx.err(
                Some(m.span()),
                "output.contact_force_min",
                "applies to the contact files: set `contacts = true` too",
            ))
        }
        Some(m) => cx.non_negative(m, "output.contact_force_min")?,
        None => 0.0,
    };
    let checkpoint_every = cx.opt_int(
        &o.checkpoint_every,
        "output.checkpoint_every",
        0,
        i64::MAX,
        0,
    )?;
    let keep = cx.opt_int(&o.keep, "output.keep", 1, 1000, 1)?;
    if let (Some(k), 0) = (&o.keep, checkpoint_every) {
        if keep > 1 {
            return Err(cx.err(
                Some(k.span()),
                "output.keep",
                "keeps periodic checkpoints: set `checkpoint_every` too",
            ));
        }
    }
    Ok(OutputSettings {
        dir: o.dir.as_ref().map_or_else(
            || PathBuf::from("out").join(name),
            |d| PathBuf::from(d.get_ref()),
        ),
        frame_every,
        vtk: o.vtk.as_ref().is_none_or(|v| *v.get_ref()),
        contacts,
        contact_force_min,
        checkpoint_every,
        keep,
        stats_every: cx.opt_int(&o.stats_every, "output.stats_every", 1, i64::MAX, 1)?,
    })
}

/// `[[measure]]`, with unique names.
fn measures_section(
    cx: &Cx<'_>,
    raw: &RawScene,
    dt: f64,
    frame_every: u64,
    boundaries: &[Boundary],
    materials: &[Material],
) -> R<Vec<Measure>> {
    let mut measures: Vec<Measure> = Vec::new();
    let mut measure_lines: HashMap<String, usize> = HashMap::new();
    for (i, m) in raw.measure.iter().enumerate() {
        let mm = measure(cx, m, i, dt, frame_every, boundaries, materials)?;
        let name_span = m.get_ref().name.span();
        if let Some(line) = measure_lines.get(&mm.name) {
            return Err(cx.err(
                Some(name_span),
                format!("measure[{i}].name"),
                format!(
                    "duplicate measurement name `{}` (first defined on line {line})",
                    mm.name
                ),
            ));
        }
        measure_lines.insert(mm.name.clone(), cx.line(&name_span));
        measures.push(mm);
    }
    Ok(measures)
}

/// Jacobi's steps ω·η_i are convergent for ω < 2/3 (η_i bounds N from above, see
/// `shaders/solve_assemble.wgsl`); beyond that a dense pile can diverge.
fn omega_warning(cx: &mut Cx<'_>, raw: &RawScene, solver: &SolverSettings) {
    if solver.kind == SolverKind::Jacobi && solver.omega >= 2.0 / 3.0 {
        let span = raw
            .solver
            .as_ref()
            .and_then(|s| s.get_ref().omega.as_ref())
            .map(|o| o.span());
        cx.warn(
            span,
            "solver.omega",
            format!(
                "omega = {} is ≥ 2/3: projected Jacobi is only guaranteed to converge for omega < 2/3",
                Num(solver.omega)
            ),
        );
    }
}

/// f32 resolution at the scene's farthest coordinate ([`super::precision`]): a warning or,
/// when hopeless, an error at the body or boundary that reaches farthest.
fn precision_check(
    cx: &mut Cx<'_>,
    raw: &RawScene,
    (bodies, origins): (&[BodyDesc], &[Origin]),
    boundaries: &[Boundary],
    r_min: f64,
    run: (f64, u64),
) -> R<()> {
    use super::precision::{check_scene, Reach, Severity};
    let Some(f) = check_scene(bodies, boundaries, r_min, run) else {
        return Ok(());
    };
    // A body or boundary that travels too far is blamed on the velocity that drives it.
    let (span, field) = match (f.at, f.moved) {
        (Reach::Size(k), _) => {
            let (span, field) = size_span(raw, origins, k);
            (Some(span), field)
        }
        (Reach::Body(k), Some(driver)) => {
            let (span, field) = driver_span(raw.body.get(k).map(|b| b.get_ref()), k, driver)
                .unwrap_or((origins[k].span.clone(), origins[k].label.clone()));
            (Some(span), field)
        }
        (Reach::Body(k), None) => (Some(origins[k].span.clone()), origins[k].label.clone()),
        (Reach::Boundary(i), Some(driver)) => {
            match driver_span_boundary(raw.boundary.get(i).map(|b| b.get_ref()), i, driver) {
                Some((span, field)) => (Some(span), field),
                None => boundary_position_span(raw, i),
            }
        }
        (Reach::Boundary(i), None) => boundary_position_span(raw, i),
    };
    match f.severity {
        Severity::Warn => cx.warn(span, &field, f.message),
        Severity::Refuse => return Err(cx.err(span, field, f.message)),
    }
    Ok(())
}

/// Where the velocity that drives a kinematic body (`body[k]`) is set: its `velocity`, or
/// the entry of its schedule.
fn driver_span(body: Option<&RawBody>, k: usize, driver: Driver) -> Option<(Range<usize>, String)> {
    let body = body?;
    velocity_field(
        &body.velocity,
        &body.schedule,
        &format!("body[{k}]"),
        driver,
    )
}

fn driver_span_boundary(
    b: Option<&RawBoundary>,
    i: usize,
    driver: Driver,
) -> Option<(Range<usize>, String)> {
    let b = b?;
    velocity_field(&b.velocity, &b.schedule, &format!("boundary[{i}]"), driver)
}

fn velocity_field(
    velocity: &O<[f64; 3]>,
    schedule: &O<Vec<S<RawScheduleEntry>>>,
    base: &str,
    driver: Driver,
) -> Option<(Range<usize>, String)> {
    match driver {
        Driver::Initial => velocity
            .as_ref()
            .map(|v| (v.span(), format!("{base}.velocity"))),
        Driver::Schedule(j) => {
            let entry = schedule.as_ref()?.get_ref().get(j)?;
            let field = format!("{base}.schedule[{j}].velocity");
            match &entry.get_ref().velocity {
                Some(v) => Some((v.span(), field)),
                None => Some((entry.span(), field)),
            }
        }
    }
}

/// Where body `k`'s size is set: an explicit body's `radius`, `half_extents`, `half_length`,
/// `height`, `spheres` or `points` (the first it has), else where the body comes from.
fn size_span(raw: &RawScene, origins: &[Origin], k: usize) -> (Range<usize>, String) {
    let fallback = (origins[k].span.clone(), origins[k].label.clone());
    let Some(b) = raw.body.get(k).map(|b| b.get_ref()) else {
        return fallback;
    };
    let base = format!("body[{k}]");
    let spans = [
        ("radius", b.radius.as_ref().map(|v| v.span())),
        ("half_extents", b.half_extents.as_ref().map(|v| v.span())),
        ("half_length", b.half_length.as_ref().map(|v| v.span())),
        ("height", b.height.as_ref().map(|v| v.span())),
        ("spheres", b.spheres.as_ref().map(|v| v.span())),
        ("points", b.points.as_ref().map(|v| v.span())),
    ];
    spans
        .into_iter()
        .find_map(|(name, span)| Some((span?, format!("{base}.{name}"))))
        .unwrap_or(fallback)
}

/// Where boundary `i` is placed in the file: its `position` (or a plane's `point`), else the
/// table itself, with the field's name.
fn boundary_position_span(raw: &RawScene, i: usize) -> (Option<Range<usize>>, String) {
    let Some(b) = raw.boundary.get(i) else {
        return (None, format!("boundary[{i}].position"));
    };
    let r = b.get_ref();
    match (&r.position, &r.point) {
        (Some(p), _) => (Some(p.span()), format!("boundary[{i}].position")),
        (None, Some(p)) => (Some(p.span()), format!("boundary[{i}].point")),
        (None, None) => (Some(b.span()), format!("boundary[{i}]")),
    }
}

/// The time-step warnings: vs. the smallest body's size under gravity, vs. the fastest body.
fn step_warnings(
    cx: &mut Cx<'_>,
    dt_field: &S<f64>,
    gravity: [f64; 3],
    r_min: f64,
    bodies: &[BodyDesc],
    origins: &[Origin],
) {
    let dt = *dt_field.get_ref();
    let g = DVec3::from_array(gravity).length();
    if g > 0.0 {
        let dt_max = 0.1 * (r_min / g).sqrt();
        if dt > dt_max {
            cx.warn(
                Some(dt_field.span()),
                "simulation.dt",
                format!("dt = {} s is large for the smallest body radius {} m (rule: dt ≤ 0.1·sqrt(r_min/|g|) = {dt_max:.3e} s)", Num(dt), Num(r_min)),
            );
        }
    }
    if let Some((k, v)) = bodies
        .iter()
        .map(|b| DVec3::from_array(b.velocity).length())
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(&b.1))
    {
        if v * dt > 0.2 * r_min {
            // The speed was set by a `velocity` field (a body's or a generator's): that line is
            // where the step's travel comes from, and `dt` is the other lever.
            let (span, field) = match &origins[k].velocity {
                Some((field, span)) => (span.clone(), field.as_str()),
                None => (dt_field.span(), "simulation.dt"),
            };
            cx.warn(
                Some(span),
                field,
                format!(
                    "{} moves {:.3e} m per step at its initial speed {} m/s, more than 0.2·r_min = {:.3e} m (lower the speed or use dt ≤ {:.3e} s)",
                    origins[k].label,
                    v * dt,
                    Num(v),
                    0.2 * r_min,
                    0.2 * r_min / v
                ),
            );
        }
    }
}

/// `p` in the frame of boundary `bd`.
fn boundary_local(bd: &Boundary, p: [f64; 3]) -> DVec3 {
    let q = DQuat::from_array(bd.orientation);
    q.inverse() * (DVec3::from_array(p) - DVec3::from_array(bd.position))
}

/// Whether point `p` lies inside container `bd` (a box or cylinder container; false for
/// the other boundaries): below an open top counts as inside.
fn inside_container(bd: &Boundary, p: [f64; 3]) -> bool {
    let l = boundary_local(bd, p);
    match bd.shape {
        BoundaryShape::BoxContainer {
            half_extents: h,
            open_top,
        } => l.x.abs() <= h[0] && l.y.abs() <= h[1] && l.z >= -h[2] && (open_top || l.z <= h[2]),
        BoundaryShape::CylinderContainer {
            radius,
            height,
            open_top,
        } => l.x.hypot(l.y) <= radius && l.z >= 0.0 && (open_top || l.z <= height),
        _ => false,
    }
}
/// Warns about bodies whose centre is outside every container (when there are containers).
fn container_warnings(
    cx: &mut Cx<'_>,
    boundaries: &[Boundary],
    bodies: &[BodyDesc],
    origins: &[Origin],
) {
    let containers: Vec<&Boundary> = boundaries
        .iter()
        .filter(|b| {
            matches!(
                b.shape,
                BoundaryShape::BoxContainer { .. } | BoundaryShape::CylinderContainer { .. }
            )
        })
        .collect();
    if containers.is_empty() {
        return;
    }
    let inside = |p: [f64; 3]| containers.iter().any(|bd| inside_container(bd, p));
    let outside: Vec<usize> = (0..bodies.len())
        .filter(|&k| !inside(bodies[k].position))
        .collect();
    if let Some(&first) = outside.first() {
        let p = bodies[first].position;
        cx.warn(
            Some(origins[first].span.clone()),
            &origins[first].label,
            format!(
                "{} of {} bodies start outside every container (first: {} at [{}, {}, {}])",
                outside.len(),
                bodies.len(),
                origins[first].label,
                Num(p[0]),
                Num(p[1]),
                Num(p[2])
            ),
        );
    }
}

/// Warns about bodies whose centre is on the solid side of a plane.
fn plane_warnings(
    cx: &mut Cx<'_>,
    boundaries: &[Boundary],
    bodies: &[BodyDesc],
    origins: &[Origin],
) {
    for (bi, bd) in boundaries.iter().enumerate() {
        if bd.shape != BoundaryShape::Plane {
            continue;
        }
        let below: Vec<usize> = (0..bodies.len())
            .filter(|&k| boundary_local(bd, bodies[k].position).z < 0.0)
            .collect();
        if let Some(&first) = below.first() {
            cx.warn(
                Some(origins[first].span.clone()),
                &origins[first].label,
                format!(
                    "{} bodies start below plane `{}` (boundary[{bi}]), first: {}",
                    below.len(),
                    bd.name,
                    origins[first].label
                ),
            );
        }
    }
}

/// How much shorter than the scene's `dt` a time step would have to be before the speed or
/// gravity that calls for it, not `dt`, is named as the cause.
const OUT_OF_SCALE: f64 = 1e6;

/// How far past the scene's size one step may carry a body before the step means nothing.
const MAX_STEP_TRAVEL: f64 = 100.0;

/// Rejects a `dt` whose first step alone carries a body (by gravity and its initial speed)
/// further than [`MAX_STEP_TRAVEL`] times the size of the scene (the bounding box of the
/// bodies): no contact can be resolved and the run diverges at once.
fn first_step_check(
    cx: &Cx<'_>,
    dt_field: &S<f64>,
    (gravity, gravity_span): ([f64; 3], Option<Range<usize>>),
    bodies: &[BodyDesc],
    origins: &[Origin],
) -> R<()> {
    let dt = *dt_field.get_ref();
    let g = DVec3::from_array(gravity).length();
    let speed = |b: &BodyDesc| DVec3::from_array(b.velocity).length();
    let fastest =
        (0..bodies.len()).max_by(|&a, &b| speed(&bodies[a]).total_cmp(&speed(&bodies[b])));
    let v = fastest.map_or(0.0, |k| speed(&bodies[k]));
    let (mut lo, mut hi) = (DVec3::INFINITY, DVec3::NEG_INFINITY);
    for b in bodies {
        let (c, r) = (DVec3::from_array(b.position), b.shape.bounding_radius());
        lo = lo.min(c - r);
        hi = hi.max(c + r);
    }
    let reach = MAX_STEP_TRAVEL * (hi - lo).length();
    let travel = (g * dt + v) * dt;
    // A scene of no extent (bodies below the resolution of their positions) has no scale to
    // measure dt against: the size fields' own checks speak for it.
    if travel <= reach || reach <= 0.0 {
        return Ok(());
    }
    // Largest dt with g·dt² + v·dt ≤ reach (the root written without cancellation).
    let dt_max = 2.0 * reach / (v + (v * v + 4.0 * g * reach).sqrt());
    let what = format!(
        "it would move a body {travel:.3e} m in the first step of dt = {} s (|g|·dt² + v·dt), \
         more than {MAX_STEP_TRAVEL} times the size of the scene ({:.3e} m)",
        Num(dt),
        reach / MAX_STEP_TRAVEL
    );
    // The cause is the term without which the first step would be fine: the initial speed
    // when gravity alone travels less than the limit. When only a time step [`OUT_OF_SCALE`]
    // times shorter would do, the larger term is out of scale, not dt. Otherwise `dt`.
    let out_of_scale = dt_max < dt / OUT_OF_SCALE;
    let speed_leads = v * dt >= g * dt * dt;
    let by_speed = (g * dt * dt <= reach && v * dt > reach) || (out_of_scale && speed_leads);
    let by_gravity = out_of_scale && !speed_leads;
    let velocity = fastest
        .and_then(|k| origins.get(k))
        .and_then(|o| o.velocity.clone());
    if let (true, Some((field, span))) = (by_speed, velocity) {
        return Err(cx.err(
            Some(span),
            field,
            format!(
                "an initial speed of {} m/s is too large for the scene: {what}; lower it or use dt ≤ {dt_max:.3e} s",
                Num(v)
            ),
        ));
    }
    if let (true, Some(span)) = (by_gravity, gravity_span) {
        return Err(cx.err(
            Some(span),
            "simulation.gravity",
            format!("|g| = {} m/s² is out of scale: {what}", Num(g)),
        ));
    }
    Err(cx.err(
        Some(dt_field.span()),
        "simulation.dt",
        format!(
            "dt = {} s makes the first step meaningless: {what}; use dt ≤ {dt_max:.3e} s",
            Num(dt)
        ),
    ))
}

/// A material's rolling or spinning resistance: a coefficient in [0, 1] (the torque bound
/// μ r_eff γ_n puts the resultant's line of action at μ r_eff from the contact point: beyond
/// the effective radius it would lie outside the body), 0 when absent.
fn resistance(cx: &Cx<'_>, v: &O<f64>, base: &str, field: &str) -> R<f64> {
    let Some(v) = v else {
        return Ok(0.0);
    };
    let path = format!("{base}.{field}");
    let x = cx.non_negative(v, &path)?;
    if x > 1.0 {
        return Err(cx.err(
            Some(v.span()),
            path,
            format!(
                "must be at most 1 (a dimensionless coefficient: the torque bound is \
                 {field} × r_eff × normal force, and a lever arm longer than the rolling \
                 radius r_eff is outside the body), got {}",
                Num(x)
            ),
        ));
    }
    Ok(x)
}

fn region(cx: &Cx<'_>, r: &S<RawRegion>, base: &str) -> R<Region> {
    let span = r.span();
    let r = r.get_ref();
    let kind = r.kind.get_ref().as_str();
    let fields = present!(r; min, max, base, radius, height);
    let what = "region";
    match kind {
        "box" => {
            cx.only(base, what, kind, &fields, &["min", "max"])?;
            let min = *cx
                .require(&r.min, &span, base, "min", what, kind)?
                .get_ref();
            let maxs = cx.require(&r.max, &span, base, "max", what, kind)?;
            let max = *maxs.get_ref();
            if (0..3).any(|k| max[k] <= min[k]) {
                return Err(cx.err(
                    Some(maxs.span()),
                    format!("{base}.max"),
                    "must exceed `min` on every axis",
                ));
            }
            Ok(Region::Box { min, max })
        }
        "cylinder" => {
            cx.only(base, what, kind, &fields, &["base", "radius", "height"])?;
            let b = *cx
                .require(&r.base, &span, base, "base", what, kind)?
                .get_ref();
            let radius = cx.positive(
                cx.require(&r.radius, &span, base, "radius", what, kind)?,
                &format!("{base}.radius"),
            )?;
            let height = cx.positive(
                cx.require(&r.height, &span, base, "height", what, kind)?,
                &format!("{base}.height"),
            )?;
            Ok(Region::Cylinder {
                base: b,
                radius,
                height,
            })
        }
        other => Err(cx.err(
            Some(r.kind.span()),
            format!("{base}.kind"),
            format!("unknown region kind `{other}` (expected one of: box, cylinder)"),
        )),
    }
}

fn radius_dist(cx: &Cx<'_>, v: &S<toml::Value>, path: &str) -> R<RadiusDist> {
    let span = v.span();
    let num = |x: &toml::Value| match x {
        toml::Value::Float(f) => Some(*f),
        toml::Value::Integer(i) => Some(*i as f64),
        _ => None,
    };
    let check = |x: f64, p: &str| -> R<f64> {
        if x > 0.0 {
            Ok(x)
        } else {
            Err(cx.err(
                Some(span.clone()),
                p,
                format!("must be positive (got {})", Num(x)),
            ))
        }
    };
    match v.get_ref() {
        toml::Value::Table(t) => {
            for (k, val) in t {
                match k.as_str() {
                    "min" | "max" => {}
                    "distribution" => {
                        if val.as_str() != Some("uniform") {
                            return Err(cx.err(
                                Some(span.clone()),
                                format!("{path}.distribution"),
                                format!(
                                    "unknown radius distribution {val} (supported: \"uniform\")"
                                ),
                            ));
                        }
                    }
                    other => {
                        return Err(cx.err(
                            Some(span.clone()),
                            format!("{path}.{other}"),
                            format!(
                                "unknown field `{other}`, expected `min`, `max` or `distribution`"
                            ),
                        ))
                    }
                }
            }
            let get = |k: &str| -> R<f64> {
                let p = format!("{path}.{k}");
                match t.get(k) {
                    None => Err(cx.err(Some(span.clone()), p, format!("missing field `{k}`"))),
                    Some(x) => match num(x) {
                        Some(f) => check(f, &p),
                        None => Err(cx.err(
                            Some(span.clone()),
                            p,
                            format!("expected a number, found {}", x.type_str()),
                        )),
                    },
                }
            };
            let min = get("min")?;
            let max = get("max")?;
            if max < min {
                return Err(cx.err(
                    Some(span.clone()),
                    format!("{path}.max"),
                    format!("must be at least `min` ({} < {})", Num(max), Num(min)),
                ));
            }
            Ok(if max == min {
                RadiusDist::Constant(min)
            } else {
                RadiusDist::Uniform { min, max }
            })
        }
        other => match num(other) {
            Some(x) => Ok(RadiusDist::Constant(check(x, path)?)),
            None => Err(cx.err(
                Some(span.clone()),
                path,
                format!(
                    "expected a number or a {{ min = .., max = .. }} table, found {}",
                    other.type_str()
                ),
            )),
        },
    }
}

fn boundary(
    cx: &Cx<'_>,
    b: &S<RawBoundary>,
    i: usize,
    materials: &[Material],
    file: &Path,
    dt: f64,
) -> R<Boundary> {
    let base = format!("boundary[{i}]");
    let span = b.span();
    let b = b.get_ref();
    let kind = b.kind.get_ref().as_str();
    let what = "boundary kind";
    let fields = present!(b; point, normal, position, orientation, axis, half_extents, radius, height, open_top, file, scale);
    let allowed: &[&str] = match kind {
        "plane" => &["point", "normal"],
        "box_container" => &["position", "orientation", "half_extents", "open_top"],
        "box" => &["position", "orientation", "half_extents"],
        "cylinder_container" => &["position", "orientation", "axis", "radius", "height", "open_top"],
        "cylinder" => &["position", "orientation", "axis", "radius", "height"],
        "mesh" => &["position", "orientation", "file", "scale"],
        other => {
            return Err(cx.err(
                Some(b.kind.span()),
                format!("{base}.kind"),
                format!("unknown boundary kind `{other}` (expected one of: plane, box_container, box, cylinder_container, cylinder, mesh)"),
            ))
        }
    };
    cx.only(&base, what, kind, &fields, allowed)?;
    let material = cx.material(&b.material, &span, &base, materials)?;
    let motion = cx.motion(&b.motion, &format!("{base}.motion"), Motion::Fixed)?;
    let mass = boundary_mass(cx, b, &span, &base, motion)?;
    if motion == Motion::Fixed {
        cx.at_rest(&b.velocity, &b.angular_velocity, &base, "boundary")?;
    }
    let mut position = b.position.as_ref().map_or([0.0; 3], |p| *p.get_ref());
    let mut orientation = cx.orientation(&b.orientation, &format!("{base}.orientation"))?;
    let half_extents = |cx: &Cx<'_>| -> R<[f64; 3]> {
        let h = cx.require(&b.half_extents, &span, &base, "half_extents", what, kind)?;
        let v = *h.get_ref();
        if let Some(&x) = v.iter().find(|&&x| x.is_nan() || x <= 0.0) {
            return Err(cx.err(
                Some(h.span()),
                format!("{base}.half_extents"),
                format!("must be positive (got {})", Num(x)),
            ));
        }
        Ok(v)
    };
    let radius_height = |cx: &Cx<'_>| -> R<(f64, f64)> {
        let r = cx.positive(
            cx.require(&b.radius, &span, &base, "radius", what, kind)?,
            &format!("{base}.radius"),
        )?;
        let h = cx.positive(
            cx.require(&b.height, &span, &base, "height", what, kind)?,
            &format!("{base}.height"),
        )?;
        Ok((r, h))
    };
    let open_top = b.open_top.as_ref().is_some_and(|o| *o.get_ref());
    if let Some(axis) = &b.axis {
        if b.orientation.is_some() {
            return Err(cx.err(
                Some(axis.span()),
                format!("{base}.axis"),
                "give either `orientation` or `axis`, not both",
            ));
        }
        let a = cx.direction(axis, &format!("{base}.axis"), "axis")?;
        orientation = DQuat::from_rotation_arc(DVec3::Z, a).normalize().to_array();
    }
    let shape = match kind {
        "plane" => {
            position = b.point.as_ref().map_or([0.0; 3], |p| *p.get_ref());
            if let Some(n) = &b.normal {
                let n = cx.direction(n, &format!("{base}.normal"), "normal")?;
                orientation = DQuat::from_rotation_arc(DVec3::Z, n).normalize().to_array();
            }
            BoundaryShape::Plane
        }
        "box_container" => BoundaryShape::BoxContainer {
            half_extents: half_extents(cx)?,
            open_top,
        },
        "box" => BoundaryShape::SolidBox {
            half_extents: half_extents(cx)?,
        },
        "cylinder_container" => {
            let (radius, height) = radius_height(cx)?;
            BoundaryShape::CylinderContainer {
                radius,
                height,
                open_top,
            }
        }
        "cylinder" => {
            let (radius, height) = radius_height(cx)?;
            BoundaryShape::SolidCylinder { radius, height }
        }
        _ => {
            // mesh
            let f = cx.require(&b.file, &span, &base, "file", what, kind)?;
            let scale = cx.opt_positive(&b.scale, &format!("{base}.scale"), 1.0)?;
            let rel = PathBuf::from(f.get_ref());
            let source = if rel.is_absolute() {
                rel
            } else {
                file.parent().unwrap_or(Path::new("")).join(rel)
            };
            let (vertices, triangles) = load_mesh(&source, scale)
                .map_err(|m| cx.err(Some(f.span()), format!("{base}.file"), m))?;
            BoundaryShape::Mesh {
                source,
                vertices,
                triangles,
            }
        }
    };
    Ok(Boundary {
        name: b
            .name
            .as_ref()
            .map_or_else(|| base.clone(), |n| n.get_ref().clone()),
        shape,
        position,
        orientation,
        material,
        motion,
        velocity: vel(&b.velocity),
        angular_velocity: vel(&b.angular_velocity),
        schedule: schedule(
            cx,
            &b.schedule,
            &base,
            motion,
            dt,
            (vel(&b.velocity), vel(&b.angular_velocity)),
            false,
        )?,
        mass,
    })
}

/// A dynamic boundary's explicit `mass` and `inertia` (principal moments, body frame), both
/// required and positive; other boundaries may not give them.
fn boundary_mass(
    cx: &Cx<'_>,
    b: &RawBoundary,
    span: &Range<usize>,
    base: &str,
    motion: Motion,
) -> R<Option<(f64, [f64; 3])>> {
    if motion != Motion::Dynamic {
        if let Some(s) = b
            .mass
            .as_ref()
            .map(|m| m.span())
            .or(b.inertia.as_ref().map(|i| i.span()))
        {
            let f = if b.mass.is_some() { "mass" } else { "inertia" };
            return Err(cx.err(
                Some(s),
                format!("{base}.{f}"),
                "only a dynamic boundary (motion = \"dynamic\") has mass and inertia",
            ));
        }
        return Ok(None);
    }
    let need = |f: &str| {
        cx.err(
            Some(span.clone()),
            format!("{base}.{f}"),
            format!("a dynamic boundary needs an explicit `{f}` (boundary shapes have no mass properties)"),
        )
    };
    let m = cx.positive(
        b.mass.as_ref().ok_or_else(|| need("mass"))?,
        &format!("{base}.mass"),
    )?;
    let i = b.inertia.as_ref().ok_or_else(|| need("inertia"))?;
    if let Some(&x) = i.get_ref().iter().find(|&&x| x.is_nan() || x <= 0.0) {
        return Err(cx.err(
            Some(i.span()),
            format!("{base}.inertia"),
            format!("principal moments must be positive (got {})", Num(x)),
        ));
    }
    Ok(Some((m, *i.get_ref())))
}

/// `ceil(n · scale)`, at least 1.
fn scaled_count(n: usize, scale: f64) -> usize {
    if scale >= 1.0 {
        n
    } else {
        ((n as f64 * scale).ceil() as usize).clamp(1, n.max(1))
    }
}

/// A kinematic body's or boundary's `schedule`, resolved: every entry carries both
/// velocities (a missing key keeps the previous value, starting from `initial`).
fn schedule(
    cx: &Cx<'_>,
    raw: &O<Vec<S<RawScheduleEntry>>>,
    base: &str,
    motion: Motion,
    dt: f64,
    initial: ([f64; 3], [f64; 3]),
    allow_release: bool,
) -> R<Vec<ScheduleEntry>> {
    let Some(raw) = raw else {
        return Ok(Vec::new());
    };
    let path = format!("{base}.schedule");
    if motion != Motion::Kinematic {
        return Err(cx.err(
            Some(raw.span()),
            path,
            "a schedule prescribes motion: it needs motion = \"kinematic\"",
        ));
    }
    let (mut v, mut w) = initial;
    let mut out: Vec<ScheduleEntry> = Vec::new();
    let entries = raw.get_ref();
    for (k, e) in entries.iter().enumerate() {
        let ep = format!("{path}[{k}]");
        let span = e.span();
        let e = e.get_ref();
        let t = cx.non_negative(&e.t, &format!("{ep}.t"))?;
        let step = (t / dt).round() as u64;
        if let Some(prev) = out.last() {
            if step <= prev.step {
                return Err(cx.err(
                    Some(e.t.span()),
                    format!("{ep}.t"),
                    format!(
                        "must be at least one time step (dt = {} s) after the previous entry (t = {})",
                        Num(dt),
                        Num(prev.t)
                    ),
                ));
            }
        }
        let release = e.release.as_ref().is_some_and(|r| *r.get_ref());
        if release && !allow_release {
            return Err(cx.err(
                e.release.as_ref().map(|r| r.span()),
                format!("{ep}.release"),
                "a boundary cannot be released (boundaries are never dynamic)",
            ));
        }
        if release && k + 1 != entries.len() {
            return Err(cx.err(
                Some(span),
                format!("{ep}.release"),
                "the release must be the last entry (the body is dynamic afterwards)",
            ));
        }
        if let Some(x) = &e.velocity {
            v = *x.get_ref();
        }
        if let Some(x) = &e.angular_velocity {
            w = *x.get_ref();
        }
        out.push(ScheduleEntry {
            t,
            step,
            velocity: v,
            angular_velocity: w,
            release,
        });
    }
    Ok(out)
}

/// Whether `s` can be a CSV column name of a measurement.
fn valid_column(s: &str) -> bool {
    !s.is_empty() && !s.contains([',', '"', '\n', '\r']) && s.trim() == s && s != "time"
}

/// One `[[measure]]` table: its name (the CSV file's), how often it samples and what.
fn measure(
    cx: &Cx<'_>,
    m: &S<RawMeasure>,
    i: usize,
    dt: f64,
    frame_every: u64,
    boundaries: &[Boundary],
    materials: &[Material],
) -> R<Measure> {
    let base = format!("measure[{i}]");
    let span = m.span();
    let m = m.get_ref();
    let name = m.name.get_ref().clone();
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(cx.err(
            Some(m.name.span()),
            format!("{base}.name"),
            format!("`{name}` is not a valid measurement name (it names the file NAME.csv: use letters, digits, `_` and `-`)"),
        ));
    }
    let every = match (&m.every, &m.interval) {
        (Some(_), Some(iv)) => {
            return Err(cx.err(
                Some(iv.span()),
                format!("{base}.interval"),
                "give either `every` or `interval`, not both",
            ))
        }
        (Some(e), None) => cx.int_range(e, &format!("{base}.every"), 1, i64::MAX)?,
        (None, Some(iv)) => {
            let t = cx.positive(iv, &format!("{base}.interval"))?;
            ((t / dt).round() as u64).max(1)
        }
        (None, None) => frame_every,
    };
    let t = MeasureTable {
        cx,
        m,
        span,
        base: &base,
    };
    let kind = measure_kind(&t, boundaries, materials)?;
    Ok(Measure { name, every, kind })
}

/// A `[[measure]]` table being read: its keys, its span and its field path.
struct MeasureTable<'a> {
    cx: &'a Cx<'a>,
    m: &'a RawMeasure,
    span: Range<usize>,
    base: &'a str,
}

impl<'a> MeasureTable<'a> {
    /// A key the measurement's kind requires.
    fn require<T>(&self, field: &'a O<T>, name: &str) -> R<&'a S<T>> {
        let kind = self.m.kind.get_ref().as_str();
        let what = "measurement kind";
        (self.cx).require(field, &self.span, self.base, name, what, kind)
    }

    fn field(&self, name: &str) -> String {
        format!("{}.{name}", self.base)
    }
}

/// The measurement's kind and its keys, each refused where it does not apply.
fn measure_kind(
    t: &MeasureTable,
    boundaries: &[Boundary],
    materials: &[Material],
) -> R<MeasureKind> {
    let (cx, m, base) = (t.cx, t.m, t.base);
    let kind = m.kind.get_ref().as_str();
    let what = "measurement kind";
    let fields =
        present!(m; point, normal, radius, quantile, axis, bins, range, boundary, about, min, max);
    let only = |allowed: &[&str]| cx.only(base, what, kind, &fields, allowed);
    Ok(match kind {
        "mass_flow" => {
            only(&["point", "normal", "radius"])?;
            let point = *t.require(&m.point, "point")?.get_ref();
            let n = t.require(&m.normal, "normal")?;
            let normal = cx.direction(n, &t.field("normal"), "normal")?.to_array();
            let radius = (m.radius.as_ref())
                .map(|r| cx.positive(r, &t.field("radius")))
                .transpose()?;
            MeasureKind::MassFlow {
                point,
                normal,
                radius,
            }
        }
        "bed_height" => {
            only(&["quantile"])?;
            bed_height_measure(t)?
        }
        "surface_profile" => {
            only(&["axis", "bins", "range"])?;
            surface_profile_measure(t)?
        }
        "kinetic_energy" => {
            only(&[])?;
            if let Some(bad) = materials
                .iter()
                .find(|mat| !valid_column(&mat.name) || mat.name == "total")
            {
                return Err(cx.err(
                    Some(t.span.clone()),
                    base,
                    format!("material name `{}` cannot be a column of this measurement (no commas, quotes, line breaks or surrounding spaces; not `time` or `total`)", bad.name),
                ));
            }
            MeasureKind::KineticEnergy
        }
        "coordination" => {
            only(&[])?;
            MeasureKind::Coordination
        }
        "boundary_force" => {
            only(&["boundary", "about"])?;
            boundary_force_measure(t, boundaries)?
        }
        "repose_angle" => repose_measure(cx, m, base, &fields)?,
        "stress" | "solid_fraction" => {
            only(&["min", "max"])?;
            region_measure(t, kind == "stress")?
        }
        other => {
            return Err(cx.err(
                Some(m.kind.span()),
                t.field("kind"),
                format!("unknown measurement kind `{other}` (expected one of: mass_flow, bed_height, surface_profile, kinetic_energy, coordination, boundary_force, repose_angle, stress, solid_fraction)"),
            ))
        }
    })
}

/// `kind = "bed_height"`: the quantile of the grains' heights (0.95 when not given).
fn bed_height_measure(t: &MeasureTable) -> R<MeasureKind> {
    let quantile = match &t.m.quantile {
        None => 0.95,
        Some(q) => {
            let x = *q.get_ref();
            if !(0.0..=1.0).contains(&x) {
                return Err(t.cx.err(
                    Some(q.span()),
                    t.field("quantile"),
                    format!("must be between 0 and 1 (got {})", Num(x)),
                ));
            }
            x
        }
    };
    Ok(MeasureKind::BedHeight { quantile })
}

/// `kind = "surface_profile"`: the top of the bed in `bins` bins over `range` along x or y.
fn surface_profile_measure(t: &MeasureTable) -> R<MeasureKind> {
    let (cx, m) = (t.cx, t.m);
    let a = t.require(&m.axis, "axis")?;
    let axis = match a.get_ref().as_str() {
        "x" => 0,
        "y" => 1,
        other => {
            return Err(cx.err(
                Some(a.span()),
                t.field("axis"),
                format!("unknown axis `{other}` (expected \"x\" or \"y\")"),
            ))
        }
    };
    let b = t.require(&m.bins, "bins")?;
    let bins = cx.int_range(b, &t.field("bins"), 1, 1000)? as usize;
    let r = t.require(&m.range, "range")?;
    let range = *r.get_ref();
    if range[1] <= range[0] {
        return Err(cx.err(
            Some(r.span()),
            t.field("range"),
            format!("must be [low, high] with low < high (got {range:?})"),
        ));
    }
    Ok(MeasureKind::SurfaceProfile { axis, bins, range })
}

/// `kind = "boundary_force"`: a boundary by name, the moment taken about `about` (its
/// position when not given).
fn boundary_force_measure(t: &MeasureTable, boundaries: &[Boundary]) -> R<MeasureKind> {
    let b = t.require(&t.m.boundary, "boundary")?;
    let Some(k) = boundaries.iter().position(|x| x.name == *b.get_ref()) else {
        let known: Vec<&str> = boundaries.iter().map(|x| x.name.as_str()).collect();
        return Err(t.cx.err(
            Some(b.span()),
            t.field("boundary"),
            format!(
                "unknown boundary `{}` (defined: {})",
                b.get_ref(),
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            ),
        ));
    };
    let about = (t.m.about.as_ref()).map_or(boundaries[k].position, |a| *a.get_ref());
    Ok(MeasureKind::BoundaryForce { boundary: k, about })
}

/// `kind = "stress"` or `"solid_fraction"`: an axis-aligned box `min`..`max`.
fn region_measure(t: &MeasureTable, stress: bool) -> R<MeasureKind> {
    let lo = t.require(&t.m.min, "min")?;
    let hi = t.require(&t.m.max, "max")?;
    let (min, max) = (*lo.get_ref(), *hi.get_ref());
    if (0..3).any(|k| max[k] <= min[k]) {
        return Err(t.cx.err(
            Some(hi.span()),
            t.field("max"),
            format!(
                "must exceed `min` (line {}) on every axis: the region is empty",
                t.cx.line(&lo.span())
            ),
        ));
    }
    Ok(if stress {
        MeasureKind::Stress { min, max }
    } else {
        MeasureKind::SolidFraction { min, max }
    })
}

/// `kind = "repose_angle"`: optional `axis` ("r" conical heap, default; "x" or "y" a planar
/// heap), `point` (the heap's axis; its z is ignored) and `range` (the flank band of
/// distances from the axis, m).
fn repose_measure(
    cx: &Cx,
    m: &RawMeasure,
    base: &str,
    fields: &[(&str, Option<Range<usize>>)],
) -> R<MeasureKind> {
    use crate::HeapAxis;
    cx.only(
        base,
        "measurement kind",
        "repose_angle",
        fields,
        &["axis", "point", "range"],
    )?;
    let axis = match m.axis.as_ref().map(|a| (a, a.get_ref().as_str())) {
        None | Some((_, "r")) => HeapAxis::Radial,
        Some((_, "x")) => HeapAxis::X,
        Some((_, "y")) => HeapAxis::Y,
        Some((a, other)) => {
            return Err(cx.err(
                Some(a.span()),
                format!("{base}.axis"),
                format!("unknown axis `{other}` (expected \"r\", \"x\" or \"y\")"),
            ))
        }
    };
    let centre = m.point.as_ref().map(|p| {
        let p = p.get_ref();
        [p[0], p[1]]
    });
    let flank = match &m.range {
        None => None,
        Some(r) => {
            let x = *r.get_ref();
            if !(x[0] >= 0.0 && x[1] > x[0] && x[1].is_finite()) {
                return Err(cx.err(
                    Some(r.span()),
                    format!("{base}.range"),
                    format!("must be [low, high] distances from the axis with 0 ≤ low < high (got {x:?})"),
                ));
            }
            Some(x)
        }
    };
    Ok(MeasureKind::ReposeAngle {
        axis,
        centre,
        flank,
    })
}

/// Section 7 of [`build`]: `[solver]`, with the defaults of a scene that has none.
fn solver_section(cx: &Cx, raw: &RawScene, r_min: f64) -> R<SolverSettings> {
    let default = RawSolver {
        kind: None,
        max_iterations: None,
        tolerance: None,
        omega: None,
        recovery_speed: None,
        slop: None,
        stabilisation: None,
        warm_start: None,
        envelope: None,
        cone: None,
        max_outer: None,
        lcp_friction: None,
        friction_directions: None,
        max_pivots: None,
        compliance: None,
        lemke_step: None,
        coarse_slab: None,
    };
    let s = raw.solver.as_ref().map_or(&default, |s| s.get_ref());
    let kind = match &s.kind {
        None => SolverKind::default(),
        Some(k) => match k.get_ref().as_str() {
            "apgd" => SolverKind::Apgd,
            "jacobi" => SolverKind::Jacobi,
            "gauss_seidel" => SolverKind::GaussSeidel,
            "lemke" => SolverKind::Lemke,
            other => {
                return Err(cx.err(
                    Some(k.span()),
                    "solver.kind",
                    format!("unknown solver kind `{other}` (expected one of: apgd, jacobi, gauss_seidel, lemke)"),
                ))
            }
        },
    };
    let cone = match &s.cone {
        None => Cone::default(),
        Some(k) => match k.get_ref().as_str() {
            "exact" => Cone::Exact,
            "relaxed" => Cone::Relaxed,
            other => {
                return Err(cx.err(
                    Some(k.span()),
                    "solver.cone",
                    format!("unknown cone `{other}` (expected one of: exact, relaxed)"),
                ))
            }
        },
    };
    let (lcp_friction, max_pivots) = lemke_fields(cx, s, kind)?;
    let compliance =
        cx.opt_non_negative(&s.compliance, "solver.compliance", defaults::COMPLIANCE)?;
    let lemke_step = lemke_step_field(cx, s)?;
    Ok(SolverSettings {
        kind,
        cone,
        max_outer: cx.opt_int(
            &s.max_outer,
            "solver.max_outer",
            1,
            64,
            defaults::MAX_OUTER.into(),
        )? as u32,
        max_iterations: cx.opt_int(
            &s.max_iterations,
            "solver.max_iterations",
            1,
            MAX_ITERATIONS,
            defaults::MAX_ITERATIONS.into(),
        )? as u32,
        tolerance: cx.opt_positive(&s.tolerance, "solver.tolerance", defaults::TOLERANCE)?,
        omega: cx.opt_positive(
            &s.omega,
            "solver.omega",
            match kind {
                SolverKind::GaussSeidel => defaults::GAUSS_SEIDEL_OMEGA,
                _ => defaults::OMEGA,
            },
        )?,
        recovery_speed: cx.opt_non_negative(
            &s.recovery_speed,
            "solver.recovery_speed",
            defaults::RECOVERY_SPEED,
        )?,
        slop: cx.opt_non_negative(&s.slop, "solver.slop", DEFAULT_SLOP_PER_RADIUS * r_min)?,
        stabilisation: stabilisation(cx, s)?,
        warm_start: s
            .warm_start
            .as_ref()
            .map_or(defaults::WARM_START, |w| *w.get_ref()),
        envelope: cx.opt_non_negative(
            &s.envelope,
            "solver.envelope",
            defaults::ENVELOPE_PER_RADIUS * r_min,
        )?,
        lcp_friction,
        max_pivots,
        compliance,
        lemke_step,
        coarse_slab: coarse_slab_field(cx, s, kind)?,
    })
}

/// `[solver] coarse_slab`: Gauss–Seidel's slab height (m), 0 (none) by default.
fn coarse_slab_field(cx: &Cx, s: &RawSolver, kind: SolverKind) -> R<f64> {
    let Some(v) = &s.coarse_slab else {
        return Ok(0.0);
    };
    if kind != SolverKind::GaussSeidel {
        return Err(cx.err(
            Some(v.span()),
            "solver.coarse_slab",
            "applies to kind = \"gauss_seidel\" only (its coarse correction)".to_string(),
        ));
    }
    cx.positive(v, "solver.coarse_slab")
}

/// `[solver] lemke_step`: where a Lemke step runs (`bristlecone_model::solver::LemkeStep`).
fn lemke_step_field(cx: &Cx, s: &RawSolver) -> R<bristlecone_model::solver::LemkeStep> {
    use bristlecone_model::solver::LemkeStep;
    let Some(v) = &s.lemke_step else {
        return Ok(LemkeStep::Auto);
    };
    match v.get_ref().as_str() {
        "auto" => Ok(LemkeStep::Auto),
        "cpu" => Ok(LemkeStep::Cpu),
        "gpu" => Ok(LemkeStep::Gpu),
        other => Err(cx.err(
            Some(v.span()),
            "solver.lemke_step",
            format!("unknown lemke_step `{other}` (expected one of: auto, cpu, gpu)"),
        )),
    }
}

/// `solver.stabilisation`: β in (0, 1] (above 1 a penetration is over-corrected into a gap).
fn stabilisation(cx: &Cx, s: &RawSolver) -> R<f64> {
    let beta = cx.opt_positive(
        &s.stabilisation,
        "solver.stabilisation",
        DEFAULT_STABILISATION,
    )?;
    if beta > 1.0 {
        let span = s.stabilisation.as_ref().map(|v| v.span());
        return Err(cx.err(
            span,
            "solver.stabilisation",
            format!(
                "must be at most 1 (got {}): β > 1 pushes a penetration out past contact",
                Num(beta)
            ),
        ));
    }
    Ok(beta)
}

/// Coloured Gauss–Seidel (`kind = "gauss_seidel"`): ω in (0, 2) (a block's over-relaxed
/// step overshoots its minimiser by ω − 1: beyond 2 it moves away). Every row has its block
/// step (contacts, rolling rows, joint and patch blocks), so no model is refused.
fn gauss_seidel_check(cx: &Cx, raw: &RawScene, solver: &SolverSettings) -> R<()> {
    if solver.kind != SolverKind::GaussSeidel {
        return Ok(());
    }
    let raw_solver = raw.solver.as_ref().map(|s| s.get_ref());
    if solver.omega >= 2.0 {
        let span = raw_solver.and_then(|s| s.omega.as_ref()).map(|o| o.span());
        return Err(cx.err(
            span,
            "solver.omega",
            format!(
                "omega = {} must be below 2 for kind = \"gauss_seidel\" (the over-relaxation \
                 of each block's step)",
                Num(solver.omega)
            ),
        ));
    }
    Ok(())
}

/// The first non-Coulomb material model (kind, material index) cannot run with kind =
/// "lemke".
fn lemke_refuses_models(
    cx: &Cx,
    raw: &RawScene,
    solver: &SolverSettings,
    other_model: &Option<(String, usize)>,
) -> R<()> {
    // The Lemke path solves rigid Coulomb contacts only (its own `compliance` aside): a
    // material model it would not honour is refused, never dropped.
    if solver.kind == SolverKind::Lemke {
        for (i, m) in raw.material.iter().enumerate() {
            let m = m.get_ref();
            for (name, v) in [
                ("rolling_friction", &m.rolling_friction),
                ("spinning_friction", &m.spinning_friction),
                ("cohesion", &m.cohesion),
                ("adhesion_energy", &m.adhesion_energy),
            ] {
                if let Some(v) = v.as_ref().filter(|v| *v.get_ref() != 0.0) {
                    return Err(cx.err(
                        Some(v.span()),
                        format!("material[{i}].{name}"),
                        format!(
                            "{name} is solved by the GPU solvers only (apgd, jacobi); kind = \
                             \"lemke\" has no rows for it"
                        ),
                    ));
                }
            }
        }
    }
    if let (SolverKind::Lemke, Some((kind, i))) = (solver.kind, other_model) {
        let span = raw.material[*i]
            .get_ref()
            .model
            .as_ref()
            .map(|fm| fm.get_ref().kind.span());
        return Err(cx.err(
            span,
            format!("material[{i}].model.kind"),
            format!(
                "friction model `{kind}` is solved by the GPU solvers only; kind = \"lemke\" \
                 solves rigid Coulomb contacts (use [solver] compliance for a soft normal)"
            ),
        ));
    }
    Ok(())
}

/// The exact solver's fields of `[solver]`, each rejected where it does not apply: the
/// iterative solvers' `omega`, `max_iterations`, `tolerance` for lemke, lemke's for them.
fn lemke_fields(
    cx: &Cx,
    s: &RawSolver,
    kind: SolverKind,
) -> R<(bristlecone_cpu::reference::lcp::LcpFriction, u32)> {
    use bristlecone_cpu::reference::lcp::LcpFriction;
    let name = match kind {
        SolverKind::Apgd => "apgd",
        SolverKind::Jacobi => "jacobi",
        SolverKind::GaussSeidel => "gauss_seidel",
        SolverKind::Lemke => "lemke",
    };
    let present = [
        ("omega", s.omega.as_ref().map(|v| v.span())),
        (
            "max_iterations",
            s.max_iterations.as_ref().map(|v| v.span()),
        ),
        ("tolerance", s.tolerance.as_ref().map(|v| v.span())),
        ("cone", s.cone.as_ref().map(|v| v.span())),
        ("max_outer", s.max_outer.as_ref().map(|v| v.span())),
        ("slop", s.slop.as_ref().map(|v| v.span())),
        ("stabilisation", s.stabilisation.as_ref().map(|v| v.span())),
        ("lcp_friction", s.lcp_friction.as_ref().map(|v| v.span())),
        (
            "friction_directions",
            s.friction_directions.as_ref().map(|v| v.span()),
        ),
        ("max_pivots", s.max_pivots.as_ref().map(|v| v.span())),
        ("compliance", s.compliance.as_ref().map(|v| v.span())),
        ("lemke_step", s.lemke_step.as_ref().map(|v| v.span())),
        ("coarse_slab", s.coarse_slab.as_ref().map(|v| v.span())),
    ];
    let allowed: &[&str] = match kind {
        SolverKind::Lemke => &[
            "lcp_friction",
            "friction_directions",
            "max_pivots",
            "compliance",
            "lemke_step",
        ],
        _ => &[
            "omega",
            "max_iterations",
            "tolerance",
            "cone",
            "max_outer",
            "slop",
            "stabilisation",
            "coarse_slab",
        ],
    };
    cx.only("solver", "solver", name, &present, allowed)?;
    let surplus = match &s.lcp_friction {
        None => false,
        Some(f) => match f.get_ref().as_str() {
            "pyramid" => false,
            "surplus" => true,
            other => {
                return Err(cx.err(
                    Some(f.span()),
                    "solver.lcp_friction",
                    format!("unknown LCP friction `{other}` (expected one of: pyramid, surplus)"),
                ))
            }
        },
    };
    if let (true, Some(d)) = (surplus, &s.friction_directions) {
        return Err(cx.err(
            Some(d.span()),
            "solver.friction_directions",
            "`friction_directions` applies to lcp_friction = \"pyramid\"; \"surplus\" has its fixed directions ±u, ±w",
        ));
    }
    let friction = if surplus {
        LcpFriction::Surplus
    } else {
        let k = match &s.friction_directions {
            None => defaults::FRICTION_DIRECTIONS.into(),
            Some(d) if (2..=64).contains(d.get_ref()) => *d.get_ref(),
            Some(d) => {
                return Err(cx.err(
                    Some(d.span()),
                    "solver.friction_directions",
                    format!("must be between 2 and 64 (got {})", d.get_ref()),
                ))
            }
        };
        LcpFriction::Pyramid {
            directions: k as u32,
        }
    };
    let pivots = cx.opt_int(&s.max_pivots, "solver.max_pivots", 0, u32::MAX as i64, 0)?;
    Ok((friction, pivots as u32))
}

/// Lemke's dense pivoting is O(rows³) per solve: a settled pile has ~3 contacts per body, so
/// above 100 bodies (a few hundred contacts) warn that it will not be real-time.
fn lemke_warning(cx: &mut Cx, raw: &RawScene, solver: &SolverSettings, bodies: usize) {
    if solver.kind != SolverKind::Lemke || bodies <= 100 {
        return;
    }
    let span = raw
        .solver
        .as_ref()
        .and_then(|s| s.get_ref().kind.as_ref())
        .map(|k| k.span());
    cx.warn(
        span,
        "solver.kind",
        format!("kind = \"lemke\" with {bodies} bodies: expect a few hundred contacts or more; Lemke pivots a dense LCP (cost grows with the cube of its rows), meant for small systems; use apgd for piles"),
    );
}
