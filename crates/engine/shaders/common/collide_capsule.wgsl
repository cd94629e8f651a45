
// ---------------------------------------------------------------- capsule narrow phase
// f64 twin: src/reference/capsule.rs (same algorithm, decisions and feature ids; the
// choice of algorithms is explained there). A capsule: centre c, unit axis a (body z),
// segment half length hl, radius r.

// Pipeline-overridable: false when the scene has no capsule grains (see HAS_BOXES).
// Such scenes' pipelines are also built without the text between the `capsule:begin` and
// `capsule:end` markers (here and in the collide stages; src/collide/mod.rs,
// `stage_source`): the driver would otherwise compile the capsule code before dropping it.
override HAS_CAPSULES: bool = true;

// capsule:begin

const CAP_PARALLEL_EPS: f32 = 1e-6;
const CAP_FACE_PARALLEL: f32 = 0.02;

struct Capsule {
    c: vec3<f32>,
    a: vec3<f32>,
    hl: f32,
    r: f32,
}

// Up to 2 contacts, each with its own normal: p[k].xyz point (midway), p[k].w gap.
struct CapContacts {
    count: u32,
    p: array<vec4<f32>, 2>,
    n: array<vec3<f32>, 2>,
    f: array<u32, 2>,
}

fn make_capsule(c: vec3<f32>, q: vec4<f32>, s: vec4<f32>) -> Capsule {
    return Capsule(c, quat_rotate(q, vec3<f32>(0.0, 0.0, 1.0)), s.y, s.x);
}

fn cap_end(cap: Capsule, e: u32) -> vec3<f32> {
    return cap.c + cap.a * select(cap.hl, -cap.hl, e == 0u);
}

// Fixed-index selects, not m.p[count]: llvmpipe keeps a dynamically indexed private array
// in per-lane scratch memory (book: Shapes, "Cost").
fn cap_push(m: ptr<function, CapContacts>, p: vec3<f32>, n: vec3<f32>, gap: f32, f: u32) {
    let v = vec4<f32>(p, gap);
    let first = (*m).count == 0u;
    let second = (*m).count == 1u;
    (*m).p[0] = select((*m).p[0], v, first);
    (*m).p[1] = select((*m).p[1], v, second);
    (*m).n[0] = select((*m).n[0], n, first);
    (*m).n[1] = select((*m).n[1], n, second);
    (*m).f[0] = select((*m).f[0], f, first);
    (*m).f[1] = select((*m).f[1], f, second);
    (*m).count += 1u;
}

// Point q (radius r) against point s (radius rs): pushes when within env.
fn cap_point_point(m: ptr<function, CapContacts>, q: vec3<f32>, r: f32, s: vec3<f32>, rs: f32, fallback: vec3<f32>, f: u32, env: f32) {
    let d = s - q;
    let dist = length(d);
    var n = fallback;
    if dist > 0.0 {
        n = d / dist;
    }
    let gap = dist - r - rs;
    if gap <= env {
        cap_push(m, q + n * (r + 0.5 * gap), n, gap, f);
    }
}

// Normal from the capsule to the sphere.
fn capsule_sphere(cap: Capsule, s: vec3<f32>, rs: f32, env: f32) -> CapContacts {
    var m: CapContacts;
    m.count = 0u;
    let t = clamp(dot(s - cap.c, cap.a), -cap.hl, cap.hl);
    cap_point_point(&m, cap.c + cap.a * t, cap.r, s, rs, tangent_u(cap.a), 0u, env);
    return m;
}

// Closest parameters (s, t) of two centred segments (clamp, recompute, clamp).
fn seg_seg(c1: vec3<f32>, a1: vec3<f32>, h1: f32, c2: vec3<f32>, a2: vec3<f32>, h2: f32, par: bool) -> vec2<f32> {
    let r = c2 - c1;
    let c = dot(a1, a2);
    let den = 1.0 - c * c;
    let e = dot(a1, r);
    let f = dot(a2, r);
    var s0 = 0.0;
    if !par {
        s0 = (e - c * f) / den;
    }
    let s = clamp(s0, -h1, h1);
    let t = clamp(c * s - f, -h2, h2);
    return vec2<f32>(clamp(c * t + e, -h1, h1), t);
}

// Normal from A to B.
fn capsule_capsule(a: Capsule, b: Capsule, env: f32) -> CapContacts {
    var m: CapContacts;
    m.count = 0u;
    let cr = cross(a.a, b.a);
    let par = dot(cr, cr) < CAP_PARALLEL_EPS;
    let fallback = tangent_u(a.a);
    if par {
        let u0 = dot(cap_end(b, 0u) - a.c, a.a);
        let u1 = dot(cap_end(b, 1u) - a.c, a.a);
        let lo = max(min(u0, u1), -a.hl);
        let hi = min(max(u0, u1), a.hl);
        if lo < hi {
            for (var k = 0u; k < 2u; k++) {
                let s = select(hi, lo, k == 0u);
                let pa = a.c + a.a * s;
                let t = clamp(dot(pa - b.c, b.a), -b.hl, b.hl);
                cap_point_point(&m, pa, a.r, b.c + b.a * t, b.r, fallback, 1u + k, env);
            }
            return m;
        }
    }
    let st = seg_seg(a.c, a.a, a.hl, b.c, b.a, b.hl, par);
    cap_point_point(&m, a.c + a.a * st.x, a.r, b.c + b.a * st.y, b.r, fallback, 0u, env);
    return m;
}

fn sdf_box(p: vec3<f32>, h: vec3<f32>) -> f32 {
    let q = abs(p) - h;
    return length(max(q, vec3<f32>(0.0))) + min(max(max(q.x, q.y), q.z), 0.0);
}

// Parameter u in [0, 1] along p0 -> p0 + d closest to the box edge e0 -> e0 + ed.
fn seg_edge_param(p0: vec3<f32>, d: vec3<f32>, e0: vec3<f32>, ed: vec3<f32>) -> f32 {
    let ld = length(d);
    let le = length(ed);
    let ad = d / ld;
    let ae = ed / le;
    let cr = cross(ad, ae);
    let par = dot(cr, cr) < CAP_PARALLEL_EPS;
    let st = seg_seg(p0 + d * 0.5, ad, 0.5 * ld, e0 + ed * 0.5, ae, 0.5 * le, par);
    return clamp(st.x / ld + 0.5, 0.0, 1.0);
}

// The segment's deepest point against the box (box frame p0, d): parameter u in [0, 1].
fn deepest_param(p0: vec3<f32>, d: vec3<f32>, h: vec3<f32>) -> f32 {
    var best = sdf_box(p0, h);
    var bu = 0.0;
    // Candidates u = 1 then the 12 edges' closest parameters, each tried as it is found
    // (no candidate array: see cap_push).
    let s1 = sdf_box(p0 + d * 1.0, h);
    if s1 < best {
        best = s1;
        bu = 1.0;
    }
    for (var i = 0u; i < 3u; i++) {
        let j = (i + 1u) % 3u;
        let k = (i + 2u) % 3u;
        for (var sg = 0u; sg < 4u; sg++) {
            var e0 = vec3<f32>(0.0);
            e0[i] = -h[i];
            e0[j] = select(-h[j], h[j], (sg & 1u) != 0u);
            e0[k] = select(-h[k], h[k], (sg & 2u) != 0u);
            var ed = vec3<f32>(0.0);
            ed[i] = 2.0 * h[i];
            let c = seg_edge_param(p0, d, e0, ed);
            let s = sdf_box(p0 + d * c, h);
            if s < best {
                best = s;
                bu = c;
            }
        }
    }
    let ld = length(d);
    for (var i = 0u; i < 3u; i++) {
        if abs(d[i]) > 1e-12 * ld {
            let u = clamp(-p0[i] / d[i], 0.0, 1.0);
            let s = sdf_box(p0 + d * u, h);
            if s < best {
                best = s;
                bu = u;
            }
        }
    }
    return bu;
}

// Normal from the box to the capsule.
fn capsule_box(cap: Capsule, b: Obb, env: f32) -> CapContacts {
    var m: CapContacts;
    m.count = 0u;
    let rt = transpose(b.r);
    let p0 = rt * (cap_end(cap, 0u) - b.c);
    let d = rt * (cap_end(cap, 1u) - b.c) - p0;
    let u = deepest_param(p0, d, b.h);
    let pl = p0 + d * u;
    let ex = abs(pl) - b.h;
    let outside = select(0u, 1u, ex.x > 0.0) + select(0u, 1u, ex.y > 0.0) + select(0u, 1u, ex.z > 0.0);
    let al = rt * cap.a;
    var axis = 0u;
    if outside == 1u {
        axis = select(select(2u, 1u, ex.y > 0.0), 0u, ex.x > 0.0);
    } else {
        let depth = b.h - abs(pl);
        if depth.y < depth[axis] {
            axis = 1u;
        }
        if depth.z < depth[axis] {
            axis = 2u;
        }
    }
    if outside <= 1u && abs(al[axis]) < CAP_FACE_PARALLEL {
        return cap_face_pair(cap, b, p0, d, pl, axis, env);
    }
    let sb = sphere_box(b.c + b.r * pl, cap.r, b, env);
    if sb.count > 0u {
        cap_push(&m, sb.p[0].xyz, sb.n, sb.p[0].w, 0u);
    }
    return m;
}

// The segment clipped to the slab of face `axis`: its two ends against the face plane.
fn cap_face_pair(cap: Capsule, b: Obb, p0: vec3<f32>, d: vec3<f32>, pl: vec3<f32>, axis: u32, env: f32) -> CapContacts {
    var m: CapContacts;
    m.count = 0u;
    let side = sgn(pl[axis]);
    var lo = 0.0;
    var hi = 1.0;
    let ld = length(d);
    for (var kk = 1u; kk < 3u; kk++) {
        let k = (axis + kk) % 3u;
        if abs(d[k]) > 1e-12 * ld {
            let t0 = (-b.h[k] - p0[k]) / d[k];
            let t1 = (b.h[k] - p0[k]) / d[k];
            lo = max(lo, min(t0, t1));
            hi = min(hi, max(t0, t1));
        }
    }
    var nl = vec3<f32>(0.0);
    nl[axis] = side;
    let n = b.r * nl;
    for (var k = 0u; k < 2u; k++) {
        if k == 1u && hi <= lo {
            break;
        }
        let q = p0 + d * select(hi, lo, k == 0u);
        let gap = side * q[axis] - b.h[axis] - cap.r;
        if gap <= env {
            cap_push(&m, b.c + b.r * q - n * (cap.r + 0.5 * gap), n, gap, 1u + k);
        }
    }
    return m;
}

// The two ends against the half-space dot(x - x0, n) >= 0 (n towards the capsule).
fn capsule_plane(cap: Capsule, n: vec3<f32>, x0: vec3<f32>, env: f32, offset: u32) -> CapContacts {
    var m: CapContacts;
    m.count = 0u;
    for (var e = 0u; e < 2u; e++) {
        let q = cap_end(cap, e);
        let gap = dot(q - x0, n) - cap.r;
        if gap <= env {
            cap_push(&m, q - n * (cap.r + 0.5 * gap), n, gap, offset + e);
        }
    }
    return m;
}
// capsule:end
