//! f64 twin of the cylinder narrow phase in `shaders/common/collide_cylinder.wgsl` (same
//! algorithm, decisions and feature ids), and the cylinder's mass properties.
//!
//! A cylinder: centre `c`, unit axis `a` (the body's local z) with body x, y as `u`, `v`,
//! half length `hl`, radius `r`. Every contact point is a point of the cylinder's surface
//! (a rim point or a face point), so each is a non-penetration constraint of the true
//! shape. Per partner, and why:
//! * **plane** (and each wall of a box container, the floor and lid of a cylinder
//!   container): the support of a cylinder towards a plane is a rim point, analytic: on end
//!   disc e the deepest rim point is `c_e − r·w/|w|` with w the plane normal's part
//!   perpendicular to the axis. So a cylinder lying on its side rests on the two ends'
//!   deepest points (features 8 + e: 2 points along the generator) and one tilted on its
//!   rim on one point. When the end disc lies flat (sin of the axis–normal angle below
//!   `FLAT`) that point is ill-defined, so the disc gives the 4 rim points at body ±x, ±y
//!   instead (features 4e + k): an inscribed square, with ids fixed to the body, so a
//!   standing cylinder rests on 4 points that the warm start finds again. In that band the
//!   true deepest point lies between two of them, at most r(1 − cos 45°)·FLAT = 0.003 r
//!   deeper than they report.
//! * **sphere**: the closest point of the solid cylinder to the centre (clamp along the
//!   axis and radially); a centre inside takes the nearer of the side and the end face.
//! * **cylinder container side wall**: per end disc, the rim point farthest out along the
//!   radial direction of the disc centre, refined once with the radial direction of that
//!   point (exact when the axes are parallel, and for an upright cylinder gives the two
//!   points along the generator; otherwise a rim point a little inside the farthest one,
//!   by O((r/R)²) of r for a container of radius R). Features e.
//!
//! Cylinders do not meet boxes (grains or solid boundaries), capsules, clumps, other
//! cylinders, solid cylinders and meshes yet: `Collide::new` and the scene builder refuse
//! those scenes. The natural next step for them is GJK/EPA (or MPR) on support functions
//! (a cylinder's support is analytic: the `rim_support` of the end disc facing d), with
//! the plane manifold above for face contacts.

use glam::{DQuat, DVec3};

/// Below this sin of the angle between the axis and a plane's normal, an end disc lies
/// flat on the plane and gives 4 rim points.
pub const FLAT: f64 = 0.01;

/// A cylinder in world: centre, unit axis (body z), body x and y, half length, radius.
#[derive(Clone, Copy, Debug)]
pub struct Cylinder {
    pub c: DVec3,
    pub a: DVec3,
    pub u: DVec3,
    pub v: DVec3,
    pub hl: f64,
    pub r: f64,
}

impl Cylinder {
    pub fn new(c: DVec3, q: DQuat, hl: f64, r: f64) -> Self {
        Cylinder {
            c,
            a: q * DVec3::Z,
            u: q * DVec3::X,
            v: q * DVec3::Y,
            hl,
            r,
        }
    }

    /// Centre of end disc `e` (0: −axis, 1: +axis).
    pub fn end(&self, e: usize) -> DVec3 {
        self.c + self.a * if e == 0 { -self.hl } else { self.hl }
    }

    /// Rim point of disc `e` farthest along `d` (the disc centre when d ∥ axis).
    fn rim_support(&self, e: usize, d: DVec3) -> DVec3 {
        let w = d - self.a * d.dot(self.a);
        let l = w.length();
        if l > 1e-12 {
            self.end(e) + w * (self.r / l)
        } else {
            self.end(e)
        }
    }
}

/// One contact: the capsule twin's point (world point midway, normal from the first shape
/// named in the function to the second, gap, feature).
pub use super::capsule::CPoint;

pub use crate::shapes::cylinder::cylinder_mass;

/// A surface point `q` of the cylinder against the half-space dot(x − x0, n) ≥ 0.
fn plane_point(q: DVec3, n: DVec3, x0: DVec3, f: u32, env: f64, out: &mut Vec<CPoint>) {
    let gap = (q - x0).dot(n);
    if gap <= env {
        out.push(CPoint {
            p: q - n * (0.5 * gap),
            n,
            gap,
            feature: f,
        });
    }
}

/// The cylinder against the half-space dot(x − x0, n) ≥ 0 (n towards the cylinder):
/// 4 rim points per flat end disc (features offset + 4e + k), else each disc's deepest rim
/// point (offset + 8 + e); dropped beyond the envelope. Features ascend.
pub fn cylinder_plane(cy: &Cylinder, n: DVec3, x0: DVec3, env: f64, offset: u32) -> Vec<CPoint> {
    let an = cy.a.dot(n);
    let flat = 1.0 - an * an < FLAT * FLAT;
    let mut out = Vec::new();
    for e in 0..2 {
        if flat {
            let dirs = [cy.u, cy.v, -cy.u, -cy.v];
            for (k, d) in dirs.iter().enumerate() {
                let q = cy.end(e) + *d * cy.r;
                plane_point(q, n, x0, offset + 4 * e as u32 + k as u32, env, &mut out);
            }
        }
    }
    if !flat {
        for e in 0..2 {
            let q = cy.rim_support(e, -n);
            plane_point(q, n, x0, offset + 8 + e as u32, env, &mut out);
        }
    }
    out
}

/// Cylinder against a sphere (centre s, radius rs): normal from the cylinder to the sphere,
/// feature 0.
pub fn cylinder_sphere(cy: &Cylinder, s: DVec3, rs: f64, env: f64) -> Vec<CPoint> {
    let p = s - cy.c;
    let z = p.dot(cy.a);
    let pr = p - cy.a * z;
    let rho = pr.length();
    let radial = if rho > 0.0 { pr / rho } else { cy.u };
    let sz = if z >= 0.0 { 1.0 } else { -1.0 };
    let (q, n) = if z.abs() <= cy.hl && rho <= cy.r {
        // Centre inside: out through the nearer of the side and the end face.
        if cy.r - rho < cy.hl - z.abs() {
            (cy.c + cy.a * z + radial * cy.r, radial)
        } else {
            (cy.c + pr + cy.a * (sz * cy.hl), cy.a * sz)
        }
    } else {
        let q = cy.c + cy.a * z.clamp(-cy.hl, cy.hl) + radial * rho.min(cy.r);
        let d = s - q;
        let dist = d.length();
        (q, if dist > 0.0 { d / dist } else { radial })
    };
    // Signed distance of the centre along n from the surface point, less the radius.
    let gap = (s - q).dot(n) - rs;
    if gap > env {
        return Vec::new();
    }
    vec![CPoint {
        p: q + n * (0.5 * gap),
        n,
        gap,
        feature: 0,
    }]
}

/// The cylinder inside a cylinder container (axis local z, base at 0, pose xa, q; normals
/// inwards): side wall per end disc (features 0, 1), floor (10 + plane features), lid
/// (20 + plane features; not when open).
pub fn cylinder_in_cylinder(
    cy: &Cylinder,
    xa: DVec3,
    q: DQuat,
    rad: f64,
    hgt: f64,
    open_top: bool,
    env: f64,
) -> Vec<CPoint> {
    let mut out = Vec::new();
    let radial = |x: DVec3| {
        let l = (q.inverse() * (x - xa)).truncate();
        let rho = l.length();
        let d = if rho > 0.0 { l / rho } else { glam::DVec2::X };
        (q * d.extend(0.0), rho)
    };
    for e in 0..2 {
        let (d0, _) = radial(cy.end(e));
        let (d1, _) = radial(cy.rim_support(e, d0));
        let pw = cy.rim_support(e, d1);
        let (d, rho) = radial(pw);
        let gap = rad - rho;
        if gap <= env {
            out.push(CPoint {
                p: pw + d * (0.5 * gap),
                n: -d,
                gap,
                feature: e as u32,
            });
        }
    }
    out.extend(cylinder_plane(cy, q * DVec3::Z, xa, env, 10));
    if !open_top {
        let top = xa + q * DVec3::new(0.0, 0.0, hgt);
        out.extend(cylinder_plane(cy, q * -DVec3::Z, top, env, 20));
    }
    out
}

// ---------------------------------------------------------------- dispatch (as the GPU's)

use super::collide::{quat, v3, Contact64, Ctx};
use crate::model::contact::BoundaryShape;

impl Ctx<'_> {
    /// Cylinder `g` (a grain with kind SHAPE_CYLINDER) in world.
    pub(super) fn cylinder(&self, g: usize, shapes: &[BoundaryShape]) -> Cylinder {
        let BoundaryShape::GrainCylinder {
            radius,
            half_length,
        } = &shapes[self.state.info[g][3] as usize]
        else {
            panic!("body {g}: cylinder kind without a cylinder shape");
        };
        let (p, q) = (v3(self.state.pos[g]), quat(self.state.rot[g]));
        Cylinder::new(p, q, *half_length as f64, *radius as f64)
    }

    /// Pushes contacts between bodies a < b; `flip` when their normals point from b to a.
    fn push_cyl(&mut self, a: usize, b: usize, pts: &[CPoint], flip: bool) {
        let (mu, materials) = self.mu_mat(a, b);
        let (xa, xb) = (v3(self.state.pos[a]), v3(self.state.pos[b]));
        for p in pts {
            self.out.push(Contact64 {
                a: a as u32,
                b: b as u32,
                feature: p.feature,
                materials,
                normal: if flip { -p.n } else { p.n },
                gap: p.gap,
                ra: p.p - xa,
                rb: p.p - xb,
                mu,
            });
        }
    }
}

/// Two grains a < b, a cylinder and a sphere, or a cylinder and a box, hull, capsule or
/// cylinder (`support::cylinder_pair`).
pub(super) fn cylinder_pair(cx: &mut Ctx, a: usize, b: usize, shapes: &[BoundaryShape]) {
    let (pa, pb) = (cx.state.pos[a], cx.state.pos[b]);
    let env = cx.settings.envelope as f64;
    if (v3(pb) - v3(pa)).length() - pa[3] as f64 - pb[3] as f64 > env {
        return;
    }
    let first = cx.state.info[a][2] == crate::model::body::SHAPE_CYLINDER;
    let (c, s) = if first { (a, b) } else { (b, a) };
    if cx.state.info[s][2] != crate::model::body::SHAPE_SPHERE {
        return super::support::cylinder_pair(cx, a, b, shapes);
    }
    let cy = cx.cylinder(c, shapes);
    let ps = cx.state.pos[s];
    let pts = cylinder_sphere(&cy, v3(ps), ps[3] as f64, env);
    cx.push_cyl(a, b, &pts, !first);
}

/// Boundary `w` against cylinder grain `g` (plane, box container, cylinder container).
pub(super) fn wall_cylinder(cx: &mut Ctx, w: usize, g: usize, shapes: &[BoundaryShape]) {
    let env = cx.settings.envelope as f64;
    let cy = cx.cylinder(g, shapes);
    let (xa, q) = (v3(cx.state.pos[w]), quat(cx.state.rot[w]));
    let cl = q.inverse() * (cy.c - xa);
    let pts = match &shapes[cx.state.info[w][3] as usize] {
        BoundaryShape::Plane => cylinder_plane(&cy, q * DVec3::Z, xa, env, 0),
        BoundaryShape::BoxContainer {
            half_extents,
            open_top,
        } => {
            let h = DVec3::from(half_extents.map(|v| v as f64));
            let walls = super::collide::container_walls(xa, q, h, *open_top, cy.c);
            let wall =
                |(k, n, x0): (usize, DVec3, DVec3)| cylinder_plane(&cy, n, x0, env, 10 * k as u32);
            walls.into_iter().flat_map(wall).collect()
        }
        BoundaryShape::CylinderContainer {
            radius,
            height,
            open_top,
        } => {
            let (rad, hgt) = (*radius as f64, *height as f64);
            if !(cl.truncate().length() <= rad && cl.z >= 0.0 && cl.z <= hgt) {
                return;
            }
            cylinder_in_cylinder(&cy, xa, q, rad, hgt, *open_top, env)
        }
        other => panic!("boundary body {w}: {other:?} against a cylinder is not supported"),
    };
    cx.push_cyl(w, g, &pts, false);
}
