//! CPU (f64) twin of `collide` (shaders `collide_*`): the same contacts, features and order.
//! Sphere pairs by brute force for up to 2048 grains, by a simple hash grid beyond;
//! boundaries by testing every grain against every boundary (meshes: every triangle).

use super::boxes::{self, Manifold, Obb};
use super::capsule;
use crate::grid::LARGE_RATIO;
use crate::mesh::{vertex, MeshTopology, FLAG_DEGENERATE, NONE};
use crate::model::body::{
    BodyState, MOTION_PARKED, SHAPE_BOX, SHAPE_BOX_CONTAINER, SHAPE_CAPSULE, SHAPE_CLUMP,
    SHAPE_CONVEX, SHAPE_CYLINDER, SHAPE_CYLINDER_CONTAINER, SHAPE_MESH, SHAPE_PLANE,
    SHAPE_SOLID_BOX, SHAPE_SOLID_CYLINDER, SHAPE_SPHERE,
};
use crate::model::contact::{BoundaryShape, CollideSettings};
use crate::shapes::boundary_count;
use glam::{DQuat, DVec3};
use std::collections::HashMap;

/// One contact in f64; field meanings as in `collide::ContactRecord`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contact64 {
    pub a: u32,
    pub b: u32,
    pub feature: u32,
    /// (material A << 16) | material B.
    pub materials: u32,
    /// Unit normal from A to B.
    pub normal: DVec3,
    pub gap: f64,
    pub ra: DVec3,
    pub rb: DVec3,
    pub mu: f64,
}

impl Contact64 {
    pub fn key(&self) -> (u32, u32, u32) {
        (self.a, self.b, self.feature)
    }
}

pub(super) fn v3(p: [f32; 4]) -> DVec3 {
    DVec3::new(p[0] as f64, p[1] as f64, p[2] as f64)
}

pub(super) fn quat(q: [f32; 4]) -> DQuat {
    DQuat::from_xyzw(q[0] as f64, q[1] as f64, q[2] as f64, q[3] as f64)
}

pub(super) struct Ctx<'a> {
    pub(super) state: &'a BodyState,
    pub(super) settings: &'a CollideSettings,
    pub(super) out: Vec<Contact64>,
}

impl Ctx<'_> {
    pub(super) fn mu_mat(&self, a: usize, b: usize) -> (f64, u32) {
        let (ma, mb) = (self.state.info[a][1], self.state.info[b][1]);
        let f = &self.settings.friction;
        (
            f[ma as usize].min(f[mb as usize]) as f64,
            (ma << 16) | (mb & 0xffff),
        )
    }

    /// Box `g` (a grain with kind SHAPE_BOX) in world.
    pub(super) fn obb(&self, g: usize, shapes: &[BoundaryShape]) -> Obb {
        let BoundaryShape::GrainBox { half_extents } = &shapes[self.state.info[g][3] as usize]
        else {
            panic!("body {g}: box kind without a box shape");
        };
        let h = DVec3::from(half_extents.map(|v| v as f64));
        Obb::new(v3(self.state.pos[g]), quat(self.state.rot[g]), h)
    }

    /// Pushes a manifold between bodies a < b (normal from a to b).
    pub(super) fn push_manifold(&mut self, a: usize, b: usize, m: &Manifold) {
        let (mu, materials) = self.mu_mat(a, b);
        let (xa, xb) = (v3(self.state.pos[a]), v3(self.state.pos[b]));
        for p in &m.pts {
            self.out.push(Contact64 {
                a: a as u32,
                b: b as u32,
                feature: p.feature,
                materials,
                normal: m.n,
                gap: p.gap,
                ra: p.p - xa,
                rb: p.p - xb,
                mu,
            });
        }
    }

    /// Any two grains a < b: spheres analytically, boxes by `boxes`.
    pub(super) fn grain_pair(&mut self, a: usize, b: usize, shapes: &[BoundaryShape]) {
        let (ka, kb) = (self.state.info[a][2], self.state.info[b][2]);
        // Clumps first (capsule–clump is a clump pair), as the GPU's `visit`.
        if ka == SHAPE_CLUMP || kb == SHAPE_CLUMP {
            return super::clumps::clump_pair(self, a, b, shapes);
        }
        if ka == SHAPE_CYLINDER || kb == SHAPE_CYLINDER {
            return super::cylinder::cylinder_pair(self, a, b, shapes);
        }
        if ka == SHAPE_CONVEX || kb == SHAPE_CONVEX {
            return super::convex::convex_pair(self, a, b, shapes);
        }
        if ka == SHAPE_CAPSULE || kb == SHAPE_CAPSULE {
            return capsule_pair(self, a, b, shapes);
        }
        if ka != SHAPE_BOX && kb != SHAPE_BOX {
            return self.sphere_pair(a, b);
        }
        let (pa, pb) = (self.state.pos[a], self.state.pos[b]);
        let env = self.settings.envelope as f64;
        // Bounding spheres first, as the GPU's broad phase does.
        if (v3(pb) - v3(pa)).length() - pa[3] as f64 - pb[3] as f64 > env {
            return;
        }
        let m = if ka == SHAPE_BOX && kb == SHAPE_BOX {
            boxes::box_box(&self.obb(a, shapes), &self.obb(b, shapes), env)
        } else {
            let (s, x, flip) = if ka == SHAPE_BOX {
                (b, a, 1.0)
            } else {
                (a, b, -1.0)
            };
            let r = self.state.pos[s][3] as f64;
            match boxes::sphere_box(v3(self.state.pos[s]), r, &self.obb(x, shapes), env) {
                Some((n, gap, p)) => Manifold {
                    n: n * flip,
                    pts: vec![boxes::MPoint { p, gap, feature: 0 }],
                },
                None => Manifold::default(),
            }
        };
        self.push_manifold(a, b, &m);
    }

    fn sphere_pair(&mut self, a: usize, b: usize) {
        let (pa, pb) = (self.state.pos[a], self.state.pos[b]);
        let d = v3(pb) - v3(pa);
        let dist = d.length();
        let gap = dist - pa[3] as f64 - pb[3] as f64;
        if gap > self.settings.envelope as f64 {
            return;
        }
        let n = if dist > 0.0 { d / dist } else { DVec3::Z };
        let ra = n * (pa[3] as f64 + 0.5 * gap);
        let (mu, materials) = self.mu_mat(a, b);
        self.out.push(Contact64 {
            a: a as u32,
            b: b as u32,
            feature: 0,
            materials,
            normal: n,
            gap,
            ra,
            rb: ra - d,
            mu,
        });
    }
}

/// One boundary against one grain: emits in the boundary's local frame.
pub(super) struct Wall<'a, 'b> {
    pub(super) cx: &'a mut Ctx<'b>,
    pub(super) w: usize,
    pub(super) g: usize,
    pub(super) xa: DVec3,
    pub(super) q: DQuat,
    /// The grain's centre (contact lever arms are from here).
    pub(super) xb: DVec3,
    /// The sphere tested (the grain itself, or a clump member) and its radius.
    pub(super) xs: DVec3,
    pub(super) r: f64,
    /// Added to every feature id (a clump member's `k << 24`).
    pub(super) fbase: u32,
}

impl Wall<'_, '_> {
    fn emit(&mut self, feature: u32, nl: DVec3, gap: f64) {
        if gap > self.cx.settings.envelope as f64 {
            return;
        }
        let n = self.q * nl;
        let p = self.xs - n * (self.r + 0.5 * gap);
        let (mu, materials) = self.cx.mu_mat(self.w, self.g);
        self.cx.out.push(Contact64 {
            a: self.w as u32,
            b: self.g as u32,
            feature: self.fbase + feature,
            materials,
            normal: n,
            gap,
            ra: p - self.xa,
            rb: p - self.xb,
            mu,
        });
    }

    fn emit_point(&mut self, feature: u32, cl: DVec3, q: DVec3, fallback: DVec3) {
        let d = cl - q;
        let dist = d.length();
        let nl = if dist > 0.0 { d / dist } else { fallback };
        self.emit(feature, nl, dist - self.r);
    }
}

pub(super) struct MeshRef<'a> {
    pub(super) v: &'a [[f32; 3]],
    pub(super) t: &'a [[u32; 3]],
    pub(super) topo: MeshTopology,
}

impl MeshRef<'_> {
    pub(super) fn p(&self, i: u32) -> DVec3 {
        vertex(self.v, i)
    }
    fn edge_side(&self, t: usize, k: usize, c: DVec3) -> f64 {
        let (va, vb) = (self.t[t][k], self.t[t][(k + 1) % 3]);
        let pa = self.p(va.min(vb));
        let pb = self.p(va.max(vb));
        let s = (c - pa).dot((pb - pa).cross(self.topo.normals[t]));
        if (self.topo.flags[t] >> (6 + k)) & 1 != 0 {
            -s
        } else {
            s
        }
    }
    fn edge_param(&self, va: u32, vb: u32, c: DVec3) -> (f64, f64) {
        let pa = self.p(va.min(vb));
        let e = self.p(va.max(vb)) - pa;
        ((c - pa).dot(e), e.dot(e))
    }
    fn vertex_side(&self, v: u32, u: u32, c: DVec3) -> bool {
        let (t, l) = self.edge_param(v, u, c);
        if v < u {
            t <= 0.0
        } else {
            t >= l
        }
    }

    /// The feature of triangle t whose Voronoi region holds c (face 0, edge 1 + k, vertex
    /// 4 + k), or None where another triangle reports it: an edge or vertex belongs to its
    /// owner only, and an edge only while c is outside the neighbour across it too.
    pub(super) fn region(&self, t: usize, c: DVec3) -> Option<u32> {
        let flags = self.topo.flags[t];
        let v = self.t[t];
        let s = [0, 1, 2].map(|k| self.edge_side(t, k, c));
        if s.iter().all(|&x| x < 0.0) {
            return Some(0);
        }
        for k in 0..3 {
            if s[k] < 0.0 {
                continue;
            }
            let (tp, l) = self.edge_param(v[k], v[(k + 1) % 3], c);
            if tp > 0.0 && tp < l {
                let nbr = self.topo.nbr[t][k];
                let inside_nbr =
                    nbr != NONE && self.edge_side((nbr >> 2) as usize, (nbr & 3) as usize, c) < 0.0;
                return ((flags >> k) & 1 != 0 && !inside_nbr).then_some(1 + k as u32);
            }
        }
        for k in 0..3 {
            let vk = v[k];
            if self.vertex_side(vk, v[(k + 1) % 3], c) && self.vertex_side(vk, v[(k + 2) % 3], c) {
                let beyond = self.topo.vadj[vk as usize]
                    .iter()
                    .all(|&u| self.vertex_side(vk, u, c));
                return ((flags >> (3 + k)) & 1 != 0 && beyond).then_some(4 + k as u32);
            }
        }
        None
    }

    fn triangle(&self, wall: &mut Wall, t: usize, cl: DVec3) {
        if self.topo.flags[t] & FLAG_DEGENERATE != 0 {
            return;
        }
        let nt = self.topo.normals[t];
        let v = self.t[t];
        let r = wall.r;
        let hd = (cl - self.p(v[0])).dot(nt);
        if hd.abs() - r > wall.cx.settings.envelope as f64 {
            return;
        }
        let nl = if hd < 0.0 { -nt } else { nt };
        let t7 = 7 * t as u32;
        match self.region(t, cl) {
            Some(0) => wall.emit(t7, nl, hd.abs() - r),
            Some(f) if f < 4 => {
                let k = (f - 1) as usize;
                let (va, vb) = (v[k], v[(k + 1) % 3]);
                let (tp, l) = self.edge_param(va, vb, cl);
                let pa = self.p(va.min(vb));
                let q = pa + (self.p(va.max(vb)) - pa) * (tp / l);
                wall.emit_point(t7 + f, cl, q, nl);
            }
            Some(f) => wall.emit_point(t7 + f, cl, self.p(v[(f - 4) as usize]), nl),
            None => {}
        }
    }
}

pub(super) fn wall_grain(
    wall: &mut Wall,
    shape: &BoundaryShape,
    kind: u32,
    mesh: Option<&MeshRef>,
) {
    let cl = wall.q.inverse() * (wall.xs - wall.xa);
    let r = wall.r;
    let (x, y, z) = (DVec3::X, DVec3::Y, DVec3::Z);
    match (kind, shape) {
        (SHAPE_PLANE, BoundaryShape::Plane) => wall.emit(0, z, cl.z - r),
        (
            SHAPE_BOX_CONTAINER,
            BoundaryShape::BoxContainer {
                half_extents,
                open_top,
            },
        ) => {
            let h = DVec3::from(half_extents.map(|v| v as f64));
            if cl.x.abs() <= h.x && cl.y.abs() <= h.y && cl.z >= -h.z && cl.z <= h.z {
                wall.emit(0, x, cl.x + h.x - r);
                wall.emit(1, -x, h.x - cl.x - r);
                wall.emit(2, y, cl.y + h.y - r);
                wall.emit(3, -y, h.y - cl.y - r);
                wall.emit(4, z, cl.z + h.z - r);
                if !open_top {
                    wall.emit(5, -z, h.z - cl.z - r);
                }
            }
        }
        (SHAPE_SOLID_BOX, BoundaryShape::SolidBox { half_extents }) => {
            let h = DVec3::from(half_extents.map(|v| v as f64));
            let q = cl.clamp(-h, h);
            let d = cl - q;
            let dist = d.length();
            if dist > 0.0 {
                wall.emit(0, d / dist, dist - r);
            } else {
                let depth = h - cl.abs();
                let mut axis = 0;
                if depth.y < depth[axis] {
                    axis = 1;
                }
                if depth.z < depth[axis] {
                    axis = 2;
                }
                let mut nl = DVec3::ZERO;
                nl[axis] = if cl[axis] < 0.0 { -1.0 } else { 1.0 };
                wall.emit(0, nl, -depth[axis] - r);
            }
        }
        (
            SHAPE_CYLINDER_CONTAINER,
            BoundaryShape::CylinderContainer {
                radius,
                height,
                open_top,
            },
        ) => {
            let (rad, hgt) = (*radius as f64, *height as f64);
            let rho = cl.truncate().length();
            if rho <= rad && cl.z >= 0.0 && cl.z <= hgt {
                let e = if rho > 0.0 {
                    (cl.truncate() / rho).extend(0.0)
                } else {
                    x
                };
                wall.emit(0, -e, rad - rho - r);
                wall.emit(1, z, cl.z - r);
                if !open_top {
                    wall.emit(2, -z, hgt - cl.z - r);
                }
            }
        }
        (SHAPE_SOLID_CYLINDER, BoundaryShape::SolidCylinder { radius, height }) => {
            let (rad, hgt) = (*radius as f64, *height as f64);
            let rho = cl.truncate().length();
            let e = if rho > 0.0 {
                (cl.truncate() / rho).extend(0.0)
            } else {
                x
            };
            if rho > rad || cl.z < 0.0 || cl.z > hgt {
                let mut q = DVec3::new(cl.x, cl.y, cl.z.clamp(0.0, hgt));
                if rho > rad {
                    q = DVec3::new(e.x * rad, e.y * rad, q.z);
                }
                let d = cl - q;
                let dist = d.length();
                wall.emit(0, d / dist, dist - r);
            } else {
                let mut depth = rad - rho;
                let mut nl = e;
                if cl.z < depth {
                    depth = cl.z;
                    nl = -z;
                }
                if hgt - cl.z < depth {
                    depth = hgt - cl.z;
                    nl = z;
                }
                wall.emit(0, nl, -depth - r);
            }
        }
        (SHAPE_MESH, BoundaryShape::Mesh { .. }) => {
            let m = mesh.expect("mesh prepared");
            for t in 0..m.t.len() {
                m.triangle(wall, t, cl);
            }
        }
        _ => panic!(
            "boundary body {}: shape kind {kind} does not match {shape:?}",
            wall.w
        ),
    }
}

/// Boundary `w` against box grain `g` (boundary kinds plane, box container, solid box,
/// cylinder container; the others are refused by `Collide::new`).
fn wall_box(cx: &mut Ctx, w: usize, g: usize, shapes: &[BoundaryShape]) {
    let env = cx.settings.envelope as f64;
    let b = cx.obb(g, shapes);
    let (xa, q) = (v3(cx.state.pos[w]), quat(cx.state.rot[w]));
    let cl = q.inverse() * (b.c - xa);
    let (x, y, z) = (DVec3::X, DVec3::Y, DVec3::Z);
    match &shapes[cx.state.info[w][3] as usize] {
        BoundaryShape::Plane => {
            let m = boxes::box_plane(q * z, xa, &b, env, 0);
            cx.push_manifold(w, g, &m);
        }
        BoundaryShape::BoxContainer {
            half_extents,
            open_top,
        } => {
            let h = DVec3::from(half_extents.map(|v| v as f64));
            if !(cl.x.abs() <= h.x && cl.y.abs() <= h.y && cl.z >= -h.z && cl.z <= h.z) {
                return;
            }
            let walls = [x, -x, y, -y, z, -z];
            for (k, nl) in walls.iter().enumerate() {
                if k == 5 && *open_top {
                    continue;
                }
                let x0 = xa + q * (-*nl * h);
                let m = boxes::box_plane(q * *nl, x0, &b, env, 8 * k as u32);
                cx.push_manifold(w, g, &m);
            }
        }
        BoundaryShape::SolidBox { half_extents } => {
            let h = DVec3::from(half_extents.map(|v| v as f64));
            let m = boxes::box_box(&Obb::new(xa, q, h), &b, env);
            cx.push_manifold(w, g, &m);
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
            let vl: Vec<DVec3> = (0..8).map(|k| q.inverse() * (b.vertex(k) - xa)).collect();
            let side: Vec<f64> = vl.iter().map(|v| rad - v.truncate().length()).collect();
            let bottom: Vec<f64> = vl.iter().map(|v| v.z).collect();
            let top: Vec<f64> = vl.iter().map(|v| hgt - v.z).collect();
            let (mu, materials) = cx.mu_mat(w, g);
            for (grp, gaps) in [(0u32, &side), (1, &bottom), (2, &top)] {
                if grp == 2 && *open_top {
                    continue;
                }
                for k in boxes::deepest(gaps, env) {
                    let v = vl[k];
                    let nl = match grp {
                        0 => {
                            let rho = v.truncate().length();
                            if rho > 0.0 {
                                -(v.truncate() / rho).extend(0.0)
                            } else {
                                -x
                            }
                        }
                        1 => z,
                        _ => -z,
                    };
                    let n = q * nl;
                    let p = b.vertex(k) - n * (0.5 * gaps[k]);
                    cx.out.push(Contact64 {
                        a: w as u32,
                        b: g as u32,
                        feature: 8 * grp + k as u32,
                        materials,
                        normal: n,
                        gap: gaps[k],
                        ra: p - xa,
                        rb: p - b.c,
                        mu,
                    });
                }
            }
        }
        other => panic!("boundary body {w}: {other:?} against a box is not supported"),
    }
}

/// Every contact with gap ≤ envelope, sorted by (A, B, feature).
pub fn detect(
    state: &BodyState,
    shapes: &[BoundaryShape],
    settings: &CollideSettings,
) -> Vec<Contact64> {
    let nb = boundary_count(state);
    let n = state.len();
    let mut cx = Ctx {
        state,
        settings,
        out: Vec::new(),
    };
    // Boundaries (rows of A = boundary come first in the order).
    let meshes: Vec<Option<MeshRef>> = shapes
        .iter()
        .map(|s| match s {
            BoundaryShape::Mesh {
                vertices,
                triangles,
            } => Some(MeshRef {
                v: vertices,
                t: triangles,
                topo: MeshTopology::new(vertices, triangles),
            }),
            _ => None,
        })
        .collect();
    let parked = |g: usize| state.info[g][0] == MOTION_PARKED;
    for w in 0..nb {
        let [_, _, kind, si] = state.info[w];
        for g in (nb..n).filter(|&g| !parked(g)) {
            let kg = state.info[g][2];
            let mesh = meshes[si as usize].as_ref();
            if kg != SHAPE_SPHERE
                && kg != SHAPE_CLUMP
                && super::support::wall_pair(&mut cx, w, g, shapes, mesh)
            {
                continue;
            }
            if state.info[g][2] == SHAPE_BOX {
                wall_box(&mut cx, w, g, shapes);
                continue;
            }
            if state.info[g][2] == SHAPE_CAPSULE {
                wall_capsule(&mut cx, w, g, shapes);
                continue;
            }
            if state.info[g][2] == SHAPE_CYLINDER {
                super::cylinder::wall_cylinder(&mut cx, w, g, shapes);
                continue;
            }
            if state.info[g][2] == SHAPE_CONVEX {
                super::convex::wall_convex(&mut cx, w, g, shapes);
                continue;
            } else if state.info[g][2] == SHAPE_CLUMP {
                let (s, m) = (&shapes[si as usize], meshes[si as usize].as_ref());
                super::clumps::wall_clump(&mut cx, w, g, shapes, s, kind, m);
                continue;
            }
            let mut wall = Wall {
                xa: v3(state.pos[w]),
                q: quat(state.rot[w]),
                xb: v3(state.pos[g]),
                xs: v3(state.pos[g]),
                r: state.pos[g][3] as f64,
                fbase: 0,
                cx: &mut cx,
                w,
                g,
            };
            wall_grain(
                &mut wall,
                &shapes[si as usize],
                kind,
                meshes[si as usize].as_ref(),
            );
        }
    }
    // Grain pairs.
    let ng = n - nb;
    if ng <= 2048 {
        for a in (nb..n).filter(|&a| !parked(a)) {
            for b in (a + 1..n).filter(|&b| !parked(b)) {
                cx.grain_pair(a, b, shapes);
            }
        }
    } else {
        // The GPU's plan (large grains apart), though any grid gives the same pairs.
        let plan = crate::grid::GridPlan::new(state, settings.envelope, LARGE_RATIO);
        let large = |g: usize| state.pos[g][3] > plan.large_radius;
        let h = plan.cell as f64;
        let cell = |g: usize| {
            let p = v3(state.pos[g]) / h;
            (p.x.floor() as i64, p.y.floor() as i64, p.z.floor() as i64)
        };
        let mut grid: HashMap<(i64, i64, i64), Vec<usize>> = HashMap::new();
        for g in (nb..n).filter(|&g| !large(g) && !parked(g)) {
            grid.entry(cell(g)).or_default().push(g);
        }
        let big: Vec<usize> = (nb..n).filter(|&g| large(g) && !parked(g)).collect();
        let mut near = Vec::new();
        for a in (nb..n).filter(|&a| !parked(a)) {
            near.clear();
            if large(a) {
                near.extend((a + 1..n).filter(|&b| !parked(b)));
            } else {
                let (x, y, z) = cell(a);
                for dz in -1..=1 {
                    for dy in -1..=1 {
                        for dx in -1..=1 {
                            if let Some(list) = grid.get(&(x + dx, y + dy, z + dz)) {
                                near.extend(list.iter().copied().filter(|&b| b > a));
                            }
                        }
                    }
                }
                near.extend(big.iter().copied().filter(|&b| b > a));
            }
            near.sort_unstable();
            for &b in &near {
                cx.grain_pair(a, b, shapes);
            }
        }
    }
    cx.out.sort_by_key(|c| c.key());
    cx.out
}

impl From<&Contact64> for crate::model::contact::ContactRecord {
    /// The record the GPU would write for this contact (f32 rounding of every field).
    fn from(c: &Contact64) -> Self {
        let f = |v: DVec3, w: f64| [v.x as f32, v.y as f32, v.z as f32, w as f32];
        crate::model::contact::ContactRecord {
            n_gap: f(c.normal, c.gap),
            ra: f(c.ra, c.mu),
            rb: f(c.rb, 0.0),
            ids: [c.a, c.b, c.feature, c.materials],
        }
    }
}

// ---------------------------------------------------------------- capsule grains
// (the pair functions are in `reference::capsule`; here the dispatch, as the GPU's)

impl Ctx<'_> {
    /// Capsule `g` (a grain with kind SHAPE_CAPSULE) in world.
    pub(super) fn capsule(&self, g: usize, shapes: &[BoundaryShape]) -> capsule::Capsule {
        let BoundaryShape::GrainCapsule {
            radius,
            half_length,
        } = &shapes[self.state.info[g][3] as usize]
        else {
            panic!("body {g}: capsule kind without a capsule shape");
        };
        capsule::Capsule::new(
            v3(self.state.pos[g]),
            quat(self.state.rot[g]),
            *half_length as f64,
            *radius as f64,
        )
    }

    /// Pushes contacts between bodies a < b; `flip` when their normals point from b to a.
    pub(super) fn push_points(&mut self, a: usize, b: usize, pts: &[capsule::CPoint], flip: bool) {
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

/// Two grains a < b of which one at least is a capsule.
fn capsule_pair(cx: &mut Ctx, a: usize, b: usize, shapes: &[BoundaryShape]) {
    let (pa, pb) = (cx.state.pos[a], cx.state.pos[b]);
    let env = cx.settings.envelope as f64;
    if (v3(pb) - v3(pa)).length() - pa[3] as f64 - pb[3] as f64 > env {
        return;
    }
    let (ka, kb) = (cx.state.info[a][2], cx.state.info[b][2]);
    // The capsule first (c), the other (o); flip when the capsule is b.
    let (c, o, ko, flip) = if ka == SHAPE_CAPSULE {
        (a, b, kb, false)
    } else {
        (b, a, ka, true)
    };
    let cap = cx.capsule(c, shapes);
    let pts = match ko {
        SHAPE_CAPSULE => capsule::capsule_capsule(&cap, &cx.capsule(o, shapes), env),
        SHAPE_BOX => {
            // Normal from the box to the capsule: the other way round.
            let mut p = capsule::capsule_box(&cap, &cx.obb(o, shapes), env);
            p.iter_mut().for_each(|q| q.n = -q.n);
            p
        }
        _ => capsule::capsule_sphere(&cap, v3(cx.state.pos[o]), cx.state.pos[o][3] as f64, env),
    };
    cx.push_points(a, b, &pts, flip);
}

/// The walls of a box container (centre `xa`, orientation `q`, half extents `h`) that a body
/// centred at `c` can touch: (wall index k, inward normal, a point on the wall) for the six
/// faces (±x, ±y, ±z; no lid when `open_top`), none when `c` is outside the box. The wall
/// index makes the contact features (k × the shape's points per wall).
pub(super) fn container_walls(
    xa: DVec3,
    q: DQuat,
    h: DVec3,
    open_top: bool,
    c: DVec3,
) -> Vec<(usize, DVec3, DVec3)> {
    let cl = q.inverse() * (c - xa);
    if !(cl.x.abs() <= h.x && cl.y.abs() <= h.y && cl.z >= -h.z && cl.z <= h.z) {
        return Vec::new();
    }
    let walls = [
        DVec3::X,
        -DVec3::X,
        DVec3::Y,
        -DVec3::Y,
        DVec3::Z,
        -DVec3::Z,
    ];
    (0..if open_top { 5 } else { 6 })
        .map(|k| (k, q * walls[k], xa + q * (-walls[k] * h)))
        .collect()
}

/// Boundary `w` against capsule grain `g` (plane, box container, solid box, cylinder
/// container; the others are refused by `Collide::new`).
fn wall_capsule(cx: &mut Ctx, w: usize, g: usize, shapes: &[BoundaryShape]) {
    let env = cx.settings.envelope as f64;
    let cap = cx.capsule(g, shapes);
    let (xa, q) = (v3(cx.state.pos[w]), quat(cx.state.rot[w]));
    let cl = q.inverse() * (cap.c - xa);
    let mut pts = Vec::new();
    match &shapes[cx.state.info[w][3] as usize] {
        BoundaryShape::Plane => pts = capsule::capsule_plane(&cap, q * DVec3::Z, xa, env, 0),
        BoundaryShape::BoxContainer {
            half_extents,
            open_top,
        } => {
            let h = DVec3::from(half_extents.map(|v| v as f64));
            for (k, n, x0) in container_walls(xa, q, h, *open_top, cap.c) {
                pts.extend(capsule::capsule_plane(&cap, n, x0, env, 2 * k as u32));
            }
        }
        BoundaryShape::SolidBox { half_extents } => {
            let h = DVec3::from(half_extents.map(|v| v as f64));
            pts = capsule::capsule_box(&cap, &Obb::new(xa, q, h), env);
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
            pts = capsule::capsule_cylinder_container(&cap, xa, q, rad, hgt, *open_top, env);
        }
        other => panic!("boundary body {w}: {other:?} against a capsule is not supported"),
    }
    cx.push_points(w, g, &pts, false);
}
