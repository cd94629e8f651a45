// stages: collide_pairs, collide_walls
// ---------------------------------------------------------------- cylinder vs box, hull, capsule, cylinder
// f64 twin: src/reference/support.rs (same algorithm, decisions and feature ids; it explains
// why): GJK between cores shrunk by a margin, then the manifold from the support features
// along the normal. Only scenes with such pairs keep the `cylpair` section
// (src/collide/mod.rs, `Sections`).

// cylpair:begin
const SUP_MARGIN: f32 = 0.2;
const SUP_FLAT: f32 = 0.01;
const SUP_GJK_REL: f32 = 1e-6;
const SUP_GJK_ITERS: u32 = 48u;
const SUP_GJK_HIT: f32 = 1e-5;
const SUP_GJK_FLAT: f32 = 1e-5;
const SUP_FEATURE_X: u32 = 16u;
const SUP_FEATURE_WITNESS: u32 = 32u;

const SUP_CYLINDER: u32 = 0u;
const SUP_BOX: u32 = 1u;
const SUP_CAPSULE: u32 = 2u;
const SUP_HULL: u32 = 3u;
// A mesh triangle (always C): c = vertex 0, dims = edge to vertex 1, rec = bits of the edge
// to vertex 2, q.xyz = unit normal towards the partner (not a rotation; twin `Kind::Tri`).
// Its core is moved back along the normal by its margin.
const SUP_TRI: u32 = 4u;

// A support-mapped grain: kind, centre, rotation, dims (cylinder and capsule: r, hl; box:
// half extents), bounding radius, hull record (common/collide_polytope.wgsl's Poly.rec).
struct Sup {
    kind: u32,
    c: vec3<f32>,
    q: vec4<f32>,
    dims: vec3<f32>,
    bound: f32,
    // Core margin: a grain's from sup_grain_margin; a boundary's as its caller decides.
    m: f32,
    rec: vec4<u32>,
}

// A grain's core margin (twin `Kind::grain_margin`).
fn sup_grain_margin(kind: u32, dims: vec3<f32>) -> f32 {
    if kind == SUP_CYLINDER {
        return SUP_MARGIN * min(dims.x, dims.y);
    }
    if kind == SUP_BOX {
        return SUP_MARGIN * min(min(dims.x, dims.y), dims.z);
    }
    if kind == SUP_CAPSULE {
        return dims.x;
    }
    return 0.0;
}

fn sup_margin(s: Sup) -> f32 {
    return s.m;
}

// The core's support point along d (world).
fn sup_core(s: Sup, d: vec3<f32>) -> vec3<f32> {
    if s.kind == SUP_TRI {
        let e2 = bitcast<vec3<f32>>(s.rec.xyz);
        var t = vec3<f32>(0.0);
        if dot(s.dims, d) > 0.0 {
            t = s.dims;
        }
        if dot(e2, d) > dot(t, d) {
            t = e2;
        }
        return s.c + t - s.q.xyz * s.m;
    }
    let l = quat_rotate_inv(s.q, d);
    let m = sup_margin(s);
    var p = vec3<f32>(0.0);
    if s.kind == SUP_CYLINDER {
        let w = l.xy;
        let ln = length(w);
        var rim = vec2<f32>(0.0);
        if ln > 1e-6 * length(l) {
            rim = w * ((s.dims.x - m) / ln);
        }
        p = vec3<f32>(rim, sgn(l.z) * (s.dims.y - m));
    } else if s.kind == SUP_BOX {
        p = vec3<f32>(sgn(l.x), sgn(l.y), sgn(l.z)) * (s.dims - vec3<f32>(m));
    } else if s.kind == SUP_CAPSULE {
        p = vec3<f32>(0.0, 0.0, sgn(l.z) * s.dims.y);
    } else {
        // convex:begin
        var best = -3.0e38;
        for (var k = 0u; k < s.rec.x; k++) {
            let v = shapes[s.rec.z + k].xyz;
            if dot(v, l) > best {
                best = dot(v, l);
                p = v;
            }
        }
        // convex:end
    }
    return s.c + quat_rotate(s.q, p);
}

fn sup_axis(s: Sup) -> vec3<f32> {
    if s.kind == SUP_TRI {
        return s.q.xyz;
    }
    return quat_rotate(s.q, vec3<f32>(0.0, 0.0, 1.0));
}

// Barycentric weights of the point of segment (a, b) closest to the origin.
fn sup_seg_weights(a: vec3<f32>, b: vec3<f32>) -> vec2<f32> {
    let ab = b - a;
    let l = dot(ab, ab);
    if l <= 0.0 {
        return vec2<f32>(1.0, 0.0);
    }
    let t = clamp(-dot(a, ab) / l, 0.0, 1.0);
    return vec2<f32>(1.0 - t, t);
}

// Of triangle (a, b, c) (Ericson §5.1.5 with p = 0; collinear: the best edge).
fn sup_tri_weights(a: vec3<f32>, b: vec3<f32>, c: vec3<f32>) -> vec3<f32> {
    let ab = b - a;
    let ac = c - a;
    let d1 = -dot(ab, a);
    let d2 = -dot(ac, a);
    if d1 <= 0.0 && d2 <= 0.0 {
        return vec3<f32>(1.0, 0.0, 0.0);
    }
    let d3 = -dot(ab, b);
    let d4 = -dot(ac, b);
    if d3 >= 0.0 && d4 <= d3 {
        return vec3<f32>(0.0, 1.0, 0.0);
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let v = d1 / (d1 - d3);
        return vec3<f32>(1.0 - v, v, 0.0);
    }
    let d5 = -dot(ab, c);
    let d6 = -dot(ac, c);
    if d6 >= 0.0 && d5 <= d6 {
        return vec3<f32>(0.0, 0.0, 1.0);
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let w = d2 / (d2 - d6);
        return vec3<f32>(1.0 - w, 0.0, w);
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return vec3<f32>(0.0, 1.0 - w, w);
    }
    let s = va + vb + vc;
    if s <= 0.0 {
        let e0 = sup_seg_weights(a, b);
        let e1 = sup_seg_weights(a, c);
        let e2 = sup_seg_weights(b, c);
        let q0 = a * e0.x + b * e0.y;
        let q1 = a * e1.x + c * e1.y;
        let q2 = b * e2.x + c * e2.y;
        let l0 = dot(q0, q0);
        let l1 = dot(q1, q1);
        let l2 = dot(q2, q2);
        if l0 <= l1 && l0 <= l2 {
            return vec3<f32>(e0, 0.0);
        } else if l1 <= l2 {
            return vec3<f32>(e1.x, 0.0, e1.y);
        }
        return vec3<f32>(0.0, e2);
    }
    return vec3<f32>(va, vb, vc) / s;
}

// GJK's simplex in named registers (Minkowski points w, their supports on a and b,
// weights): an indexed private array would live in llvmpipe's per-lane scratch memory
// (book: Shapes, "Cost"); vertex k is read and written by selects.
struct Simplex {
    n: u32,
    w0: vec3<f32>,
    w1: vec3<f32>,
    w2: vec3<f32>,
    w3: vec3<f32>,
    a0: vec3<f32>,
    a1: vec3<f32>,
    a2: vec3<f32>,
    a3: vec3<f32>,
    b0: vec3<f32>,
    b1: vec3<f32>,
    b2: vec3<f32>,
    b3: vec3<f32>,
    lam: vec4<f32>,
}

fn pick4(x0: vec3<f32>, x1: vec3<f32>, x2: vec3<f32>, x3: vec3<f32>, k: u32) -> vec3<f32> {
    return select(select(select(x0, x1, k == 1u), x2, k == 2u), x3, k == 3u);
}

fn sx_w(s: Simplex, k: u32) -> vec3<f32> {
    return pick4(s.w0, s.w1, s.w2, s.w3, k);
}

fn sx_a(s: Simplex, k: u32) -> vec3<f32> {
    return pick4(s.a0, s.a1, s.a2, s.a3, k);
}

fn sx_b(s: Simplex, k: u32) -> vec3<f32> {
    return pick4(s.b0, s.b1, s.b2, s.b3, k);
}

fn sx_set(s: ptr<function, Simplex>, k: u32, w: vec3<f32>, a: vec3<f32>, b: vec3<f32>) {
    (*s).w0 = select((*s).w0, w, k == 0u);
    (*s).w1 = select((*s).w1, w, k == 1u);
    (*s).w2 = select((*s).w2, w, k == 2u);
    (*s).w3 = select((*s).w3, w, k == 3u);
    (*s).a0 = select((*s).a0, a, k == 0u);
    (*s).a1 = select((*s).a1, a, k == 1u);
    (*s).a2 = select((*s).a2, a, k == 2u);
    (*s).a3 = select((*s).a3, a, k == 3u);
    (*s).b0 = select((*s).b0, b, k == 0u);
    (*s).b1 = select((*s).b1, b, k == 1u);
    (*s).b2 = select((*s).b2, b, k == 2u);
    (*s).b3 = select((*s).b3, b, k == 3u);
}

// Tetrahedron face k: vertices (x, y, z), opposite vertex w.
fn tet_face(k: u32) -> vec4<u32> {
    return select(
        select(vec4<u32>(0u, 1u, 2u, 3u), vec4<u32>(0u, 1u, 3u, 2u), k == 1u),
        select(vec4<u32>(0u, 2u, 3u, 1u), vec4<u32>(1u, 2u, 3u, 0u), k == 3u),
        k >= 2u,
    );
}

// Weights of the simplex point closest to the origin (all 4 non-zero only when the origin
// lies inside the tetrahedron), as the twin's `simplex_weights`.
fn sup_simplex_weights(s: Simplex) -> vec4<f32> {
    if s.n == 1u {
        return vec4<f32>(1.0, 0.0, 0.0, 0.0);
    }
    if s.n == 2u {
        return vec4<f32>(sup_seg_weights(s.w0, s.w1), 0.0, 0.0);
    }
    if s.n == 3u {
        return vec4<f32>(sup_tri_weights(s.w0, s.w1, s.w2), 0.0);
    }
    var best = 3.0e38;
    var out = vec4<f32>(1.0);
    for (var k = 0u; k < 4u; k++) {
        let f = tet_face(k);
        let a = sx_w(s, f.x);
        let b = sx_w(s, f.y);
        let c = sx_w(s, f.z);
        let nf = cross(b - a, c - a);
        if dot(nf, -a) * dot(nf, sx_w(s, f.w) - a) > 0.0 {
            continue;
        }
        let t = sup_tri_weights(a, b, c);
        let p = a * t.x + b * t.y + c * t.z;
        let d = dot(p, p);
        if d < best {
            best = d;
            var l = vec4<f32>(0.0);
            l[f.x] = t.x;
            l[f.y] = t.y;
            l[f.z] = t.z;
            out = l;
        }
    }
    return out;
}

struct GjkOut {
    pa: vec3<f32>,
    pb: vec3<f32>,
    dist: f32,
    hit: bool,
}

// Solves for the simplex point closest to the origin and keeps the vertices of non-zero
// weight, in order (twin `Simplex::reduce`).
fn sup_reduce(s: ptr<function, Simplex>) {
    let l = sup_simplex_weights(*s);
    var m = 0u;
    for (var k = 0u; k < (*s).n; k++) {
        if l[k] > 0.0 {
            sx_set(s, m, sx_w(*s, k), sx_a(*s, k), sx_b(*s, k));
            (*s).lam[m] = l[k];
            m += 1u;
        }
    }
    (*s).n = m;
}

// A tetrahedron flatter than SUP_GJK_FLAT (twin `Simplex::flat`).
fn sup_flat_tetra(s: Simplex) -> bool {
    let e1 = s.w1 - s.w0;
    let e2 = s.w2 - s.w0;
    let e3 = s.w3 - s.w0;
    let l = max(max(length(e1), length(e2)), length(e3));
    return abs(dot(e1, cross(e2, e3))) <= SUP_GJK_FLAT * l * l * l;
}

// GJK distance between the cores of a0 and b0, in a frame centred on a0 (twin `gjk`, which
// says when it counts as intersecting).
fn sup_gjk(a0: Sup, b0: Sup) -> GjkOut {
    let o = a0.c;
    var a = a0;
    var b = b0;
    a.c = vec3<f32>(0.0);
    b.c = b0.c - o;
    var s: Simplex;
    s.n = 0u;
    s.lam = vec4<f32>(1.0, 0.0, 0.0, 0.0);
    var v = a.c - b.c;
    if dot(v, v) == 0.0 {
        v = vec3<f32>(1.0, 0.0, 0.0);
    }
    let tiny = SUP_GJK_HIT * (a.bound + b.bound);
    var hit = true;
    for (var it = 0u; it < SUP_GJK_ITERS; it++) {
        let pa = sup_core(a, -v);
        let pb = sup_core(b, v);
        let p = pa - pb;
        let vv = dot(v, v);
        if s.n > 0u && vv - dot(v, p) <= SUP_GJK_REL * vv {
            hit = false;
            break;
        }
        if it + 1u == SUP_GJK_ITERS {
            hit = dot(v, p) <= 0.0;
            break;
        }
        let before = s;
        sx_set(&s, s.n, p, pa, pb);
        s.n += 1u;
        sup_reduce(&s);
        var vn = vec3<f32>(0.0);
        for (var k = 0u; k < s.n; k++) {
            vn += sx_w(s, k) * s.lam[k];
        }
        let stalled = before.n > 0u && s.n < 4u && dot(vn, vn) >= vv;
        if stalled || (s.n == 4u && sup_flat_tetra(s)) {
            s = before;
            hit = false;
            break;
        }
        v = vn;
        if s.n == 4u || length(v) <= tiny {
            break;
        }
    }
    var pa = o;
    var pb = o;
    for (var k = 0u; k < s.n; k++) {
        pa += sx_a(s, k) * s.lam[k];
        pb += sx_b(s, k) * s.lam[k];
    }
    return GjkOut(pa, pb, length(v), hit);
}

// Normal (a to b), gap, surface points on a and b (twin `normal_and_gap`).
struct SupNormal {
    n: vec3<f32>,
    gap: f32,
    pa: vec3<f32>,
    pb: vec3<f32>,
}

fn sup_normal(a: Sup, b: Sup) -> SupNormal {
    let ma = sup_margin(a);
    let mb = sup_margin(b);
    let g = sup_gjk(a, b);
    if !g.hit && g.dist > 0.0 {
        let n = (g.pb - g.pa) / g.dist;
        return SupNormal(n, g.dist - ma - mb, g.pa + n * ma, g.pb - n * mb);
    }
    let deep = sup_deep_axis(a, b);
    let n = deep.xyz;
    // The point on a (the cylinder: its support is unique where no feature manifold takes
    // over, a face's is not), b's moved along n by the gap; a triangle's support along its
    // normal is its whole face, so there b's deepest point (twin `normal_and_gap`).
    if a.kind == SUP_TRI {
        let pb = sup_core(b, -n) - n * mb;
        return SupNormal(n, deep.w, pb - n * deep.w, pb);
    }
    let pa = sup_core(a, n) + n * ma;
    return SupNormal(n, deep.w, pa, pa + n * deep.w);
}

// How far s reaches from its centre along unit l.
fn sup_reach(s: Sup, l: vec3<f32>) -> f32 {
    return dot(sup_core(s, l) - s.c, l) + sup_margin(s);
}

// Deep-axis candidate k of a against b (twin `deep_axis`, same order), not normalised.
fn sup_candidate(a: Sup, b: Sup, d: vec3<f32>, k: u32) -> vec3<f32> {
    let ac = sup_axis(a);
    if k == 0u {
        return d;
    }
    if k == 1u {
        return ac;
    }
    if k == 2u {
        return d - ac * dot(d, ac);
    }
    if b.kind == SUP_BOX {
        let e = quat_rotate(b.q, vec3<f32>(f32(k % 3u == 0u), f32(k % 3u == 1u), f32(k % 3u == 2u)));
        if k < 6u {
            return e;
        }
        return cross(ac, e);
    }
    if b.kind == SUP_HULL {
        var n = vec3<f32>(0.0);
        // convex:begin
        n = quat_rotate(b.q, poly_plane(Poly(b.rec, 0u, 0u, b.c, b.q), k - 3u).xyz);
        // convex:end
        return n;
    }
    let ax = sup_axis(b);
    if k == 3u {
        return ax;
    }
    if k == 4u {
        return cross(ac, ax);
    }
    return d - ax * dot(d, ax);
}

// Cores intersecting: the axis of least overlap among a finite set (twin `deep_axis`), each
// tried both ways, the first best winning (xyz axis, w separation). One loop, so that the
// support code is inlined once.
fn sup_deep_axis(a: Sup, b: Sup) -> vec4<f32> {
    let d = b.c - a.c;
    var best = vec4<f32>(0.0, 0.0, 1.0, -3.0e38);
    var count = 6u;
    if b.kind == SUP_BOX {
        count = 9u;
    } else if b.kind == SUP_HULL {
        count = 3u + b.rec.y;
    }
    for (var k = 0u; k < 2u * count; k++) {
        let c = sup_candidate(a, b, d, k / 2u);
        let len = length(c);
        if len <= 1e-9 {
            continue;
        }
        let l = c / len * select(1.0, -1.0, k % 2u == 1u);
        let s = dot(l, d) - sup_reach(a, l) - sup_reach(b, -l);
        if s > best.w {
            best = vec4<f32>(l, s);
        }
    }
    return best;
}

// A support feature (twin `Feature`): kind 0 point, 1 segment (v0, v1), 2 disc (centre c,
// outward axis a, radius r, rim v0..v3, id base), 3 face (a hull's face `face` of nv
// vertices, or a box face's corners v0..v3; outward normal a).
const FEAT_POINT: u32 = 0u;
const FEAT_SEGMENT: u32 = 1u;
const FEAT_DISC: u32 = 2u;
const FEAT_FACE: u32 = 3u;

struct Feat {
    kind: u32,
    c: vec3<f32>,
    a: vec3<f32>,
    r: f32,
    base: u32,
    nv: u32,
    face: u32,
    v0: vec3<f32>,
    v1: vec3<f32>,
    v2: vec3<f32>,
    v3: vec3<f32>,
}

fn sup_flat(c: f32) -> bool {
    return 1.0 - c * c < SUP_FLAT * SUP_FLAT;
}

fn feat_point() -> Feat {
    let z = vec3<f32>(0.0);
    return Feat(FEAT_POINT, z, z, 0.0, 0u, 0u, 0u, z, z, z, z);
}

// Vertex k of a face feature of shape s, world.
fn feat_vertex(f: Feat, s: Sup, k: u32) -> vec3<f32> {
    if s.kind == SUP_HULL {
        // convex:begin
        let h = Poly(s.rec, 0u, 0u, s.c, s.q);
        return s.c + quat_rotate(s.q, poly_loop_vert(h, f.face, k));
        // convex:end
    }
    return select(select(select(f.v0, f.v1, k == 1u), f.v2, k == 2u), f.v3, k == 3u);
}

fn plane_point(f: Feat, s: Sup) -> vec3<f32> {
    if f.kind == FEAT_SEGMENT {
        return f.v0;
    }
    if f.kind == FEAT_DISC {
        return f.c;
    }
    if f.kind == FEAT_FACE {
        return feat_vertex(f, s, 0u);
    }
    return vec3<f32>(0.0);
}

fn feat_contains(f: Feat, s: Sup, x: vec3<f32>) -> bool {
    if f.kind == FEAT_DISC {
        let d = x - f.c;
        let r = d - f.a * dot(d, f.a);
        return dot(r, r) <= f.r * f.r;
    }
    if f.kind == FEAT_FACE {
        for (var k = 0u; k < f.nv; k++) {
            let p = feat_vertex(f, s, k);
            let q = feat_vertex(f, s, (k + 1u) % f.nv);
            if dot(cross(q - p, x - p), f.a) < 0.0 {
                return false;
            }
        }
        return true;
    }
    return false;
}

// Parameter interval (lo, hi) of segment s0 + t (s1 − s0) inside the feature; lo > hi: none.
fn feat_clip(f: Feat, s: Sup, s0: vec3<f32>, s1: vec3<f32>) -> vec2<f32> {
    var lo = 0.0;
    var hi = 1.0;
    let d = s1 - s0;
    if f.kind == FEAT_DISC {
        let p = (s0 - f.c) - f.a * dot(s0 - f.c, f.a);
        let e = d - f.a * dot(d, f.a);
        let qa = dot(e, e);
        let qb = 2.0 * dot(p, e);
        let qc = dot(p, p) - f.r * f.r;
        if qa <= 1e-30 {
            return select(vec2<f32>(1.0, 0.0), vec2<f32>(0.0, 1.0), qc <= 0.0);
        }
        let disc = qb * qb - 4.0 * qa * qc;
        if disc < 0.0 {
            return vec2<f32>(1.0, 0.0);
        }
        let r = sqrt(disc);
        lo = max(lo, (-qb - r) / (2.0 * qa));
        hi = min(hi, (-qb + r) / (2.0 * qa));
    } else if f.kind == FEAT_FACE {
        for (var k = 0u; k < f.nv; k++) {
            let p = feat_vertex(f, s, k);
            let q = feat_vertex(f, s, (k + 1u) % f.nv);
            let m = cross(f.a, q - p);
            let f0 = dot(m, s0 - p);
            let fd = dot(m, d);
            if abs(fd) <= 1e-30 {
                if f0 < 0.0 {
                    return vec2<f32>(1.0, 0.0);
                }
            } else if fd > 0.0 {
                lo = max(lo, -f0 / fd);
            } else {
                hi = min(hi, -f0 / fd);
            }
        }
    } else {
        return vec2<f32>(1.0, 0.0);
    }
    return vec2<f32>(lo, hi);
}

// Corner (x, y) of box s's face along axis i (sign sg), in world.
fn box_face_corner(s: Sup, i: u32, j: u32, k: u32, sg: f32, x: f32, y: f32) -> vec3<f32> {
    var v = vec3<f32>(0.0);
    v[i] = sg * s.dims[i];
    v[j] = x * s.dims[j];
    v[k] = y * sg * s.dims[k];
    return s.c + quat_rotate(s.q, v);
}

fn face_feature(s: Sup, dir: vec3<f32>) -> Feat {
    var f = feat_point();
    if s.kind == SUP_TRI {
        let c = dot(s.q.xyz, dir);
        if !sup_flat(c) {
            return f;
        }
        // Counter-clockwise about the outward normal.
        let e2 = bitcast<vec3<f32>>(s.rec.xyz);
        f.kind = FEAT_FACE;
        f.a = s.q.xyz * sgn(c);
        f.nv = 3u;
        let ccw = dot(cross(s.dims, e2), f.a) > 0.0;
        f.v0 = s.c;
        f.v1 = s.c + select(e2, s.dims, ccw);
        f.v2 = s.c + select(s.dims, e2, ccw);
        return f;
    }
    let l = quat_rotate_inv(s.q, dir);
    f.kind = FEAT_FACE;
    var nl = vec3<f32>(0.0);
    if s.kind == SUP_BOX {
        var i = 0u;
        if abs(l.y) > abs(l.x) {
            i = 1u;
        }
        if abs(l.z) > abs(l[i]) {
            i = 2u;
        }
        let j = (i + 1u) % 3u;
        let k = (i + 2u) % 3u;
        let sg = sgn(l[i]);
        nl[i] = sg;
        // Corners (−,−), (+,−), (+,+), (−,+) in (j, k·sg), by fixed indices.
        f.v0 = box_face_corner(s, i, j, k, sg, -1.0, -1.0);
        f.v1 = box_face_corner(s, i, j, k, sg, 1.0, -1.0);
        f.v2 = box_face_corner(s, i, j, k, sg, 1.0, 1.0);
        f.v3 = box_face_corner(s, i, j, k, sg, -1.0, 1.0);
        f.nv = 4u;
    } else {
        // convex:begin
        let h = Poly(s.rec, 0u, 0u, s.c, s.q);
        var best = 0u;
        for (var k = 1u; k < s.rec.y; k++) {
            if dot(poly_plane(h, k).xyz, l) > dot(poly_plane(h, best).xyz, l) {
                best = k;
            }
        }
        nl = poly_plane(h, best).xyz;
        f.face = best;
        f.nv = poly_loop_len(h, best);
        // convex:end
    }
    if !sup_flat(dot(nl, l)) {
        return feat_point();
    }
    f.a = quat_rotate(s.q, nl);
    return f;
}

// The support feature of s along dir (outward); twin `feature`.
fn sup_feature(s: Sup, dir: vec3<f32>) -> Feat {
    let a = sup_axis(s);
    let an = dot(a, dir);
    var f = feat_point();
    if s.kind == SUP_CYLINDER {
        let r = s.dims.x;
        let hl = s.dims.y;
        let e = select(0u, 1u, an >= 0.0);
        let end = s.c + a * select(-hl, hl, e == 1u);
        if sup_flat(an) {
            let u = quat_rotate(s.q, vec3<f32>(1.0, 0.0, 0.0));
            let v = quat_rotate(s.q, vec3<f32>(0.0, 1.0, 0.0));
            f.kind = FEAT_DISC;
            f.c = end;
            f.a = a * sgn(an);
            f.r = r;
            f.base = 4u * e;
            f.v0 = end + u * r;
            f.v1 = end + v * r;
            f.v2 = end - u * r;
            f.v3 = end - v * r;
            return f;
        }
        // Not flat: the generator on the dir side, whose ends are each disc's rim point
        // farthest along dir (a lying cylinder's 2 points, a tilted one's rim point).
        let radial = normalize(dir - a * an) * r;
        f.kind = FEAT_SEGMENT;
        f.v0 = s.c - a * hl + radial;
        f.v1 = s.c + a * hl + radial;
        return f;
    }
    if s.kind == SUP_CAPSULE {
        // The segment moved along dir by the radius: its ends are the end spheres' points
        // farthest along dir, at any tilt.
        let w = dir * s.dims.x;
        f.kind = FEAT_SEGMENT;
        f.v0 = s.c - a * s.dims.y + w;
        f.v1 = s.c + a * s.dims.y + w;
        return f;
    }
    return face_feature(s, dir);
}

// Of face feature f of s, the vertex that wins corner slot `sl` among those inside feature
// `ins` of shape `si` (u32::MAX: none): a face of at most 4 vertices, vertex sl itself; a
// larger hull face, the most extreme along ±e1 ± e2 (a basis fixed to the face; ties to
// the lower loop position). Twin `slots`.
fn face_slot_raw(f: Feat, s: Sup, ins: Feat, si: Sup, sl: u32) -> u32 {
    if f.nv <= 4u {
        if sl < f.nv && feat_contains(ins, si, feat_vertex(f, s, sl)) {
            return sl;
        }
        return 0xffffffffu;
    }
    let nl = quat_rotate_inv(s.q, f.a);
    var ax = 0u;
    if abs(nl.y) < abs(nl.x) {
        ax = 1u;
    }
    if abs(nl.z) < abs(nl[ax]) {
        ax = 2u;
    }
    var axis = vec3<f32>(0.0);
    axis[ax] = 1.0;
    let e1 = normalize(cross(nl, axis));
    let e2 = cross(nl, e1);
    let dl = e1 * select(-1.0, 1.0, sl == 0u || sl == 3u) + e2 * select(-1.0, 1.0, sl < 2u);
    var best = -3.0e38;
    var kb = 0xffffffffu;
    for (var k = 0u; k < f.nv; k++) {
        let v = feat_vertex(f, s, k);
        let p = dot(quat_rotate_inv(s.q, v - s.c), dl);
        if feat_contains(ins, si, v) && (kb == 0xffffffffu || p > best) {
            best = p;
            kb = k;
        }
    }
    return kb;
}

// As face_slot_raw, but a vertex that won an earlier slot is kept there only.
fn face_slot(f: Feat, s: Sup, ins: Feat, si: Sup, sl: u32) -> u32 {
    let k = face_slot_raw(f, s, ins, si, sl);
    if f.nv > 4u && k != 0xffffffffu {
        for (var e = 0u; e < sl; e++) {
            if face_slot_raw(f, s, ins, si, e) == k {
                return 0xffffffffu;
            }
        }
    }
    return k;
}

// Point p of C (`to_x`: moved towards X by half its gap) or of X, with the manifold
// normal nm.
fn sup_point(m: ptr<function, CylContacts>, p: vec3<f32>, nm: vec3<f32>, gap: f32, f: u32, to_x: bool, env: f32) {
    cyl_push(m, p + nm * (select(-0.5, 0.5, to_x) * gap), nm, gap, f, env);
}

// Segment (s0, s1) clipped to t = (lo, hi): C's ends 8 + e with gaps to X's plane (o, on),
// or (`x_side`) X's ends FEATURE_X + 8 + e with gaps to C's plane.
fn sup_clipped(m: ptr<function, CylContacts>, t: vec2<f32>, s0: vec3<f32>, s1: vec3<f32>, o: vec3<f32>, on: vec3<f32>, nm: vec3<f32>, x_side: bool, env: f32) {
    if t.x > t.y {
        return;
    }
    for (var e = 0u; e < 2u; e++) {
        let q = mix(s0, s1, select(t.x, t.y, e == 1u));
        let f = select(8u + e, SUP_FEATURE_X + 8u + e, x_side);
        sup_point(m, q, nm, dot(q - o, on), f, !x_side, env);
    }
}

// Slot k of a disc (rim point k) or a face (face_slot) of s inside feature `ins` of si:
// xyz the point, w the feature id as bits (0xffffffff: none).
fn feat_slot(f: Feat, s: Sup, ins: Feat, si: Sup, k: u32) -> vec4<f32> {
    var p = vec3<f32>(0.0);
    var id = 0xffffffffu;
    if f.kind == FEAT_DISC {
        p = select(select(select(f.v0, f.v1, k == 1u), f.v2, k == 2u), f.v3, k == 3u);
        if feat_contains(ins, si, p) {
            id = f.base + k;
        }
    } else {
        let v = face_slot(f, s, ins, si, k);
        if v != 0xffffffffu {
            p = feat_vertex(f, s, v);
            id = select(v, k, f.nv > 4u);
        }
    }
    return vec4<f32>(p, bitcast<f32>(id));
}

// Cylinder c against x (twin `cylinder_convex`): normal from c to x in every point.
fn cylinder_convex(c: Sup, x: Sup, env: f32) -> CylContacts {
    return sup_manifold(c, x, sup_normal(c, x), env);
}

// The manifold of c (a cylinder or a mesh triangle) and x from their sup_normal (twin
// `manifold`).
fn sup_manifold(c: Sup, x: Sup, sn: SupNormal, env: f32) -> CylContacts {
    var m: CylContacts;
    m.count = 0u;
    let n = sn.n;
    if sn.gap > env {
        return m;
    }
    let fc = sup_feature(c, n);
    let fx = sup_feature(x, -n);
    // Gaps to a face's or disc's own plane (see the twin).
    let oc = plane_point(fc, c);
    let ox = plane_point(fx, x);
    let nc = fc.a;
    let nx = fx.a;
    let x_faced = fx.kind == FEAT_DISC || fx.kind == FEAT_FACE;
    let c_faced = fc.kind == FEAT_DISC || fc.kind == FEAT_FACE;
    var nm = n;
    if fc.kind == FEAT_FACE {
        nm = nc;
    } else if fx.kind == FEAT_FACE {
        nm = -nx;
    } else if fc.kind == FEAT_DISC {
        nm = nc;
    } else if x_faced {
        nm = -nx;
    }
    if c_faced && x_faced {
        // C's slots inside X's feature, then X's inside C's (one loop: the slot code is
        // inlined once).
        for (var i = 0u; i < 8u; i++) {
            let on_x = i >= 4u;
            var f0 = fc;
            var s0 = c;
            var f1 = fx;
            var s1 = x;
            if on_x {
                f0 = fx;
                s0 = x;
                f1 = fc;
                s1 = c;
            }
            let sl = feat_slot(f0, s0, f1, s1, i % 4u);
            let id = bitcast<u32>(sl.w);
            if id != 0xffffffffu {
                let p = sl.xyz;
                let gap = select(dot(p - ox, nx), dot(p - oc, nc), on_x);
                sup_point(&m, p, nm, gap, select(id, SUP_FEATURE_X + id, on_x), !on_x, env);
            }
        }
    } else if fc.kind == FEAT_SEGMENT && x_faced {
        sup_clipped(&m, feat_clip(fx, x, fc.v0, fc.v1), fc.v0, fc.v1, ox, nx, nm, false, env);
    } else if c_faced && fx.kind == FEAT_SEGMENT {
        sup_clipped(&m, feat_clip(fc, c, fx.v0, fx.v1), fx.v0, fx.v1, oc, nc, nm, true, env);
    } else if fc.kind == FEAT_SEGMENT && fx.kind == FEAT_SEGMENT {
        let d = fc.v1 - fc.v0;
        let dx = normalize(fx.v1 - fx.v0);
        let l = dot(d, d);
        if l > 0.0 && sup_flat(dot(normalize(d), dx)) {
            let u0 = dot(fx.v0 - fc.v0, d) / l;
            let u1 = dot(fx.v1 - fc.v0, d) / l;
            let lo = max(min(u0, u1), 0.0);
            let hi = min(max(u0, u1), 1.0);
            if lo <= hi {
                for (var e = 0u; e < 2u; e++) {
                    let q = mix(fc.v0, fc.v1, select(lo, hi, e == 1u));
                    let w = fx.v0 - q;
                    sup_point(&m, q, nm, dot(w - dx * dot(w, dx), n), 8u + e, true, env);
                }
            }
        }
    }
    if m.count == 0u {
        cyl_push(&m, 0.5 * (sn.pa + sn.pb), n, sn.gap, SUP_FEATURE_WITNESS, env);
    }
    return m;
}

// Grain b as a support-mapped shape.
fn grain_sup(b: u32, p: vec4<f32>) -> Sup {
    let k = info[b].z;
    let s = shapes[4u * info[b].w];
    var kind = SUP_HULL;
    var dims = s.xyz;
    // A grain shape's support function (`sup_core`): a new support-mapped grain adds its case.
    switch k {
        case SHAPE_CYLINDER: { kind = SUP_CYLINDER; }
        case SHAPE_BOX: { kind = SUP_BOX; }
        case SHAPE_CAPSULE: { kind = SUP_CAPSULE; }
        default: {}
    }
    return Sup(kind, p.xyz, rot[b], dims, p.w, sup_grain_margin(kind, dims), bitcast<vec4<u32>>(s));
}
// cylpair:end
