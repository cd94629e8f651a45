// Collision, grain-grain: candidate pairs from the 27 neighbouring cells of the hashed grid,
// fused with the sphere-sphere narrow phase (no candidate-pair buffer is stored).
// count:    per grain i (A = body nb + i; threads take grains in slot order), the number of
//           contacts with grains j > i with gap <= envelope -> offs[nb*ng + i]. Sphere pairs
//           give one; pairs with a box give a manifold of up to 4 (common/collide.wgsl).
// (host)    exclusive scan of offs (walls' rows first, see collide_walls.wgsl).
// (grid)    collide_grid::finalize: contact count, overflow flag, needed size, indirect args.
// write:    the same loop writes the contacts at offs[nb*ng + i] + k, then sorts the row
//           by (body B, feature) (insertion sort; rows are short), so the list is sorted
//           by (A, B, feature).
// Each unordered pair is found exactly once: j > i, and a found j must lie in the very cell
// being visited (two neighbour cells may hash to the same slot).

@group(0) @binding(0) var<uniform> params: CollideParams;
@group(0) @binding(1) var<storage, read> rot: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> sorted_pos: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> sorted_idx: array<u32>;
@group(0) @binding(4) var<storage, read> starts: array<u32>;
@group(0) @binding(5) var<storage, read> info: array<vec4<u32>>;
@group(0) @binding(6) var<storage, read> materials: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> offs: array<u32>;
@group(0) @binding(8) var<storage, read_write> contacts: array<Contact>; // chunked(4)
// 4 vec4 per shape (src/collide/mod.rs, `shape_records`); box grains: [0].xyz = half extents;
// capsule grains: [0].xy = radius, half length.
@group(0) @binding(9) var<storage, read> shapes: array<vec4<f32>>;

// Wrapped grid: the T = 2^m slots form a periodic 2^bx x 2^by x 2^bz lattice of cells, so
// neighbouring cells get neighbouring slots (memory locality) and any cell, however far away,
// has a slot; cells that alias share a slot and are told apart by their coordinates.
fn sphere_gap(pi: vec4<f32>, pj: vec4<f32>) -> f32 {
    let d = pj.xyz - pi.xyz;
    return sqrt(dot(d, d)) - pi.w - pj.w;
}

fn pair_contact(bi: u32, bj: u32, pi: vec4<f32>, pj: vec4<f32>) -> Contact {
    let d = pj.xyz - pi.xyz;
    let dist = sqrt(dot(d, d));
    let gap = dist - pi.w - pj.w;
    var n = vec3<f32>(0.0, 0.0, 1.0);
    if dist > 0.0 {
        n = d / dist;
    }
    let ra = n * (pi.w + 0.5 * gap);
    let rb = ra - d;
    let ma = info[bi].y;
    let mb = info[bj].y;
    let mu = min(materials[ma].x, materials[mb].x);
    var c: Contact;
    c.n_gap = vec4<f32>(n, gap);
    c.ra = vec4<f32>(ra, mu);
    c.rb = vec4<f32>(rb, 0.0);
    c.ids = vec4<u32>(bi, bj, 0u, (ma << 16u) | (mb & 0xffffu));
    return c;
}

fn grain_obb(b: u32, p: vec4<f32>) -> Obb {
    return make_obb(p.xyz, rot[b], shapes[4u * info[b].w].xyz);
}

// Pairs with a box: the manifold (normal from bi to bj).
fn box_pair(bi: u32, bj: u32, pi: vec4<f32>, pj: vec4<f32>) -> Manifold {
    let env = params.grid.z;
    let ki = info[bi].z;
    let kj = info[bj].z;
    if ki == SHAPE_BOX && kj == SHAPE_BOX {
        return box_box(grain_obb(bi, pi), grain_obb(bj, pj), env);
    }
    if ki == SHAPE_BOX {
        return sphere_box(pj.xyz, pj.w, grain_obb(bi, pi), env);
    }
    var m = sphere_box(pi.xyz, pi.w, grain_obb(bj, pj), env);
    m.n = -m.n;
    return m;
}

// Writes the manifold's contacts from `at` (capacity-checked); returns their number.
fn write_manifold(bi: u32, bj: u32, pi: vec4<f32>, pj: vec4<f32>, m: Manifold, write: bool, at: u32) -> u32 {
    if !write {
        return m.count;
    }
    let ma = info[bi].y;
    let mb = info[bj].y;
    let mu = min(materials[ma].x, materials[mb].x);
    for (var k = 0u; k < m.count; k++) {
        if at + k < params.caps.x {
            let pk = manifold_point(m, k);
            let p = pk.xyz;
            var c: Contact;
            c.n_gap = vec4<f32>(m.n, pk.w);
            c.ra = vec4<f32>(p - pi.xyz, mu);
            c.rb = vec4<f32>(p - pj.xyz, 0.0);
            c.ids = vec4<u32>(bi, bj, manifold_feature(m, k), (ma << 16u) | (mb & 0xffffu));
            contacts_put(at + k, c);
        }
    }
    return m.count;
}

// A box pair's manifold with its patch (issue #11) when the pair has a patch model and the
// manifold is face–face: the points keep only their normal rows (μ = 0), the patch record
// follows them (feature PATCH_FEATURE sorts last in the pair).
fn write_manifold_or_patch(bi: u32, bj: u32, pi: vec4<f32>, pj: vec4<f32>, m: Manifold, write: bool, at: u32) -> u32 {
    if HAS_PATCHES && (materials[info[bi].y].y != 0.0 || materials[info[bj].y].y != 0.0) {
        let g = patch_geom(m);
        if g.ok {
            if write {
                let ma = info[bi].y;
                let mb = info[bj].y;
                let mu = min(materials[ma].x, materials[mb].x);
                for (var k = 0u; k <= m.count; k++) {
                    if at + k < params.caps.x {
                        var c: Contact;
                        if k == m.count {
                            c = patch_record(bi, bj, m.n, g, pi.xyz, pj.xyz, mu, (ma << 16u) | (mb & 0xffffu), patch_feature(materials[ma].y, materials[mb].y));
                        } else {
                            let p = m.p[k].xyz;
                            c.n_gap = vec4<f32>(m.n, m.p[k].w);
                            c.ra = vec4<f32>(p - pi.xyz, 0.0);
                            c.rb = vec4<f32>(p - pj.xyz, 0.0);
                            c.ids = vec4<u32>(bi, bj, m.f[k], (ma << 16u) | (mb & 0xffffu));
                        }
                        contacts_put(at + k, c);
                    }
                }
            }
            return m.count + 1u;
        }
    }
    return write_manifold(bi, bj, pi, pj, m, write, at);
}

// capsule:begin
// ---------------------------------------------------------------- capsule pairs
fn grain_capsule(b: u32, p: vec4<f32>) -> Capsule {
    return make_capsule(p.xyz, rot[b], shapes[4u * info[b].w]);
}

// Pairs with a capsule (common/collide_capsule.wgsl): normals from bi to bj.
fn capsule_pair(bi: u32, bj: u32, pi: vec4<f32>, pj: vec4<f32>) -> CapContacts {
    let env = params.grid.z;
    let first = info[bi].z == SHAPE_CAPSULE;
    let c = select(bj, bi, first);
    let o = select(bi, bj, first);
    let pc = select(pj, pi, first);
    let po = select(pi, pj, first);
    let ko = info[o].z;
    let cap = grain_capsule(c, pc);
    // Normals from the capsule to the other; flipped when the capsule is bj.
    var flip = !first;
    var m: CapContacts;
    if ko == SHAPE_CAPSULE {
        m = capsule_capsule(cap, grain_capsule(o, po), env);
    } else if HAS_BOXES && ko == SHAPE_BOX {
        m = capsule_box(cap, grain_obb(o, po), env);
        flip = !flip;
    } else {
        m = capsule_sphere(cap, po.xyz, po.w, env);
    }
    if flip {
        // Both slots (an unused one is never read): fixed indices, see cap_push.
        m.n[0] = -m.n[0];
        m.n[1] = -m.n[1];
    }
    return m;
}

fn write_capsule(bi: u32, bj: u32, pi: vec4<f32>, pj: vec4<f32>, m: CapContacts, write: bool, at: u32) -> u32 {
    if !write {
        return m.count;
    }
    let ma = info[bi].y;
    let mb = info[bj].y;
    let mu = min(materials[ma].x, materials[mb].x);
    for (var k = 0u; k < m.count; k++) {
        if at + k < params.caps.x {
            let second = k == 1u;
            let pk = select(m.p[0], m.p[1], second);
            let p = pk.xyz;
            var c: Contact;
            c.n_gap = vec4<f32>(select(m.n[0], m.n[1], second), pk.w);
            c.ra = vec4<f32>(p - pi.xyz, mu);
            c.rb = vec4<f32>(p - pj.xyz, 0.0);
            c.ids = vec4<u32>(bi, bj, select(m.f[0], m.f[1], second), (ma << 16u) | (mb & 0xffffu));
            contacts_put(at + k, c);
        }
    }
    return m.count;
}
// capsule:end

// convex:begin
// ---------------------------------------------------------------- convex hull grains
// Twin: src/reference/convex.rs. Sphere–hull; hull–hull and hull–box below (polytope
// pairs); clump members against a hull in the clump section. Record at
// shapes[4 * shape index], see common/collide_convex.wgsl.
fn hull_word(at: u32) -> u32 {
    return bitcast<u32>(shapes[at / 4u][at % 4u]);
}

// Closest point of face f's polygon (local frame) to x, which lies above its plane.
fn hull_face_closest(rec: vec4<u32>, f: u32, x: vec3<f32>) -> vec3<f32> {
    let pl = shapes[rec.w + f];
    let hd = bitcast<vec2<u32>>(shapes[rec.w + rec.y + f].xy);
    let lw = 4u * (rec.w + 2u * rec.y);
    let proj = x - pl.xyz * (dot(pl.xyz, x) - pl.w);
    var inside = true;
    var best = proj;
    var bd = 3.0e38;
    for (var k = 0u; k < hd.y; k++) {
        let a = shapes[rec.z + hull_word(lw + hd.x + k)].xyz;
        let b = shapes[rec.z + hull_word(lw + hd.x + (k + 1u) % hd.y)].xyz;
        if dot(cross(b - a, proj - a), pl.xyz) < 0.0 {
            inside = false;
        }
        let q = hull_seg_closest(a, b, x);
        let d = dot(x - q, x - q);
        if d < bd {
            bd = d;
            best = q;
        }
    }
    if inside {
        return proj;
    }
    return best;
}

// Sphere (centre cs, radius r) against hull grain h: normal from the hull to the sphere.
fn sphere_hull(cs: vec3<f32>, r: f32, h: u32, ph: vec4<f32>, env: f32) -> Manifold {
    var m: Manifold;
    m.count = 0u;
    let rec = bitcast<vec4<u32>>(shapes[4u * info[h].w]);
    let q = rot[h];
    let cl = quat_rotate_inv(q, cs - ph.xyz);
    var smax = -3.0e38;
    var fmax = 0u;
    for (var f = 0u; f < rec.y; f++) {
        let pl = shapes[rec.w + f];
        let s = dot(pl.xyz, cl) - pl.w;
        if s > smax {
            smax = s;
            fmax = f;
        }
    }
    if smax - r > env {
        return m;
    }
    var nl = shapes[rec.w + fmax].xyz;
    var ql = cl - nl * smax;
    var gap = smax - r;
    if smax > 0.0 {
        var bd = 3.0e38;
        for (var f = 0u; f < rec.y; f++) {
            let pl = shapes[rec.w + f];
            if dot(pl.xyz, cl) - pl.w <= 0.0 {
                continue;
            }
            let c = hull_face_closest(rec, f, cl);
            let d = dot(cl - c, cl - c);
            if d < bd {
                bd = d;
                ql = c;
            }
        }
        let dist = sqrt(bd);
        nl = (cl - ql) / dist;
        gap = dist - r;
    }
    if gap > env {
        return m;
    }
    m.n = quat_rotate(q, nl);
    manifold_push(&m, ph.xyz + quat_rotate(q, ql) + m.n * (0.5 * gap), gap, 0u);
    return m;
}

// A pair of a hull and a sphere, a hull or a box (normal from bi to bj).
fn convex_pair(bi: u32, bj: u32, pi: vec4<f32>, pj: vec4<f32>) -> Manifold {
    let env = params.grid.z;
    let ki = info[bi].z;
    let kj = info[bj].z;
    if (ki == SHAPE_CONVEX || ki == SHAPE_BOX) && (kj == SHAPE_CONVEX || kj == SHAPE_BOX) {
        return polytope_pair(bi, bj, pi, pj);
    }
    if ki == SHAPE_CONVEX {
        return sphere_hull(pj.xyz, pj.w, bi, pi, env);
    }
    var m = sphere_hull(pi.xyz, pi.w, bj, pj, env);
    m.n = -m.n;
    return m;
}

// Twin constants: src/reference/polytope.rs.
const POLY_PARALLEL_SIN: f32 = 0.005;
const POLY_CLIP_SLACK: f32 = 1e-5;
const POLY_PIERCE_MIN: f32 = 1e-2;
const POLY_EDGE_FEATURE: u32 = 512u;

// ---------------------------------------------------------------- polytope pairs
// Hull–hull and hull–box (twin src/reference/polytope.rs, which explains the algorithm and
// the feature ids). A polytope is a hull grain (record at 4·shape) or a box grain (its
// polytope record at 4·shape + 1, written when the scene has hulls); record [0] as above,
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
    let at = 4u * info[b].w + select(0u, 1u, info[b].z == SHAPE_BOX);
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

// Two polytope grains (hull or box, one at least a hull): normal from bi to bj.
fn polytope_pair(bi: u32, bj: u32, pi: vec4<f32>, pj: vec4<f32>) -> Manifold {
    var none: Manifold;
    none.count = 0u;
    let env = params.grid.z;
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
// convex:end

// ---------------------------------------------------------------- clumps
// f64 twin: src/reference/clumps.rs. A clump's members are spheres of the sphere narrow
// phase; contacts go to the clump body (lever arms from its centre of mass). Features:
// (member of A << 8) | member of B (a sphere is member 0); a member against a box: the
// member index. Members of one body are never paired (a body is never paired with itself).

// Shape record of a clump: [0] = (member count, first member's vec4 index) as u32 bits.
fn member_count(b: u32) -> u32 {
    if info[b].z == SHAPE_CLUMP {
        return bitcast<u32>(shapes[4u * info[b].w].x);
    }
    return 1u;
}

// Member k of grain b in world (centre, radius); a sphere is its own member 0.
fn member(b: u32, p: vec4<f32>, k: u32) -> vec4<f32> {
    if info[b].z != SHAPE_CLUMP {
        return p;
    }
    let m = shapes[bitcast<u32>(shapes[4u * info[b].w].y) + k];
    return vec4<f32>(p.xyz + quat_rotate(rot[b], m.xyz), m.w);
}

fn clump_contact(at: u32, bi: u32, bj: u32, x: vec3<f32>, y: vec3<f32>, n: vec3<f32>, p: vec3<f32>, gap: f32, f: u32) {
    if at >= params.caps.x {
        return;
    }
    let ma = info[bi].y;
    let mb = info[bj].y;
    var c: Contact;
    c.n_gap = vec4<f32>(n, gap);
    c.ra = vec4<f32>(p - x, min(materials[ma].x, materials[mb].x));
    c.rb = vec4<f32>(p - y, 0.0);
    c.ids = vec4<u32>(bi, bj, f, (ma << 16u) | (mb & 0xffffu));
    contacts_put(at, c);
}

// capsule:begin
// Members of clump c against capsule grain bi or bj (the other): capsule–sphere, normal
// from the capsule to the member, flipped to run from bi to bj; feature = member index.
fn clump_capsule(bi: u32, bj: u32, pi: vec4<f32>, pj: vec4<f32>, write: bool, at: u32) -> u32 {
    let a_cap = info[bi].z == SHAPE_CAPSULE;
    let c = select(bi, bj, a_cap);
    let pc = select(pi, pj, a_cap);
    let cap = grain_capsule(select(bj, bi, a_cap), select(pj, pi, a_cap));
    let sign = select(-1.0, 1.0, a_cap);
    var n = 0u;
    for (var k = 0u; k < member_count(c); k++) {
        let s = member(c, pc, k);
        let m = capsule_sphere(cap, s.xyz, s.w, params.grid.z);
        if m.count > 0u {
            if write {
                clump_contact(at + n, bi, bj, pi.xyz, pj.xyz, m.n[0] * sign, m.p[0].xyz, m.p[0].w, k);
            }
            n += 1u;
        }
    }
    return n;
}
// capsule:end

// convex:begin
// Members of clump c against hull grain bi or bj (sphere–hull, normal from the hull to the
// member, turned to run from bi to bj); feature = member index.
fn clump_hull(bi: u32, bj: u32, pi: vec4<f32>, pj: vec4<f32>, write: bool, at: u32) -> u32 {
    let a_hull = info[bi].z == SHAPE_CONVEX;
    let c = select(bi, bj, a_hull);
    let pc = select(pi, pj, a_hull);
    let sign = select(-1.0, 1.0, a_hull);
    var n = 0u;
    for (var k = 0u; k < member_count(c); k++) {
        let s = member(c, pc, k);
        let m = sphere_hull(s.xyz, s.w, select(bj, bi, a_hull), select(pj, pi, a_hull), params.grid.z);
        if m.count > 0u {
            if write {
                clump_contact(at + n, bi, bj, pi.xyz, pj.xyz, m.n * sign, m.p[0].xyz, m.p[0].w, k);
            }
            n += 1u;
        }
    }
    return n;
}
// convex:end

// cylinder:begin
// Members of clump c against cylinder grain bi or bj (cylinder–sphere, as clump_hull).
fn clump_cylinder(bi: u32, bj: u32, pi: vec4<f32>, pj: vec4<f32>, write: bool, at: u32) -> u32 {
    let a_cyl = info[bi].z == SHAPE_CYLINDER;
    let c = select(bi, bj, a_cyl);
    let pc = select(pi, pj, a_cyl);
    let y = select(bj, bi, a_cyl);
    let cy = make_cylinder(select(pj, pi, a_cyl).xyz, rot[y], shapes[4u * info[y].w]);
    let sign = select(-1.0, 1.0, a_cyl);
    var n = 0u;
    for (var k = 0u; k < member_count(c); k++) {
        let s = member(c, pc, k);
        let m = cylinder_sphere(cy, s.xyz, s.w, params.grid.z);
        if m.count > 0u {
            if write {
                clump_contact(at + n, bi, bj, pi.xyz, pj.xyz, m.n[0] * sign, m.p[0].xyz, m.p[0].w, k);
            }
            n += 1u;
        }
    }
    return n;
}
// cylinder:end

// Grains bi < bj, one at least a clump: member pairs (or members against a box, capsule,
// hull or cylinder).
fn clump_pair(bi: u32, bj: u32, pi: vec4<f32>, pj: vec4<f32>, write: bool, at: u32) -> u32 {
    let env = params.grid.z;
    var n = 0u;
    // capsule:begin
    if HAS_CAPSULES && (info[bi].z == SHAPE_CAPSULE || info[bj].z == SHAPE_CAPSULE) {
        return clump_capsule(bi, bj, pi, pj, write, at);
    }
    // capsule:end
    // convex:begin
    if HAS_CONVEX && (info[bi].z == SHAPE_CONVEX || info[bj].z == SHAPE_CONVEX) {
        return clump_hull(bi, bj, pi, pj, write, at);
    }
    // convex:end
    // cylinder:begin
    if HAS_CYLINDERS && (info[bi].z == SHAPE_CYLINDER || info[bj].z == SHAPE_CYLINDER) {
        return clump_cylinder(bi, bj, pi, pj, write, at);
    }
    // cylinder:end
    if HAS_BOXES && (info[bi].z == SHAPE_BOX || info[bj].z == SHAPE_BOX) {
        let a_box = info[bi].z == SHAPE_BOX;
        let c = select(bi, bj, a_box);
        let pc = select(pi, pj, a_box);
        let x = select(bj, bi, a_box);
        let obb = grain_obb(x, select(pj, pi, a_box));
        let sign = select(-1.0, 1.0, a_box);
        for (var k = 0u; k < member_count(c); k++) {
            let s = member(c, pc, k);
            let m = sphere_box(s.xyz, s.w, obb, env);
            if m.count > 0u {
                if write {
                    clump_contact(at + n, bi, bj, pi.xyz, pj.xyz, m.n * sign, m.p[0].xyz, m.p[0].w, k);
                }
                n += 1u;
            }
        }
        return n;
    }
    let na = member_count(bi);
    let nbm = member_count(bj);
    for (var a = 0u; a < na; a++) {
        let sa = member(bi, pi, a);
        for (var b = 0u; b < nbm; b++) {
            let sb = member(bj, pj, b);
            let d = sb.xyz - sa.xyz;
            let dist = sqrt(dot(d, d));
            let gap = dist - sa.w - sb.w;
            if gap > env {
                continue;
            }
            if write {
                var nrm = vec3<f32>(0.0, 0.0, 1.0);
                if dist > 0.0 {
                    nrm = d / dist;
                }
                let p = sa.xyz + nrm * (sa.w + 0.5 * gap);
                clump_contact(at + n, bi, bj, pi.xyz, pj.xyz, nrm, p, gap, (a << 8u) | b);
            }
            n += 1u;
        }
    }
    return n;
}

// cylinder:begin
// ---------------------------------------------------------------- cylinder pairs
// A cylinder and a sphere (Collide::new refuses the other partners;
// common/collide_cylinder.wgsl): normal from bi to bj.
fn cylinder_pair(bi: u32, bj: u32, pi: vec4<f32>, pj: vec4<f32>, write: bool, at: u32) -> u32 {
    let first = info[bi].z == SHAPE_CYLINDER;
    let c = select(bj, bi, first);
    let pc = select(pj, pi, first);
    let ps = select(pi, pj, first);
    let m = cylinder_sphere(make_cylinder(pc.xyz, rot[c], shapes[4u * info[c].w]), ps.xyz, ps.w, params.grid.z);
    if !write || m.count == 0u || at >= params.caps.x {
        return m.count;
    }
    let ma = info[bi].y;
    let mb = info[bj].y;
    let n = select(-m.n[0], m.n[0], first);
    let p = m.p[0].xyz;
    var ct: Contact;
    ct.n_gap = vec4<f32>(n, m.p[0].w);
    ct.ra = vec4<f32>(p - pi.xyz, min(materials[ma].x, materials[mb].x));
    ct.rb = vec4<f32>(p - pj.xyz, 0.0);
    ct.ids = vec4<u32>(bi, bj, 0u, (ma << 16u) | (mb & 0xffffu));
    contacts_put(at, ct);
    return m.count;
}
// cylinder:end

// Visits every grain j > i within the envelope of grain i; writes when `write`.
fn visit(i: u32, pi: vec4<f32>, write: bool, base: u32) -> u32 {
    let nb = params.counts.y;
    let c = cell_of(pi.xyz);
    let env = params.grid.z;
    let cap = params.caps.x;
    var n = 0u;
    for (var dz = -1; dz <= 1; dz++) {
        for (var dy = -1; dy <= 1; dy++) {
            for (var dx = -1; dx <= 1; dx++) {
                let cc = c + vec3<i32>(dx, dy, dz);
                let slot = cell_hash(cc);
                let e = starts[slot + 1u];
                for (var k = starts[slot]; k < e; k++) {
                    let j = sorted_idx[k];
                    if j <= i {
                        continue;
                    }
                    let pj = sorted_pos[k];
                    if sphere_gap(pi, pj) > env {
                        continue;
                    }
                    if any(cell_of(pj.xyz) != cc) {
                        continue;
                    }
                    if HAS_CLUMPS && (info[nb + i].z == SHAPE_CLUMP || info[nb + j].z == SHAPE_CLUMP) {
                        n += clump_pair(nb + i, nb + j, pi, pj, write, base + n);
                    } else if HAS_CONVEX && (info[nb + i].z == SHAPE_CONVEX || info[nb + j].z == SHAPE_CONVEX) {
                        // convex:begin
                        n += write_manifold(nb + i, nb + j, pi, pj, convex_pair(nb + i, nb + j, pi, pj), write, base + n);
                        // convex:end
                    } else if !(HAS_BOXES || HAS_CAPSULES || HAS_CYLINDERS) || (info[nb + i].z == SHAPE_SPHERE && info[nb + j].z == SHAPE_SPHERE) {
                        if write && base + n < cap {
                            contacts_put(base + n, pair_contact(nb + i, nb + j, pi, pj));
                        }
                        n += 1u;
                    } else if HAS_CYLINDERS && (info[nb + i].z == SHAPE_CYLINDER || info[nb + j].z == SHAPE_CYLINDER) {
                        // cylinder:begin
                        n += cylinder_pair(nb + i, nb + j, pi, pj, write, base + n);
                        // cylinder:end
                    } else if HAS_CAPSULES && (info[nb + i].z == SHAPE_CAPSULE || info[nb + j].z == SHAPE_CAPSULE) {
                        // capsule:begin
                        let m = capsule_pair(nb + i, nb + j, pi, pj);
                        n += write_capsule(nb + i, nb + j, pi, pj, m, write, base + n);
                        // capsule:end
                    } else if HAS_BOXES {
                        let m = box_pair(nb + i, nb + j, pi, pj);
                        n += write_manifold_or_patch(nb + i, nb + j, pi, pj, m, write, base + n);
                    }
                }
            }
        }
    }
    return n;
}

@compute @workgroup_size(256)
fn count(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = linear_index(gid, nwg);
    let nb = params.counts.y;
    let ng = params.counts.z;
    if t == 0u {
        offs[(nb + 1u) * ng] = 0u;
    }
    if t >= ng {
        return;
    }
    // Threads walk the grains in slot order (neighbouring threads, neighbouring cells).
    let i = sorted_idx[t];
    offs[nb * ng + i] = visit(i, sorted_pos[t], false, 0u);
}

@compute @workgroup_size(256)
fn write(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = linear_index(gid, nwg);
    let nb = params.counts.y;
    let ng = params.counts.z;
    if t >= ng {
        return;
    }
    let i = sorted_idx[t];
    let base = offs[nb * ng + i];
    let end = offs[nb * ng + i + 1u];
    if end > params.caps.x || end == base {
        return;
    }
    let n = min(visit(i, sorted_pos[t], true, base), end - base);
    // Insertion sort of the row by (body B, feature); a pair's features come ascending and
    // contiguous, and the sort is stable, so comparing B alone keeps them in order.
    for (var a = base + 1u; a < base + n; a++) {
        let c = contacts_at(a);
        var b = a;
        while b > base && contacts_at(b - 1u).ids.y > c.ids.y {
            contacts_put(b, contacts_at(b - 1u));
            b -= 1u;
        }
        contacts_put(b, c);
    }
}
