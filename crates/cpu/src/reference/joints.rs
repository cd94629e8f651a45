//! f64 twin of the joint stage (`shaders/joints_write.wgsl`, the engine's `joints`): the block
//! records and right-hand side offsets from the bodies' poses.

use super::integrate::Body64;
use super::tangent_basis;
use crate::model::contact::ContactRecord;
use crate::model::joint::{
    Block, BlockKind, JOINT_ANGULAR, JOINT_BIT, PROJ_BOX, PROJ_LOWER, WORLD,
};
use glam::{DQuat, DVec3};

fn v3(a: [f32; 4]) -> DVec3 {
    DVec3::new(a[0] as f64, a[1] as f64, a[2] as f64)
}

fn quat(a: [f32; 4]) -> DQuat {
    DQuat::from_xyzw(a[0] as f64, a[1] as f64, a[2] as f64, a[3] as f64)
}

fn pose(bodies: &[Body64], b: u32) -> (DVec3, DQuat) {
    if b == WORLD {
        (DVec3::ZERO, DQuat::IDENTITY)
    } else {
        let x = &bodies[b as usize];
        (x.pos, x.rot)
    }
}

/// Hinge angle of frame B about frame A's z, in (−π, π].
pub fn hinge_angle(fa: DQuat, fb: DQuat) -> f64 {
    let mut q = fa.conjugate() * fb;
    if q.w < 0.0 {
        q = -q;
    }
    2.0 * q.z.atan2(q.w)
}

fn unit_or(d: DVec3, fallback: DVec3) -> DVec3 {
    let l = d.length();
    if l > 1e-12 {
        d / l
    } else {
        fallback
    }
}

/// One block: (record, offset) as `joints_write` writes them, with block index `j`.
pub fn write_block(
    bodies: &[Body64],
    blk: &Block,
    j: u32,
    dt: f64,
    v_rec: f64,
) -> (ContactRecord, [f64; 3]) {
    let bil = |c: f64| (c / dt).clamp(-v_rec, v_rec);
    let uni = |c: f64| (c / dt).max(-v_rec);
    let (a, b) = blk.bodies();
    let (xa, qa) = pose(bodies, a);
    let (xb, qb) = pose(bodies, b);
    let fa = qa * quat(blk.frame_a);
    let fb = qb * quat(blk.frame_b);
    let pa = xa + qa * v3(blk.anchor_a);
    let pb = xb + qb * v3(blk.anchor_b);
    let za = fa * DVec3::Z;
    let (ra, rb) = (pb - xa, pb - xb);
    let p = blk.params.map(|x| x as f64);
    let d = pb - pa;
    let mut n = za;
    let mut flags = JOINT_BIT;
    let mut off = [0.0; 3];
    let mut bound = 0.0f32;
    let motor = |x: f64| {
        if p[0] != 0.0 {
            (x - p[1]) / dt
        } else {
            -p[1]
        }
    };
    let boxed = |fmax: f64| {
        let b = (fmax * dt) as f32;
        (fmax > 0.0 && b < 3.0e38).then_some(b)
    };
    let kind = blk.kind();
    let k = |x: BlockKind| x as u32 == kind;
    if k(BlockKind::Point) || k(BlockKind::PointPerp) {
        if k(BlockKind::Point) {
            n = unit_or(if a == WORLD { -rb } else { ra - rb }, za);
        }
        let (u, w) = tangent_basis(n);
        off = [bil(d.dot(n)), bil(d.dot(u)), bil(d.dot(w))];
        flags |= if k(BlockKind::PointPerp) { 6 } else { 7 };
    } else if k(BlockKind::Angle3) {
        let mut q = fb * fa.conjugate();
        if q.w < 0.0 {
            q = -q;
        }
        let th = 2.0 * DVec3::new(q.x, q.y, q.z);
        let (u, w) = tangent_basis(n);
        off = [bil(th.dot(n)), bil(th.dot(u)), bil(th.dot(w))];
        flags |= JOINT_ANGULAR | 7;
    } else if k(BlockKind::Angle2) {
        let c = za.cross(fb * DVec3::Z);
        let (u, w) = tangent_basis(n);
        off = [0.0, bil(c.dot(u)), bil(c.dot(w))];
        flags |= JOINT_ANGULAR | 6;
    } else if k(BlockKind::Angle1) {
        let (xa_, yb) = (fa * DVec3::X, fb * DVec3::Y);
        n = unit_or(yb.cross(xa_), za);
        off[0] = bil(xa_.dot(yb));
        flags |= JOINT_ANGULAR | 1;
    } else if k(BlockKind::Distance) {
        n = unit_or(-d, za);
        let c = p[0] - d.length();
        let rope = p[1] != 0.0;
        off[0] = if rope { uni(c) } else { bil(c) };
        flags |= 1 | if rope { PROJ_LOWER << 3 } else { 0 };
    } else if k(BlockKind::LinLower) || k(BlockKind::LinUpper) {
        let s = d.dot(za);
        let up = k(BlockKind::LinUpper);
        n = if up { -za } else { za };
        off[0] = uni(if up { p[0] - s } else { s - p[0] });
        flags |= 1 | PROJ_LOWER << 3;
    } else if k(BlockKind::AngLower) || k(BlockKind::AngUpper) {
        let th = hinge_angle(fa, fb);
        let up = k(BlockKind::AngUpper);
        n = if up { -za } else { za };
        off[0] = uni(if up { p[0] - th } else { th - p[0] });
        flags |= JOINT_ANGULAR | 1 | PROJ_LOWER << 3;
    } else {
        let ang = !k(BlockKind::LinMotor);
        let x = if ang { hinge_angle(fa, fb) } else { d.dot(za) };
        off[0] = motor(x);
        flags |= 1 | if ang { JOINT_ANGULAR } else { 0 };
        if let Some(b) = boxed(p[2]) {
            flags |= PROJ_BOX << 3;
            bound = b;
        }
    }
    let f = |v: DVec3, w: f32| [v.x as f32, v.y as f32, v.z as f32, w];
    let rec = ContactRecord {
        n_gap: f(n, 0.0),
        ra: f(ra, bound),
        rb: f(rb, 0.0),
        ids: [a, b, j, flags],
    };
    (rec, off)
}

/// Every block's (record, offset), in block order.
pub fn write_blocks(
    bodies: &[Body64],
    blocks: &[Block],
    dt: f64,
    v_rec: f64,
) -> (Vec<ContactRecord>, Vec<[f64; 3]>) {
    blocks
        .iter()
        .enumerate()
        .map(|(j, b)| write_block(bodies, b, j as u32, dt, v_rec))
        .unzip()
}
