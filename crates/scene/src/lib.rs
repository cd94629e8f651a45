//! Scene files: TOML text → a validated [`Scene`].
//!
//! Conventions: z is up, SI units, quaternions are `[x, y, z, w]` (glam order), and the
//! whole model is `f64`. The file format is documented in the comment block at the top of
//! `assets/scenes/default.toml`; in short:
//!
//! * `[simulation]` — `name`, `dt`, exactly one of `steps` / `duration`, `gravity`.
//! * `[solver]` — `kind` (`"apgd"` | `"jacobi"` | `"gauss_seidel"` | `"lemke"`),
//!   `max_iterations`, `tolerance`, `omega` (apgd/jacobi/gauss_seidel), `lcp_friction`,
//!   `friction_directions`, `max_pivots`, `compliance`, `lemke_step` (lemke), `recovery_speed`,
//!   `slop`, `stabilisation` (apgd/jacobi/gauss_seidel), `warm_start`,
//!   `envelope`.
//! * `[[material]]` — `name`, `density`, `friction`, optional `model = { kind = ..., ... }`.
//! * `[[body]]` — explicitly placed bodies: `shape = "sphere"` (`radius`, the default) or
//!   `"box"` (`half_extents`) or `"capsule"` / `"cylinder"` (`radius`, `half_length`; axis
//!   along body z) or `"convex"` (`points` or `file`: the hull, see [`bristlecone_cpu::convex`]).
//! * `[[generator]]` — `lattice` and `random_fill` generators for large grain counts.
//! * `[[boundary]]` — `plane`, `box_container`, `box`, `cylinder_container`, `cylinder`, `mesh`.
//! * `schedule = [{ t = .., velocity = [..], angular_velocity = [..], release = .. }, ..]` on
//!   kinematic `[[body]]` and `[[boundary]]` tables: piecewise-constant prescribed motion.
//! * `[[measure]]` — measurements written to `RUN_DIR/measurements/NAME.csv`: `mass_flow`,
//!   `bed_height`, `surface_profile`, `kinetic_energy`, `coordination`, `boundary_force`,
//!   `repose_angle`.
//! * `[output]` — `dir`, `frame_every` / `frame_interval`, `vtk`, `contacts`,
//!   `checkpoint_every`, `keep`, `stats_every`.
//! * `[render]` — the look of `bristlecone render` (camera, size, colours); read and checked
//!   by the app's `render::settings`, not by the simulation.
//!
//! Every error is a [`SceneError`] naming the file, line, column (when known) and the field
//! path, e.g. `scene.toml:12:10: body[2].radius: must be positive (got -0.01)`. Array
//! indices in field paths are 0-based and count the entries of that array in the file
//! (`body[2]` is the third `[[body]]` table). Valid but suspicious scenes load, with the
//! findings listed in [`Scene::warnings`] (the rules are listed there).

use std::path::{Path, PathBuf};

use bristlecone_cpu::shapes;
/// A grain's shape is its family's (`bristlecone_cpu::shapes`).
pub use bristlecone_cpu::shapes::BodyShape;

mod build;
mod clumps;
mod convex;
pub mod flow;
mod gap;
mod generate;
pub mod input;
pub mod joints;
mod mesh;
mod num;
pub mod periodic;
mod precision;
mod raw;
pub mod span;

/// The friction models are the engine's vocabulary (its row kernels select them).
pub use bristlecone_model::friction::FrictionModel;
pub use num::Num;

/// Reads a scene file. Mesh paths are resolved relative to the scene file's directory.
pub fn load(path: &Path) -> Result<Scene, SceneError> {
    let text = crate::input::read_toml(path, "scene file").map_err(|e| SceneError {
        file: path.to_path_buf(),
        line: None,
        column: None,
        field: String::new(),
        message: format!("cannot read scene file: {e}"),
    })?;
    parse_str(&text, path)
}

/// Parses scene text. `file` is used in messages, for the default name (its stem) and as
/// the base for relative mesh paths (its parent directory).
pub fn parse_str(text: &str, file: &Path) -> Result<Scene, SceneError> {
    build::build(text, file, 1.0, Registries::default())
}

/// The registries a scene's names are read against: the grain shape families (`shape`) and
/// the friction models (`model.kind`), each the engine's own by default; a program extends
/// them with its own entries for [`parse_str_with`].
#[derive(Clone, Copy)]
pub struct Registries<'a> {
    pub shapes: &'a [&'a dyn shapes::ShapeFamily],
    pub laws: &'a [&'a dyn bristlecone_model::friction::FrictionLaw],
}

impl Default for Registries<'static> {
    fn default() -> Self {
        Registries {
            shapes: shapes::FAMILIES,
            laws: bristlecone_model::friction::LAWS,
        }
    }
}

/// [`parse_str`] against `registries`: a `[[body]]`'s `shape` names one of its families,
/// which reads its size keys, and a material's `model.kind` one of its friction models,
/// which reads its keys. A convex family with no GPU routine of its own builds its shape as
/// its hull (`shapes::hull_shape`), which the engine collides as any other hull; a model
/// built from existing row kinds runs on the GPU by its material row.
pub fn parse_str_with(
    text: &str,
    file: &Path,
    registries: Registries<'_>,
) -> Result<Scene, SceneError> {
    build::build(text, file, 1.0, registries)
}

/// [`parse_str`] with every generator shrunk by `scale` (0 < scale ≤ 1, for quick test
/// runs of a full-size scene): `random_fill` counts (or volume fractions, when no count
/// is given) are multiplied by `scale`, and a lattice keeps its first
/// `ceil(scale × sites)` spheres (lowest layers first). Explicit bodies are kept.
pub fn parse_str_scaled(text: &str, file: &Path, scale: f64) -> Result<Scene, SceneError> {
    if !(scale > 0.0 && scale <= 1.0) {
        return Err(SceneError {
            file: file.to_path_buf(),
            line: None,
            column: None,
            field: String::new(),
            message: format!("scale must be in (0, 1] (got {scale})"),
        });
    }
    build::build(text, file, scale, Registries::default())
}

/// A scene-file error: where it is and what is wrong.
///
/// Displays as `{file}:{line}:{column}: {field}: {message}`; the line and column are left
/// out when unknown and `{field}: ` is left out when the error is not about one field.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}", self.render())]
pub struct SceneError {
    pub file: PathBuf,
    /// 1-based line.
    pub line: Option<usize>,
    /// 1-based column, counted in characters.
    pub column: Option<usize>,
    /// Field path such as `body[2].radius` (0-based indices), or empty.
    pub field: String,
    pub message: String,
}

impl SceneError {
    fn render(&self) -> String {
        let mut s = self.file.display().to_string();
        if let Some(line) = self.line {
            s.push_str(&format!(":{line}"));
            if let Some(col) = self.column {
                s.push_str(&format!(":{col}"));
            }
        }
        s.push_str(": ");
        if !self.field.is_empty() {
            s.push_str(&self.field);
            s.push_str(": ");
        }
        s.push_str(&self.message);
        s
    }
}

/// A validated scene, ready to be uploaded.
#[derive(Debug, Clone, PartialEq)]
pub struct Scene {
    /// `[simulation].name`, or the scene file's stem.
    pub name: String,
    pub sim: SimSettings,
    pub solver: SolverSettings,
    pub materials: Vec<Material>,
    /// Explicit `[[body]]` entries first, then the bodies of each `[[generator]]` in file order.
    pub bodies: Vec<BodyDesc>,
    pub boundaries: Vec<Boundary>,
    /// `[[measure]]` tables in file order.
    pub measures: Vec<Measure>,
    /// `[[joint]]` tables in file order (see [`joints`]).
    pub joints: Vec<joints::JointDesc>,
    /// `[periodic]`: the axes along which the cell is periodic (see [`periodic`]).
    pub periodic: Option<bristlecone_model::periodic::PeriodicCell>,
    /// `[[inflow]]` tables in file order; their pools' grains follow [`Scene::bodies`] in
    /// the body arrays, parked (see [`flow`]).
    pub inflows: Vec<flow::Inflow>,
    /// `[[outflow]]` tables in file order.
    pub outflows: Vec<flow::Outflow>,
    pub output: OutputSettings,
    /// Valid-but-suspicious findings, each `file:line: field: message`. The rules:
    /// * **time step vs. size**: `dt > 0.1·sqrt(r_min/|g|)`, `r_min` the smallest body
    ///   radius (a body falls a noticeable part of its radius within a few steps);
    /// * **time step vs. speed**: the fastest initial speed `v` gives `v·dt > 0.2·r_min`;
    /// * **outside containers**: when there are container boundaries, bodies whose centre
    ///   is outside every container (an open top extends a container upwards);
    /// * **below a plane**: bodies whose centre is on the solid side of a plane;
    /// * **high friction**: a material with `μ > 2`;
    /// * **unphysical inertia**: explicit principal moments violating the triangle
    ///   inequality (`Ixx + Iyy ≥ Izz` and permutations).
    pub warnings: Vec<String>,
}

impl Scene {
    /// Smallest bounding radius over all bodies.
    pub fn min_body_radius(&self) -> f64 {
        self.bodies
            .iter()
            .map(|b| b.shape.bounding_radius())
            .fold(f64::INFINITY, f64::min)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct SimSettings {
    /// Time step in seconds.
    pub dt: f64,
    /// Number of steps: `steps`, or `ceil(duration / dt)`.
    pub steps: u64,
    /// Default `[0, 0, -9.81]`.
    pub gravity: [f64; 3],
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SolverKind {
    Apgd,
    Jacobi,
    /// Coloured nonsmooth Gauss–Seidel on the GPU (book: Solver depth).
    GaussSeidel,
    /// The exact LCP solved by Lemke's algorithm on the CPU (Golle et al.).
    Lemke,
}

/// `apgd`, or `gauss_seidel` with the feature `gauss-seidel-default`
/// (`bristlecone_model::defaults::GAUSS_SEIDEL_IS_DEFAULT`).
impl Default for SolverKind {
    fn default() -> Self {
        if bristlecone_model::defaults::GAUSS_SEIDEL_IS_DEFAULT {
            SolverKind::GaussSeidel
        } else {
            SolverKind::Apgd
        }
    }
}

/// Default `[solver] slop` per smallest radius (see [`SolverSettings::slop`]).
pub const DEFAULT_SLOP_PER_RADIUS: f64 = bristlecone_model::defaults::SLOP_PER_RADIUS;
/// Default `[solver] stabilisation` (see [`SolverSettings::stabilisation`]).
pub const DEFAULT_STABILISATION: f64 = bristlecone_model::defaults::STABILISATION;

#[derive(Debug, Clone, PartialEq)]
pub struct SolverSettings {
    /// Default [`SolverKind::Apgd`] (see [`SolverKind::default`]).
    pub kind: SolverKind,
    /// Default 100.
    pub max_iterations: u32,
    /// Default 1e-5.
    pub tolerance: f64,
    /// Jacobi relaxation, default 0.6 (defaults of every field: `bristlecone_model::defaults`).
    pub omega: f64,
    /// Maximum penetration recovery speed in m/s, default 0.1.
    pub recovery_speed: f64,
    /// Penetration slop in m (rigid contacts), default [`DEFAULT_SLOP_PER_RADIUS`] × the
    /// smallest body radius (`bristlecone_model::rows::RigidOffset`).
    pub slop: f64,
    /// Stabilisation factor β of a penetration beyond the slop, in (0, 1], default
    /// [`DEFAULT_STABILISATION`].
    pub stabilisation: f64,
    /// Friction cone, default relaxed (exact: Coulomb without lift-off; `bristlecone_model::rows`).
    pub cone: bristlecone_model::rows::Cone,
    /// Cone problems per step at most with the exact cone, default 2.
    pub max_outer: u32,
    /// Default true.
    pub warm_start: bool,
    /// Gauss–Seidel only: the height (m) of the slabs of its coarse correction, default 0
    /// (none); for deep layered beds (book: Solver depth, "The slab correction on the GPU").
    pub coarse_slab: f64,
    /// Collision envelope in m; default 0.05 × the smallest body radius.
    pub envelope: f64,
    /// Lemke only: friction model of the LCP (`lcp_friction` = `"pyramid"` (default) or
    /// `"surplus"`; `friction_directions` for the pyramid, default 8).
    pub lcp_friction: bristlecone_cpu::reference::lcp::LcpFriction,
    /// Lemke only: pivot limit per solve; default 0 = automatic.
    pub max_pivots: u32,
    /// Lemke only: normal compliance 1/k in m/N (`compliance`), default 0 (rigid).
    pub compliance: f64,
    /// Lemke only: where the step runs (`lemke_step` = `"auto"` (default), `"cpu"`, `"gpu"`).
    pub lemke_step: bristlecone_model::solver::LemkeStep,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Material {
    pub name: String,
    /// kg/m³, > 0.
    pub density: f64,
    /// Coulomb friction coefficient μ ≥ 0.
    pub friction: f64,
    pub model: FrictionModel,
    /// Rolling resistance μ_r ∈ [0, 1] (dimensionless): the rolling torque is bounded by
    /// μ_r r_eff γ_n (`bristlecone_model::rows`, "Rolling and spinning"); 0 = none.
    pub rolling_friction: f64,
    /// Spinning resistance μ_spin ∈ [0, 1]: the torque about the normal is bounded by
    /// μ_spin r_eff γ_n; 0 = none.
    pub spinning_friction: f64,
    /// Constant pull-off force F_0 ≥ 0 in N (`bristlecone_model::rows::with_cohesion`): a contact
    /// holds up to F_0 + 3/2 π W r_eff in tension; 0 = none. Coulomb and Kelvin–Voigt only.
    pub cohesion: f64,
    /// Work of adhesion W ≥ 0 in J/m² (the JKR pull-off 3/2 π W r_eff); 0 = none.
    pub adhesion_energy: f64,
}

/// Which distance from the heap's axis the profile uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeapAxis {
    /// Conical heap: ρ = horizontal distance from the vertical line through the centre.
    Radial,
    /// Planar heap (a slot, uniform along y): ρ = |x − centre.x|.
    X,
    /// Planar heap uniform along x: ρ = |y − centre.y|.
    Y,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BodyDesc {
    pub shape: BodyShape,
    pub position: [f64; 3],
    /// Unit quaternion `[x, y, z, w]`.
    pub orientation: [f64; 4],
    pub velocity: [f64; 3],
    /// World frame.
    pub angular_velocity: [f64; 3],
    /// Index into [`Scene::materials`].
    pub material: usize,
    pub motion: Motion,
    pub mass: f64,
    /// Principal moments of inertia, body frame.
    pub inertia: [f64; 3],
    /// Prescribed velocity changes of a kinematic body (empty otherwise).
    pub schedule: Vec<ScheduleEntry>,
}

/// One change of a kinematic body's velocity, applied before step `step`, i.e. at time
/// `step · dt` (`step = round(t / dt)`). Velocities are resolved: a key missing in the file
/// keeps the previous value.
#[derive(Debug, Clone, PartialEq)]
pub struct ScheduleEntry {
    /// Time as written in the file (s).
    pub t: f64,
    pub step: u64,
    pub velocity: [f64; 3],
    /// World frame.
    pub angular_velocity: [f64; 3],
    /// The body becomes dynamic here (bodies only; the last entry of its schedule), with
    /// the entry's velocities as its initial ones.
    pub release: bool,
}

/// A `[[measure]]` table.
#[derive(Debug, Clone, PartialEq)]
pub struct Measure {
    /// File name stem: `measurements/NAME.csv`.
    pub name: String,
    /// Steps between samples (`every`, or `round(interval / dt)`; default: the frame spacing).
    pub every: u64,
    pub kind: MeasureKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum MeasureKind {
    /// Mass through the plane (point, unit normal), optionally only within `radius` of
    /// `point`; columns `net_mass,mass_positive,mass_negative,rate`.
    MassFlow {
        point: [f64; 3],
        normal: [f64; 3],
        radius: Option<f64>,
    },
    /// Quantile of the grain tops; column `height`.
    BedHeight { quantile: f64 },
    /// Highest grain top per bin along x (axis 0) or y (1); one column per bin, named by
    /// its centre (`x=0.0125`).
    SurfaceProfile {
        axis: usize,
        bins: usize,
        range: [f64; 2],
    },
    /// Kinetic energy per material (columns = material names) and `total`.
    KineticEnergy,
    /// Mean coordination number of the grains and the number of contacts;
    /// columns `z,contacts`.
    Coordination,
    /// Contact force and torque about `about` on a boundary (index into
    /// [`Scene::boundaries`]); columns `fx,fy,fz,tx,ty,tz`.
    BoundaryForce { boundary: usize, about: [f64; 3] },
    /// Angle of repose of a heap fitted to its surface profile (the app's `measure::repose_angle`):
    /// `axis`, the axis point (x, y) (None: the grains' mean) and the flank band of distances
    /// (None: 0.2–0.8 of the heap's reach); columns `angle,slope,apex,bins`.
    ReposeAngle {
        axis: HeapAxis,
        centre: Option<[f64; 2]>,
        flank: Option<[f64; 2]>,
    },
    /// Stress tensor of the grains in the box `min`–`max` (`measure::region_stress`);
    /// columns `measure::STRESS_COLUMNS`.
    Stress { min: [f64; 3], max: [f64; 3] },
    /// Solid fraction of the box `min`–`max` (`measure::solid_fraction`); column `phi`.
    SolidFraction { min: [f64; 3], max: [f64; 3] },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Motion {
    #[default]
    Dynamic,
    /// Moves with its prescribed velocity; not affected by contacts or gravity.
    Kinematic,
    Fixed,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Boundary {
    /// `name` from the file, or `boundary[i]`.
    pub name: String,
    pub shape: BoundaryShape,
    pub position: [f64; 3],
    /// Unit quaternion `[x, y, z, w]`.
    pub orientation: [f64; 4],
    /// Index into [`Scene::materials`].
    pub material: usize,
    /// [`Motion::Fixed`], [`Motion::Kinematic`] or [`Motion::Dynamic`] (then with `mass`).
    pub motion: Motion,
    pub velocity: [f64; 3],
    pub angular_velocity: [f64; 3],
    /// Prescribed velocity changes (kinematic boundaries only; never `release`).
    pub schedule: Vec<ScheduleEntry>,
    /// Dynamic boundaries only: mass and principal moments of inertia (body frame), given
    /// explicitly (boundary shapes have no volume to derive them from).
    pub mass: Option<(f64, [f64; 3])>,
}

/// Boundary geometry in the boundary's LOCAL frame (pose = position + orientation).
#[derive(Debug, Clone, PartialEq)]
pub enum BoundaryShape {
    /// The half-space z ≤ 0 is solid; bodies live on +z.
    Plane,
    /// Bodies are kept inside; walls at ±half_extents; the top is local +z.
    BoxContainer {
        half_extents: [f64; 3],
        open_top: bool,
    },
    SolidBox {
        half_extents: [f64; 3],
    },
    /// Axis = local +z, base at local z = 0; bodies are kept inside.
    CylinderContainer {
        radius: f64,
        height: f64,
        open_top: bool,
    },
    /// Axis = local +z, base at local z = 0.
    SolidCylinder {
        radius: f64,
        height: f64,
    },
    /// Triangle mesh; vertices in the local frame (already scaled).
    Mesh {
        source: PathBuf,
        vertices: Vec<[f64; 3]>,
        triangles: Vec<[u32; 3]>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct OutputSettings {
    /// Default `out/<name>` (relative to the working directory).
    pub dir: PathBuf,
    /// Steps between frames: `frame_every`, or `round(frame_interval / dt)`; default so that
    /// about 50 frames are written.
    pub frame_every: u64,
    /// Default true.
    pub vtk: bool,
    /// Default false.
    pub contacts: bool,
    /// Contacts whose force is below this (N) are left out of the contact files; default 0
    /// (every contact). Only with `contacts`.
    pub contact_force_min: f64,
    /// Steps between checkpoints, 0 = only at the end (default).
    pub checkpoint_every: u64,
    /// How many of the newest checkpoints stay on disk: `checkpoint.bin` and the `keep - 1`
    /// before it as `checkpoint_STEP.bin`; default 1. Only with `checkpoint_every`.
    pub keep: u64,
    /// Default 1.
    pub stats_every: u64,
}
