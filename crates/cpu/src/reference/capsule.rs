//! f64 twin of the capsule narrow phase in `shaders/common/collide_capsule.wgsl` (same
//! algorithm, decisions and feature ids), and the capsule's mass properties.
//!
//! A capsule is a segment swept by a sphere: centre `c`, unit axis `a` (the body's local z),
//! half length `hl` of the segment, radius `r`. Every contact is a point of the segment
//! seen as a sphere of radius `r`, so each is an exact (or, inside a box, conservative)
//! non-penetration constraint. Per partner, and why:
//! * **sphere**: closest point of the segment to the centre (feature 0).
//! * **capsule**: closest points of two segments (clamp, recompute, clamp: exact for
//!   segments), feature 0; nearly parallel axes (|a × b|² < `PARALLEL_EPS`) with
//!   overlapping projections give the two ends of the overlap instead (features 1, 2), so
//!   two capsules lying side by side rest without rocking.
//! * **box** (grain or solid boundary): the segment's deepest point against the box (signed
//!   distance, minimised over candidates: both ends, the segment's closest points to the 12
//!   edges, its crossings of the 3 mid-planes; the minimum of a convex function along the
//!   segment lies at one of them when separated), then that point as a sphere against the
//!   box (feature 0). When that point's closest box feature is a face nearly parallel to
//!   the axis (|a · n| < `FACE_PARALLEL`), the segment clipped to the face's slab gives two
//!   points (features 1, 2): a capsule lying on a face rests on two points.
//! * **plane, box and cylinder containers**: the two ends (features `2·wall + end`): the
//!   distance to a plane is linear along the segment and to a cylinder's inner wall
//!   concave, so the minimum is at an end, and a capsule lying flat rests on two points.

use super::boxes::{sphere_box, Obb};
use super::tangent_basis;
use glam::{DQuat, DVec3};

/// Nearly parallel capsule axes (|a × b|²) take the two-point overlap contact.
pub const PARALLEL_EPS: f64 = 1e-6;
/// A capsule whose axis makes |a · n| below this with a box face lies on it: two points.
pub const FACE_PARALLEL: f64 = 0.02;

/// A capsule in world: centre, unit axis (body z), half length, radius.
#[derive(Clone, Copy, Debug)]
pub struct Capsule {
    pub c: DVec3,
    pub a: DVec3,
    pub hl: f64,
    pub r: f64,
}

impl Capsule {
    pub fn new(c: DVec3, q: DQuat, hl: f64, r: f64) -> Self {
        Capsule {
            c,
            a: q * DVec3::Z,
            hl,
            r,
        }
    }

    /// End `e` (0: −axis, 1: +axis) of the segment.
    pub fn end(&self, e: usize) -> DVec3 {
        self.c + self.a * if e == 0 { -self.hl } else { self.hl }
    }
}

/// One contact: world point (midway between the surfaces), unit normal (from the first
/// shape named in the function to the second), gap, feature.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CPoint {
    pub p: DVec3,
    pub n: DVec3,
    pub gap: f64,
    pub feature: u32,
}

pub use crate::shapes::capsule::capsule_mass;

/// A point of `cap`'s segment `q` as a sphere against a point `s` of radius `rs` (normal
/// from q to s; along `fallback` when they coincide).
fn point_point(q: DVec3, r: f64, s: DVec3, rs: f64, fallback: DVec3, f: u32) -> CPoint {
    let d = s - q;
    let dist = d.length();
    let n = if dist > 0.0 { d / dist } else { fallback };
    let gap = dist - r - rs;
    CPoint {
        p: q + n * (r + 0.5 * gap),
        n,
        gap,
        feature: f,
    }
}

/// Capsule against a sphere: normal from the capsule to the sphere.
pub fn capsule_sphere(cap: &Capsule, s: DVec3, rs: f64, env: f64) -> Vec<CPoint> {
    let t = (s - cap.c).dot(cap.a).clamp(-cap.hl, cap.hl);
    let q = cap.c + cap.a * t;
    let p = point_point(q, cap.r, s, rs, tangent_basis(cap.a).0, 0);
    if p.gap > env {
        return Vec::new();
    }
    vec![p]
}

/// Closest parameters (s on A, t on B) of two centred segments (clamp, recompute, clamp).
fn seg_seg(c1: DVec3, a1: DVec3, h1: f64, c2: DVec3, a2: DVec3, h2: f64, par: bool) -> (f64, f64) {
    let r = c2 - c1;
    let c = a1.dot(a2);
    let den = 1.0 - c * c;
    let e = a1.dot(r);
    let f = a2.dot(r);
    let s0 = if par { 0.0 } else { (e - c * f) / den };
    let s = s0.clamp(-h1, h1);
    let t = (c * s - f).clamp(-h2, h2);
    ((c * t + e).clamp(-h1, h1), t)
}

/// Capsule A against capsule B: normal from A to B.
pub fn capsule_capsule(a: &Capsule, b: &Capsule, env: f64) -> Vec<CPoint> {
    let cr = a.a.cross(b.a);
    let par = cr.length_squared() < PARALLEL_EPS;
    let fallback = tangent_basis(a.a).0;
    let mut out = Vec::new();
    if par {
        let u0 = (b.end(0) - a.c).dot(a.a);
        let u1 = (b.end(1) - a.c).dot(a.a);
        let lo = u0.min(u1).max(-a.hl);
        let hi = u0.max(u1).min(a.hl);
        if lo < hi {
            for (k, s) in [lo, hi].into_iter().enumerate() {
                let pa = a.c + a.a * s;
                let t = (pa - b.c).dot(b.a).clamp(-b.hl, b.hl);
                let p = point_point(pa, a.r, b.c + b.a * t, b.r, fallback, 1 + k as u32);
                if p.gap <= env {
                    out.push(p);
                }
            }
            return out;
        }
    }
    let (s, t) = seg_seg(a.c, a.a, a.hl, b.c, b.a, b.hl, par);
    let p = point_point(a.c + a.a * s, a.r, b.c + b.a * t, b.r, fallback, 0);
    if p.gap <= env {
        out.push(p);
    }
    out
}

/// Signed distance of a point (box frame) to a box of half extents h.
fn sdf_box(p: DVec3, h: DVec3) -> f64 {
    let q = p.abs() - h;
    q.max(DVec3::ZERO).length() + q.max_element().min(0.0)
}

/// Parameter u in [0, 1] along p0 → p0 + d closest to the segment e0 → e0 + ed (box edge).
fn seg_edge_param(p0: DVec3, d: DVec3, e0: DVec3, ed: DVec3) -> f64 {
    // Centred form of both, then `seg_seg` with unit directions.
    let (ld, le) = (d.length(), ed.length());
    let (ad, ae) = (d / ld, ed / le);
    let par = ad.cross(ae).length_squared() < PARALLEL_EPS;
    let (s, _) = seg_seg(p0 + d * 0.5, ad, 0.5 * ld, e0 + ed * 0.5, ae, 0.5 * le, par);
    (s / ld + 0.5).clamp(0.0, 1.0)
}

/// The segment's deepest point against the box: parameter u in [0, 1] (box frame p0, d).
fn deepest_param(p0: DVec3, d: DVec3, h: DVec3) -> f64 {
    let mut best = (sdf_box(p0, h), 0.0);
    let mut consider = |u: f64| {
        let s = sdf_box(p0 + d * u, h);
        if s < best.0 {
            best = (s, u);
        }
    };
    consider(1.0);
    for i in 0..3 {
        let (j, k) = ((i + 1) % 3, (i + 2) % 3);
        for sg in 0..4 {
            let mut e0 = DVec3::ZERO;
            e0[i] = -h[i];
            e0[j] = if sg & 1 != 0 { h[j] } else { -h[j] };
            e0[k] = if sg & 2 != 0 { h[k] } else { -h[k] };
            let mut ed = DVec3::ZERO;
            ed[i] = 2.0 * h[i];
            consider(seg_edge_param(p0, d, e0, ed));
        }
    }
    for i in 0..3 {
        if d[i].abs() > 1e-12 * d.length() {
            consider((-p0[i] / d[i]).clamp(0.0, 1.0));
        }
    }
    best.1
}

/// Capsule against a box: normal from the box to the capsule.
pub fn capsule_box(cap: &Capsule, b: &Obb, env: f64) -> Vec<CPoint> {
    let rt = b.r.transpose();
    let p0 = rt * (cap.end(0) - b.c);
    let d = rt * (cap.end(1) - b.c) - p0;
    let u = deepest_param(p0, d, b.h);
    let pl = p0 + d * u;
    // The closest box feature of that point: a face when one coordinate (outside) or
    // none (inside: the nearest face) is clamped.
    let ex = pl.abs() - b.h;
    let outside = (ex.x > 0.0) as u32 + (ex.y > 0.0) as u32 + (ex.z > 0.0) as u32;
    let al = rt * cap.a;
    let axis = if outside == 1 {
        if ex.x > 0.0 {
            0
        } else if ex.y > 0.0 {
            1
        } else {
            2
        }
    } else {
        // Nearest face inside (ties to the lower axis), as `sphere_box`.
        let depth = b.h - pl.abs();
        let mut ax = 0;
        if depth.y < depth[ax] {
            ax = 1;
        }
        if depth.z < depth[ax] {
            ax = 2;
        }
        ax
    };
    if outside <= 1 && al[axis].abs() < FACE_PARALLEL {
        return face_pair(cap, b, p0, d, pl, axis, env);
    }
    match sphere_box(b.c + b.r * pl, cap.r, b, env) {
        Some((n, gap, p)) => vec![CPoint {
            p,
            n,
            gap,
            feature: 0,
        }],
        None => Vec::new(),
    }
}

/// The segment clipped to the slab of face `axis` (side of `pl`): its two ends against the
/// face plane (features 1, 2; dropped beyond the envelope).
fn face_pair(
    cap: &Capsule,
    b: &Obb,
    p0: DVec3,
    d: DVec3,
    pl: DVec3,
    axis: usize,
    env: f64,
) -> Vec<CPoint> {
    let side = if pl[axis] >= 0.0 { 1.0 } else { -1.0 };
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for k in [(axis + 1) % 3, (axis + 2) % 3] {
        if d[k].abs() > 1e-12 * d.length() {
            let t0 = (-b.h[k] - p0[k]) / d[k];
            let t1 = (b.h[k] - p0[k]) / d[k];
            lo = lo.max(t0.min(t1));
            hi = hi.min(t0.max(t1));
        }
    }
    let mut nl = DVec3::ZERO;
    nl[axis] = side;
    let n = b.r * nl;
    let mut out = Vec::new();
    for (k, u) in [lo, hi].into_iter().enumerate() {
        if k == 1 && hi <= lo {
            break;
        }
        let q = p0 + d * u;
        let gap = side * q[axis] - b.h[axis] - cap.r;
        if gap <= env {
            out.push(CPoint {
                p: b.c + b.r * q - n * (cap.r + 0.5 * gap),
                n,
                gap,
                feature: 1 + k as u32,
            });
        }
    }
    out
}

/// The capsule's two ends against the half-space dot(x − x0, n) ≥ 0 (n towards the
/// capsule), features `offset + end`.
pub fn capsule_plane(cap: &Capsule, n: DVec3, x0: DVec3, env: f64, offset: u32) -> Vec<CPoint> {
    let mut out = Vec::new();
    for e in 0..2 {
        let q = cap.end(e);
        let gap = (q - x0).dot(n) - cap.r;
        if gap <= env {
            out.push(CPoint {
                p: q - n * (cap.r + 0.5 * gap),
                n,
                gap,
                feature: offset + e as u32,
            });
        }
    }
    out
}

/// The capsule's ends inside a cylinder container (axis local z, base at 0, pose xa, q):
/// side (features 0, 1), bottom (2, 3), top (4, 5; not when open), normals inwards.
pub fn capsule_cylinder_container(
    cap: &Capsule,
    xa: DVec3,
    q: DQuat,
    rad: f64,
    hgt: f64,
    open_top: bool,
    env: f64,
) -> Vec<CPoint> {
    let mut out = Vec::new();
    let ends = [cap.end(0), cap.end(1)];
    for grp in 0..3u32 {
        if grp == 2 && open_top {
            continue;
        }
        for (e, &pw) in ends.iter().enumerate() {
            let v = q.inverse() * (pw - xa);
            let rho = v.truncate().length();
            let (nl, g) = match grp {
                0 => {
                    let nl = if rho > 0.0 {
                        -(v.truncate() / rho).extend(0.0)
                    } else {
                        -DVec3::X
                    };
                    (nl, rad - rho)
                }
                1 => (DVec3::Z, v.z),
                _ => (-DVec3::Z, hgt - v.z),
            };
            let gap = g - cap.r;
            if gap <= env {
                let n = q * nl;
                out.push(CPoint {
                    p: pw - n * (cap.r + 0.5 * gap),
                    n,
                    gap,
                    feature: 2 * grp + e as u32,
                });
            }
        }
    }
    out
}
