//! What [`super::Simulation::state`] and [`super::Simulation::contacts`] return: plain
//! arrays, one entry per body or per contact, in the engine's body order (boundaries first,
//! then the scene's bodies: explicit `[[body]]` tables, then each generator's grains).

use crate::bodies::BodyState;
use crate::collide::ContactRecord;
use crate::scene::{BodyShape, Scene};

/// Every body at one step, boundaries included (their `motion` is kinematic or fixed; mask
/// with [`State::first_grain`] or `motion`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct State {
    /// The step these values belong to, and its time (s).
    pub step: u64,
    pub time: f64,
    /// Index of the first body that is not a boundary.
    pub first_grain: usize,
    /// Centre of mass (m).
    pub positions: Vec<[f32; 3]>,
    /// Body-to-world rotation as a unit quaternion `[x, y, z, w]`.
    pub orientations: Vec<[f32; 4]>,
    /// Linear velocity (m/s).
    pub velocities: Vec<[f32; 3]>,
    /// Angular velocity, world frame (rad/s).
    pub angular_velocities: Vec<[f32; 3]>,
    /// Shape kind (`bodies::SHAPE_*`: 0 sphere, 7 box, 9 capsule, 10 clump, 11 convex hull,
    /// 12 cylinder; boundaries 1 plane, 2 box container, 3 solid box, 4 cylinder container,
    /// 5 solid cylinder, 6 mesh).
    pub shape: Vec<u32>,
    /// Motion kind (`bodies::MOTION_*`: 0 dynamic, 1 kinematic, 2 fixed).
    pub motion: Vec<u32>,
    /// Material index (order of the scene's `[[material]]` tables).
    pub material: Vec<u32>,
    /// Bounding radius (m): a sphere's radius.
    pub radius: Vec<f32>,
    /// Size along the body's axes (m): a box's half extents; `[r, r, half_length]` for
    /// capsules and cylinders; `[r, r, r]` for every other shape (r the bounding radius).
    pub sizes: Vec<[f32; 3]>,
}

impl State {
    /// The arrays of `s`, with the sizes the scene gives its bodies.
    pub(crate) fn new(step: u64, time: f64, s: &BodyState, scene: &Scene, nb: usize) -> Self {
        let xyz =
            |v: &[[f32; 4]]| -> Vec<[f32; 3]> { v.iter().map(|p| [p[0], p[1], p[2]]).collect() };
        let sizes = (0..s.len())
            .map(|i| {
                let r = s.pos[i][3];
                let shape = i.checked_sub(nb).and_then(|k| scene.bodies.get(k));
                match shape.map(|b| &b.shape) {
                    Some(BodyShape::Box { half_extents }) => half_extents.map(|x| x as f32),
                    Some(
                        BodyShape::Capsule {
                            radius,
                            half_length,
                        }
                        | BodyShape::Cylinder {
                            radius,
                            half_length,
                        },
                    ) => [*radius as f32, *radius as f32, *half_length as f32],
                    _ => [r; 3],
                }
            })
            .collect();
        State {
            step,
            time,
            first_grain: nb,
            positions: xyz(&s.pos),
            orientations: s.rot.clone(),
            velocities: xyz(&s.vel),
            angular_velocities: xyz(&s.omega),
            shape: s.info.iter().map(|i| i[2]).collect(),
            motion: s.info.iter().map(|i| i[0]).collect(),
            material: s.info.iter().map(|i| i[1]).collect(),
            radius: s.pos.iter().map(|p| p[3]).collect(),
            sizes,
        }
    }

    pub fn len(&self) -> usize {
        self.positions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }
}

/// The contacts of the last step taken (none before the first), what a force-chain analysis
/// needs: which bodies touch, where, along which normal, and the force the solver applied.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Contacts {
    /// Body indices (as in [`State`]); the normal points from A to B.
    pub body_a: Vec<u32>,
    pub body_b: Vec<u32>,
    /// Contact point, world frame (m): on A's surface.
    pub points: Vec<[f64; 3]>,
    /// Unit normal from A to B.
    pub normals: Vec<[f32; 3]>,
    /// Gap at detection (m; negative: penetration).
    pub gaps: Vec<f32>,
    /// The step's impulse in the contact frame: normal, two tangential (N·s).
    pub impulses: Vec<[f32; 3]>,
    /// Force on B, world frame (N): the impulse over dt (A takes the opposite).
    pub forces: Vec<[f64; 3]>,
}

impl Contacts {
    pub(crate) fn new(
        s: &BodyState,
        records: &[ContactRecord],
        impulses: &[[f32; 4]],
        dt: f64,
    ) -> Self {
        let forces = crate::run::contact_forces(s, records, impulses, dt);
        Contacts {
            body_a: records.iter().map(|c| c.ids[0]).collect(),
            body_b: records.iter().map(|c| c.ids[1]).collect(),
            points: forces.iter().map(|f| f.point).collect(),
            normals: records
                .iter()
                .map(|c| [c.n_gap[0], c.n_gap[1], c.n_gap[2]])
                .collect(),
            gaps: records.iter().map(|c| c.n_gap[3]).collect(),
            impulses: impulses.iter().map(|g| [g[0], g[1], g[2]]).collect(),
            forces: forces.iter().map(|f| f.force_on_b).collect(),
        }
    }

    pub fn len(&self) -> usize {
        self.body_a.len()
    }

    pub fn is_empty(&self) -> bool {
        self.body_a.is_empty()
    }
}
