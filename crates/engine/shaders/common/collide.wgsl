// Pipeline-overridable: false when the scene has no box grains, so the driver drops the box
// narrow phase from the sphere pipelines (software rasterisers such as lavapipe execute both
// sides of a divergent `if` under a mask: a sphere pair would pay for the box path).
override HAS_BOXES: bool = true;
// Likewise false when the scene has no clump grains (the member loops drop out).
override HAS_CLUMPS: bool = true;
// False when the cell is not periodic: the pair search visits no seam images and takes the
// partner as stored (common/collide_periodic.wgsl).
override PERIODIC: bool = true;
// False when no grain can be parked (no inflow or outflow; src/collide/mod.rs, `Contents`):
// the per-candidate parked tests drop out of the pair search.
override PARKING: bool = true;

// Shared by every collide_* stage (prepended after the prelude).

// Cell coordinates are clamped so far-away grains cannot overflow i32.
const CELL_CLAMP: f32 = 1048576.0;

struct CollideParams {
    cell_size: f32,     // h
    inv_cell_size: f32, // 1/h
    envelope: f32,
    large_radius: f32, // grains with a larger bounding radius are not hashed (slot T)
    bodies: u32,
    boundaries: u32, // nb: the boundaries come first among the bodies
    grains: u32,     // ng
    table_size: u32, // T: hashed cell slots
    contact_capacity: u32,
    materials: u32,
    row_offsets: u32, // entries of the row-offset array `offs` ((nb + 1) ng + 1)
    _pad: u32,
    // Periodic cell (src/collide/periodic.rs): xyz = origin, and the period per axis
    // (0 = not periodic); see common/collide_periodic.wgsl.
    cell_origin: vec4<f32>,
    cell_period: vec4<f32>,
    // Lees–Edwards shear (zero without): xyz = the flow axis, w = γ̇ L_g; xyz = the gradient
    // axis, w = the offset δ of this step (common/collide_periodic.wgsl).
    shear_flow: vec4<f32>,
    shear_gradient: vec4<f32>,
}

fn cell_of(p: vec3<f32>) -> vec3<i32> {
    let c = floor(p * params.inv_cell_size);
    return vec3<i32>(clamp(c, vec3<f32>(-CELL_CLAMP), vec3<f32>(CELL_CLAMP)));
}

fn cell_hash(c: vec3<i32>) -> u32 {
    let m = countTrailingZeros(params.table_size);
    let bx = (m + 2u) / 3u;
    let by = (m + 1u) / 3u;
    let bz = m / 3u;
    let u = bitcast<vec3<u32>>(c);
    let x = u.x & ((1u << bx) - 1u);
    let y = u.y & ((1u << by) - 1u);
    let z = u.z & ((1u << bz) - 1u);
    // Each period of the lattice gets a pseudo-random offset, so long or scattered domains
    // do not pile many cells onto the same slots.
    let p = bitcast<vec3<u32>>(c >> vec3<u32>(bx, by, bz));
    var h = (p.x * 73856093u) ^ (p.y * 19349663u) ^ (p.z * 83492791u);
    h ^= h >> 16u;
    h *= 0x7feb352du;
    h ^= h >> 15u;
    return ((x | (y << bx) | (z << (bx + by))) + h) & (params.table_size - 1u);
}


// ---------------------------------------------------------------- box narrow phase
// f64 twin: src/reference/boxes.rs (same algorithm, decisions and feature ids; the choice
// of algorithms is explained in src/collide/mod.rs).

const AXIS_BIAS: f32 = 1e-3;
const PARALLEL_EPS: f32 = 1e-6;
const EDGE_FEATURE: u32 = 48u;

struct Obb {
    c: vec3<f32>,
    r: mat3x3<f32>, // columns: the box axes in world
    h: vec3<f32>,
}

// Up to 4 points sharing normal n (A -> B): p[k].xyz midpoint, p[k].w gap; features ascending.
struct Manifold {
    n: vec3<f32>,
    count: u32,
    p: array<vec4<f32>, 4>,
    f: array<u32, 4>,
}

fn make_obb(c: vec3<f32>, q: vec4<f32>, h: vec3<f32>) -> Obb {
    let r = mat3x3<f32>(
        quat_rotate(q, vec3<f32>(1.0, 0.0, 0.0)),
        quat_rotate(q, vec3<f32>(0.0, 1.0, 0.0)),
        quat_rotate(q, vec3<f32>(0.0, 0.0, 1.0)),
    );
    return Obb(c, r, h);
}

// Column i of a matrix value by selects: a dynamic index would make naga spill the
// matrix to a private variable, which llvmpipe keeps in per-lane scratch memory.
fn mcol(r: mat3x3<f32>, i: u32) -> vec3<f32> {
    return select(select(r[0], r[1], i == 1u), r[2], i == 2u);
}

fn sgn(x: f32) -> f32 {
    return select(-1.0, 1.0, x >= 0.0);
}

fn obb_vertex(b: Obb, k: u32) -> vec3<f32> {
    let s = vec3<f32>(
        select(-1.0, 1.0, (k & 1u) != 0u),
        select(-1.0, 1.0, (k & 2u) != 0u),
        select(-1.0, 1.0, (k & 4u) != 0u),
    );
    return b.c + b.r * (s * b.h);
}

fn obb_extent(b: Obb, l: vec3<f32>) -> f32 {
    return dot(b.h, abs(transpose(b.r) * l));
}

// Fixed-index selects, not m.p[count]: llvmpipe puts a dynamically indexed private
// array in per-lane scratch memory (see the book: Shapes, "Cost").
fn manifold_push(m: ptr<function, Manifold>, p: vec3<f32>, gap: f32, f: u32) {
    let v = vec4<f32>(p, gap);
    let c = (*m).count;
    (*m).p[0] = select((*m).p[0], v, c == 0u);
    (*m).p[1] = select((*m).p[1], v, c == 1u);
    (*m).p[2] = select((*m).p[2], v, c == 2u);
    (*m).p[3] = select((*m).p[3], v, c == 3u);
    (*m).f[0] = select((*m).f[0], f, c == 0u);
    (*m).f[1] = select((*m).f[1], f, c == 1u);
    (*m).f[2] = select((*m).f[2], f, c == 2u);
    (*m).f[3] = select((*m).f[3], f, c == 3u);
    (*m).count += 1u;
}

// Point k (< 4) of a manifold, by fixed-index selects (see manifold_push).
fn manifold_point(m: Manifold, k: u32) -> vec4<f32> {
    return select(select(select(m.p[0], m.p[1], k == 1u), m.p[2], k == 2u), m.p[3], k == 3u);
}

fn manifold_feature(m: Manifold, k: u32) -> u32 {
    return select(select(select(m.f[0], m.f[1], k == 1u), m.f[2], k == 2u), m.f[3], k == 3u);
}

fn box_box(a: Obb, b: Obb, env: f32) -> Manifold {
    var m: Manifold;
    m.count = 0u;
    let d = b.c - a.c;
    let scale = max(max(max(a.h.x, a.h.y), a.h.z), max(max(b.h.x, b.h.y), b.h.z));
    let tol = AXIS_BIAS * scale;
    var best_a = -3.0e38;
    var ia = 0u;
    var best_b = -3.0e38;
    var ib = 0u;
    for (var i = 0u; i < 3u; i++) {
        let la = mcol(a.r, i);
        let sa = abs(dot(d, la)) - obb_extent(a, la) - obb_extent(b, la);
        if sa > best_a {
            best_a = sa;
            ia = i;
        }
    }
    for (var i = 0u; i < 3u; i++) {
        let lb = mcol(b.r, i);
        let sb = abs(dot(d, lb)) - obb_extent(a, lb) - obb_extent(b, lb);
        if sb > best_b {
            best_b = sb;
            ib = i;
        }
    }
    var face_sep = best_a;
    var use_b = false;
    if best_b > best_a + tol {
        face_sep = best_b;
        use_b = true;
    }
    if face_sep > env {
        return m;
    }
    var edge_sep = -3.0e38;
    var ei = 0u;
    var ej = 0u;
    var el = vec3<f32>(0.0);
    for (var i = 0u; i < 3u; i++) {
        for (var j = 0u; j < 3u; j++) {
            let c = cross(mcol(a.r, i), mcol(b.r, j));
            let l2 = dot(c, c);
            if l2 < PARALLEL_EPS {
                continue;
            }
            let l = c / sqrt(l2);
            let s = abs(dot(d, l)) - obb_extent(a, l) - obb_extent(b, l);
            if s > edge_sep {
                edge_sep = s;
                ei = i;
                ej = j;
                el = l;
            }
        }
    }
    if edge_sep > env {
        return m;
    }
    if edge_sep > face_sep + tol {
        return edge_edge(a, b, ei, ej, el);
    }
    if use_b {
        return face_clip(b, a, ib, true, env);
    }
    return face_clip(a, b, ia, false, env);
}

fn edge_edge(a: Obb, b: Obb, i: u32, j: u32, l: vec3<f32>) -> Manifold {
    var m: Manifold;
    m.count = 0u;
    let d = b.c - a.c;
    let n = l * sgn(dot(d, l));
    var pa = a.c;
    var pb = b.c;
    var signs = 0u;
    var bit = 0u;
    for (var k = 0u; k < 3u; k++) {
        if k != i {
            let s = sgn(dot(n, mcol(a.r, k)));
            pa += mcol(a.r, k) * (s * a.h[k]);
            signs |= select(0u, 1u, s > 0.0) << bit;
            bit += 1u;
        }
    }
    for (var k = 0u; k < 3u; k++) {
        if k != j {
            let s = -sgn(dot(n, mcol(b.r, k)));
            pb += mcol(b.r, k) * (s * b.h[k]);
            signs |= select(0u, 1u, s > 0.0) << bit;
            bit += 1u;
        }
    }
    let ea = mcol(a.r, i);
    let eb = mcol(b.r, j);
    let r = pb - pa;
    let c = dot(ea, eb);
    let den = 1.0 - c * c;
    let e = dot(ea, r);
    let f = dot(eb, r);
    var s = clamp((e - c * f) / den, -a.h[i], a.h[i]);
    let t = clamp(c * s - f, -b.h[j], b.h[j]);
    s = clamp(c * t + e, -a.h[i], a.h[i]);
    let qa = pa + ea * s;
    let qb = pb + eb * t;
    m.n = n;
    manifold_push(&m, 0.5 * (qa + qb), dot(qb - qa, n), EDGE_FEATURE + 16u * (3u * i + j) + signs);
    return m;
}

// An up-to-8-gon in named registers: a private array indexed by a loop counter lives in
// per-lane scratch memory on llvmpipe (as an array, the clipping alone made box–sphere
// detection several times slower; book: Shapes, "Cost").
struct Poly8 {
    v0: vec3<f32>,
    v1: vec3<f32>,
    v2: vec3<f32>,
    v3: vec3<f32>,
    v4: vec3<f32>,
    v5: vec3<f32>,
    v6: vec3<f32>,
    v7: vec3<f32>,
}

fn poly_get(p: Poly8, k: u32) -> vec3<f32> {
    let lo = select(select(select(p.v0, p.v1, k == 1u), p.v2, k == 2u), p.v3, k == 3u);
    let hi = select(select(select(p.v4, p.v5, k == 5u), p.v6, k == 6u), p.v7, k == 7u);
    return select(lo, hi, k >= 4u);
}

fn poly_set(p: ptr<function, Poly8>, k: u32, x: vec3<f32>) {
    (*p).v0 = select((*p).v0, x, k == 0u);
    (*p).v1 = select((*p).v1, x, k == 1u);
    (*p).v2 = select((*p).v2, x, k == 2u);
    (*p).v3 = select((*p).v3, x, k == 3u);
    (*p).v4 = select((*p).v4, x, k == 4u);
    (*p).v5 = select((*p).v5, x, k == 5u);
    (*p).v6 = select((*p).v6, x, k == 6u);
    (*p).v7 = select((*p).v7, x, k == 7u);
}

// Sutherland-Hodgman of an up-to-8-gon against sign(lim) * p[axis] <= |lim|.
fn clip_poly(poly: ptr<function, Poly8>, n: u32, axis: u32, lim: f32) -> u32 {
    var out: Poly8;
    var m = 0u;
    let s = sgn(lim);
    for (var k = 0u; k < n; k++) {
        let p = poly_get(*poly, k);
        let q = poly_get(*poly, (k + 1u) % n);
        let pi = s * p[axis] <= abs(lim);
        let qi = s * q[axis] <= abs(lim);
        if pi && m < 8u {
            poly_set(&out, m, p);
            m += 1u;
        }
        if pi != qi && m < 8u {
            let t = (lim - p[axis]) / (q[axis] - p[axis]);
            poly_set(&out, m, p + (q - p) * t);
            m += 1u;
        }
    }
    *poly = out;
    return m;
}

fn face_clip(rf: Obb, inc: Obb, i: u32, swapped: bool, env: f32) -> Manifold {
    var m: Manifold;
    m.count = 0u;
    let d = inc.c - rf.c;
    let side = sgn(dot(d, mcol(rf.r, i)));
    let nr = mcol(rf.r, i) * side;
    let iu = (i + 1u) % 3u;
    let iv = (i + 2u) % 3u;
    let u = mcol(rf.r, iu);
    let v = mcol(rf.r, iv);
    let hu = rf.h[iu];
    let hv = rf.h[iv];
    let cf = rf.c + nr * rf.h[i];
    var k = 0u;
    var best = -1.0;
    for (var mm = 0u; mm < 3u; mm++) {
        let x = abs(dot(mcol(inc.r, mm), nr));
        if x > best {
            best = x;
            k = mm;
        }
    }
    let s = -sgn(dot(mcol(inc.r, k), nr));
    let ku = (k + 1u) % 3u;
    let kv = (k + 2u) % 3u;
    let fc = inc.c + mcol(inc.r, k) * (s * inc.h[k]);
    let eu = mcol(inc.r, ku) * inc.h[ku];
    let ev = mcol(inc.r, kv) * inc.h[kv];
    let q0 = fc - eu - ev - cf;
    let q1 = fc + eu - ev - cf;
    let q2 = fc + eu + ev - cf;
    let q3 = fc - eu + ev - cf;
    var poly: Poly8;
    poly.v0 = vec3<f32>(dot(q0, u), dot(q0, v), dot(q0, nr));
    poly.v1 = vec3<f32>(dot(q1, u), dot(q1, v), dot(q1, nr));
    poly.v2 = vec3<f32>(dot(q2, u), dot(q2, v), dot(q2, nr));
    poly.v3 = vec3<f32>(dot(q3, u), dot(q3, v), dot(q3, nr));
    var n = 4u;
    n = clip_poly(&poly, n, 0u, hu);
    n = clip_poly(&poly, n, 0u, -hu);
    n = clip_poly(&poly, n, 1u, hv);
    n = clip_poly(&poly, n, 1u, -hv);
    let face = select(0u, 6u, swapped) + 2u * i + select(0u, 1u, side < 0.0);
    // Corners (-1,-1), (1,-1), (1,1), (-1,1); `taken` holds the picked indices as bits.
    var taken = 0u;
    for (var ci = 0u; ci < 4u; ci++) {
        let corner = vec2<f32>(select(-1.0, 1.0, ci == 1u || ci == 2u), select(-1.0, 1.0, ci >= 2u));
        var pick = NO_PICK;
        var score = -3.0e38;
        for (var pi = 0u; pi < n; pi++) {
            let p = poly_get(poly, pi);
            if p.z > env {
                continue;
            }
            let sc = corner.x * p.x / hu + corner.y * p.y / hv;
            if sc > score {
                score = sc;
                pick = pi;
            }
        }
        if pick == NO_PICK || (taken & (1u << pick)) != 0u {
            continue;
        }
        taken |= 1u << pick;
        let p = poly_get(poly, pick);
        manifold_push(&m, cf + u * p.x + v * p.y + nr * (0.5 * p.z), p.z, 4u * face + ci);
    }
    m.n = select(nr, -nr, swapped);
    return m;
}

const NO_PICK: u32 = 0xffffffffu;

// Indices (as a bit mask) of the up to 4 smallest gaps <= env; ties to the lower index.
fn deepest8(g: array<f32, 8>, env: f32) -> u32 {
    var mask = 0u;
    for (var k = 0u; k < 8u; k++) {
        if g[k] > env {
            continue;
        }
        var below = 0u;
        for (var j = 0u; j < 8u; j++) {
            if g[j] < g[k] || (g[j] == g[k] && j < k) {
                below += 1u;
            }
        }
        if below < 4u {
            mask |= 1u << k;
        }
    }
    return mask;
}

// The box's vertices against the half-space dot(x - x0, n) >= 0 (n from the plane to the box).
fn box_plane(n: vec3<f32>, x0: vec3<f32>, b: Obb, env: f32, offset: u32) -> Manifold {
    var m: Manifold;
    m.count = 0u;
    m.n = n;
    var g: array<f32, 8>;
    for (var k = 0u; k < 8u; k++) {
        g[k] = dot(obb_vertex(b, k) - x0, n);
    }
    let mask = deepest8(g, env);
    for (var k = 0u; k < 8u; k++) {
        if (mask & (1u << k)) != 0u {
            manifold_push(&m, obb_vertex(b, k) - n * (0.5 * g[k]), g[k], offset + k);
        }
    }
    return m;
}

// Sphere against box: normal from the box to the sphere, gap (count = 0 beyond env).
fn sphere_box(cs: vec3<f32>, r: f32, b: Obb, env: f32) -> Manifold {
    var m: Manifold;
    m.count = 0u;
    let l = transpose(b.r) * (cs - b.c);
    let q = clamp(l, -b.h, b.h);
    let dl = l - q;
    let dist = length(dl);
    var nl = vec3<f32>(0.0);
    var gap = 0.0;
    var ql = q;
    if dist > 0.0 {
        nl = dl / dist;
        gap = dist - r;
    } else {
        let depth = b.h - abs(l);
        var axis = 0u;
        if depth.y < depth[axis] {
            axis = 1u;
        }
        if depth.z < depth[axis] {
            axis = 2u;
        }
        nl[axis] = sgn(l[axis]);
        ql = l;
        ql[axis] = nl[axis] * b.h[axis];
        gap = -depth[axis] - r;
    }
    if gap > env {
        return m;
    }
    let n = b.r * nl;
    m.n = n;
    manifold_push(&m, b.c + b.r * ql + n * (0.5 * gap), gap, 0u);
    return m;
}

// ---------------------------------------------------------------- contact patches (book: Contact patches)
// Pipeline-overridable: true only when a material has a patch friction model (lugre_reduced),
// so scenes without one compile none of the patch path. f64 twin: src/patch/couple.rs.
override HAS_PATCHES: bool = false;

// The feature of a pair's patch record: sorts after every point contact of the pair.
const PATCH_FEATURE: u32 = 0xffffffffu;
// The feature of a lugre_patch (distributed) record, from the materials' patch kinds
// (materials[].y: 1 reduced, 2 distributed; the larger wins).
fn patch_feature(ka: f32, kb: f32) -> u32 {
    return select(PATCH_FEATURE, PATCH_FEATURE - 1u, max(ka, kb) >= 2.0);
}

// A patch from a face–face manifold (≥ 3 points), uniform pressure over the convex polygon
// of its points: x = valid (1/0), centre (world, area centroid), r = mean distance from the
// centre (the limit-surface radius τ_max / (μ f_N)), visc = mean squared distance / r².
struct PatchGeom {
    ok: bool,
    centre: vec3<f32>,
    r: f32,
    visc: f32,
}

// ∫ of |ρ| over the triangle (0, a, b) in the plane: (d³/3) |F(t_b/d) − F(t_a/d)| with d the
// distance of the edge line from 0, t the positions along it, F(x) = (x√(1+x²) + asinh x)/2.
fn tri_mean_dist(a: vec2<f32>, b: vec2<f32>) -> f32 {
    let e = b - a;
    let l = length(e);
    if l <= 0.0 {
        return 0.0;
    }
    let d = abs(a.x * e.y - a.y * e.x) / l;
    if d <= 0.0 {
        return 0.0;
    }
    let xa = dot(a, e) / (l * d);
    let xb = dot(b, e) / (l * d);
    let fa = 0.5 * (xa * sqrt(1.0 + xa * xa) + asinh(xa));
    let fb = 0.5 * (xb * sqrt(1.0 + xb * xb) + asinh(xb));
    return d * d * d / 3.0 * abs(fb - fa);
}

fn patch_geom(m: Manifold) -> PatchGeom {
    var g = PatchGeom(false, vec3<f32>(0.0), 0.0, 0.0);
    let k = m.count;
    if k < 3u {
        return g;
    }
    let u = tangent_u(m.n);
    let w = tangent_w(m.n);
    var mean = vec3<f32>(0.0);
    for (var i = 0u; i < k; i++) {
        mean += m.p[i].xyz;
    }
    mean /= f32(k);
    var q: array<vec2<f32>, 4>;
    var ang: array<f32, 4>;
    var ext = 0.0;
    for (var i = 0u; i < k; i++) {
        let d = m.p[i].xyz - mean;
        q[i] = vec2<f32>(dot(d, u), dot(d, w));
        ang[i] = atan2(q[i].y, q[i].x);
        ext = max(ext, dot(q[i], q[i]));
    }
    // Counter-clockwise order (insertion sort by angle about the mean).
    for (var i = 1u; i < k; i++) {
        var j = i;
        while j > 0u && ang[j - 1u] > ang[j] {
            let ta = ang[j];
            ang[j] = ang[j - 1u];
            ang[j - 1u] = ta;
            let tq = q[j];
            q[j] = q[j - 1u];
            q[j - 1u] = tq;
            j -= 1u;
        }
    }
    var area = 0.0;
    var c = vec2<f32>(0.0);
    for (var i = 1u; i + 1u < k; i++) {
        let e1 = q[i] - q[0];
        let e2 = q[i + 1u] - q[0];
        let a = 0.5 * (e1.x * e2.y - e1.y * e2.x);
        area += a;
        c += a * (q[0] + q[i] + q[i + 1u]) / 3.0;
    }
    if !(area > 1e-4 * ext) {
        return g;
    }
    c /= area;
    var mdist = 0.0;
    var polar = 0.0;
    for (var i = 0u; i < k; i++) {
        let a = q[i] - c;
        let b = q[(i + 1u) % k] - c;
        mdist += tri_mean_dist(a, b);
        polar += abs(a.x * b.y - a.y * b.x) / 12.0 * (dot(a, a) + dot(b, b) + dot(a, b));
    }
    g.ok = true;
    g.centre = mean + c.x * u + c.y * w;
    g.r = mdist / area;
    g.visc = polar / area / (g.r * g.r);
    return g;
}

// The patch record (src/patch/couple.rs): n_gap = (n, visc), ra = (centre − x_A, μ),
// rb = (centre − x_B, r), ids = (A, B, patch_feature, materials).
fn patch_record(a: u32, b: u32, n: vec3<f32>, g: PatchGeom, xa: vec3<f32>, xb: vec3<f32>, mu: f32, mats: u32, feature: u32) -> Contact {
    var c: Contact;
    c.n_gap = vec4<f32>(n, g.visc);
    c.ra = vec4<f32>(g.centre - xa, mu);
    c.rb = vec4<f32>(g.centre - xb, g.r);
    c.ids = vec4<u32>(a, b, feature, mats);
    return c;
}
