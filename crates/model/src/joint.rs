//! Joints as a scene describes them and as the solver's rows take them: a [`Joint`] between
//! two bodies (or one and the world) expands into row blocks ([`Block`], 1–3 rows each, the
//! GPU record), with the record flags and projections the kernels and the CPU twins switch
//! on, and the reactions read back from the blocks' impulses.

use crate::body::BodyState;
use glam::{DQuat, DVec3};

/// Body index of the world on the A side of a block (no mass, no velocity).
pub const WORLD: u32 = u32::MAX;
/// Record flags (`ids.w` of a joint block; see `shaders/common/solve.wgsl`).
pub const JOINT_BIT: u32 = 0x8000_0000;
pub const JOINT_ANGULAR: u32 = 0x4000_0000;
pub const PROJ_LOWER: u32 = 1;
pub const PROJ_BOX: u32 = 2;

/// Block kinds (must match `shaders/joints_write.wgsl`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum BlockKind {
    /// Point coincidence, 3 linear rows along frame A's (z, u, w).
    Point = 0,
    /// The 2 linear rows perpendicular to frame A's z (prismatic).
    PointPerp = 1,
    /// Relative orientation fixed: 3 angular rows.
    Angle3 = 2,
    /// Frame z axes aligned: 2 angular rows (revolute).
    Angle2 = 3,
    /// Frame A's x ⟂ frame B's y: 1 angular row (universal).
    Angle1 = 4,
    /// |P_B − P_A| = L (p0 = L; p1 = 1: rope, unilateral).
    Distance = 5,
    LinLower = 6,
    LinUpper = 7,
    AngLower = 8,
    AngUpper = 9,
    /// p0 = 0 velocity / 1 position target, p1 = target, p2 = force limit (≤ 0: none).
    LinMotor = 10,
    AngMotor = 11,
}

/// One row block as the GPU stores it (80 bytes): anchors (local to their body; world
/// coordinates for the world) with the body indices, the joint frames (quaternions xyzw,
/// local), and (p0, p1, p2, kind).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Block {
    pub anchor_a: [f32; 4],
    pub anchor_b: [f32; 4],
    pub frame_a: [f32; 4],
    pub frame_b: [f32; 4],
    pub params: [f32; 4],
}

impl Block {
    pub fn bodies(&self) -> (u32, u32) {
        (self.anchor_a[3].to_bits(), self.anchor_b[3].to_bits())
    }

    pub fn kind(&self) -> u32 {
        self.params[3].to_bits()
    }
}

/// What a joint's limits and motor act on: the hinge angle (revolute) or the slide (prismatic).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MotorTarget {
    /// Relative velocity along/about the axis (m/s or rad/s).
    Velocity(f64),
    /// Relative position (m or rad): the row drives (x − target)/dt to zero.
    Position(f64),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Motor {
    pub target: MotorTarget,
    /// Force or torque limit (N or N·m); infinite: none.
    pub max_force: f64,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum JointKind {
    Spherical,
    Revolute,
    Prismatic,
    Fixed,
    Universal,
    /// Distance between the anchors kept at `length`; `rope`: only ≤ length (unilateral).
    Distance {
        length: f64,
        rope: bool,
    },
}

/// A joint between body A (None: the world) and body B. Anchors are in each body's frame
/// (the world's for the world); the frames' z axis is the joint axis (hinge, slide), x and y
/// the universal joint's two axes (A's x, B's y). Build with [`Joint::new`] and
/// [`Joint::at`] from world coordinates and the bodies' current poses.
#[derive(Clone, Debug, PartialEq)]
pub struct Joint {
    pub kind: JointKind,
    pub body_a: Option<u32>,
    pub body_b: u32,
    pub anchor_a: DVec3,
    pub anchor_b: DVec3,
    pub frame_a: DQuat,
    pub frame_b: DQuat,
    /// (lower, upper) on the hinge angle (rad, in (−π, π]) or the slide (m).
    pub limits: Option<(f64, f64)>,
    pub motor: Option<Motor>,
}

/// The pose (position, orientation) of a body, or the world's identity.
fn pose(state: &BodyState, body: Option<u32>) -> (DVec3, DQuat) {
    match body {
        None => (DVec3::ZERO, DQuat::IDENTITY),
        Some(b) => {
            let (p, q) = (state.pos[b as usize], state.rot[b as usize]);
            (
                DVec3::new(p[0] as f64, p[1] as f64, p[2] as f64),
                DQuat::from_xyzw(q[0] as f64, q[1] as f64, q[2] as f64, q[3] as f64).normalize(),
            )
        }
    }
}

impl Joint {
    /// A joint of `kind` with anchors at both body origins and identity frames; place it
    /// with [`Joint::at`] or [`Joint::between`].
    pub fn new(kind: JointKind, body_a: Option<u32>, body_b: u32) -> Self {
        Joint {
            kind,
            body_a,
            body_b,
            anchor_a: DVec3::ZERO,
            anchor_b: DVec3::ZERO,
            frame_a: DQuat::IDENTITY,
            frame_b: DQuat::IDENTITY,
            limits: None,
            motor: None,
        }
    }

    /// Places the joint at world point `point` with world axis `axis` (unit after
    /// normalisation), for the bodies' poses in `state`: the joint starts with no error.
    pub fn at(mut self, state: &BodyState, point: DVec3, axis: DVec3) -> Self {
        let frame = DQuat::from_rotation_arc(DVec3::Z, axis.normalize());
        let (xa, qa) = pose(state, self.body_a);
        let (xb, qb) = pose(state, Some(self.body_b));
        self.anchor_a = qa.inverse() * (point - xa);
        self.anchor_b = qb.inverse() * (point - xb);
        self.frame_a = qa.inverse() * frame;
        self.frame_b = qb.inverse() * frame;
        self
    }

    /// Anchors at two world points (a distance joint's ends; its length is kept if it is
    /// already set, else taken as their current distance).
    pub fn between(mut self, state: &BodyState, point_a: DVec3, point_b: DVec3) -> Self {
        let (xa, qa) = pose(state, self.body_a);
        let (xb, qb) = pose(state, Some(self.body_b));
        self.anchor_a = qa.inverse() * (point_a - xa);
        self.anchor_b = qb.inverse() * (point_b - xb);
        if let JointKind::Distance { length, .. } = &mut self.kind {
            if *length <= 0.0 {
                *length = (point_b - point_a).length();
            }
        }
        self
    }

    /// World anchors (on A, on B) and joint axes (A's frame z, B's frame z) for the bodies'
    /// poses in `state`: what the VTK joint frames show.
    pub fn world_frames(&self, state: &BodyState) -> ([DVec3; 2], [DVec3; 2]) {
        let (xa, qa) = pose(state, self.body_a);
        let (xb, qb) = pose(state, Some(self.body_b));
        (
            [xa + qa * self.anchor_a, xb + qb * self.anchor_b],
            [qa * self.frame_a * DVec3::Z, qb * self.frame_b * DVec3::Z],
        )
    }

    pub fn with_limits(mut self, lower: f64, upper: f64) -> Self {
        self.limits = Some((lower, upper));
        self
    }

    pub fn with_motor(mut self, target: MotorTarget, max_force: f64) -> Self {
        self.motor = Some(Motor { target, max_force });
        self
    }

    /// The row blocks of this joint, in order (see [`BlockKind`]).
    pub fn blocks(&self) -> Vec<Block> {
        use BlockKind::*;
        let (limit_kinds, motor_kind) = match self.kind {
            JointKind::Prismatic => ((LinLower, LinUpper), LinMotor),
            _ => ((AngLower, AngUpper), AngMotor),
        };
        let mut kinds: Vec<(BlockKind, [f64; 3])> = match self.kind {
            JointKind::Spherical => vec![(Point, [0.0; 3])],
            JointKind::Revolute => vec![(Point, [0.0; 3]), (Angle2, [0.0; 3])],
            JointKind::Prismatic => vec![(PointPerp, [0.0; 3]), (Angle3, [0.0; 3])],
            JointKind::Fixed => vec![(Point, [0.0; 3]), (Angle3, [0.0; 3])],
            JointKind::Universal => vec![(Point, [0.0; 3]), (Angle1, [0.0; 3])],
            JointKind::Distance { length, rope } => {
                vec![(Distance, [length, rope as u32 as f64, 0.0])]
            }
        };
        if let Some((lo, hi)) = self.limits {
            kinds.push((limit_kinds.0, [lo, 0.0, 0.0]));
            kinds.push((limit_kinds.1, [hi, 0.0, 0.0]));
        }
        if let Some(m) = self.motor {
            let (mode, target) = match m.target {
                MotorTarget::Velocity(v) => (0.0, v),
                MotorTarget::Position(x) => (1.0, x),
            };
            let f = if m.max_force.is_finite() {
                m.max_force
            } else {
                0.0
            };
            kinds.push((motor_kind, [mode, target, f]));
        }
        let a = self.body_a.unwrap_or(WORLD);
        let q = |q: DQuat| [q.x as f32, q.y as f32, q.z as f32, q.w as f32];
        let v = |v: DVec3, id: u32| [v.x as f32, v.y as f32, v.z as f32, f32::from_bits(id)];
        kinds
            .into_iter()
            .map(|(k, p)| Block {
                anchor_a: v(self.anchor_a, a),
                anchor_b: v(self.anchor_b, self.body_b),
                frame_a: q(self.frame_a),
                frame_b: q(self.frame_b),
                params: [
                    p[0] as f32,
                    p[1] as f32,
                    p[2] as f32,
                    f32::from_bits(k as u32),
                ],
            })
            .collect()
    }

    /// Whether this joint has a motor row (the last block of the joint).
    pub fn has_motor(&self) -> bool {
        self.motor.is_some()
    }
}

/// All blocks of `joints` in order, and the first block of each joint.
pub fn blocks_of(joints: &[Joint]) -> (Vec<Block>, Vec<usize>) {
    let mut out = Vec::new();
    let mut first = Vec::with_capacity(joints.len());
    for j in joints {
        first.push(out.len());
        out.extend(j.blocks());
    }
    (out, first)
}

/// Per-body block lists: offsets[0..=bodies], then entries (block * 2 + side), ascending.
pub fn block_lists(n_bodies: usize, blocks: &[Block]) -> Vec<u32> {
    let mut lists = vec![Vec::new(); n_bodies];
    for (j, b) in blocks.iter().enumerate() {
        let (a, bb) = b.bodies();
        if a != WORLD {
            lists[a as usize].push(2 * j as u32);
        }
        lists[bb as usize].push(2 * j as u32 + 1);
    }
    let mut out = vec![0u32; n_bodies + 1];
    for (i, l) in lists.iter().enumerate() {
        out[i + 1] = out[i] + l.len() as u32;
    }
    for l in lists {
        out.extend(l);
    }
    out
}

/// Reaction of one joint over the last step: the force and torque its rows applied to
/// body B (world frame; A takes the opposite), and its motor's force or torque (0 without).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct JointReaction {
    pub force: DVec3,
    /// Torque of the angular rows (about B's anchor; the linear rows act at the anchor).
    pub torque: DVec3,
    pub motor: f64,
}

/// Reactions per joint from the block records and impulses γ (forces = γ/dt).
pub fn reactions(
    joints: &[Joint],
    records: &[crate::contact::ContactRecord],
    impulses: &[[f32; 4]],
    dt: f64,
) -> Vec<JointReaction> {
    let (blocks, first) = blocks_of(joints);
    let mut out = vec![JointReaction::default(); joints.len()];
    for (ji, j) in joints.iter().enumerate() {
        let end = first.get(ji + 1).copied().unwrap_or(blocks.len());
        for k in first[ji]..end {
            let (Some(c), Some(g)) = (records.get(k), impulses.get(k)) else {
                continue;
            };
            let n = DVec3::new(c.n_gap[0] as f64, c.n_gap[1] as f64, c.n_gap[2] as f64);
            let (u, w) = crate::contact::tangent_basis(n);
            let f = (g[0] as f64 * n + g[1] as f64 * u + g[2] as f64 * w) / dt;
            if c.ids[3] & JOINT_ANGULAR != 0 {
                out[ji].torque += f;
            } else {
                out[ji].force += f;
            }
            if j.has_motor() && k + 1 == end {
                out[ji].motor = g[0] as f64 / dt;
            }
        }
    }
    out
}
