//! f64 twin of `shaders/common/collide_support.wgsl`: a cylinder against a box, a convex
//! hull, a capsule or another cylinder; a solid cylinder or box boundary, or a mesh
//! triangle, against those grains (same algorithm, decisions and feature ids).
//!
//! Why this algorithm. These pairs have no closed form (the closest points of a circle and
//! a segment solve a quartic) and no finite set of separating axes (the rim is curved), so
//! SAT, used for the polytopes, does not apply. Every shape has an analytic support
//! function, so the distance is found by **GJK** between *cores*: each shape shrunk by a
//! margin δ (a box to h − δ, a cylinder to r − δ, hl − δ, a capsule to its segment, δ = r;
//! hulls are not shrunk, δ = 0) so that a shape is its core swept by a sphere of radius δ.
//! The surfaces touch or overlap slightly (the solver leaves µm) while the cores are still
//! apart, where GJK is exact and robust, and gives the normal and both witness points; no
//! EPA is needed. The cost: the shape GJK sees has its edges and rims rounded by δ =
//! [`MARGIN`] × the smaller size (20 %; Bullet's and Jolt's "convex radius"); faces, discs
//! and sides give their points from the sharp shape (below), but a single contact point at
//! an edge or rim lies up to 0.41 δ (8 % of that size) off it. When the surfaces overlap by
//! more than the two margins (the cores intersect: a fast impact), the normal is the axis
//! of least overlap among a finite set (`deep_axis`: exact for a face-to-face overlap, an
//! upper bound on the depth otherwise; the weak point: overlaps that stay this deep are
//! pushed out slowly, which is why the margin is large).
//!
//! The manifold comes from the support features of both shapes along the normal n (from
//! the cylinder C to the partner X), each a point, a segment or a face: a cylinder's end
//! disc within [`FLAT`] of ∥ n, else its side's generator nearest the partner (whose ends
//! are each disc's rim point farthest along the normal, as for a plane); a capsule's
//! segment moved along the normal by its radius (its ends are the end spheres' deepest
//! points, at any tilt); a box's or hull's face within [`FLAT`] of ∥ n, else a point:
//! * face–face: C's 4 rim points (body ±x, ±y) inside X's face, then X's face vertices
//!   inside C's disc (a hull face of more than 4 vertices keeps, per in-plane corner
//!   direction of the face, the most extreme vertex inside);
//! * segment–face (a cylinder or capsule on a face or disc): the segment clipped to the
//!   face polygon or the disc's circle, 2 points (an end tilted away is beyond the
//!   envelope and dropped): a rod resting on a face keeps both ends' points while it tilts,
//!   instead of one witness point it could pivot about;
//! * segment–segment with the axes within [`FLAT`] of parallel: the overlap of the two
//!   generators, 2 points;
//! * otherwise, or when the features share nothing: the GJK witness points, 1 point.
//!
//! Every point's gap is its distance along n to the other feature's plane. Feature ids:
//! C's rim 4e + k, C's side ends 8 + e, X's points 16 + (face slot k, X's rim 4e + k, X's
//! side ends 8 + e), the witness point 32: fixed by the bodies' features, so the warm start
//! finds them again next step.
//! Not done: the points where a disc's circle crosses a face polygon's edges (a disc that
//! overhangs a face rests on its rim points inside the face and the face's corners inside
//! the disc).
//!
//! Boundaries (`wall_pair`): a solid cylinder is C against any shaped grain and a solid
//! box is X against a cylinder grain, neither shrunk (their edges stay sharp; the grain's
//! margin keeps the cores apart at rest) except against a hull, which has no margin of its
//! own. A mesh (`mesh_pair`) is handled triangle by triangle, each triangle C in the
//! mesh's frame ([`Kind::Tri`]: its face is a 3-vertex face feature, so a box face on it
//! gives the box corners over the triangle and the triangle's corners under the box;
//! against a hull its core moves back along its normal so that the cores stay apart). A
//! triangle reports a pair whose normal is its own face's always; any other normal (an
//! edge or vertex contact) only when it owns the edge or vertex whose Voronoi region holds
//! the grain's core witness — the sphere rule (`MeshRef::region`), so a box sliding over
//! the seam of two coplanar triangles meets no ghost edge, and each edge is reported once.

use super::boxes::{MPoint, Manifold};
use super::convex::Hull;
use crate::shapes::{self, sgn};
use glam::{DQuat, DVec3};

/// Core margin as a fraction of the shape's smallest size (capsules: their radius): 20 %,
/// chosen on the timber pour (first 400 steps, no boulder: max penetration 2.5 mm at 0.2,
/// 8 mm at 0.1, 20 mm at 0.02, where more contacts overlap past the margins).
pub const MARGIN: f64 = 0.2;
/// sin of the angle within which a disc or face counts as facing the normal, and a side
/// as perpendicular to it (as `cylinder::FLAT`).
pub const FLAT: f64 = 0.01;
/// GJK stops when an iteration gains less than this fraction of the squared distance.
pub const GJK_REL: f64 = 1e-6;
pub const GJK_ITERS: usize = 48;
/// A GJK tetrahedron flatter than this (volume / longest edge³) does not enclose anything.
pub const GJK_FLAT: f64 = 1e-5;
/// The cores count as intersecting below this distance × the sum of bounding radii.
pub const GJK_HIT: f64 = 1e-5;

pub const FEATURE_X: u32 = 16;
pub const FEATURE_WITNESS: u32 = 32;

/// A support-mapped shape in world.
#[derive(Clone, Copy)]
pub enum Kind<'a> {
    /// Radius, half length (axis local z).
    Cylinder {
        r: f64,
        hl: f64,
    },
    /// Half extents.
    Box {
        h: DVec3,
    },
    /// Radius, half length of the segment (local z).
    Capsule {
        r: f64,
        hl: f64,
    },
    Hull(&'a Hull),
    /// A mesh triangle (`c` = its vertex 0, `q` = identity): edges to vertices 1 and 2, and
    /// its unit normal towards the partner. Its core is the triangle moved back along the
    /// normal by the margin, so that core ⊕ margin keeps the triangle's plane.
    Tri {
        e1: DVec3,
        e2: DVec3,
        n: DVec3,
    },
}

#[derive(Clone, Copy)]
pub struct Shape<'a> {
    pub kind: Kind<'a>,
    pub c: DVec3,
    pub q: DQuat,
    /// Bounding radius (scales the GJK's intersection test).
    pub bound: f64,
    /// Core margin: a grain's [`Kind::grain_margin`]; a boundary's as its caller decides.
    pub margin: f64,
}

impl Kind<'_> {
    /// A grain's core margin.
    pub fn grain_margin(&self) -> f64 {
        match *self {
            Kind::Cylinder { r, hl } => MARGIN * r.min(hl),
            Kind::Box { h } => MARGIN * h.min_element(),
            Kind::Capsule { r, .. } => r,
            Kind::Hull(_) | Kind::Tri { .. } => 0.0,
        }
    }
}

impl<'a> Shape<'a> {
    /// A grain: its core shrunk by [`Kind::grain_margin`].
    pub fn grain(kind: Kind<'a>, c: DVec3, q: DQuat, bound: f64) -> Self {
        let margin = kind.grain_margin();
        Shape {
            kind,
            c,
            q,
            bound,
            margin,
        }
    }

    pub fn margin(&self) -> f64 {
        self.margin
    }

    /// The core's support point along d (world).
    pub fn core_support(&self, d: DVec3) -> DVec3 {
        let l = self.q.inverse() * d;
        let m = self.margin();
        let local = match self.kind {
            Kind::Cylinder { r, hl } => shapes::cylinder::support(r - m, hl - m, l),
            Kind::Box { h } => shapes::cuboid::support(h - DVec3::splat(m), l),
            Kind::Capsule { hl, .. } => shapes::capsule::segment_support(hl, l),
            Kind::Hull(h) => shapes::convex::vertex_support(&h.verts, l),
            Kind::Tri { e1, e2, n } => {
                let mut p = DVec3::ZERO;
                if e1.dot(l) > 0.0 {
                    p = e1;
                }
                if e2.dot(l) > p.dot(l) {
                    p = e2;
                }
                p - n * m
            }
        };
        self.c + self.q * local
    }

    fn axis(&self) -> DVec3 {
        match self.kind {
            Kind::Tri { n, .. } => n,
            _ => self.q * DVec3::Z,
        }
    }

    /// How far the shape reaches from its centre along unit l.
    fn reach(&self, l: DVec3) -> f64 {
        (self.core_support(l) - self.c).dot(l) + self.margin()
    }
}

/// GJK's answer: core witness points (on A, on B), their distance, or `hit` when the cores
/// intersect.
pub struct Gjk {
    pub pa: DVec3,
    pub pb: DVec3,
    pub dist: f64,
    pub hit: bool,
}

/// Barycentric weights of the point of segment (a, b) closest to the origin.
fn seg_weights(a: DVec3, b: DVec3) -> [f64; 2] {
    let ab = b - a;
    let l = ab.length_squared();
    if l <= 0.0 {
        return [1.0, 0.0];
    }
    let t = (-a.dot(ab) / l).clamp(0.0, 1.0);
    [1.0 - t, t]
}

/// Barycentric weights of the point of triangle (a, b, c) closest to the origin (Ericson,
/// Real-Time Collision Detection §5.1.5, with p = 0).
fn tri_weights(a: DVec3, b: DVec3, c: DVec3) -> [f64; 3] {
    let (ab, ac) = (b - a, c - a);
    let (d1, d2) = (-ab.dot(a), -ac.dot(a));
    if d1 <= 0.0 && d2 <= 0.0 {
        return [1.0, 0.0, 0.0];
    }
    let (d3, d4) = (-ab.dot(b), -ac.dot(b));
    if d3 >= 0.0 && d4 <= d3 {
        return [0.0, 1.0, 0.0];
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let v = d1 / (d1 - d3);
        return [1.0 - v, v, 0.0];
    }
    let (d5, d6) = (-ab.dot(c), -ac.dot(c));
    if d6 >= 0.0 && d5 <= d6 {
        return [0.0, 0.0, 1.0];
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let w = d2 / (d2 - d6);
        return [1.0 - w, 0.0, w];
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return [0.0, 1.0 - w, w];
    }
    let s = va + vb + vc;
    if s <= 0.0 {
        // Degenerate (collinear): the best of the edges.
        let e = [seg_weights(a, b), seg_weights(a, c), seg_weights(b, c)];
        let d = [
            (a * e[0][0] + b * e[0][1]).length_squared(),
            (a * e[1][0] + c * e[1][1]).length_squared(),
            (b * e[2][0] + c * e[2][1]).length_squared(),
        ];
        return if d[0] <= d[1] && d[0] <= d[2] {
            [e[0][0], e[0][1], 0.0]
        } else if d[1] <= d[2] {
            [e[1][0], 0.0, e[1][1]]
        } else {
            [0.0, e[2][0], e[2][1]]
        };
    }
    [va / s, vb / s, vc / s]
}

/// Weights of the simplex point closest to the origin; all 4 non-zero only when the
/// origin lies inside the tetrahedron.
fn simplex_weights(w: &[DVec3; 4], n: usize) -> [f64; 4] {
    match n {
        1 => [1.0, 0.0, 0.0, 0.0],
        2 => {
            let s = seg_weights(w[0], w[1]);
            [s[0], s[1], 0.0, 0.0]
        }
        3 => {
            let t = tri_weights(w[0], w[1], w[2]);
            [t[0], t[1], t[2], 0.0]
        }
        _ => {
            // Faces (i, j, k) opposite vertex o; the origin is outside a face when it and
            // the opposite vertex lie on different sides (or either on the plane).
            const FACES: [[usize; 4]; 4] = [[0, 1, 2, 3], [0, 1, 3, 2], [0, 2, 3, 1], [1, 2, 3, 0]];
            let mut best = (f64::INFINITY, [1.0, 1.0, 1.0, 1.0]);
            for f in FACES {
                let (a, b, c, o) = (w[f[0]], w[f[1]], w[f[2]], w[f[3]]);
                let nf = (b - a).cross(c - a);
                if nf.dot(-a) * nf.dot(o - a) > 0.0 {
                    continue;
                }
                let t = tri_weights(a, b, c);
                let d = (a * t[0] + b * t[1] + c * t[2]).length_squared();
                if d < best.0 {
                    let mut l = [0.0; 4];
                    l[f[0]] = t[0];
                    l[f[1]] = t[1];
                    l[f[2]] = t[2];
                    best = (d, l);
                }
            }
            best.1
        }
    }
}

/// GJK distance between the cores of a and b. Runs in a frame centred on a (the GPU's f32
/// keeps its digits for the shapes, not for their place in the world). Intersecting: a
/// simplex enclosing the origin, a distance below `GJK_HIT` × the bounding radii, or the
/// iteration cap reached with a last support that no longer bounds the distance from below.
pub fn gjk(a: &Shape, b: &Shape) -> Gjk {
    let o = a.c;
    let (a, b) = (
        &Shape {
            c: DVec3::ZERO,
            ..*a
        },
        &Shape { c: b.c - o, ..*b },
    );
    let mut s = Simplex {
        n: 0,
        w: [DVec3::ZERO; 4],
        a: [DVec3::ZERO; 4],
        b: [DVec3::ZERO; 4],
        lam: [1.0, 0.0, 0.0, 0.0],
    };
    let mut v = a.c - b.c;
    if v.length_squared() == 0.0 {
        v = DVec3::X;
    }
    let tiny = GJK_HIT * (a.bound + b.bound);
    let mut hit = true;
    for it in 0..GJK_ITERS {
        let (pa, pb) = (a.core_support(-v), b.core_support(v));
        let p = pa - pb;
        let vv = v.length_squared();
        if s.n > 0 && vv - v.dot(p) <= GJK_REL * vv {
            hit = false;
            break;
        }
        if it + 1 == GJK_ITERS {
            // Out of iterations: apart only if this support still bounds the distance
            // from below (v·p > 0).
            hit = v.dot(p) <= 0.0;
            break;
        }
        let before = s;
        s.w[s.n] = p;
        s.a[s.n] = pa;
        s.b[s.n] = pb;
        s.n += 1;
        s.reduce();
        let vn: DVec3 = (0..s.n).map(|k| s.w[k] * s.lam[k]).sum();
        // No progress (rounding) or a flat tetrahedron taken for one enclosing the
        // origin: the last simplex stands, apart.
        let stalled = before.n > 0 && s.n < 4 && vn.length_squared() >= vv;
        if stalled || (s.n == 4 && s.flat()) {
            s = before;
            hit = false;
            break;
        }
        v = vn;
        if s.n == 4 || v.length() <= tiny {
            break;
        }
    }
    let pa: DVec3 = o + (0..s.n).map(|k| s.a[k] * s.lam[k]).sum::<DVec3>();
    let pb: DVec3 = o + (0..s.n).map(|k| s.b[k] * s.lam[k]).sum::<DVec3>();
    Gjk {
        pa,
        pb,
        dist: v.length(),
        hit,
    }
}

/// GJK's simplex: Minkowski points, their support points on a and b, weights.
#[derive(Clone, Copy)]
struct Simplex {
    n: usize,
    w: [DVec3; 4],
    a: [DVec3; 4],
    b: [DVec3; 4],
    lam: [f64; 4],
}

impl Simplex {
    /// Solves for the point closest to the origin and keeps the vertices of non-zero
    /// weight, in order.
    fn reduce(&mut self) {
        let l = simplex_weights(&self.w, self.n);
        let mut m = 0;
        for (k, &lk) in l.iter().enumerate().take(self.n) {
            if lk > 0.0 {
                self.w[m] = self.w[k];
                self.a[m] = self.a[k];
                self.b[m] = self.b[k];
                self.lam[m] = lk;
                m += 1;
            }
        }
        self.n = m;
    }

    /// A tetrahedron of volume below `GJK_FLAT` × its longest edge cubed.
    fn flat(&self) -> bool {
        let w = &self.w;
        let (e1, e2, e3) = (w[1] - w[0], w[2] - w[0], w[3] - w[0]);
        let l = e1.length().max(e2.length()).max(e3.length());
        e1.dot(e2.cross(e3)).abs() <= GJK_FLAT * l * l * l
    }
}

/// The contact normal (from a to b), gap and the surface points on a and on b.
pub fn normal_and_gap(a: &Shape, b: &Shape) -> (DVec3, f64, DVec3, DVec3) {
    let (ma, mb) = (a.margin(), b.margin());
    let g = gjk(a, b);
    if !g.hit && g.dist > 0.0 {
        let n = (g.pb - g.pa) / g.dist;
        return (n, g.dist - ma - mb, g.pa + n * ma, g.pb - n * mb);
    }
    let (n, gap) = deep_axis(a, b);
    // The point on a (the cylinder: its support is unique where no feature manifold takes
    // over, a face's is not), b's moved along n by the gap; a triangle's support along its
    // normal is its whole face, so there b's deepest point.
    if let Kind::Tri { .. } = a.kind {
        let pb = b.core_support(-n) - n * mb;
        return (n, gap, pb - n * gap, pb);
    }
    let pa = a.core_support(n) + n * ma;
    (n, gap, pa, pa + n * gap)
}

/// Cores intersecting (the shapes overlap by more than their margins, after a fast impact):
/// the axis of least overlap among a finite set, separating-axis style (exact when the
/// overlap is face to face): the centres' direction, C's axis and the part of the centres'
/// direction across it, X's face normals (box axes, hull faces) or axis (capsule, cylinder,
/// with the centres' direction across it), and C's axis crossed with X's box axes or axis.
/// Each axis is tried both ways; the first best wins.
fn deep_axis(a: &Shape, b: &Shape) -> (DVec3, f64) {
    let d = b.c - a.c;
    let mut best = (DVec3::Z, f64::NEG_INFINITY);
    let mut axis = |l: DVec3| {
        let len = l.length();
        if len <= 1e-9 {
            return;
        }
        for l in [l / len, -l / len] {
            let s = l.dot(d) - a.reach(l) - b.reach(-l);
            if s > best.1 {
                best = (l, s);
            }
        }
    };
    let ac = a.axis();
    axis(d);
    axis(ac);
    axis(d - ac * d.dot(ac));
    match b.kind {
        Kind::Box { .. } => {
            let uvw = [DVec3::X, DVec3::Y, DVec3::Z].map(|e| b.q * e);
            for e in uvw {
                axis(e);
            }
            for e in uvw {
                axis(ac.cross(e));
            }
        }
        Kind::Hull(h) => {
            for p in &h.planes {
                axis(b.q * p.0);
            }
        }
        Kind::Capsule { .. } | Kind::Cylinder { .. } => {
            let ax = b.axis();
            axis(ax);
            axis(ac.cross(ax));
            axis(d - ax * d.dot(ax));
        }
        // A triangle is always C.
        Kind::Tri { .. } => {}
    }
    best
}

/// A support feature along `dir` (outward from its shape).
enum Feature {
    Point,
    /// Segment ends (surface points).
    Segment([DVec3; 2]),
    /// End disc: centre, outward axis, radius, 4 rim points (body ±x, ±y), id base.
    Disc {
        c: DVec3,
        a: DVec3,
        r: f64,
        rim: [DVec3; 4],
        base: u32,
    },
    /// Face polygon (world, counter-clockwise about `n`) and its outward normal.
    Face {
        verts: Vec<DVec3>,
        n: DVec3,
    },
}

impl Feature {
    /// Outward normal of a disc or face (zero otherwise).
    fn normal(&self) -> DVec3 {
        match self {
            Feature::Disc { a, .. } => *a,
            Feature::Face { n, .. } => *n,
            _ => DVec3::ZERO,
        }
    }

    fn plane_point(&self) -> DVec3 {
        match self {
            Feature::Point => DVec3::ZERO,
            Feature::Segment(s) => s[0],
            Feature::Disc { c, .. } => *c,
            Feature::Face { verts, .. } => verts[0],
        }
    }

    /// Whether x (near the feature's plane) projects inside it.
    fn contains(&self, x: DVec3) -> bool {
        match self {
            Feature::Disc { c, a, r, .. } => {
                let d = x - *c;
                (d - *a * d.dot(*a)).length_squared() <= r * r
            }
            Feature::Face { verts, n, .. } => (0..verts.len()).all(|k| {
                let (p, q) = (verts[k], verts[(k + 1) % verts.len()]);
                (q - p).cross(x - p).dot(*n) >= 0.0
            }),
            _ => false,
        }
    }

    /// Parameter interval of segment s0 + t (s1 − s0), t ∈ [0, 1], inside the feature.
    fn clip(&self, s0: DVec3, s1: DVec3) -> Option<(f64, f64)> {
        let (mut lo, mut hi) = (0.0f64, 1.0f64);
        let d = s1 - s0;
        match self {
            Feature::Disc { c, a, r, .. } => {
                // |radial(s0 − c) + t radial(d)|² ≤ r².
                let p = (s0 - *c) - *a * (s0 - *c).dot(*a);
                let e = d - *a * d.dot(*a);
                let (qa, qb, qc) = (e.dot(e), 2.0 * p.dot(e), p.dot(p) - r * r);
                if qa <= 1e-30 {
                    return (qc <= 0.0).then_some((0.0, 1.0));
                }
                let disc = qb * qb - 4.0 * qa * qc;
                if disc < 0.0 {
                    return None;
                }
                let s = disc.sqrt();
                lo = lo.max((-qb - s) / (2.0 * qa));
                hi = hi.min((-qb + s) / (2.0 * qa));
            }
            Feature::Face { verts, n, .. } => {
                for k in 0..verts.len() {
                    let (p, q) = (verts[k], verts[(k + 1) % verts.len()]);
                    let m = n.cross(q - p); // inward
                    let (f0, fd) = (m.dot(s0 - p), m.dot(d));
                    if fd.abs() <= 1e-30 {
                        if f0 < 0.0 {
                            return None;
                        }
                    } else if fd > 0.0 {
                        lo = lo.max(-f0 / fd);
                    } else {
                        hi = hi.min(-f0 / fd);
                    }
                }
            }
            _ => return None,
        }
        (lo <= hi).then_some((lo, hi))
    }
}

fn flat(cos: f64) -> bool {
    1.0 - cos * cos < FLAT * FLAT
}

/// Face of a hull (or the 4 corners of a box face) as a feature, when one faces `dir`.
fn face_feature(s: &Shape, dir: DVec3) -> Feature {
    let l = s.q.inverse() * dir;
    let world = |v: DVec3| s.c + s.q * v;
    let (nl, verts): (DVec3, Vec<DVec3>) = match s.kind {
        Kind::Box { h } => {
            let i = (0..3).fold(0, |b, k| if l[k].abs() > l[b].abs() { k } else { b });
            let (j, k) = ((i + 1) % 3, (i + 2) % 3);
            let sg = sgn(l[i]);
            let mut nl = DVec3::ZERO;
            nl[i] = sg;
            let corner = |a: f64, b: f64| {
                let mut v = DVec3::ZERO;
                v[i] = sg * h[i];
                v[j] = a * h[j];
                v[k] = b * sg * h[k];
                v
            };
            let vs =
                [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)].map(|(a, b)| corner(a, b));
            (nl, vs.to_vec())
        }
        Kind::Hull(hull) => {
            let mut f = 0;
            for k in 1..hull.planes.len() {
                if hull.planes[k].0.dot(l) > hull.planes[f].0.dot(l) {
                    f = k;
                }
            }
            let vs = hull.loops[f].iter().map(|&v| hull.verts[v as usize]);
            (hull.planes[f].0, vs.collect())
        }
        Kind::Tri { e1, e2, n } => {
            // Counter-clockwise about the outward normal.
            let a = n * sgn(n.dot(l));
            let vs = if e1.cross(e2).dot(a) > 0.0 {
                [DVec3::ZERO, e1, e2]
            } else {
                [DVec3::ZERO, e2, e1]
            };
            (a, vs.to_vec())
        }
        _ => return Feature::Point,
    };
    if !flat(nl.dot(l)) {
        return Feature::Point;
    }
    Feature::Face {
        verts: verts.into_iter().map(world).collect(),
        n: s.q * nl,
    }
}

/// The support feature of s along dir (outward).
fn feature(s: &Shape, dir: DVec3) -> Feature {
    let a = s.axis();
    let an = a.dot(dir);
    match s.kind {
        Kind::Cylinder { r, hl } => {
            let e = if an >= 0.0 { 1 } else { 0 };
            let end = s.c + a * (if e == 1 { hl } else { -hl });
            if flat(an) {
                let (u, v) = (s.q * DVec3::X, s.q * DVec3::Y);
                return Feature::Disc {
                    c: end,
                    a: a * sgn(an),
                    r,
                    rim: [u, v, -u, -v].map(|d| end + d * r),
                    base: 4 * e as u32,
                };
            }
            // Not flat: the generator on the dir side, whose ends are each disc's rim point
            // farthest along dir (a lying cylinder's 2 points, a tilted one's rim point).
            let radial = (dir - a * an).normalize() * r;
            Feature::Segment([s.c - a * hl + radial, s.c + a * hl + radial])
        }
        Kind::Capsule { r, hl } => {
            // The segment moved along dir by the radius: its ends are the end spheres'
            // points farthest along dir, at any tilt.
            let w = dir * r;
            Feature::Segment([s.c - a * hl + w, s.c + a * hl + w])
        }
        Kind::Box { .. } | Kind::Hull(_) | Kind::Tri { .. } => face_feature(s, dir),
    }
}

/// Hull faces of more than 4 vertices keep, per in-plane corner direction (±e1 ± e2 of
/// a basis fixed to the face), the most extreme vertex among those `inside` (ties to the
/// lower loop position); a vertex that wins two slots is kept once.
fn slots(face: &Feature, s: &Shape, inside: &dyn Fn(DVec3) -> bool) -> Vec<(usize, u32)> {
    let Feature::Face { verts, n, .. } = face else {
        return Vec::new();
    };
    if verts.len() <= 4 {
        return (0..verts.len())
            .filter(|&k| inside(verts[k]))
            .map(|k| (k, k as u32))
            .collect();
    }
    let nl = s.q.inverse() * *n;
    let ax = (0..3).fold(0, |b, k| if nl[k].abs() < nl[b].abs() { k } else { b });
    let e1 = nl.cross(DVec3::AXES[ax]).normalize();
    let e2 = nl.cross(e1);
    let mut out: Vec<(usize, u32)> = Vec::new();
    for (slot, (x, y)) in [(1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0), (1.0, -1.0)]
        .iter()
        .enumerate()
    {
        let dl = e1 * *x + e2 * *y;
        let mut best: Option<(f64, usize)> = None;
        for (k, v) in verts.iter().enumerate() {
            let p = (s.q.inverse() * (*v - s.c)).dot(dl);
            if inside(*v) && best.is_none_or(|b| p > b.0) {
                best = Some((p, k));
            }
        }
        if let Some((_, k)) = best {
            if !out.iter().any(|o| o.0 == k) {
                out.push((k, slot as u32));
            }
        }
    }
    out
}

/// The points of disc or face `f` (of shape s) inside feature `other`, with their ids: a
/// disc's rim points (base + k), a face's [`slots`] (the GPU's `feat_slot`).
fn feature_slots(f: &Feature, s: &Shape, other: &Feature) -> Vec<(DVec3, u32)> {
    match f {
        Feature::Disc { rim, base, .. } => (0..4)
            .filter(|&k| other.contains(rim[k]))
            .map(|k| (rim[k], base + k as u32))
            .collect(),
        Feature::Face { verts, .. } => slots(f, s, &|v| other.contains(v))
            .into_iter()
            .map(|(k, sl)| (verts[k], sl))
            .collect(),
        _ => Vec::new(),
    }
}

/// Cylinder c against x: the manifold with its normal from c to x.
pub fn cylinder_convex(c: &Shape, x: &Shape, env: f64) -> Manifold {
    manifold(c, x, normal_and_gap(c, x), env)
}

/// The manifold of c (a cylinder or a mesh triangle) and x from their
/// [`normal_and_gap`].
pub fn manifold(
    c: &Shape,
    x: &Shape,
    (n, gap, pc, px): (DVec3, f64, DVec3, DVec3),
    env: f64,
) -> Manifold {
    let mut m = Manifold { n, pts: Vec::new() };
    if gap > env {
        return m;
    }
    let (fc, fx) = (feature(c, n), feature(x, -n));
    // Gaps to a face's or disc's own plane (not along the GJK normal, whose last digits
    // would tilt them by its error times the distance to the plane's point).
    let (oc, ox) = (fc.plane_point(), fx.plane_point());
    let (nc, nx) = (fc.normal(), fx.normal());
    // The manifold's normal: C's face (a mesh triangle's), else X's face (a box's or
    // hull's: the surface a cylinder stands, lies or slides on keeps the normal while the
    // cylinder tilts), else C's disc, else X's disc, else GJK's.
    m.n = match (&fc, &fx) {
        (Feature::Face { .. }, _) => nc,
        (_, Feature::Face { .. }) => -nx,
        (Feature::Disc { .. }, _) => nc,
        (_, Feature::Disc { .. }) => -nx,
        _ => n,
    };
    let nm = m.n;
    let mut push = |p: DVec3, gap: f64, f: u32, towards_x: bool| {
        if gap <= env {
            let s = if towards_x { 0.5 } else { -0.5 };
            m.pts.push(MPoint {
                p: p + nm * (s * gap),
                gap,
                feature: f,
            });
        }
    };
    match (&fc, &fx) {
        (
            Feature::Disc { .. } | Feature::Face { .. },
            Feature::Disc { .. } | Feature::Face { .. },
        ) => {
            for (q, f) in feature_slots(&fc, c, &fx) {
                push(q, (q - ox).dot(nx), f, true);
            }
            for (p, f) in feature_slots(&fx, x, &fc) {
                push(p, (p - oc).dot(nc), FEATURE_X + f, false);
            }
        }
        (Feature::Segment(s), Feature::Disc { .. } | Feature::Face { .. }) => {
            if let Some((t0, t1)) = fx.clip(s[0], s[1]) {
                for (e, t) in [t0, t1].into_iter().enumerate() {
                    let q = s[0].lerp(s[1], t);
                    push(q, (q - ox).dot(nx), 8 + e as u32, true);
                }
            }
        }
        (Feature::Disc { .. } | Feature::Face { .. }, Feature::Segment(s)) => {
            if let Some((t0, t1)) = fc.clip(s[0], s[1]) {
                for (e, t) in [t0, t1].into_iter().enumerate() {
                    let p = s[0].lerp(s[1], t);
                    push(p, (p - oc).dot(nc), FEATURE_X + 8 + e as u32, false);
                }
            }
        }
        (Feature::Segment(s), Feature::Segment(t)) => {
            let (d, dx) = (s[1] - s[0], (t[1] - t[0]).normalize());
            let l = d.length_squared();
            if l > 0.0 && flat(d.normalize().dot(dx)) {
                let (u0, u1) = ((t[0] - s[0]).dot(d) / l, (t[1] - s[0]).dot(d) / l);
                let (lo, hi) = (u0.min(u1).max(0.0), u0.max(u1).min(1.0));
                if lo <= hi {
                    for (e, u) in [lo, hi].into_iter().enumerate() {
                        let q = s[0].lerp(s[1], u);
                        // Along n, from q to X's generator line (the axial offset removed).
                        let w = t[0] - q;
                        push(q, (w - dx * w.dot(dx)).dot(n), 8 + e as u32, true);
                    }
                }
            }
        }
        _ => {}
    }
    if m.pts.is_empty() {
        m.n = n;
        if gap <= env {
            m.pts.push(MPoint {
                p: (pc + px) * 0.5,
                gap,
                feature: FEATURE_WITNESS,
            });
        }
    }
    m
}

// ---------------------------------------------------------------- dispatch (as the GPU's)

use super::collide::{quat, v3, Ctx, MeshRef};
use crate::mesh::FLAG_DEGENERATE;
use crate::model::body::{SHAPE_BOX, SHAPE_CAPSULE, SHAPE_CONVEX, SHAPE_CYLINDER};
use crate::model::contact::BoundaryShape;

/// Grain g (a box, capsule, cylinder or hull) as a support-mapped shape; a hull's tables
/// go to `hull`, which the shape borrows.
fn grain_shape<'h>(
    cx: &Ctx,
    g: usize,
    shapes: &[BoundaryShape],
    hull: &'h mut Option<Hull>,
) -> Shape<'h> {
    let f = |x: f32| x as f64;
    let kind = match (cx.state.info[g][2], &shapes[cx.state.info[g][3] as usize]) {
        (SHAPE_BOX, BoundaryShape::GrainBox { half_extents: h }) => Kind::Box {
            h: DVec3::new(f(h[0]), f(h[1]), f(h[2])),
        },
        (
            SHAPE_CAPSULE,
            BoundaryShape::GrainCapsule {
                radius,
                half_length,
            },
        ) => Kind::Capsule {
            r: f(*radius),
            hl: f(*half_length),
        },
        (
            SHAPE_CYLINDER,
            BoundaryShape::GrainCylinder {
                radius,
                half_length,
            },
        ) => Kind::Cylinder {
            r: f(*radius),
            hl: f(*half_length),
        },
        (SHAPE_CONVEX, s) => {
            Kind::Hull(hull.insert(Hull::new(v3(cx.state.pos[g]), quat(cx.state.rot[g]), s)))
        }
        (k, s) => panic!("body {g}: kind {k} with shape {s:?} is not support-mapped"),
    };
    Shape::grain(
        kind,
        v3(cx.state.pos[g]),
        quat(cx.state.rot[g]),
        cx.state.pos[g][3] as f64,
    )
}

/// Grains a < b, a cylinder and a box, hull, capsule or cylinder (the lower-index one is C
/// when both are cylinders).
pub(super) fn cylinder_pair(cx: &mut Ctx, a: usize, b: usize, shapes: &[BoundaryShape]) {
    let env = cx.settings.envelope as f64;
    let first = cx.state.info[a][2] == SHAPE_CYLINDER;
    let (ic, ix) = if first { (a, b) } else { (b, a) };
    let (mut hc, mut hx) = (None, None);
    let c = grain_shape(cx, ic, shapes, &mut hc);
    let x = grain_shape(cx, ix, shapes, &mut hx);
    let mut m = cylinder_convex(&c, &x, env);
    if !first {
        m.n = -m.n;
    }
    cx.push_manifold(a, b, &m);
}

/// A solid cylinder boundary (base at `xa`, axis `qa`·z, radius r, height h) as C against
/// grain x: not shrunk (its edges stay sharp; the grain's margin keeps the cores apart at
/// rest), except against a hull (margin 0): then by [`MARGIN`] × the smaller of its size
/// and the hull's bounding radius.
pub fn solid_cylinder<'a>(xa: DVec3, qa: DQuat, r: f64, h: f64, x: &Shape) -> Shape<'a> {
    let hl = 0.5 * h;
    let margin = if x.margin == 0.0 {
        MARGIN * r.min(hl).min(x.bound)
    } else {
        0.0
    };
    Shape {
        kind: Kind::Cylinder { r, hl },
        c: xa + qa * DVec3::new(0.0, 0.0, hl),
        q: qa,
        bound: r.hypot(hl),
        margin,
    }
}

/// A solid box boundary (centre `xa`, rotation `qa`, half extents h), not shrunk: only
/// cylinder grains meet it here, and their margin keeps the cores apart.
pub fn solid_box<'a>(xa: DVec3, qa: DQuat, h: DVec3) -> Shape<'a> {
    Shape {
        kind: Kind::Box { h },
        c: xa,
        q: qa,
        bound: h.length(),
        margin: 0.0,
    }
}

/// Boundary w against grain g, when the pair is support-mapped (as the GPU's
/// `wall_support`): a solid cylinder against a box, capsule, cylinder or hull (C = the
/// boundary, [`solid_cylinder`]), a solid box against a cylinder (C = the grain, normal
/// flipped), a mesh against those grains ([`mesh_pair`]). Returns false for other pairs.
pub(super) fn wall_pair(
    cx: &mut Ctx,
    w: usize,
    g: usize,
    shapes: &[BoundaryShape],
    mesh: Option<&MeshRef>,
) -> bool {
    let env = cx.settings.envelope as f64;
    let (xa, qa) = (v3(cx.state.pos[w]), quat(cx.state.rot[w]));
    let mut hull = None;
    if let Some(mesh) = mesh {
        mesh_pair(cx, w, g, shapes, mesh);
        return true;
    }
    let m = match &shapes[cx.state.info[w][3] as usize] {
        BoundaryShape::SolidCylinder { radius, height } => {
            let x = grain_shape(cx, g, shapes, &mut hull);
            let c = solid_cylinder(xa, qa, *radius as f64, *height as f64, &x);
            cylinder_convex(&c, &x, env)
        }
        BoundaryShape::SolidBox { half_extents: h } if cx.state.info[g][2] == SHAPE_CYLINDER => {
            let h = DVec3::new(h[0] as f64, h[1] as f64, h[2] as f64);
            let c = grain_shape(cx, g, shapes, &mut hull);
            let mut m = cylinder_convex(&c, &solid_box(xa, qa, h), env);
            m.n = -m.n;
            m
        }
        _ => return false,
    };
    cx.push_manifold(w, g, &m);
    true
}

/// A mesh triangle against grain x (both in the mesh's frame) as C (the GPU's `tri_sup`):
/// None when degenerate or beyond x's reach. Against a hull (margin 0) its core moves back
/// by [`MARGIN`] × the hull's bounding radius.
fn triangle<'a>(mesh: &MeshRef, t: usize, x: &Shape, env: f64) -> Option<Shape<'a>> {
    let v = mesh.t[t];
    let nt = mesh.topo.normals[t];
    let p0 = mesh.p(v[0]);
    let (e1, e2) = (mesh.p(v[1]) - p0, mesh.p(v[2]) - p0);
    let hd = (x.c - p0).dot(nt);
    if mesh.topo.flags[t] & FLAG_DEGENERATE != 0 || hd.abs() - x.bound > env {
        return None;
    }
    let n = if hd < 0.0 { -nt } else { nt };
    Some(Shape {
        kind: Kind::Tri { e1, e2, n },
        c: p0,
        q: DQuat::IDENTITY,
        bound: e1.length().max(e2.length()).max((e2 - e1).length()),
        margin: if x.margin == 0.0 {
            MARGIN * x.bound
        } else {
            0.0
        },
    })
}

/// Grain g against mesh boundary w: every triangle in reach as C, in the mesh's frame,
/// features 64 t + the pair's. A pair whose normal is not the triangle's is kept only by
/// the triangle whose edge or vertex region holds the grain's core witness
/// (`MeshRef::region`, as for spheres).
fn mesh_pair(cx: &mut Ctx, w: usize, g: usize, shapes: &[BoundaryShape], mesh: &MeshRef) {
    let env = cx.settings.envelope as f64;
    let (xa, qa) = (v3(cx.state.pos[w]), quat(cx.state.rot[w]));
    let mut hull = None;
    let mut x = grain_shape(cx, g, shapes, &mut hull);
    x.c = qa.inverse() * (x.c - xa);
    x.q = qa.inverse() * x.q;
    for t in 0..mesh.t.len() {
        let Some(c) = triangle(mesh, t, &x, env) else {
            continue;
        };
        let ng = normal_and_gap(&c, &x);
        let (n, gap, _, px) = ng;
        if gap > env {
            continue;
        }
        let Kind::Tri { n: nt, .. } = c.kind else {
            unreachable!()
        };
        if !flat(n.dot(nt)) && mesh.region(t, px + n * x.margin).is_none() {
            continue;
        }
        let mut m = manifold(&c, &x, ng, env);
        m.n = qa * m.n;
        for p in &mut m.pts {
            p.p = xa + qa * p.p;
            p.feature += 64 * t as u32;
        }
        cx.push_manifold(w, g, &m);
    }
}
