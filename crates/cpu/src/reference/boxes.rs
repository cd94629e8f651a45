//! f64 twin of the box narrow phase in `shaders/common/collide.wgsl` (same algorithm, same
//! decisions, same feature ids). See the engine's `collide` (module docs) for why these
//! algorithms were chosen.

use crate::shapes::sgn;
use glam::{DMat3, DQuat, DVec3};

/// A face axis of B must beat A's by this much (× the larger half extent) to be chosen,
/// and an edge–edge axis must beat the best face axis by it: faces are preferred, so a
/// resting box keeps its reference face (and its feature ids) from step to step.
pub const AXIS_BIAS: f64 = 1e-3;
/// Edge pairs closer to parallel than this (|a × b|²) are not separating-axis candidates.
pub const PARALLEL_EPS: f64 = 1e-6;
/// Feature ids: face contacts `4·face + corner` (face = 0..12: A's faces 0..6, B's 6..12,
/// face `2·axis + (negative side)`); edge–edge `EDGE_FEATURE + 16·(3·i + j) + signs`.
pub const EDGE_FEATURE: u32 = 48;

/// A box body: centre, orientation (body → world), half extents.
#[derive(Clone, Copy, Debug)]
pub struct Obb {
    pub c: DVec3,
    pub r: DMat3,
    pub h: DVec3,
}

impl Obb {
    pub fn new(c: DVec3, q: DQuat, h: DVec3) -> Self {
        Obb {
            c,
            r: DMat3::from_quat(q),
            h,
        }
    }

    fn axis(&self, i: usize) -> DVec3 {
        self.r.col(i)
    }

    /// Vertex k: bit 0/1/2 set = + side of axis x/y/z.
    pub fn vertex(&self, k: usize) -> DVec3 {
        let s = |b: usize| if (k >> b) & 1 == 1 { 1.0 } else { -1.0 };
        self.c + self.r * DVec3::new(s(0) * self.h.x, s(1) * self.h.y, s(2) * self.h.z)
    }
}

/// One manifold point: world position (midway between the surfaces), gap, feature.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MPoint {
    pub p: DVec3,
    pub gap: f64,
    pub feature: u32,
}

/// Up to 4 points sharing one normal (from A to B); features ascending.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Manifold {
    pub n: DVec3,
    pub pts: Vec<MPoint>,
}

/// Support extent of a box along unit axis `l`.
fn extent(b: &Obb, l: DVec3) -> f64 {
    (0..3).map(|k| b.h[k] * b.axis(k).dot(l).abs()).sum()
}

/// Box A against box B: separating axes (15), then face clipping or edge–edge.
pub fn box_box(a: &Obb, b: &Obb, env: f64) -> Manifold {
    let d = b.c - a.c;
    let scale = a.h.max_element().max(b.h.max_element());
    let tol = AXIS_BIAS * scale;
    // Best face axis of A, of B.
    let mut best = [(f64::NEG_INFINITY, 0usize); 2];
    for (s, bx) in [(0, a), (1, b)] {
        for i in 0..3 {
            let l = bx.axis(i);
            let sep = d.dot(l).abs() - extent(a, l) - extent(b, l);
            if sep > best[s].0 {
                best[s] = (sep, i);
            }
        }
    }
    let mut face_sep = best[0].0;
    let mut face = (0usize, best[0].1);
    if best[1].0 > best[0].0 + tol {
        face_sep = best[1].0;
        face = (1, best[1].1);
    }
    if face_sep > env {
        return Manifold::default();
    }
    let mut edge = (f64::NEG_INFINITY, 0usize, 0usize, DVec3::ZERO);
    for i in 0..3 {
        for j in 0..3 {
            let c = a.axis(i).cross(b.axis(j));
            let l2 = c.length_squared();
            if l2 < PARALLEL_EPS {
                continue;
            }
            let l = c / l2.sqrt();
            let sep = d.dot(l).abs() - extent(a, l) - extent(b, l);
            if sep > edge.0 {
                edge = (sep, i, j, l);
            }
        }
    }
    if edge.0 > env {
        return Manifold::default();
    }
    if edge.0 > face_sep + tol {
        return edge_edge(a, b, edge.1, edge.2, edge.3);
    }
    if face.0 == 0 {
        face_clip(a, b, face.1, false, env)
    } else {
        face_clip(b, a, face.1, true, env)
    }
}

/// Edge i of A against edge j of B along axis `l`: one point.
fn edge_edge(a: &Obb, b: &Obb, i: usize, j: usize, l: DVec3) -> Manifold {
    let d = b.c - a.c;
    let n = l * sgn(d.dot(l));
    let mut pa = a.c;
    let mut pb = b.c;
    let mut signs = 0u32;
    let mut bit = 0;
    for k in 0..3 {
        if k != i {
            let s = sgn(n.dot(a.axis(k)));
            pa += a.axis(k) * (s * a.h[k]);
            signs |= u32::from(s > 0.0) << bit;
            bit += 1;
        }
    }
    for k in 0..3 {
        if k != j {
            let s = -sgn(n.dot(b.axis(k)));
            pb += b.axis(k) * (s * b.h[k]);
            signs |= u32::from(s > 0.0) << bit;
            bit += 1;
        }
    }
    let (ea, eb) = (a.axis(i), b.axis(j));
    // Closest points of the lines pa + s ea, pb + t eb (unit directions), clamped.
    let r = pb - pa;
    let c = ea.dot(eb);
    let den = 1.0 - c * c;
    let (e, f) = (ea.dot(r), eb.dot(r));
    let s = ((e - c * f) / den).clamp(-a.h[i], a.h[i]);
    let t = (c * s - f).clamp(-b.h[j], b.h[j]);
    let s = (c * t + e).clamp(-a.h[i], a.h[i]);
    let qa = pa + ea * s;
    let qb = pb + eb * t;
    let gap = (qb - qa).dot(n);
    Manifold {
        n,
        pts: vec![MPoint {
            p: 0.5 * (qa + qb),
            gap,
            feature: EDGE_FEATURE + 16 * (3 * i + j) as u32 + signs,
        }],
    }
}

/// Reference face (axis `i` of `rf`, on the side facing `inc`) clipped against the
/// incident face of `inc`; `swapped` when the reference box is B.
fn face_clip(rf: &Obb, inc: &Obb, i: usize, swapped: bool, env: f64) -> Manifold {
    let d = inc.c - rf.c;
    let side = sgn(d.dot(rf.axis(i)));
    let nr = rf.axis(i) * side;
    let (iu, iv) = ((i + 1) % 3, (i + 2) % 3);
    let (u, v) = (rf.axis(iu), rf.axis(iv));
    let (hu, hv) = (rf.h[iu], rf.h[iv]);
    let cf = rf.c + nr * rf.h[i];
    // Incident face: the face of `inc` most anti-parallel to nr.
    let mut k = 0;
    let mut best = -1.0;
    for m in 0..3 {
        let x = inc.axis(m).dot(nr).abs();
        if x > best {
            best = x;
            k = m;
        }
    }
    let s = -sgn(inc.axis(k).dot(nr));
    let (ku, kv) = ((k + 1) % 3, (k + 2) % 3);
    let fc = inc.c + inc.axis(k) * (s * inc.h[k]);
    let eu = inc.axis(ku) * inc.h[ku];
    let ev = inc.axis(kv) * inc.h[kv];
    let quad = [fc - eu - ev, fc + eu - ev, fc + eu + ev, fc - eu + ev];
    // Polygon in reference-face coordinates (x, y, z = height above the face).
    let mut poly: Vec<DVec3> = quad
        .iter()
        .map(|p| {
            let r = *p - cf;
            DVec3::new(r.dot(u), r.dot(v), r.dot(nr))
        })
        .collect();
    for (axis, lim) in [(0, hu), (0, -hu), (1, hv), (1, -hv)] {
        poly = clip(&poly, axis, lim);
    }
    let face = (if swapped { 6 } else { 0 }) + 2 * i as u32 + u32::from(side < 0.0);
    let mut pts = Vec::new();
    let corners = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)];
    let mut taken = [usize::MAX; 4];
    for (ci, (sx, sy)) in corners.iter().enumerate() {
        let mut pick = usize::MAX;
        let mut score = f64::NEG_INFINITY;
        for (pi, p) in poly.iter().enumerate() {
            if p.z > env {
                continue;
            }
            let sc = sx * p.x / hu + sy * p.y / hv;
            if sc > score {
                score = sc;
                pick = pi;
            }
        }
        if pick == usize::MAX || taken[..ci].contains(&pick) {
            continue;
        }
        taken[ci] = pick;
        let p = poly[pick];
        let world = cf + u * p.x + v * p.y + nr * (0.5 * p.z);
        pts.push(MPoint {
            p: world,
            gap: p.z,
            feature: 4 * face + ci as u32,
        });
    }
    Manifold {
        n: if swapped { -nr } else { nr },
        pts,
    }
}

/// Sutherland–Hodgman against `sign(lim)·p[axis] ≤ |lim|`.
fn clip(poly: &[DVec3], axis: usize, lim: f64) -> Vec<DVec3> {
    let s = sgn(lim);
    let inside = |p: &DVec3| s * p[axis] <= lim.abs();
    let mut out = Vec::with_capacity(8);
    for k in 0..poly.len() {
        let p = poly[k];
        let q = poly[(k + 1) % poly.len()];
        let (pi, qi) = (inside(&p), inside(&q));
        if pi {
            out.push(p);
        }
        if pi != qi {
            let t = (lim - p[axis]) / (q[axis] - p[axis]);
            out.push(p + (q - p) * t);
        }
    }
    out
}

/// The box's vertices against the half-space `dot(x − x0, n) ≥ 0` (n from A = plane to the
/// box): the (up to 4) deepest vertices with gap ≤ env, features `offset + vertex`.
pub fn box_plane(n: DVec3, x0: DVec3, b: &Obb, env: f64, offset: u32) -> Manifold {
    let gaps: Vec<f64> = (0..8).map(|k| (b.vertex(k) - x0).dot(n)).collect();
    let pts = deepest(&gaps, env)
        .into_iter()
        .map(|k| MPoint {
            p: b.vertex(k) - n * (0.5 * gaps[k]),
            gap: gaps[k],
            feature: offset + k as u32,
        })
        .collect();
    Manifold { n, pts }
}

/// Indices (ascending) of the up to 4 smallest gaps ≤ env; ties go to the lower index.
pub fn deepest(gaps: &[f64], env: f64) -> Vec<usize> {
    let mut keep: Vec<usize> = (0..gaps.len())
        .filter(|&k| {
            gaps[k] <= env
                && (0..gaps.len())
                    .filter(|&m| gaps[m] < gaps[k] || (gaps[m] == gaps[k] && m < k))
                    .count()
                    < 4
        })
        .collect();
    keep.sort_unstable();
    keep
}

/// Sphere (centre, radius) against a box: (normal from the box to the sphere, gap,
/// midpoint), or None beyond the envelope.
pub fn sphere_box(cs: DVec3, r: f64, b: &Obb, env: f64) -> Option<(DVec3, f64, DVec3)> {
    let l = b.r.transpose() * (cs - b.c);
    let q = l.clamp(-b.h, b.h);
    let dl = l - q;
    let dist = dl.length();
    let (nl, gap, ql) = if dist > 0.0 {
        (dl / dist, dist - r, q)
    } else {
        let depth = b.h - l.abs();
        let mut axis = 0;
        if depth.y < depth[axis] {
            axis = 1;
        }
        if depth.z < depth[axis] {
            axis = 2;
        }
        let mut nl = DVec3::ZERO;
        nl[axis] = sgn(l[axis]);
        let mut ql = l;
        ql[axis] = nl[axis] * b.h[axis];
        (nl, -depth[axis] - r, ql)
    };
    if gap > env {
        return None;
    }
    let n = b.r * nl;
    let surf = b.c + b.r * ql;
    Some((n, gap, surf + n * (0.5 * gap)))
}

pub use crate::shapes::cuboid::box_mass;
