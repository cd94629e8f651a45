//! Boundaries as triangle lists at their pose at a frame's time, and force chains as
//! camera-facing ribbons.

use std::f64::consts::TAU;

use bytemuck::{Pod, Zeroable};
use glam::{DQuat, DVec3};

use super::camera::Bounds;
use crate::scene::{Boundary, BoundaryShape, Motion};

/// One vertex of a surface triangle (matches `SurfaceIn` in src/render/render.wgsl).
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable, PartialEq)]
pub struct SurfaceVertex {
    pub pos: [f32; 3],
    pub normal: [f32; 3],
    pub color: [u8; 4],
    /// Opacity seen from the normal's side, and from the other side.
    pub alpha: [f32; 2],
}

/// Triangles of the opaque and of the translucent pass.
#[derive(Default, Debug, Clone)]
pub struct Surfaces {
    pub opaque: Vec<SurfaceVertex>,
    pub translucent: Vec<SurfaceVertex>,
    /// Opaque body triangles (boxes, capsules): unlike boundaries, they cast shadows.
    pub bodies: Vec<SurfaceVertex>,
}

const WALL: [u8; 4] = [190, 192, 200, 255];
const FLOOR: [u8; 4] = [215, 215, 210, 255];
const SOLID: [u8; 4] = [150, 155, 165, 255];
/// Container walls: faint from outside (the near walls), more solid from inside (far walls).
const CONTAINER_ALPHA: [f32; 2] = [0.12, 0.45];
const MESH_ALPHA: [f32; 2] = [0.12, 0.4];
const SEGMENTS: usize = 64;

/// Pose of a boundary at time `t`: its velocities are piecewise constant (schedule entries
/// switch them at `step · dt`), so position and orientation integrate exactly.
pub fn pose_at(b: &Boundary, t: f64, dt: f64) -> (DVec3, DQuat) {
    let mut pos = DVec3::from(b.position);
    let o = b.orientation;
    let mut q = DQuat::from_xyzw(o[0], o[1], o[2], o[3]).normalize();
    if b.motion != Motion::Kinematic {
        return (pos, q);
    }
    let mut v = DVec3::from(b.velocity);
    let mut w = DVec3::from(b.angular_velocity);
    let mut t0 = 0.0;
    let mut advance = |t1: f64, v: DVec3, w: DVec3, pos: &mut DVec3, q: &mut DQuat| {
        let h = (t1 - t0).max(0.0);
        *pos += v * h;
        if w.length() > 0.0 {
            *q = (DQuat::from_scaled_axis(w * h) * *q).normalize();
        }
        t0 = t1;
    };
    for e in &b.schedule {
        let te = e.step as f64 * dt;
        if te >= t {
            break;
        }
        advance(te, v, w, &mut pos, &mut q);
        v = DVec3::from(e.velocity);
        w = DVec3::from(e.angular_velocity);
    }
    advance(t, v, w, &mut pos, &mut q);
    (pos, q)
}

struct Builder<'a> {
    out: &'a mut Vec<SurfaceVertex>,
    pos: DVec3,
    rot: DQuat,
    color: [u8; 4],
    alpha: [f32; 2],
}

impl Builder<'_> {
    /// A triangle in the local frame; the normal follows the right-hand rule.
    fn tri(&mut self, a: DVec3, b: DVec3, c: DVec3) {
        let n = (b - a).cross(c - a);
        if n.length() == 0.0 {
            return;
        }
        let n = (self.rot * n.normalize()).as_vec3().to_array();
        for p in [a, b, c] {
            self.out.push(SurfaceVertex {
                pos: (self.pos + self.rot * p).as_vec3().to_array(),
                normal: n,
                color: self.color,
                alpha: self.alpha,
            });
        }
    }
    fn quad(&mut self, a: DVec3, b: DVec3, c: DVec3, d: DVec3) {
        self.tri(a, b, c);
        self.tri(a, c, d);
    }

    /// Box faces with outward normals; the top face (+z) only when `top`.
    fn cuboid(&mut self, h: [f64; 3], top: bool) {
        let c = |sx: f64, sy: f64, sz: f64| DVec3::new(sx * h[0], sy * h[1], sz * h[2]);
        self.quad(
            c(-1., -1., -1.),
            c(-1., 1., -1.),
            c(1., 1., -1.),
            c(1., -1., -1.),
        );
        if top {
            self.quad(
                c(-1., -1., 1.),
                c(1., -1., 1.),
                c(1., 1., 1.),
                c(-1., 1., 1.),
            );
        }
        self.quad(
            c(-1., -1., -1.),
            c(1., -1., -1.),
            c(1., -1., 1.),
            c(-1., -1., 1.),
        );
        self.quad(
            c(-1., 1., -1.),
            c(-1., 1., 1.),
            c(1., 1., 1.),
            c(1., 1., -1.),
        );
        self.quad(
            c(-1., -1., -1.),
            c(-1., -1., 1.),
            c(-1., 1., 1.),
            c(-1., 1., -1.),
        );
        self.quad(
            c(1., -1., -1.),
            c(1., 1., -1.),
            c(1., 1., 1.),
            c(1., -1., 1.),
        );
    }

    /// Cylinder about local +z from z = 0 to `height`, outward normals.
    fn cylinder(&mut self, r: f64, height: f64, top: bool) {
        let ring = |k: usize, z: f64| {
            let a = TAU * k as f64 / SEGMENTS as f64;
            DVec3::new(r * a.cos(), r * a.sin(), z)
        };
        for k in 0..SEGMENTS {
            let (a0, a1) = (ring(k, 0.0), ring(k + 1, 0.0));
            let (b0, b1) = (ring(k, height), ring(k + 1, height));
            self.quad(a0, a1, b1, b0);
            self.tri(DVec3::ZERO, a1, a0);
            if top {
                self.tri(DVec3::new(0.0, 0.0, height), b0, b1);
            }
        }
    }
}

/// Triangles of the boundaries at time `t`. Planes become squares around the projection
/// of `bounds` (they are infinite), twice the bounds' radius wide.
pub fn boundary_surfaces(boundaries: &[Boundary], t: f64, dt: f64, bounds: &Bounds) -> Surfaces {
    let mut s = Surfaces::default();
    for b in boundaries {
        let (pos, rot) = pose_at(b, t, dt);
        let (out, color, alpha) = match b.shape {
            BoundaryShape::Plane | BoundaryShape::SolidBox { .. } => (
                &mut s.opaque,
                if matches!(b.shape, BoundaryShape::Plane) {
                    FLOOR
                } else {
                    SOLID
                },
                [1.0, 1.0],
            ),
            BoundaryShape::SolidCylinder { .. } => (&mut s.opaque, SOLID, [1.0, 1.0]),
            BoundaryShape::BoxContainer { .. } | BoundaryShape::CylinderContainer { .. } => {
                (&mut s.translucent, WALL, CONTAINER_ALPHA)
            }
            BoundaryShape::Mesh { .. } => (&mut s.translucent, WALL, MESH_ALPHA),
        };
        let mut k = Builder {
            out,
            pos,
            rot,
            color,
            alpha,
        };
        match &b.shape {
            BoundaryShape::Plane => {
                let local = rot.inverse() * (bounds.center() - pos);
                let c = DVec3::new(local.x, local.y, 0.0);
                let h = 2.0 * bounds.radius();
                let p = |x: f64, y: f64| c + DVec3::new(x * h, y * h, 0.0);
                k.quad(p(-1., -1.), p(1., -1.), p(1., 1.), p(-1., 1.));
            }
            BoundaryShape::BoxContainer {
                half_extents,
                open_top,
            } => k.cuboid(*half_extents, !open_top),
            BoundaryShape::SolidBox { half_extents } => k.cuboid(*half_extents, true),
            BoundaryShape::CylinderContainer {
                radius,
                height,
                open_top,
            } => k.cylinder(*radius, *height, !open_top),
            BoundaryShape::SolidCylinder { radius, height } => k.cylinder(*radius, *height, true),
            BoundaryShape::Mesh {
                vertices,
                triangles,
                ..
            } => {
                for t in triangles {
                    let v = |i: u32| DVec3::from(vertices[i as usize]);
                    k.tri(v(t[0]), v(t[1]), v(t[2]));
                }
            }
        }
    }
    s
}

/// Bounds of the finite boundaries (planes are left out: they are infinite).
pub fn boundary_bounds(boundaries: &[Boundary], t: f64, dt: f64, b: &mut Bounds) {
    let none = Bounds::empty();
    let s = boundary_surfaces(
        &boundaries
            .iter()
            .filter(|x| !matches!(x.shape, BoundaryShape::Plane))
            .cloned()
            .collect::<Vec<_>>(),
        t,
        dt,
        &none,
    );
    for v in s.opaque.iter().chain(&s.translucent) {
        b.add_point(DVec3::from(v.pos.map(f64::from)));
    }
}

/// A force-chain segment between two sphere centres, as a ribbon facing the eye, `width`
/// wide, in colour `color`. Appended to `out` as two opaque triangles.
pub fn ribbon(
    out: &mut Vec<SurfaceVertex>,
    a: DVec3,
    b: DVec3,
    eye: DVec3,
    width: f64,
    color: [u8; 4],
) {
    let axis = b - a;
    let mid = 0.5 * (a + b);
    let side = axis.cross(eye - mid);
    if side.length() == 0.0 || axis.length() == 0.0 {
        return;
    }
    let side = side.normalize() * 0.5 * width;
    let n = (eye - mid).normalize().as_vec3().to_array();
    let v = |p: DVec3| SurfaceVertex {
        pos: p.as_vec3().to_array(),
        normal: n,
        color,
        alpha: [1.0, 1.0],
    };
    let (p0, p1, p2, p3) = (a - side, b - side, b + side, a + side);
    out.extend([v(p0), v(p1), v(p2), v(p0), v(p2), v(p3)]);
}
