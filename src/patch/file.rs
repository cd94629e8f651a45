//! `bristlecone patch FILE`: a patch description in TOML (surface, pressure, LuGre
//! parameters in the paper's symbols, twist history, dt, steady or dynamic, explicit or
//! implicit), evaluated on the GPU (or its f64 twin) into a wrench history.
//!
//! ```toml
//! [patch]
//! grid = [21, 21]          # cells in x and y (default 21 x 21)
//! cell = 0.002             # cell edge [m] (default: the outline's bounding box / grid)
//! normal_force = 10.0      # f_N [N]
//!
//! [patch.pressure]
//! shape = "circle"         # circle | rectangle | line | polygon | grid | xydas_kao
//! radius = 0.02            # circle; rectangle: a, b; line: length; polygon: vertices;
//!                          # grid: weights (ny rows of nx); xydas_kao: c, gamma, k
//! gradient = [0.0, 0.0]    # optional linear pressure gradient [1/m] (outlines only)
//!
//! [lugre]                  # Table I of the paper unless given
//! mu_c = 1.0
//! mu_s = 1.2
//! v_s = 1e-3
//! gamma = 2.0
//! sigma0 = 1e6
//! sigma1 = 800.0
//! sigma2 = 0.2
//! elasto_plastic = true
//! z_ba_ratio = 0.9
//! stability = true         # explicit only: the authors' deflection-rate limit
//!
//! [run]
//! model = "distributed"    # distributed | reduced
//! mode = "dynamic"         # dynamic | steady
//! integrator = "implicit"  # implicit | explicit
//! dt = 1e-4
//! duration = 0.5
//! n_ls = 20                # reduced: limit-surface cells per quarter turn
//! ellipsoid = false        # reduced: ellipsoid approximation instead of the table
//! device = "gpu"           # gpu | cpu (the f64 twin)
//!
//! [[twist]]                # keyframes, linear in between, held after the last
//! t = 0.0
//! v = [0.01, 0.0, 0.0]     # (v_x, v_y, omega) at the patch centre [m/s, m/s, rad/s]
//! ```

use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_spanned::Spanned;
use toml::de::DeTable;

use super::cpu::{self, Patch, ReducedPatch};
use super::{
    DistributedCpu, DistributedGpu, Integrator, LugreParams, Outline, PatchShape, Pressure,
    ReducedCpu, ReducedGpu, Twist, Wrench,
};
use crate::gpu::GpuContext;
use crate::scene::span::{self, PathIndex, Source};
use crate::scene::SceneError;

type S<T> = Spanned<T>;
type O<T> = Option<Spanned<T>>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    patch: S<RawPatch>,
    #[serde(default)]
    lugre: Option<RawLugre>,
    run: S<RawRun>,
    twist: Option<S<Vec<RawKey>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPatch {
    grid: O<[i64; 2]>,
    cell: O<f64>,
    normal_force: S<f64>,
    pressure: S<RawPressure>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPressure {
    shape: S<String>,
    radius: O<f64>,
    a: O<f64>,
    b: O<f64>,
    length: O<f64>,
    vertices: O<Vec<[f64; 2]>>,
    weights: O<Vec<Vec<f64>>>,
    c: O<f64>,
    gamma: O<f64>,
    k: O<f64>,
    gradient: O<[f64; 2]>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLugre {
    mu_c: O<f64>,
    mu_s: O<f64>,
    v_s: O<f64>,
    gamma: O<f64>,
    sigma0: O<f64>,
    sigma1: O<f64>,
    sigma2: O<f64>,
    elasto_plastic: Option<bool>,
    z_ba_ratio: O<f64>,
    stability: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRun {
    model: O<String>,
    mode: O<String>,
    integrator: O<String>,
    dt: S<f64>,
    duration: S<f64>,
    n_ls: O<i64>,
    ellipsoid: O<bool>,
    device: O<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawKey {
    t: S<f64>,
    v: S<[f64; 3]>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Model {
    Distributed,
    Reduced,
}

/// A validated patch description.
#[derive(Clone, Debug)]
pub struct PatchFile {
    pub patch: Patch,
    pub params: LugreParams,
    pub model: Model,
    pub steady: bool,
    pub integrator: Integrator,
    pub dt: f64,
    pub steps: usize,
    pub n_ls: usize,
    pub ellipsoid: bool,
    pub gpu: bool,
    /// Twist keyframes `(t, twist)`, times increasing.
    pub keys: Vec<(f64, Twist)>,
}

struct Cx<'a> {
    file: &'a Path,
    src: Source<'a>,
}

impl Cx<'_> {
    fn err(&self, span: Option<Range<usize>>, field: &str, msg: impl Into<String>) -> SceneError {
        span::error_at(self.file, &self.src, span, field, msg)
    }

    fn positive(&self, v: &S<f64>, field: &str) -> Result<f64, SceneError> {
        let x = *v.get_ref();
        if x.is_finite() && x > 0.0 {
            Ok(x)
        } else {
            Err(self.err(
                Some(v.span()),
                field,
                format!("must be finite and > 0 (got {x})"),
            ))
        }
    }

    fn need<'b, T>(
        &self,
        v: &'b O<T>,
        span: Range<usize>,
        field: &str,
        why: &str,
    ) -> Result<&'b S<T>, SceneError> {
        v.as_ref()
            .ok_or_else(|| self.err(Some(span), field, format!("missing (needed for {why})")))
    }

    fn choice(
        &self,
        v: &O<String>,
        field: &str,
        options: &[&str],
        default: &str,
    ) -> Result<String, SceneError> {
        match v {
            None => Ok(default.to_string()),
            Some(s) if options.contains(&s.get_ref().as_str()) => Ok(s.get_ref().clone()),
            Some(s) => Err(self.err(
                Some(s.span()),
                field,
                format!(
                    "unknown value `{}` (one of: {})",
                    s.get_ref(),
                    options.join(", ")
                ),
            )),
        }
    }
}

/// Reads and validates a patch file; errors name file, line and field.
pub fn load(path: &Path) -> Result<PatchFile, SceneError> {
    let text = crate::input::read_toml(path, "patch file").map_err(|e| SceneError {
        file: path.to_path_buf(),
        line: None,
        column: None,
        field: String::new(),
        message: format!("cannot read: {e}"),
    })?;
    parse_str(&text, path)
}

pub fn parse_str(text: &str, file: &Path) -> Result<PatchFile, SceneError> {
    let cx = Cx {
        file,
        src: Source::new(text),
    };
    let toml_err = |e: toml::de::Error, index: Option<&PathIndex>| {
        let (span, field, msg) = span::toml_error_field(&e, index);
        cx.err(span, &field, msg)
    };
    let doc = DeTable::parse(text).map_err(|e| toml_err(e, None))?;
    let index = PathIndex::new(doc.get_ref());
    if let Some((span, path, lit)) = index.non_finite.first() {
        return Err(cx.err(
            Some(span.clone()),
            path,
            format!("must be a finite number (got `{lit}`)"),
        ));
    }
    let raw: RawFile = toml::from_str(text).map_err(|e| toml_err(e, Some(&index)))?;

    let params = lugre(&cx, raw.lugre.as_ref())?;
    let patch = patch_section(&cx, &raw.patch)?;
    let run = run_section(&cx, raw.run.get_ref())?;
    let keys = twist_keys(&cx, raw.twist.as_ref())?;
    Ok(PatchFile {
        patch,
        params,
        model: run.model,
        steady: run.steady,
        integrator: run.integrator,
        dt: run.dt,
        steps: run.steps,
        n_ls: run.n_ls,
        ellipsoid: run.ellipsoid,
        gpu: run.gpu,
        keys,
    })
}

/// `[patch]`: the grid, cell, pressure and normal force.
fn patch_section(cx: &Cx, raw: &S<RawPatch>) -> Result<Patch, SceneError> {
    let rp = raw.get_ref();
    let f_n = cx.positive(&rp.normal_force, "patch.normal_force")?;
    let (nx, ny) = match &rp.grid {
        None => (21, 21),
        Some(g) => {
            let [x, y] = *g.get_ref();
            if !(1..=256).contains(&x) || !(1..=256).contains(&y) {
                return Err(cx.err(
                    Some(g.span()),
                    "patch.grid",
                    format!("each side must lie in 1..=256 (got [{x}, {y}])"),
                ));
            }
            (x as usize, y as usize)
        }
    };
    let cell = rp
        .cell
        .as_ref()
        .map(|c| cx.positive(c, "patch.cell"))
        .transpose()?;
    let pressure = pressure(cx, &rp.pressure, nx, ny)?;
    let shape = PatchShape::new(&pressure, nx, ny, cell, f_n)
        .map_err(|m| cx.err(Some(rp.pressure.span()), "patch.pressure", m))?;

    Ok(Patch { shape, f_n })
}

/// `[run]`, checked: what the patch command runs.
struct RunSection {
    model: Model,
    steady: bool,
    integrator: Integrator,
    dt: f64,
    steps: usize,
    n_ls: usize,
    ellipsoid: bool,
    gpu: bool,
}

fn run_section(cx: &Cx, run: &RawRun) -> Result<RunSection, SceneError> {
    let dt = cx.positive(&run.dt, "run.dt")?;
    let duration = cx.positive(&run.duration, "run.duration")?;
    let steps = (duration / dt).round() as usize;
    if steps == 0 || steps > 10_000_000 {
        return Err(cx.err(
            Some(run.duration.span()),
            "run.duration",
            format!("gives {steps} steps of dt; allowed 1..=1e7"),
        ));
    }
    let model = match cx
        .choice(
            &run.model,
            "run.model",
            &["distributed", "reduced"],
            "distributed",
        )?
        .as_str()
    {
        "reduced" => Model::Reduced,
        _ => Model::Distributed,
    };
    let steady = cx.choice(&run.mode, "run.mode", &["dynamic", "steady"], "dynamic")? == "steady";
    let integrator = match cx
        .choice(
            &run.integrator,
            "run.integrator",
            &["implicit", "explicit"],
            "implicit",
        )?
        .as_str()
    {
        "explicit" => Integrator::Explicit,
        _ => Integrator::Implicit,
    };
    let gpu = cx.choice(&run.device, "run.device", &["gpu", "cpu"], "gpu")? == "gpu";
    for (opt, name) in [
        (run.n_ls.as_ref().map(|s| s.span()), "run.n_ls"),
        (run.ellipsoid.as_ref().map(|s| s.span()), "run.ellipsoid"),
    ] {
        if let (Some(span), Model::Distributed) = (opt, model) {
            return Err(cx.err(Some(span), name, "only used by model = \"reduced\""));
        }
    }
    if steady && run.integrator.is_some() {
        return Err(cx.err(
            run.integrator.as_ref().map(|s| s.span()),
            "run.integrator",
            "a steady-state run has no time integration",
        ));
    }
    let n_ls = match &run.n_ls {
        None => 20,
        Some(n) if (2..=256).contains(n.get_ref()) => *n.get_ref() as usize,
        Some(n) => {
            return Err(cx.err(
                Some(n.span()),
                "run.n_ls",
                format!("must lie in 2..=256 (got {})", n.get_ref()),
            ))
        }
    };
    let ellipsoid = run
        .ellipsoid
        .as_ref()
        .map(|e| *e.get_ref())
        .unwrap_or(false);

    Ok(RunSection {
        model,
        steady,
        integrator,
        dt,
        steps,
        n_ls,
        ellipsoid,
        gpu,
    })
}

/// `[[twist]]`: the keyframes, at increasing times from 0.
fn twist_keys(cx: &Cx, raw: Option<&S<Vec<RawKey>>>) -> Result<Vec<(f64, Twist)>, SceneError> {
    let Some(keys_raw) = raw else {
        return Err(cx.err(
            None,
            "twist",
            "missing [[twist]] keyframes (t, v = [v_x, v_y, omega])",
        ));
    };
    let mut keys = Vec::new();
    for (i, k) in keys_raw.get_ref().iter().enumerate() {
        let t = *k.t.get_ref();
        if t < 0.0 || keys.last().is_some_and(|(lt, _): &(f64, Twist)| t <= *lt) {
            return Err(cx.err(
                Some(k.t.span()),
                &format!("twist[{i}].t"),
                format!("keyframe times must be >= 0 and increasing (got {t})"),
            ));
        }
        let [a, b, c] = *k.v.get_ref();
        keys.push((t, Twist::new(a, b, c)));
    }
    if keys.is_empty() {
        return Err(cx.err(
            Some(keys_raw.span()),
            "twist",
            "needs at least one keyframe",
        ));
    }
    Ok(keys)
}

fn lugre(cx: &Cx, raw: Option<&RawLugre>) -> Result<LugreParams, SceneError> {
    let mut p = LugreParams::default();
    let Some(r) = raw else { return Ok(p) };
    let fields: [(&O<f64>, &mut f64, &str); 8] = [
        (&r.mu_c, &mut p.mu_c, "mu_c"),
        (&r.mu_s, &mut p.mu_s, "mu_s"),
        (&r.v_s, &mut p.v_s, "v_s"),
        (&r.gamma, &mut p.gamma, "gamma"),
        (&r.sigma0, &mut p.sigma0, "sigma0"),
        (&r.sigma1, &mut p.sigma1, "sigma1"),
        (&r.sigma2, &mut p.sigma2, "sigma2"),
        (&r.z_ba_ratio, &mut p.z_ba_ratio, "z_ba_ratio"),
    ];
    let mut spans = Vec::new();
    for (v, slot, name) in fields {
        if let Some(v) = v {
            *slot = *v.get_ref();
            spans.push((name, v.span()));
        }
    }
    p.elasto_plastic = r.elasto_plastic.unwrap_or(p.elasto_plastic);
    p.stability = r.stability.unwrap_or(p.stability);
    p.validate().map_err(|m| {
        let name = m.split(' ').next().unwrap_or("");
        let span = spans
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, s)| s.clone());
        cx.err(span, &format!("lugre.{name}"), m)
    })?;
    Ok(p)
}

fn pressure(cx: &Cx, raw: &S<RawPressure>, nx: usize, ny: usize) -> Result<Pressure, SceneError> {
    let span = raw.span();
    let r = raw.get_ref();
    let shape = r.shape.get_ref().as_str();
    let pos = |v: &O<f64>, name: &str| -> Result<f64, SceneError> {
        cx.positive(
            cx.need(
                v,
                span.clone(),
                &format!("patch.pressure.{name}"),
                &format!("shape = \"{shape}\""),
            )?,
            &format!("patch.pressure.{name}"),
        )
    };
    // Every field given must be used by the chosen shape.
    let used: &[&str] = match shape {
        "circle" => &["radius", "gradient"],
        "rectangle" => &["a", "b", "gradient"],
        "line" => &["length", "gradient"],
        "polygon" => &["vertices", "gradient"],
        "grid" => &["weights"],
        "xydas_kao" => &["c", "gamma", "k"],
        other => {
            return Err(cx.err(
                Some(r.shape.span()),
                "patch.pressure.shape",
                format!("unknown shape `{other}` (one of: circle, rectangle, line, polygon, grid, xydas_kao)"),
            ))
        }
    };
    let given: [(&str, Option<Range<usize>>); 10] = [
        ("radius", r.radius.as_ref().map(|s| s.span())),
        ("a", r.a.as_ref().map(|s| s.span())),
        ("b", r.b.as_ref().map(|s| s.span())),
        ("length", r.length.as_ref().map(|s| s.span())),
        ("vertices", r.vertices.as_ref().map(|s| s.span())),
        ("weights", r.weights.as_ref().map(|s| s.span())),
        ("c", r.c.as_ref().map(|s| s.span())),
        ("gamma", r.gamma.as_ref().map(|s| s.span())),
        ("k", r.k.as_ref().map(|s| s.span())),
        ("gradient", r.gradient.as_ref().map(|s| s.span())),
    ];
    for (name, sp) in given {
        if let Some(sp) = sp {
            if !used.contains(&name) {
                return Err(cx.err(
                    Some(sp),
                    &format!("patch.pressure.{name}"),
                    format!(
                        "not used by shape = \"{shape}\" (it takes: {})",
                        used.join(", ")
                    ),
                ));
            }
        }
    }
    let outline = match shape {
        "circle" => Outline::Circle {
            radius: pos(&r.radius, "radius")?,
        },
        "rectangle" => Outline::Rectangle {
            a: pos(&r.a, "a")?,
            b: pos(&r.b, "b")?,
        },
        "line" => Outline::Line {
            length: pos(&r.length, "length")?,
        },
        "polygon" => {
            let v = cx.need(
                &r.vertices,
                span.clone(),
                "patch.pressure.vertices",
                "shape = \"polygon\"",
            )?;
            if v.get_ref().len() < 3 {
                return Err(cx.err(
                    Some(v.span()),
                    "patch.pressure.vertices",
                    "a polygon needs at least 3 vertices",
                ));
            }
            Outline::Polygon {
                vertices: v.get_ref().clone(),
            }
        }
        "grid" => {
            let w = cx.need(
                &r.weights,
                span.clone(),
                "patch.pressure.weights",
                "shape = \"grid\"",
            )?;
            let rows = w.get_ref();
            if rows.len() != ny || rows.iter().any(|row| row.len() != nx) {
                return Err(cx.err(
                    Some(w.span()),
                    "patch.pressure.weights",
                    format!("must be {ny} rows of {nx} values (patch.grid = [{nx}, {ny}])"),
                ));
            }
            return Ok(Pressure::Grid(rows.iter().flatten().copied().collect()));
        }
        _ => {
            let c = pos(&r.c, "c")?;
            let k = pos(&r.k, "k")?;
            let g = cx.need(
                &r.gamma,
                span.clone(),
                "patch.pressure.gamma",
                "shape = \"xydas_kao\"",
            )?;
            return Ok(Pressure::XydasKao {
                c,
                gamma: *g.get_ref(),
                k,
            });
        }
    };
    Ok(match &r.gradient {
        None => Pressure::Uniform(outline),
        Some(g) => Pressure::Gradient {
            outline,
            g: *g.get_ref(),
        },
    })
}

impl PatchFile {
    /// The prescribed twist at time `t` (linear between keyframes, held outside).
    pub fn twist_at(&self, t: f64) -> Twist {
        let k = &self.keys;
        if t <= k[0].0 {
            return k[0].1;
        }
        for w in k.windows(2) {
            let ((t0, a), (t1, b)) = (w[0], w[1]);
            if t <= t1 {
                let s = (t - t0) / (t1 - t0);
                return Twist::new(
                    a.vx + s * (b.vx - a.vx),
                    a.vy + s * (b.vy - a.vy),
                    a.omega + s * (b.omega - a.omega),
                );
            }
        }
        k[k.len() - 1].1
    }

    /// Runs the description: `(t, twist, wrench)` per step.
    pub fn run(&self, ctx: Option<&GpuContext>) -> Result<Vec<(f64, Twist, Wrench)>, String> {
        let times: Vec<f64> = (1..=self.steps).map(|s| s as f64 * self.dt).collect();
        let twists: Vec<Twist> = times.iter().map(|&t| self.twist_at(t)).collect();
        let e = |e: crate::gpu::GpuError| e.to_string();
        let pa = std::slice::from_ref(&self.patch);
        let mut out = Vec::with_capacity(times.len());
        match self.model {
            Model::Distributed => {
                if self.gpu {
                    let ctx = need_gpu(ctx)?;
                    let m = DistributedGpu::new(ctx, self.params, pa).map_err(e)?;
                    if self.steady {
                        let jobs: Vec<(usize, Twist)> = twists.iter().map(|t| (0, *t)).collect();
                        out = m.steady(ctx, &jobs, false).map_err(e)?;
                    } else {
                        for t in &twists {
                            out.push(m.step(ctx, &[*t], self.dt, self.integrator).map_err(e)?[0]);
                        }
                    }
                } else {
                    let mut m = DistributedCpu::new(self.params, pa.to_vec());
                    for t in &twists {
                        out.push(if self.steady {
                            m.steady(&[*t])[0]
                        } else {
                            m.step(&[*t], self.dt, self.integrator)[0]
                        });
                    }
                }
            }
            Model::Reduced => {
                let ls = if self.gpu {
                    let ctx = need_gpu(ctx)?;
                    DistributedGpu::new(ctx, self.params, pa)
                        .map_err(e)?
                        .limit_surfaces(ctx, self.n_ls)
                        .map_err(e)?
                } else {
                    let unit = LugreParams {
                        mu_c: 1.0,
                        mu_s: 1.0,
                        sigma2: 0.0,
                        ..self.params
                    };
                    super::limit::build_many(
                        std::slice::from_ref(&self.patch.shape),
                        self.n_ls,
                        |jobs| {
                            jobs.iter()
                                .map(|(_, t)| cpu::steady(&unit, &self.patch, *t))
                                .collect()
                        },
                    )
                };
                let rp = vec![ReducedPatch {
                    ls: ls[0].clone(),
                    f_n: self.patch.f_n,
                    ellipsoid: self.ellipsoid,
                }];
                if self.gpu {
                    let ctx = need_gpu(ctx)?;
                    let m = ReducedGpu::new(ctx, self.params, &rp).map_err(e)?;
                    for t in &twists {
                        let w = if self.steady {
                            m.steady(ctx, &[*t])
                        } else {
                            m.step(ctx, &[*t], self.dt, self.integrator)
                        };
                        out.push(w.map_err(e)?[0]);
                    }
                } else {
                    let mut m = ReducedCpu::new(self.params, rp);
                    for t in &twists {
                        out.push(if self.steady {
                            m.steady(&[*t])[0]
                        } else {
                            m.step(&[*t], self.dt, self.integrator)[0]
                        });
                    }
                }
            }
        }
        if let Some(bad) = out
            .iter()
            .position(|w| ![w.fx, w.fy, w.tau].iter().all(|x| x.is_finite()))
        {
            return Err(format!(
                "non-finite wrench at t = {} (explicit Euler needs a smaller dt)",
                times[bad]
            ));
        }
        Ok(times
            .into_iter()
            .zip(twists)
            .zip(out)
            .map(|((t, v), w)| (t, v, w))
            .collect())
    }
}

/// Writes `wrench.csv` and `wrench.png` into `dir`; returns their paths.
pub fn write_outputs(
    dir: &Path,
    hist: &[(f64, Twist, Wrench)],
    cop: [f64; 2],
) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let csv = dir.join("wrench.csv");
    let mut s = format!("# friction on the moving body; torque about the patch centre (tau) and the centre of pressure ({}, {}) (tau_cop)\n", cop[0], cop[1]);
    s.push_str("t,vx,vy,omega,fx,fy,tau,tau_cop\n");
    for (t, v, w) in hist {
        s.push_str(&format!(
            "{t:e},{:e},{:e},{:e},{:e},{:e},{:e},{:e}\n",
            v.vx, v.vy, v.omega, w.fx, w.fy, w.tau, w.tau_cop
        ));
    }
    std::fs::write(&csv, s).map_err(|e| format!("{}: {e}", csv.display()))?;
    let png = dir.join("wrench.png");
    let col = |f: &dyn Fn(&(f64, Twist, Wrench)) -> f64| {
        hist.iter().map(|h| (h.0, f(h))).collect::<Vec<_>>()
    };
    let panel =
        |title: &str, y: &str, series: Vec<(String, Vec<(f64, f64)>)>| crate::plot::LinePanel {
            title: title.into(),
            x_label: "time [s]".into(),
            y_label: y.into(),
            series,
        };
    let panels = vec![
        panel(
            "twist at the patch centre",
            "v [m/s], omega [rad/s]",
            vec![
                ("v_x".into(), col(&|h| h.1.vx)),
                ("v_y".into(), col(&|h| h.1.vy)),
                ("omega".into(), col(&|h| h.1.omega)),
            ],
        ),
        panel(
            "friction force on the body",
            "force [N]",
            vec![
                ("f_x".into(), col(&|h| h.2.fx)),
                ("f_y".into(), col(&|h| h.2.fy)),
            ],
        ),
        panel(
            "friction torque on the body",
            "torque [N m]",
            vec![
                ("tau (patch centre)".into(), col(&|h| h.2.tau)),
                ("tau (centre of pressure)".into(), col(&|h| h.2.tau_cop)),
            ],
        ),
    ];
    let mut written = vec![csv];
    if crate::plot::plot_lines(&png, panels).map_err(|e| e.to_string())? {
        written.push(png);
    }
    Ok(written)
}

fn need_gpu(c: Option<&GpuContext>) -> Result<&GpuContext, String> {
    c.ok_or_else(|| "no GPU context (device = \"gpu\")".to_string())
}
