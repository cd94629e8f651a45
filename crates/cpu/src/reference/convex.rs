//! f64 twin of the convex hull narrow phase (`collide_pairs.wgsl` / `collide_walls.wgsl`,
//! the `convex` sections): same algorithm, decisions and feature ids.
//!
//! * **hull–plane** (a plane, each wall of a box container): the hull's vertices, the 4
//!   deepest within the envelope (ties to the lower vertex), feature `64·wall + vertex`,
//!   as boxes do with their 8 corners. A resting face gives its corner vertices (≤ 4 kept,
//!   fixed by index), so the feature ids stay put for the warm start.
//! * **sphere–hull**: the face plane of largest signed distance s from the centre; s ≤ 0
//!   (centre inside): that face's normal, depth −s; else the closest point over the faces
//!   the centre sees (projection when inside the polygon, else its edges), feature 0.
//!
//! * **hull–hull, hull–box**: separating axes and a clipped face manifold
//!   ([`super::polytope`]).
//! * **hull–clump**: each member sphere as sphere–hull ([`super::clumps`]).
//! * **capsule–hull**: [`capsule_hull`].
//! * hull–cylinder container (vertex tests per wall group) and hull–solid box (polytope).
//!
//! Other pairs with hulls (cylinder grains, solid cylinders, meshes) are not built:
//! refused by `Collide::new` and the scene loader.

use super::boxes::{deepest, MPoint, Manifold};
use super::collide::{Contact64, Ctx};
use crate::model::body::{SHAPE_BOX, SHAPE_CAPSULE, SHAPE_CONVEX};
use crate::model::contact::BoundaryShape;
use glam::{DQuat, DVec3};

/// A hull grain in world: centre, rotation, body-frame vertices, planes (n, d), loops.
pub struct Hull {
    pub c: DVec3,
    pub q: DQuat,
    pub verts: Vec<DVec3>,
    pub planes: Vec<(DVec3, f64)>,
    pub loops: Vec<Vec<u32>>,
    /// `[u, w, f, g]`: `crate::convex::hull_edges`.
    pub edges: Vec<[u32; 4]>,
}

impl Hull {
    /// The polytope of a `GrainConvex` shape, or of a `GrainBox` / `SolidBox` (its
    /// `crate::convex::box_polytope`), at (c, q); the f32 data widened to f64.
    pub fn new(c: DVec3, q: DQuat, shape: &BoundaryShape) -> Hull {
        match shape {
            BoundaryShape::GrainConvex {
                vertices,
                planes,
                loops,
            } => Hull::from_f32(c, q, vertices, planes, loops),
            BoundaryShape::GrainBox { half_extents } | BoundaryShape::SolidBox { half_extents } => {
                let (v, p, l) = crate::convex::box_polytope(*half_extents);
                Hull::from_f32(c, q, &v, &p, &l)
            }
            _ => panic!("not a polytope shape: {shape:?}"),
        }
    }

    fn from_f32(c: DVec3, q: DQuat, v: &[[f32; 3]], p: &[[f32; 4]], l: &[Vec<u32>]) -> Hull {
        let d = |x: f32| x as f64;
        Hull {
            c,
            q,
            verts: v
                .iter()
                .map(|v| DVec3::new(d(v[0]), d(v[1]), d(v[2])))
                .collect(),
            planes: p
                .iter()
                .map(|p| (DVec3::new(d(p[0]), d(p[1]), d(p[2])), d(p[3])))
                .collect(),
            loops: l.to_vec(),
            edges: crate::convex::hull_edges(l),
        }
    }

    /// Vertex k in world.
    pub fn vertex(&self, k: usize) -> DVec3 {
        self.c + self.q * self.verts[k]
    }

    /// Whether x (local, on face f's plane) lies inside its polygon (edges included).
    pub fn face_contains(&self, f: usize, x: DVec3) -> bool {
        let (n, l) = (self.planes[f].0, &self.loops[f]);
        (0..l.len()).all(|k| {
            let a = self.verts[l[k] as usize];
            let b = self.verts[l[(k + 1) % l.len()] as usize];
            (b - a).cross(x - a).dot(n) >= 0.0
        })
    }

    /// Closest point of face f's polygon (local frame) to x, which lies above its plane.
    fn face_closest(&self, f: usize, x: DVec3) -> DVec3 {
        let (n, d) = self.planes[f];
        let proj = x - n * (n.dot(x) - d);
        let l = &self.loops[f];
        let (mut inside, mut best, mut bd) = (true, proj, f64::INFINITY);
        for k in 0..l.len() {
            let a = self.verts[l[k] as usize];
            let b = self.verts[l[(k + 1) % l.len()] as usize];
            if (b - a).cross(proj - a).dot(n) < 0.0 {
                inside = false;
            }
            let q = seg_closest(a, b, x);
            if (x - q).length_squared() < bd {
                bd = (x - q).length_squared();
                best = q;
            }
        }
        if inside {
            proj
        } else {
            best
        }
    }
}

fn seg_closest(a: DVec3, b: DVec3, x: DVec3) -> DVec3 {
    let e = b - a;
    let l2 = e.length_squared();
    let t = if l2 > 0.0 {
        ((x - a).dot(e) / l2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    a + e * t
}

/// The hull's vertices against the half-space `dot(x − x0, n) ≥ 0` (n from the plane to
/// the hull): the up to 4 deepest with gap ≤ env, features `offset + vertex`, ascending.
pub fn hull_plane(n: DVec3, x0: DVec3, h: &Hull, env: f64, offset: u32) -> Manifold {
    let gaps: Vec<f64> = (0..h.verts.len())
        .map(|k| (h.vertex(k) - x0).dot(n))
        .collect();
    let pts = deepest(&gaps, env)
        .into_iter()
        .map(|k| MPoint {
            p: h.vertex(k) - n * (0.5 * gaps[k]),
            gap: gaps[k],
            feature: offset + k as u32,
        })
        .collect();
    Manifold { n, pts }
}

/// Sphere (centre, radius) against a hull: (normal from the hull to the sphere, gap,
/// midpoint), or None beyond the envelope.
pub fn sphere_hull(cs: DVec3, r: f64, h: &Hull, env: f64) -> Option<(DVec3, f64, DVec3)> {
    let cl = h.q.inverse() * (cs - h.c);
    let (mut smax, mut fmax) = (f64::NEG_INFINITY, 0);
    for (f, &(n, d)) in h.planes.iter().enumerate() {
        let s = n.dot(cl) - d;
        if s > smax {
            (smax, fmax) = (s, f);
        }
    }
    if smax - r > env {
        return None;
    }
    let mut nl = h.planes[fmax].0;
    let mut ql = cl - nl * smax;
    let mut gap = smax - r;
    if smax > 0.0 {
        let mut bd = f64::INFINITY;
        for (f, &(n, d)) in h.planes.iter().enumerate() {
            if n.dot(cl) - d <= 0.0 {
                continue;
            }
            let c = h.face_closest(f, cl);
            if (cl - c).length_squared() < bd {
                bd = (cl - c).length_squared();
                ql = c;
            }
        }
        let dist = bd.sqrt();
        nl = (cl - ql) / dist;
        gap = dist - r;
    }
    if gap > env {
        return None;
    }
    let n = h.q * nl;
    Some((n, gap, h.c + h.q * ql + n * (0.5 * gap)))
}

fn v3(p: [f32; 4]) -> DVec3 {
    DVec3::new(p[0] as f64, p[1] as f64, p[2] as f64)
}

fn quat(q: [f32; 4]) -> DQuat {
    DQuat::from_xyzw(q[0] as f64, q[1] as f64, q[2] as f64, q[3] as f64)
}

/// Grain g (kind SHAPE_CONVEX) as a hull in world.
fn grain_hull(cx: &Ctx, g: usize, shapes: &[BoundaryShape]) -> Hull {
    let s = &cx.state;
    Hull::new(v3(s.pos[g]), quat(s.rot[g]), &shapes[s.info[g][3] as usize])
}

fn push(cx: &mut Ctx, a: usize, b: usize, m: &Manifold) {
    let (mu, materials) = cx.mu_mat(a, b);
    let (xa, xb) = (v3(cx.state.pos[a]), v3(cx.state.pos[b]));
    for p in &m.pts {
        cx.out.push(Contact64 {
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

/// Grains a < b, one a hull, the other a sphere, capsule, hull or box (`super::polytope`).
pub(super) fn convex_pair(cx: &mut Ctx, a: usize, b: usize, shapes: &[BoundaryShape]) {
    let env = cx.settings.envelope as f64;
    let (pa, pb) = (cx.state.pos[a], cx.state.pos[b]);
    // Bounding spheres first, as the GPU's broad phase does.
    if (v3(pb) - v3(pa)).length() - pa[3] as f64 - pb[3] as f64 > env {
        return;
    }
    let polytope = |k: u32| k == SHAPE_CONVEX || k == SHAPE_BOX;
    if polytope(cx.state.info[a][2]) && polytope(cx.state.info[b][2]) {
        let (ha, hb) = (grain_hull(cx, a, shapes), grain_hull(cx, b, shapes));
        let m = super::polytope::polytope_pair(&ha, &hb, pa[3] as f64, pb[3] as f64, env);
        return push(cx, a, b, &m);
    }
    let hull_a = cx.state.info[a][2] == SHAPE_CONVEX;
    let (h, s, sign) = if hull_a { (a, b, 1.0) } else { (b, a, -1.0) };
    let hull = grain_hull(cx, h, shapes);
    if cx.state.info[s][2] == SHAPE_CAPSULE {
        let cap = cx.capsule(s, shapes);
        let mut m = capsule_hull(cap.end(0), cap.end(1), cap.r, &hull, env);
        m.n *= sign;
        return push(cx, a, b, &m);
    }
    let r = cx.state.pos[s][3] as f64;
    if let Some((n, gap, p)) = sphere_hull(v3(cx.state.pos[s]), r, &hull, env) {
        let m = Manifold {
            n: n * sign,
            pts: vec![MPoint { p, gap, feature: 0 }],
        };
        push(cx, a, b, &m);
    }
}

/// Boundary w (a plane, box or cylinder container, or solid box) against hull grain g.
pub(super) fn wall_convex(cx: &mut Ctx, w: usize, g: usize, shapes: &[BoundaryShape]) {
    let env = cx.settings.envelope as f64;
    let hull = grain_hull(cx, g, shapes);
    let (xa, q) = (v3(cx.state.pos[w]), quat(cx.state.rot[w]));
    match &shapes[cx.state.info[w][3] as usize] {
        BoundaryShape::Plane => {
            let m = hull_plane(q * DVec3::Z, xa, &hull, env, 0);
            push(cx, w, g, &m);
        }
        BoundaryShape::BoxContainer {
            half_extents,
            open_top,
        } => {
            let h = DVec3::from(half_extents.map(|v| v as f64));
            for (k, n, x0) in super::collide::container_walls(xa, q, h, *open_top, hull.c) {
                let m = hull_plane(n, x0, &hull, env, 64 * k as u32);
                push(cx, w, g, &m);
            }
        }
        BoundaryShape::SolidBox { .. } => {
            let solid = Hull::new(xa, q, &shapes[cx.state.info[w][3] as usize]);
            let (rw, rg) = (cx.state.pos[w][3] as f64, cx.state.pos[g][3] as f64);
            let m = super::polytope::polytope_pair(&solid, &hull, rw, rg, env);
            push(cx, w, g, &m);
        }
        BoundaryShape::CylinderContainer {
            radius,
            height,
            open_top,
        } => hull_in_cylinder(cx, w, g, &hull, [*radius as f64, *height as f64], *open_top),
        other => panic!("boundary body {w}: {other:?} against a convex hull is not supported"),
    }
}

/// Hull grain g inside cylinder container w (radius, height; base at the body's origin,
/// axis local z): per wall group (side 0, bottom 1, top 2 unless open) the 4 deepest
/// vertices, feature `64·group + vertex`, the side's normal radial at each vertex.
fn hull_in_cylinder(cx: &mut Ctx, w: usize, g: usize, hull: &Hull, rh: [f64; 2], open: bool) {
    let env = cx.settings.envelope as f64;
    let (xa, q) = (v3(cx.state.pos[w]), quat(cx.state.rot[w]));
    let cl = q.inverse() * (hull.c - xa);
    let [rad, hgt] = rh;
    if !(cl.truncate().length() <= rad && cl.z >= 0.0 && cl.z <= hgt) {
        return;
    }
    let vl: Vec<DVec3> = (0..hull.verts.len())
        .map(|k| q.inverse() * (hull.vertex(k) - xa))
        .collect();
    for grp in 0..3u32 {
        if grp == 2 && open {
            continue;
        }
        let gaps: Vec<f64> = vl
            .iter()
            .map(|v| match grp {
                0 => rad - v.truncate().length(),
                1 => v.z,
                _ => hgt - v.z,
            })
            .collect();
        let pts = deepest(&gaps, env)
            .into_iter()
            .map(|k| {
                let rho = vl[k].truncate().length();
                let nl = match grp {
                    0 if rho > 0.0 => -(vl[k].truncate() / rho).extend(0.0),
                    0 => -DVec3::X,
                    1 => DVec3::Z,
                    _ => -DVec3::Z,
                };
                (k, q * nl)
            })
            .collect::<Vec<_>>();
        for (k, n) in pts {
            let m = Manifold {
                n,
                pts: vec![MPoint {
                    p: hull.vertex(k) - n * (0.5 * gaps[k]),
                    gap: gaps[k],
                    feature: 64 * grp + k as u32,
                }],
            };
            push(cx, w, g, &m);
        }
    }
}

/// A face carries a capsule lying on it (two clipped points) when |n · axis| is below this.
pub const CAPSULE_FLAT_SIN: f64 = 0.05;
/// The contact normal lies on a face when n_face · n exceeds this.
pub const CAPSULE_ON_FACE: f64 = 0.999;

/// Capsule (segment p0–p1 in world, radius r) against a hull: normal from the hull to the
/// capsule; features 0 (one point) or 1, 2 (the segment clipped by a face, from p0's end).
/// In the hull's frame (as the GPU). The core (segment) outside the hull: the exact
/// closest points of segment and hull surface (endpoint over a face, or segment against a
/// face edge); a segment lying on a face (normal along the face's, segment within
/// `CAPSULE_FLAT_SIN` of parallel) is clipped by the face's side planes into 2 points, each
/// with its own gap. The core inside: separating axes (faces; hull edges × segment, those
/// whose Gauss arc crosses the segment's great circle), the best face clipping the segment,
/// or an edge giving one point.
pub fn capsule_hull(p0w: DVec3, p1w: DVec3, r: f64, h: &Hull, env: f64) -> Manifold {
    let inv = h.q.inverse();
    let (p0, p1) = (inv * (p0w - h.c), inv * (p1w - h.c));
    let a = p1 - p0;
    let (mut sf, mut ff) = (f64::NEG_INFINITY, 0);
    for (f, &(n, d)) in h.planes.iter().enumerate() {
        let s = n.dot(p0).min(n.dot(p1)) - d;
        if s > sf {
            (sf, ff) = (s, f);
        }
    }
    let (mut se, mut ee, mut ne) = (f64::NEG_INFINITY, 0, DVec3::ZERO);
    for (i, e) in h.edges.iter().enumerate() {
        let (na, nb) = (h.planes[e[2] as usize].0, h.planes[e[3] as usize].0);
        if na.dot(a) * nb.dot(a) > 0.0 {
            continue;
        }
        let (u, w) = (h.verts[e[0] as usize], h.verts[e[1] as usize]);
        let x = (w - u).cross(a);
        let l = x.length();
        if l < super::polytope::PARALLEL_SIN * (w - u).length() * a.length() {
            continue;
        }
        let n = if (x / l).dot(u) < 0.0 { -x / l } else { x / l };
        let s = n.dot(p0 - u);
        if s > se {
            (se, ee, ne) = (s, i, n);
        }
    }
    if sf.max(se) - r > env {
        return Manifold::default();
    }
    let local = if sf > 0.0 || se > 0.0 {
        capsule_outside(p0, p1, r, h, env)
    } else if se > sf + super::boxes::AXIS_BIAS * a.length() {
        let e = h.edges[ee];
        let u = h.verts[e[0] as usize];
        let (_, qs) = super::polytope::segments_closest(u, h.verts[e[1] as usize] - u, p0, a);
        let gap = se - r;
        Manifold {
            n: ne,
            pts: vec![MPoint {
                p: qs - ne * (r + 0.5 * gap),
                gap,
                feature: 0,
            }],
        }
    } else {
        capsule_on_face(p0, p1, r, h, ff, env)
    };
    Manifold {
        n: h.q * local.n,
        pts: local
            .pts
            .iter()
            .map(|m| MPoint {
                p: h.c + h.q * m.p,
                ..*m
            })
            .collect(),
    }
}

/// The segment clipped by face f's side planes (Cyrus–Beck): parameters (t0, t1) along
/// p0 → p1, or None when nothing is left.
fn clip_to_face(p0: DVec3, p1: DVec3, h: &Hull, f: usize) -> Option<(f64, f64)> {
    let n = h.planes[f].0;
    let l = &h.loops[f];
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for k in 0..l.len() {
        let v = h.verts[l[k] as usize];
        let o = (h.verts[l[(k + 1) % l.len()] as usize] - v)
            .cross(n)
            .normalize();
        let (s0, s1) = (o.dot(p0 - v), o.dot(p1 - v));
        if s0 > 0.0 && s1 > 0.0 {
            return None;
        }
        if s0 > 0.0 {
            t0 = t0.max(s0 / (s0 - s1));
        } else if s1 > 0.0 {
            t1 = t1.min(s0 / (s0 - s1));
        }
    }
    (t0 <= t1).then_some((t0, t1))
}

/// The segment clipped by face f: its ends within the envelope, features 1 and 2; when the
/// clip is empty, the deeper end (feature 0). Hull frame; normal = the face's.
fn capsule_on_face(p0: DVec3, p1: DVec3, r: f64, h: &Hull, f: usize, env: f64) -> Manifold {
    let (n, d) = h.planes[f];
    let point = |x: DVec3, feature| {
        let gap = n.dot(x) - d - r;
        (gap <= env).then(|| MPoint {
            p: x - n * (r + 0.5 * gap),
            gap,
            feature,
        })
    };
    let pts = match clip_to_face(p0, p1, h, f) {
        Some((t0, t1)) => [(t0, 1), (t1, 2)]
            .into_iter()
            .filter_map(|(t, k)| point(p0 + (p1 - p0) * t, k))
            .collect(),
        None => {
            let x = if n.dot(p0) <= n.dot(p1) { p0 } else { p1 };
            point(x, 0).into_iter().collect()
        }
    };
    Manifold { n, pts }
}

/// The core outside the hull: exact closest points over the faces the segment sees.
fn capsule_outside(p0: DVec3, p1: DVec3, r: f64, h: &Hull, env: f64) -> Manifold {
    let a = p1 - p0;
    let (mut bd, mut qh, mut qs) = (f64::INFINITY, DVec3::ZERO, DVec3::ZERO);
    for (f, &(n, d)) in h.planes.iter().enumerate() {
        if n.dot(p0).max(n.dot(p1)) - d <= 0.0 {
            continue;
        }
        for p in [p0, p1] {
            let s = n.dot(p) - d;
            if s > 0.0 && s < bd && h.face_contains(f, p - n * s) {
                (bd, qh, qs) = (s, p - n * s, p);
            }
        }
        let l = &h.loops[f];
        for k in 0..l.len() {
            let u = h.verts[l[k] as usize];
            let w = h.verts[l[(k + 1) % l.len()] as usize];
            let (x, y) = super::polytope::segments_closest(u, w - u, p0, a);
            if (y - x).length() < bd {
                (bd, qh, qs) = ((y - x).length(), x, y);
            }
        }
    }
    let gap = bd - r;
    if gap > env || bd <= 0.0 {
        return Manifold::default();
    }
    let nl = (qs - qh) / bd;
    let (mut fbest, mut dbest) = (0, f64::NEG_INFINITY);
    for (f, &(n, _)) in h.planes.iter().enumerate() {
        if n.dot(nl) > dbest {
            (fbest, dbest) = (f, n.dot(nl));
        }
    }
    let nf = h.planes[fbest].0;
    if dbest > CAPSULE_ON_FACE && nf.dot(a).abs() < CAPSULE_FLAT_SIN * a.length() {
        let m = capsule_on_face(p0, p1, r, h, fbest, env);
        if m.pts.len() == 2 {
            return m;
        }
    }
    Manifold {
        n: nl,
        pts: vec![MPoint {
            p: qs - nl * (r + 0.5 * gap),
            gap,
            feature: 0,
        }],
    }
}
