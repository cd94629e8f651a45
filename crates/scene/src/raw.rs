//! The file format as serde sees it: every field spanned so that semantic errors can name
//! the line. Kind-specific fields are flat optional fields (a friction model's table is kept
//! as given, for its model to read); `build` checks which ones apply to which kind. Integers
//! are read as `i64` so that negative values get our own message.

use serde::Deserialize;
use serde_spanned::Spanned;

pub(crate) type S<T> = Spanned<T>;
pub(crate) type O<T> = Option<Spanned<T>>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawScene {
    pub simulation: O<RawSimulation>,
    pub solver: O<RawSolver>,
    #[serde(default)]
    pub material: Vec<S<RawMaterial>>,
    #[serde(default)]
    pub body: Vec<S<RawBody>>,
    #[serde(default)]
    pub generator: Vec<S<RawGenerator>>,
    #[serde(default)]
    pub boundary: Vec<S<RawBoundary>>,
    #[serde(default)]
    pub measure: Vec<S<RawMeasure>>,
    /// `[[inflow]]` / `[[outflow]]`: validated by `build::flow`.
    #[serde(default)]
    pub inflow: Vec<S<RawInflow>>,
    #[serde(default)]
    pub outflow: Vec<S<RawOutflow>>,
    /// `[[joint]]`: validated by `super::joints`.
    #[serde(default)]
    pub joint: Vec<S<RawJoint>>,
    pub output: O<RawOutput>,
    /// `[periodic]`: validated by `super::periodic`.
    pub periodic: O<RawPeriodic>,
    /// `[render]`: camera and look of `bristlecone render`; parsed and checked by
    /// the app's `render::settings` (the simulation does not use it).
    #[allow(dead_code)]
    pub render: O<toml::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSimulation {
    pub name: O<String>,
    pub dt: S<f64>,
    pub steps: O<i64>,
    pub duration: O<f64>,
    pub gravity: O<[f64; 3]>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSolver {
    pub kind: O<String>,
    pub max_iterations: O<i64>,
    pub tolerance: O<f64>,
    pub omega: O<f64>,
    pub recovery_speed: O<f64>,
    pub slop: O<f64>,
    pub stabilisation: O<f64>,
    pub warm_start: O<bool>,
    pub envelope: O<f64>,
    pub cone: O<String>,
    pub max_outer: O<i64>,
    pub lcp_friction: O<String>,
    pub friction_directions: O<i64>,
    pub max_pivots: O<i64>,
    pub compliance: O<f64>,
    pub lemke_step: O<String>,
    pub coarse_slab: O<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawMaterial {
    pub name: S<String>,
    pub density: S<f64>,
    pub friction: S<f64>,
    pub model: O<RawFrictionModel>,
    pub rolling_friction: O<f64>,
    pub spinning_friction: O<f64>,
    pub cohesion: O<f64>,
    pub adhesion_energy: O<f64>,
}

/// A material's `model = { kind = "…", … }`: its `kind`, and every other key as the file
/// gives it, in the file's order. The model's registry entry says which keys it takes and
/// reads them with their types (`build::friction`), so a model's keys live in its own file.
pub(crate) struct RawFrictionModel {
    pub kind: S<String>,
    pub keys: Vec<(String, S<toml::Value>)>,
}

impl<'de> Deserialize<'de> for RawFrictionModel {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{Error, Unexpected};
        let table = std::collections::BTreeMap::<String, S<toml::Value>>::deserialize(d)?;
        let mut keys: Vec<(String, S<toml::Value>)> = table.into_iter().collect();
        keys.sort_by_key(|(_, v)| v.span().start);
        let at = keys
            .iter()
            .position(|(k, _)| k == "kind")
            .ok_or_else(|| D::Error::missing_field("kind"))?;
        let (_, kind) = keys.remove(at);
        let span = kind.span();
        match kind.into_inner() {
            toml::Value::String(s) => Ok(RawFrictionModel {
                kind: S::new(span, s),
                keys,
            }),
            other => Err(D::Error::invalid_type(
                Unexpected::Other(other.type_str()),
                &"a string (`kind`)",
            )),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawBody {
    pub name: O<String>,
    pub shape: O<String>,
    pub radius: O<f64>,
    // Reserved for the shapes that are not supported yet (box, capsule, cylinder, mesh):
    pub half_extents: O<[f64; 3]>,
    /// Capsules: half length of the axis segment.
    pub half_length: O<f64>,
    pub height: O<f64>,
    pub file: O<String>,
    /// `shape = "clump"`: member spheres `[x, y, z, radius]` in the body's frame.
    pub spheres: O<Vec<S<[f64; 4]>>>,
    /// `shape = "convex"`: the points whose hull is the body (or `file`).
    pub points: O<Vec<S<[f64; 3]>>>,
    pub position: S<[f64; 3]>,
    pub orientation: O<[f64; 4]>,
    pub velocity: O<[f64; 3]>,
    pub angular_velocity: O<[f64; 3]>,
    pub material: O<String>,
    pub motion: O<String>,
    pub mass: O<f64>,
    pub inertia: O<[f64; 3]>,
    pub schedule: O<Vec<S<RawScheduleEntry>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawBoundary {
    pub name: O<String>,
    pub kind: S<String>,
    pub point: O<[f64; 3]>,
    pub normal: O<[f64; 3]>,
    pub position: O<[f64; 3]>,
    pub orientation: O<[f64; 4]>,
    pub axis: O<[f64; 3]>,
    pub half_extents: O<[f64; 3]>,
    pub radius: O<f64>,
    pub height: O<f64>,
    pub open_top: O<bool>,
    pub file: O<String>,
    pub scale: O<f64>,
    pub material: O<String>,
    pub motion: O<String>,
    pub velocity: O<[f64; 3]>,
    pub angular_velocity: O<[f64; 3]>,
    pub schedule: O<Vec<S<RawScheduleEntry>>>,
    pub mass: O<f64>,
    pub inertia: O<[f64; 3]>,
}

/// One entry of a kinematic body's or boundary's `schedule`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawScheduleEntry {
    pub t: S<f64>,
    pub velocity: O<[f64; 3]>,
    pub angular_velocity: O<[f64; 3]>,
    pub release: O<bool>,
}

/// A `[[measure]]` table; kind-specific fields are checked by `build`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawMeasure {
    pub name: S<String>,
    pub kind: S<String>,
    pub every: O<i64>,
    pub interval: O<f64>,
    pub point: O<[f64; 3]>,
    pub normal: O<[f64; 3]>,
    pub radius: O<f64>,
    pub quantile: O<f64>,
    pub axis: O<String>,
    pub bins: O<i64>,
    pub range: O<[f64; 2]>,
    pub boundary: O<String>,
    pub about: O<[f64; 3]>,
    /// `stress`, `solid_fraction`: the box region's corners.
    pub min: O<[f64; 3]>,
    pub max: O<[f64; 3]>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawGenerator {
    pub kind: S<String>,
    pub material: O<String>,
    pub region: S<RawRegion>,
    /// A number, or `{ min = .., max = .. }` (uniform), interpreted by `build`.
    pub radius: S<toml::Value>,
    pub spacing: O<f64>,
    pub jitter: O<f64>,
    pub max_count: O<i64>,
    pub count: O<i64>,
    pub volume_fraction: O<f64>,
    pub max_attempts: O<i64>,
    pub seed: O<i64>,
    pub velocity: O<[f64; 3]>,
    pub angular_velocity: O<[f64; 3]>,
    /// A clump template `[[x, y, z, radius], …]`: every placed grain is this clump, scaled
    /// so that its bounding radius is the drawn radius, at a random orientation.
    pub spheres: O<Vec<S<[f64; 4]>>>,
    /// A shape template `{ shape = "box", half_extents = [..] }` (the size fields of a
    /// `[[body]]`): every placed grain is this shape, scaled so that its bounding radius is
    /// the drawn radius, at a random orientation.
    pub template: O<RawTemplate>,
}

/// The shape fields of a `[[body]]`, as a generator's template.
#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTemplate {
    pub shape: S<String>,
    pub radius: O<f64>,
    pub half_extents: O<[f64; 3]>,
    pub half_length: O<f64>,
    pub file: O<String>,
    pub spheres: O<Vec<S<[f64; 4]>>>,
    pub points: O<Vec<S<[f64; 3]>>>,
}

impl RawTemplate {
    /// The template as a body at the origin (`span`: the template's table), so that the
    /// body's shape parser and its checks serve generators too.
    pub fn as_body(&self, span: std::ops::Range<usize>) -> RawBody {
        RawBody {
            name: None,
            shape: Some(self.shape.clone()),
            radius: self.radius.clone(),
            half_extents: self.half_extents.clone(),
            half_length: self.half_length.clone(),
            height: None,
            file: self.file.clone(),
            spheres: self.spheres.clone(),
            points: self.points.clone(),
            position: S::new(span, [0.0; 3]),
            orientation: None,
            velocity: None,
            angular_velocity: None,
            material: None,
            motion: None,
            mass: None,
            inertia: None,
            schedule: None,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawRegion {
    pub kind: S<String>,
    pub min: O<[f64; 3]>,
    pub max: O<[f64; 3]>,
    pub base: O<[f64; 3]>,
    pub radius: O<f64>,
    pub height: O<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawOutput {
    pub dir: O<String>,
    pub frame_every: O<i64>,
    pub frame_interval: O<f64>,
    pub vtk: O<bool>,
    pub contacts: O<bool>,
    pub contact_force_min: O<f64>,
    pub checkpoint_every: O<i64>,
    pub keep: O<i64>,
    pub stats_every: O<i64>,
}

/// `[[inflow]]`: checked by `build::flow`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawInflow {
    pub name: S<String>,
    pub material: O<String>,
    /// `{ NAME = fraction, … }`: each grain's material drawn with these probabilities.
    pub material_fractions: O<std::collections::BTreeMap<String, S<f64>>>,
    pub region: S<RawRegion>,
    /// A number, or `{ min = .., max = .. }` (uniform), as a generator's.
    pub radius: S<toml::Value>,
    pub rate: O<f64>,
    pub mass_rate: O<f64>,
    pub velocity: O<[f64; 3]>,
    pub velocity_spread: O<f64>,
    pub angular_velocity: O<[f64; 3]>,
    pub angular_velocity_spread: O<f64>,
    pub seed: O<i64>,
    pub every: O<i64>,
    pub max_attempts: O<i64>,
    pub count: O<i64>,
}

/// `[[outflow]]`: checked by `build::flow`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawOutflow {
    pub name: S<String>,
    pub region: O<RawRegion>,
    pub point: O<[f64; 3]>,
    pub normal: O<[f64; 3]>,
    pub every: O<i64>,
}

/// `[[joint]]`: every joint kind's keys, checked by `joints::parse`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawJoint {
    pub kind: S<String>,
    pub body_a: O<String>,
    pub body_b: S<String>,
    pub anchor: S<[f64; 3]>,
    pub axis: O<[f64; 3]>,
    pub anchor_b: O<[f64; 3]>,
    pub length: O<f64>,
    pub rope: O<bool>,
    pub limits: O<[f64; 2]>,
    pub motor_velocity: O<f64>,
    pub motor_position: O<f64>,
    pub motor_max_force: O<f64>,
}

/// `[periodic]`: checked by `periodic::parse`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawPeriodic {
    pub x: O<[f64; 2]>,
    pub y: O<[f64; 2]>,
    pub z: O<[f64; 2]>,
    pub shear: O<RawShear>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawShear {
    pub rate: S<f64>,
    pub flow: S<String>,
    pub gradient: S<String>,
}
