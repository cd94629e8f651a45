// stages: collide_pairs, collide_walls
// ---------------------------------------------------------------- convex hull tables
// Functions that read the collide shape table (`shapes`, with `info` and `rot`): only the
// stages that bind it get this file (the first line; build.rs). Sections `polytope`
// (hull–hull, hull–box, hull–solid box) and `capsulehull` are stripped from scenes
// without those pairs (src/collide/mod.rs, `Contents`): pipelines compile faster.

// convex:begin
fn hull_word(at: u32) -> u32 {
    return bitcast<u32>(shapes[at / 4u][at % 4u]);
}

// Twin constants: src/reference/polytope.rs.
const POLY_PARALLEL_SIN: f32 = 0.005;
const POLY_CLIP_SLACK: f32 = 1e-5;
const POLY_PIERCE_MIN: f32 = 1e-2;
const POLY_EDGE_FEATURE: u32 = 512u;

// ---------------------------------------------------------------- polytope pairs
// Hull–hull, hull–box and hull–solid box (twin src/reference/polytope.rs, which explains the
// algorithm and the feature ids). A polytope is a hull grain (record at 4·shape) or a box
// grain or solid box boundary (its polytope record at 4·shape + 1, written when the scene
// has hulls); record [0] as in common/collide_convex.wgsl,
// [1] = (edges, first edge) with one vec4<u32> (u, w, f, g) per edge. The face queries and
// the clipping work in the reference body's frame, the edge query in A's (the twin in
// world: equal but for rounding). No run-time indexed private arrays (see Poly8).
struct Poly {
    rec: vec4<u32>,
    ne: u32,
    eb: u32,
    c: vec3<f32>,
    q: vec4<f32>,
}

fn grain_poly(b: u32, p: vec4<f32>) -> Poly {
    let boxed = info[b].z == SHAPE_BOX || info[b].z == SHAPE_SOLID_BOX;
    let at = 4u * info[b].w + select(0u, 1u, boxed);
    let e = bitcast<vec4<u32>>(shapes[at + 1u]);
    return Poly(bitcast<vec4<u32>>(shapes[at]), e.x, e.y, p.xyz, rot[b]);
}

fn poly_vert(h: Poly, k: u32) -> vec3<f32> {
    return shapes[h.rec.z + k].xyz;
}

fn poly_plane(h: Poly, f: u32) -> vec4<f32> {
    return shapes[h.rec.w + f];
}

fn poly_loop_len(h: Poly, f: u32) -> u32 {
    return bitcast<u32>(shapes[h.rec.w + h.rec.y + f].y);
}

// Vertex (local) at position k (mod the loop's length) of face f's loop.
fn poly_loop_vert(h: Poly, f: u32, k: u32) -> vec3<f32> {
    let hd = bitcast<vec2<u32>>(shapes[h.rec.w + h.rec.y + f].xy);
    return poly_vert(h, hull_word(4u * (h.rec.w + 2u * h.rec.y) + hd.x + k % hd.y));
}

fn poly_edge(h: Poly, e: u32) -> vec4<u32> {
    return bitcast<vec4<u32>>(shapes[h.eb + e]);
}

// Closest points of segments p1 + s·d1 and p2 + t·d2 (not parallel): (point on 1, on 2).
fn segments_closest(p1: vec3<f32>, d1: vec3<f32>, p2: vec3<f32>, d2: vec3<f32>) -> mat2x3<f32> {
    let r = p1 - p2;
    let a = dot(d1, d1);
    let e = dot(d2, d2);
    let f = dot(d2, r);
    let b = dot(d1, d2);
    let c = dot(d1, r);
    var s = clamp((b * f - c * e) / (a * e - b * b), 0.0, 1.0);
    var t = (b * s + f) / e;
    if t < 0.0 {
        t = 0.0;
        s = clamp(-c / a, 0.0, 1.0);
    } else if t > 1.0 {
        t = 1.0;
        s = clamp((b - c) / a, 0.0, 1.0);
    }
    return mat2x3<f32>(p1 + d1 * s, p2 + d2 * t);
}

// polytope:begin
struct PolyHit {
    s: f32,
    i: u32,
    j: u32,
    n: vec3<f32>,
}

// The face of a of largest separation from b (ties to the lower face).
fn poly_face_query(a: Poly, b: Poly) -> PolyHit {
    var best = PolyHit(-3.0e38, 0u, 0u, vec3<f32>(0.0));
    let d = b.c - a.c;
    for (var f = 0u; f < a.rec.y; f++) {
        let pl = poly_plane(a, f);
        let nw = quat_rotate(a.q, pl.xyz);
        let nb = quat_rotate_inv(b.q, nw);
        var m = 3.0e38;
        for (var k = 0u; k < b.rec.x; k++) {
            m = min(m, dot(nb, poly_vert(b, k)));
        }
        let s = m + dot(nw, d) - pl.w;
        if s > best.s {
            best = PolyHit(s, f, 0u, nw);
        }
    }
    return best;
}

// Do the Gauss-map arcs a–b and c–d cross (a Minkowski-difference face)?
fn minkowski_face(a: vec3<f32>, b: vec3<f32>, c: vec3<f32>, d: vec3<f32>) -> bool {
    let bxa = cross(b, a);
    let dxc = cross(d, c);
    let cba = dot(c, bxa);
    let dba = dot(d, bxa);
    let adc = dot(a, dxc);
    let bdc = dot(b, dxc);
    return cba * dba < 0.0 && adc * bdc < 0.0 && cba * bdc > 0.0;
}

// Best Minkowski edge pair, in A's frame (normal returned in world): ties to the lower
// (i, j), as the twin's i-outer loop (here j is outer: B's edge is turned once).
fn poly_edge_query(a: Poly, b: Poly) -> PolyHit {
    var best = PolyHit(-3.0e38, 0u, 0u, vec3<f32>(0.0));
    let t = quat_rotate_inv(a.q, b.c - a.c);
    for (var j = 0u; j < b.ne; j++) {
        let eb = poly_edge(b, j);
        let p2 = t + quat_rotate_inv(a.q, quat_rotate(b.q, poly_vert(b, eb.x)));
        let e2 = t + quat_rotate_inv(a.q, quat_rotate(b.q, poly_vert(b, eb.y))) - p2;
        let nc = -quat_rotate_inv(a.q, quat_rotate(b.q, poly_plane(b, eb.z).xyz));
        let nd = -quat_rotate_inv(a.q, quat_rotate(b.q, poly_plane(b, eb.w).xyz));
        for (var i = 0u; i < a.ne; i++) {
            let ea = poly_edge(a, i);
            if !minkowski_face(poly_plane(a, ea.z).xyz, poly_plane(a, ea.w).xyz, nc, nd) {
                continue;
            }
            let p1 = poly_vert(a, ea.x);
            let e1 = poly_vert(a, ea.y) - p1;
            let x = cross(e1, e2);
            let l = length(x);
            if l < POLY_PARALLEL_SIN * sqrt(dot(e1, e1) * dot(e2, e2)) {
                continue;
            }
            var n = x / l;
            if dot(n, p1) < 0.0 {
                n = -n;
            }
            let s = dot(n, p2 - p1);
            if s > best.s || (s == best.s && (i < best.i || (i == best.i && j < best.j))) {
                best = PolyHit(s, i, j, n);
            }
        }
    }
    best.n = quat_rotate(a.q, best.n);
    return best;
}

fn poly_world(h: Poly, k: u32) -> vec3<f32> {
    return h.c + quat_rotate(h.q, poly_vert(h, k));
}

fn poly_edge_contact(a: Poly, b: Poly, e: PolyHit) -> Manifold {
    var m: Manifold;
    m.count = 0u;
    let ea = poly_edge(a, e.i);
    let eb = poly_edge(b, e.j);
    let p1 = poly_world(a, ea.x);
    let p2 = poly_world(b, eb.x);
    let q = segments_closest(p1, poly_world(a, ea.y) - p1, p2, poly_world(b, eb.y) - p2);
    m.n = e.n;
    manifold_push(&m, 0.5 * (q[0] + q[1]), dot(e.n, q[1] - q[0]), POLY_EDGE_FEATURE + 128u * e.i + e.j);
    return m;
}

// The reference face f of r (normal n, offset d, r's frame) against incident face g of i.
struct Clip {
    r: Poly,
    i: Poly,
    f: u32,
    g: u32,
    n: vec3<f32>,
    d: f32,
    slack: f32,
    env: f32,
    r0: vec3<f32>,
    u: vec3<f32>,
    v: vec3<f32>,
}

// Four corner slots in named registers (fixed-index selects, see manifold_push).
struct Slots {
    score: vec4<f32>,
    id: vec4<u32>,
    p0: vec4<f32>,
    p1: vec4<f32>,
    p2: vec4<f32>,
    p3: vec4<f32>,
}

// Vertex k of the incident loop in r's frame.
fn clip_inc(c: Clip, k: u32) -> vec3<f32> {
    let x = c.i.c - c.r.c + quat_rotate(c.i.q, poly_loop_vert(c.i, c.g, k));
    return quat_rotate_inv(c.r.q, x);
}

fn clip_inside_ref(c: Clip, x: vec3<f32>, skip: u32) -> bool {
    let nr = poly_loop_len(c.r, c.f);
    for (var k = 0u; k < nr; k++) {
        let p = poly_loop_vert(c.r, c.f, k);
        let o = normalize(cross(poly_loop_vert(c.r, c.f, k + 1u) - p, c.n));
        if k != skip && dot(o, x - p) > c.slack {
            return false;
        }
    }
    return true;
}

fn clip_inside_inc(c: Clip, ni: vec3<f32>, x: vec3<f32>) -> bool {
    let m = poly_loop_len(c.i, c.g);
    for (var k = 0u; k < m; k++) {
        let p = clip_inc(c, k);
        if dot(normalize(cross(clip_inc(c, k + 1u) - p, ni)), x - p) > c.slack {
            return false;
        }
    }
    return true;
}

fn clip_offer(c: Clip, s: ptr<function, Slots>, x: vec3<f32>, id: u32) {
    let gap = dot(c.n, x) - c.d;
    if gap > c.env {
        return;
    }
    let a = dot(x - c.r0, c.u);
    let b = dot(x - c.r0, c.v);
    let sc = vec4<f32>(-a - b, a - b, a + b, -a + b);
    let better = sc > (*s).score;
    let p = vec4<f32>(x, gap);
    (*s).score = select((*s).score, sc, better);
    (*s).id = select((*s).id, vec4<u32>(id), better);
    (*s).p0 = select((*s).p0, p, better.x);
    (*s).p1 = select((*s).p1, p, better.y);
    (*s).p2 = select((*s).p2, p, better.z);
    (*s).p3 = select((*s).p3, p, better.w);
}

// The clipped incident polygon streamed into the slots (twin: Clip::run).
fn clip_run(c: Clip, ni: vec3<f32>) -> Slots {
    var s = Slots(vec4<f32>(-3.0e38), vec4<u32>(NO_PICK), vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
    let nr = poly_loop_len(c.r, c.f);
    let m = poly_loop_len(c.i, c.g);
    for (var j = 0u; j < m; j++) {
        let x = clip_inc(c, j);
        if clip_inside_ref(c, x, NO_PICK) {
            clip_offer(c, &s, x, j);
        }
    }
    let den = dot(ni, c.n);
    if den < -POLY_PIERCE_MIN {
        let di = dot(ni, clip_inc(c, 0u));
        for (var k = 0u; k < nr; k++) {
            let p = poly_loop_vert(c.r, c.f, k);
            let y = p + c.n * ((di - dot(ni, p)) / den);
            if clip_inside_inc(c, ni, y) {
                clip_offer(c, &s, y, (1u << 16u) | k);
            }
        }
    }
    for (var j = 0u; j < m; j++) {
        let x0 = clip_inc(c, j);
        let x1 = clip_inc(c, j + 1u);
        for (var k = 0u; k < nr; k++) {
            let p = poly_loop_vert(c.r, c.f, k);
            let o = normalize(cross(poly_loop_vert(c.r, c.f, k + 1u) - p, c.n));
            let s0 = dot(o, x0 - p);
            let s1 = dot(o, x1 - p);
            if (s0 > 0.0) == (s1 > 0.0) {
                continue;
            }
            let y = x0 + (x1 - x0) * (s0 / (s0 - s1));
            if clip_inside_ref(c, y, k) {
                clip_offer(c, &s, y, (2u << 16u) | (j << 8u) | k);
            }
        }
    }
    return s;
}

// Face f of r against i; `swapped` when r is B (the normal then runs from i to r).
fn poly_face_contact(r: Poly, i: Poly, f: u32, swapped: bool, env: f32, scale: f32) -> Manifold {
    var m: Manifold;
    m.count = 0u;
    let pl = poly_plane(r, f);
    var g = 0u;
    var gd = 3.0e38;
    var ni = vec3<f32>(0.0);
    for (var k = 0u; k < i.rec.y; k++) {
        let nk = quat_rotate_inv(r.q, quat_rotate(i.q, poly_plane(i, k).xyz));
        let dk = dot(nk, pl.xyz);
        if dk < gd {
            gd = dk;
            g = k;
            ni = nk;
        }
    }
    let r0 = poly_loop_vert(r, f, 0u);
    let u = normalize(poly_loop_vert(r, f, 1u) - r0);
    let c = Clip(r, i, f, g, pl.xyz, pl.w, POLY_CLIP_SLACK * scale, env, r0, u, cross(pl.xyz, u));
    let s = clip_run(c, ni);
    let n = quat_rotate(r.q, pl.xyz);
    let face = 4u * (select(0u, 64u, swapped) + f);
    for (var k = 0u; k < 4u; k++) {
        let id = s.id[k];
        let dup = (k > 0u && id == s.id.x) || (k > 1u && id == s.id.y) || (k > 2u && id == s.id.z);
        if id == NO_PICK || dup {
            continue;
        }
        let p = select(select(select(s.p0, s.p1, k == 1u), s.p2, k == 2u), s.p3, k == 3u);
        let x = r.c + quat_rotate(r.q, p.xyz - pl.xyz * (0.5 * p.w));
        manifold_push(&m, x, p.w, face + k);
    }
    m.n = select(n, -n, swapped);
    return m;
}

// Two polytopes (hull, box grain or solid box; one at least a hull): normal from bi to bj;
// pi, pj = (centre, bounding radius).
fn polytope_pair(bi: u32, bj: u32, pi: vec4<f32>, pj: vec4<f32>) -> Manifold {
    var none: Manifold;
    none.count = 0u;
    let env = params.envelope;
    let a = grain_poly(bi, pi);
    let b = grain_poly(bj, pj);
    let scale = max(pi.w, pj.w);
    let tol = AXIS_BIAS * scale;
    let fa = poly_face_query(a, b);
    if fa.s > env {
        return none;
    }
    let fb = poly_face_query(b, a);
    if fb.s > env {
        return none;
    }
    let use_b = fb.s > fa.s + tol;
    let face_sep = select(fa.s, fb.s, use_b);
    let e = poly_edge_query(a, b);
    if e.s > env {
        return none;
    }
    if e.s > face_sep + tol {
        return poly_edge_contact(a, b, e);
    }
    if use_b {
        return poly_face_contact(b, a, fb.i, true, env, scale);
    }
    return poly_face_contact(a, b, fa.i, false, env, scale);
}
// polytope:end
// convex:end

// convex:begin
// capsulehull:begin
// ---------------------------------------------------------------- capsule–hull
// Twin: reference::convex::capsule_hull (which explains it); in the hull's frame. Normal
// from the hull to the capsule; features 0 (one point) or 1, 2 (the segment clipped by a
// face). Written after the polytope code it shares (Poly, segments_closest).
const CAPSULE_FLAT_SIN: f32 = 0.05;
const CAPSULE_ON_FACE: f32 = 0.999;

// Whether x (hull frame, on face f's plane) lies inside its polygon (edges included).
fn poly_face_contains(h: Poly, f: u32, x: vec3<f32>) -> bool {
    let n = poly_plane(h, f).xyz;
    let m = poly_loop_len(h, f);
    for (var k = 0u; k < m; k++) {
        let a = poly_loop_vert(h, f, k);
        if dot(cross(poly_loop_vert(h, f, k + 1u) - a, x - a), n) < 0.0 {
            return false;
        }
    }
    return true;
}

// The segment p0–p1 clipped by face f's side planes: (t0, t1, 1) or (_, _, 0) when empty.
fn clip_to_face(h: Poly, f: u32, p0: vec3<f32>, p1: vec3<f32>) -> vec3<f32> {
    let n = poly_plane(h, f).xyz;
    let m = poly_loop_len(h, f);
    var t0 = 0.0;
    var t1 = 1.0;
    for (var k = 0u; k < m; k++) {
        let v = poly_loop_vert(h, f, k);
        let o = normalize(cross(poly_loop_vert(h, f, k + 1u) - v, n));
        let s0 = dot(o, p0 - v);
        let s1 = dot(o, p1 - v);
        if s0 > 0.0 && s1 > 0.0 {
            return vec3<f32>(0.0);
        }
        if s0 > 0.0 {
            t0 = max(t0, s0 / (s0 - s1));
        } else if s1 > 0.0 {
            t1 = min(t1, s0 / (s0 - s1));
        }
    }
    return vec3<f32>(t0, t1, select(0.0, 1.0, t0 <= t1));
}

// A point x (hull frame) at gap n·x − d − r from face (n, d), midway; pushed within env.
fn cap_face_point(m: ptr<function, Manifold>, pl: vec4<f32>, x: vec3<f32>, r: f32, env: f32, f: u32) {
    let gap = dot(pl.xyz, x) - pl.w - r;
    if gap <= env {
        manifold_push(m, x - pl.xyz * (r + 0.5 * gap), gap, f);
    }
}

// The segment clipped by face f: its ends within env (features 1, 2), or when the clip is
// empty the deeper end (feature 0). Hull frame.
fn capsule_on_face(h: Poly, f: u32, p0: vec3<f32>, p1: vec3<f32>, r: f32, env: f32) -> Manifold {
    var m: Manifold;
    m.count = 0u;
    let pl = poly_plane(h, f);
    m.n = pl.xyz;
    let t = clip_to_face(h, f, p0, p1);
    if t.z != 0.0 {
        cap_face_point(&m, pl, p0 + (p1 - p0) * t.x, r, env, 1u);
        cap_face_point(&m, pl, p0 + (p1 - p0) * t.y, r, env, 2u);
    } else {
        cap_face_point(&m, pl, select(p1, p0, dot(pl.xyz, p0) <= dot(pl.xyz, p1)), r, env, 0u);
    }
    return m;
}

// The core outside the hull: exact closest points over the faces the segment sees.
fn capsule_outside(h: Poly, p0: vec3<f32>, p1: vec3<f32>, r: f32, env: f32) -> Manifold {
    var none: Manifold;
    none.count = 0u;
    let a = p1 - p0;
    var bd = 3.0e38;
    var qh = vec3<f32>(0.0);
    var qs = vec3<f32>(0.0);
    for (var f = 0u; f < h.rec.y; f++) {
        let pl = poly_plane(h, f);
        if max(dot(pl.xyz, p0), dot(pl.xyz, p1)) - pl.w <= 0.0 {
            continue;
        }
        for (var e = 0u; e < 2u; e++) {
            let p = select(p0, p1, e == 1u);
            let s = dot(pl.xyz, p) - pl.w;
            if s > 0.0 && s < bd && poly_face_contains(h, f, p - pl.xyz * s) {
                bd = s;
                qh = p - pl.xyz * s;
                qs = p;
            }
        }
        let m = poly_loop_len(h, f);
        for (var k = 0u; k < m; k++) {
            let u = poly_loop_vert(h, f, k);
            let c = segments_closest(u, poly_loop_vert(h, f, k + 1u) - u, p0, a);
            let d = length(c[1] - c[0]);
            if d < bd {
                bd = d;
                qh = c[0];
                qs = c[1];
            }
        }
    }
    let gap = bd - r;
    if gap > env || bd <= 0.0 {
        return none;
    }
    let nl = (qs - qh) / bd;
    var fb = 0u;
    var db = -3.0e38;
    for (var f = 0u; f < h.rec.y; f++) {
        let d = dot(poly_plane(h, f).xyz, nl);
        if d > db {
            fb = f;
            db = d;
        }
    }
    if db > CAPSULE_ON_FACE && abs(dot(poly_plane(h, fb).xyz, a)) < CAPSULE_FLAT_SIN * length(a) {
        let m = capsule_on_face(h, fb, p0, p1, r, env);
        if m.count == 2u {
            return m;
        }
    }
    var m: Manifold;
    m.count = 0u;
    m.n = nl;
    manifold_push(&m, qs - nl * (r + 0.5 * gap), gap, 0u);
    return m;
}

// Capsule grain c against hull grain hb: normal from the hull to the capsule, world.
fn capsule_hull(c: u32, pc: vec4<f32>, hb: u32, ph: vec4<f32>, env: f32) -> Manifold {
    let h = grain_poly(hb, ph);
    let s = shapes[4u * info[c].w];
    let ax = quat_rotate_inv(h.q, quat_rotate(rot[c], vec3<f32>(0.0, 0.0, s.y)));
    let cl = quat_rotate_inv(h.q, pc.xyz - h.c);
    let p0 = cl - ax;
    let p1 = cl + ax;
    let r = s.x;
    let a = p1 - p0;
    var sf = -3.0e38;
    var ff = 0u;
    for (var f = 0u; f < h.rec.y; f++) {
        let pl = poly_plane(h, f);
        let sv = min(dot(pl.xyz, p0), dot(pl.xyz, p1)) - pl.w;
        if sv > sf {
            sf = sv;
            ff = f;
        }
    }
    var se = -3.0e38;
    var ee = 0u;
    var ne = vec3<f32>(0.0);
    for (var i = 0u; i < h.ne; i++) {
        let e = poly_edge(h, i);
        if dot(poly_plane(h, e.z).xyz, a) * dot(poly_plane(h, e.w).xyz, a) > 0.0 {
            continue;
        }
        let u = poly_vert(h, e.x);
        let w = poly_vert(h, e.y);
        let x = cross(w - u, a);
        let l = length(x);
        if l < POLY_PARALLEL_SIN * length(w - u) * length(a) {
            continue;
        }
        let n = select(x / l, -x / l, dot(x / l, u) < 0.0);
        let sv = dot(n, p0 - u);
        if sv > se {
            se = sv;
            ee = i;
            ne = n;
        }
    }
    var m: Manifold;
    m.count = 0u;
    if max(sf, se) - r > env {
        return m;
    }
    if sf > 0.0 || se > 0.0 {
        m = capsule_outside(h, p0, p1, r, env);
    } else if se > sf + AXIS_BIAS * length(a) {
        let e = poly_edge(h, ee);
        let u = poly_vert(h, e.x);
        let q = segments_closest(u, poly_vert(h, e.y) - u, p0, a);
        let gap = se - r;
        m.n = ne;
        manifold_push(&m, q[1] - ne * (r + 0.5 * gap), gap, 0u);
    } else {
        m = capsule_on_face(h, ff, p0, p1, r, env);
    }
    // To world: the normal and each point (fixed indices, see manifold_push).
    m.n = quat_rotate(h.q, m.n);
    m.p[0] = vec4<f32>(h.c + quat_rotate(h.q, m.p[0].xyz), m.p[0].w);
    m.p[1] = vec4<f32>(h.c + quat_rotate(h.q, m.p[1].xyz), m.p[1].w);
    return m;
}
// capsulehull:end
// convex:end
