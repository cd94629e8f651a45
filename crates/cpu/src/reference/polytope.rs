//! f64 twin of the polytope–polytope narrow phase (`collide_pairs.wgsl`, section
//! `polytope`): convex hull grains against each other and against box grains (a box is
//! the polytope `crate::convex::box_polytope`). Same algorithm, decisions and feature ids;
//! the GPU works in the bodies' local frames, this twin in world (rounding apart, equal).
//!
//! Why SAT and not GJK/EPA: hulls are small (≤ 64 vertices and faces), SAT is exact for
//! polytopes, needs no iteration or tolerance loop, and its best axis names the features
//! that give a full manifold (GJK/EPA gives one point, and a resting hull needs up to 4).
//! The edge query tests only the edge pairs that build a face of the Minkowski difference
//! (Gregorius, "The Separating Axis Test between Convex Polyhedra", GDC 2013: the arcs of
//! the two edges cross on the Gauss map), so near-parallel and back-facing pairs cost one
//! sign test.
//!
//! * Axes: every face normal of A, of B, and the Minkowski edge pairs. A face of B beats
//!   A's, and an edge pair the best face, only by `AXIS_BIAS` × the larger bounding radius,
//!   so a resting hull keeps its reference face (and feature ids) from step to step.
//!   Separation above the envelope on any axis: no contact.
//! * **Face axis**: the reference face (normal n), the incident face (the other body's face
//!   most anti-parallel to n). The incident polygon clipped by the reference face's prism is
//!   streamed rather than stored (no run-time indexed arrays on the GPU): its vertices are
//!   (1) incident vertices inside the prism, (2) reference vertices whose normal line pierces
//!   the incident polygon (on the incident plane), (3) incident edges crossing a side plane
//!   inside the others. Of those within the envelope, each of 4 slots keeps the point most
//!   extreme along its corner direction (±u ± v in the reference face, u along its first
//!   edge), as the box–box manifold does; feature `4·(64·side + face) + slot` (side 1 when
//!   the reference face is B's) depends on the reference face and slot only, so the warm
//!   start finds the same points next step. Points midway between the surfaces.
//! * **Edge axis**: one point, the closest points of the two edges; feature
//!   `EDGE_FEATURE + 128·edge of A + edge of B`.
//!
//! Gaps are the separation along the chosen axis: exact for face–vertex and edge–edge
//! closest features, a lower bound (a contact within the envelope a little early) for
//! vertex–vertex and vertex–edge ones.

use super::boxes::{MPoint, Manifold, AXIS_BIAS};
use super::convex::Hull;
use glam::DVec3;

/// Edge pairs with |e₁ × e₂| < this × |e₁||e₂| are skipped (parallel edges: a face axis
/// covers them).
pub const PARALLEL_SIN: f64 = 0.005;
/// A point this far (× the larger bounding radius) outside a side plane is still inside
/// (clip points on the prism's edges are not lost to rounding).
pub const CLIP_SLACK: f64 = 1e-5;
/// Incident faces closer to perpendicular than this (n_inc · n > −this) give no
/// reference-vertex points (the normal line runs along the face).
pub const PIERCE_MIN: f64 = 1e-2;
/// Edge–edge features: `EDGE_FEATURE + 128·i + j` (hulls have ≤ 126 edges).
pub const EDGE_FEATURE: u32 = 512;

impl Hull {
    fn normal(&self, f: usize) -> DVec3 {
        self.q * self.planes[f].0
    }

    /// Face f's world plane offset (n · x = d on the face).
    fn offset(&self, f: usize) -> f64 {
        self.planes[f].1 + self.normal(f).dot(self.c)
    }

    /// min over the vertices of n · x (world).
    fn min_along(&self, n: DVec3) -> f64 {
        let nl = self.q.inverse() * n;
        let m = self
            .verts
            .iter()
            .map(|v| nl.dot(*v))
            .fold(f64::INFINITY, f64::min);
        m + n.dot(self.c)
    }

    fn loop_vertex(&self, f: usize, k: usize) -> DVec3 {
        let l = &self.loops[f];
        self.vertex(l[k % l.len()] as usize)
    }
}

/// The face of `a` of largest separation from `b` (ties to the lower face).
fn face_query(a: &Hull, b: &Hull) -> (f64, usize) {
    let mut best = (f64::NEG_INFINITY, 0);
    for f in 0..a.planes.len() {
        let s = b.min_along(a.normal(f)) - a.offset(f);
        if s > best.0 {
            best = (s, f);
        }
    }
    best
}

/// Do the Gauss-map arcs a–b and c–d (face normals of two edges, B's negated) cross?
fn minkowski_face(a: DVec3, b: DVec3, c: DVec3, d: DVec3) -> bool {
    let (bxa, dxc) = (b.cross(a), d.cross(c));
    let (cba, dba) = (c.dot(bxa), d.dot(bxa));
    let (adc, bdc) = (a.dot(dxc), b.dot(dxc));
    cba * dba < 0.0 && adc * bdc < 0.0 && cba * bdc > 0.0
}

/// Separation along e₁ × e₂ (oriented out of A, whose centre is `ca`), or −∞ when the
/// edges are nearly parallel; with the axis.
fn edge_separation(p1: DVec3, e1: DVec3, p2: DVec3, e2: DVec3, ca: DVec3) -> (f64, DVec3) {
    let x = e1.cross(e2);
    let l = x.length();
    if l < PARALLEL_SIN * (e1.length_squared() * e2.length_squared()).sqrt() {
        return (f64::NEG_INFINITY, DVec3::ZERO);
    }
    let mut n = x / l;
    if n.dot(p1 - ca) < 0.0 {
        n = -n;
    }
    (n.dot(p2 - p1), n)
}

/// Best Minkowski edge pair: (separation, edge of A, edge of B, axis A → B); ties to the
/// lower (i, j).
fn edge_query(a: &Hull, b: &Hull) -> (f64, usize, usize, DVec3) {
    let mut best = (f64::NEG_INFINITY, 0, 0, DVec3::ZERO);
    for (i, ea) in a.edges.iter().enumerate() {
        let (p1, q1) = (a.vertex(ea[0] as usize), a.vertex(ea[1] as usize));
        let (na, nb) = (a.normal(ea[2] as usize), a.normal(ea[3] as usize));
        for (j, eb) in b.edges.iter().enumerate() {
            let (nc, nd) = (-b.normal(eb[2] as usize), -b.normal(eb[3] as usize));
            if !minkowski_face(na, nb, nc, nd) {
                continue;
            }
            let (p2, q2) = (b.vertex(eb[0] as usize), b.vertex(eb[1] as usize));
            let (s, n) = edge_separation(p1, q1 - p1, p2, q2 - p2, a.c);
            if s > best.0 {
                best = (s, i, j, n);
            }
        }
    }
    best
}

/// Polytopes a and b (bounding radii ra, rb): the manifold, normal from A to B.
pub fn polytope_pair(a: &Hull, b: &Hull, ra: f64, rb: f64, env: f64) -> Manifold {
    let none = Manifold::default();
    let scale = ra.max(rb);
    let tol = AXIS_BIAS * scale;
    let (sa, fa) = face_query(a, b);
    if sa > env {
        return none;
    }
    let (sb, fb) = face_query(b, a);
    if sb > env {
        return none;
    }
    let use_b = sb > sa + tol;
    let face_sep = if use_b { sb } else { sa };
    let (se, i, j, n) = edge_query(a, b);
    if se > env {
        return none;
    }
    if se > face_sep + tol {
        return edge_contact(a, b, i, j, n);
    }
    if use_b {
        face_contact(b, a, fb, true, env, scale)
    } else {
        face_contact(a, b, fa, false, env, scale)
    }
}

fn edge_contact(a: &Hull, b: &Hull, i: usize, j: usize, n: DVec3) -> Manifold {
    let (ea, eb) = (a.edges[i], b.edges[j]);
    let p1 = a.vertex(ea[0] as usize);
    let d1 = a.vertex(ea[1] as usize) - p1;
    let p2 = b.vertex(eb[0] as usize);
    let d2 = b.vertex(eb[1] as usize) - p2;
    let (qa, qb) = segments_closest(p1, d1, p2, d2);
    Manifold {
        n,
        pts: vec![MPoint {
            p: 0.5 * (qa + qb),
            gap: n.dot(qb - qa),
            feature: EDGE_FEATURE + 128 * i as u32 + j as u32,
        }],
    }
}

/// Closest points of segments p1 + s·d1 and p2 + t·d2 (s, t in [0, 1]; not parallel).
pub fn segments_closest(p1: DVec3, d1: DVec3, p2: DVec3, d2: DVec3) -> (DVec3, DVec3) {
    let r = p1 - p2;
    let (a, e, f) = (d1.dot(d1), d2.dot(d2), d2.dot(r));
    let (b, c) = (d1.dot(d2), d1.dot(r));
    let den = a * e - b * b;
    let mut s = ((b * f - c * e) / den).clamp(0.0, 1.0);
    let mut t = (b * s + f) / e;
    if t < 0.0 {
        t = 0.0;
        s = (-c / a).clamp(0.0, 1.0);
    } else if t > 1.0 {
        t = 1.0;
        s = ((b - c) / a).clamp(0.0, 1.0);
    }
    (p1 + d1 * s, p2 + d2 * t)
}

/// One manifold slot: the most extreme point so far along its corner direction.
#[derive(Clone, Copy)]
struct Slot {
    score: f64,
    id: u32,
    x: DVec3,
    gap: f64,
}

/// The clipped incident polygon, streamed into 4 corner slots (see the module docs).
struct Clip<'a> {
    r: &'a Hull,
    i: &'a Hull,
    f: usize,
    g: usize,
    n: DVec3,
    d: f64,
    slack: f64,
    env: f64,
    u: DVec3,
    v: DVec3,
    slots: [Slot; 4],
}

const CORNERS: [(f64, f64); 4] = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)];

impl Clip<'_> {
    /// Outward unit normal of the reference face's side plane k, and a point on it.
    fn side(&self, k: usize) -> (DVec3, DVec3) {
        let (p, q) = (
            self.r.loop_vertex(self.f, k),
            self.r.loop_vertex(self.f, k + 1),
        );
        ((q - p).cross(self.n).normalize(), p)
    }

    fn inside_ref(&self, x: DVec3, skip: usize) -> bool {
        (0..self.r.loops[self.f].len()).all(|k| {
            let (o, p) = self.side(k);
            k == skip || o.dot(x - p) <= self.slack
        })
    }

    fn inside_inc(&self, x: DVec3) -> bool {
        let ni = self.i.normal(self.g);
        (0..self.i.loops[self.g].len()).all(|k| {
            let (p, q) = (
                self.i.loop_vertex(self.g, k),
                self.i.loop_vertex(self.g, k + 1),
            );
            (q - p).cross(ni).normalize().dot(x - p) <= self.slack
        })
    }

    fn offer(&mut self, x: DVec3, id: u32) {
        let gap = self.n.dot(x) - self.d;
        if gap > self.env {
            return;
        }
        let r0 = self.r.loop_vertex(self.f, 0);
        for (s, (cu, cv)) in self.slots.iter_mut().zip(CORNERS) {
            let score = cu * (x - r0).dot(self.u) + cv * (x - r0).dot(self.v);
            if score > s.score {
                *s = Slot { score, id, x, gap };
            }
        }
    }

    fn run(&mut self) {
        let (nr, ni) = (self.r.loops[self.f].len(), self.i.loops[self.g].len());
        for j in 0..ni {
            let x = self.i.loop_vertex(self.g, j);
            if self.inside_ref(x, usize::MAX) {
                self.offer(x, j as u32);
            }
        }
        let (n_inc, d_inc) = (self.i.normal(self.g), self.i.offset(self.g));
        let den = n_inc.dot(self.n);
        if den < -PIERCE_MIN {
            for k in 0..nr {
                let p = self.r.loop_vertex(self.f, k);
                let y = p + self.n * ((d_inc - n_inc.dot(p)) / den);
                if self.inside_inc(y) {
                    self.offer(y, (1 << 16) | k as u32);
                }
            }
        }
        for j in 0..ni {
            let (x0, x1) = (
                self.i.loop_vertex(self.g, j),
                self.i.loop_vertex(self.g, j + 1),
            );
            for k in 0..nr {
                let (o, p) = self.side(k);
                let (s0, s1) = (o.dot(x0 - p), o.dot(x1 - p));
                if (s0 > 0.0) == (s1 > 0.0) {
                    continue;
                }
                let y = x0 + (x1 - x0) * (s0 / (s0 - s1));
                if self.inside_ref(y, k) {
                    self.offer(y, (2 << 16) | ((j as u32) << 8) | k as u32);
                }
            }
        }
    }
}

/// Face f of the reference polytope r against the incident polytope i; `swapped` when r
/// is B (the normal then runs from i to r).
fn face_contact(r: &Hull, i: &Hull, f: usize, swapped: bool, env: f64, scale: f64) -> Manifold {
    let n = r.normal(f);
    let mut g = 0;
    for k in 1..i.planes.len() {
        if i.normal(k).dot(n) < i.normal(g).dot(n) {
            g = k;
        }
    }
    let u = (r.loop_vertex(f, 1) - r.loop_vertex(f, 0)).normalize();
    let empty = Slot {
        score: f64::NEG_INFINITY,
        id: u32::MAX,
        x: DVec3::ZERO,
        gap: 0.0,
    };
    let mut clip = Clip {
        r,
        i,
        f,
        g,
        n,
        d: r.offset(f),
        slack: CLIP_SLACK * scale,
        env,
        u,
        v: n.cross(u),
        slots: [empty; 4],
    };
    clip.run();
    let side = if swapped { 64 } else { 0 };
    let mut pts: Vec<MPoint> = Vec::new();
    let mut taken: Vec<u32> = Vec::new();
    for (c, s) in clip.slots.iter().enumerate() {
        if s.id == u32::MAX || taken.contains(&s.id) {
            continue;
        }
        taken.push(s.id);
        pts.push(MPoint {
            p: s.x - n * (0.5 * s.gap),
            gap: s.gap,
            feature: 4 * (side + f as u32) + c as u32,
        });
    }
    Manifold {
        n: if swapped { -n } else { n },
        pts,
    }
}
