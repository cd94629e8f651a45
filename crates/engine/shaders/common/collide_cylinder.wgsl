
// ---------------------------------------------------------------- cylinder narrow phase
// f64 twin: src/reference/cylinder.rs (same algorithm, decisions and feature ids; the
// choice of algorithms is explained there). A cylinder: centre c, unit axis a (body z),
// body x and y as u, v, half length hl, radius r.

// Pipeline-overridable: false when the scene has no cylinder grains (see HAS_CAPSULES);
// such scenes' pipelines are also built without the `cylinder:begin` … `cylinder:end`
// sections (src/collide/mod.rs, `stage_source`).
override HAS_CYLINDERS: bool = true;

// cylinder:begin

const CYL_FLAT: f32 = 0.01;

struct Cylinder {
    c: vec3<f32>,
    a: vec3<f32>,
    u: vec3<f32>,
    v: vec3<f32>,
    hl: f32,
    r: f32,
}

// Up to 8 contacts (against one plane: two flat discs within the envelope of a thin
// cylinder), each with its own normal: p[k].xyz point (midway), p[k].w gap.
struct CylContacts {
    count: u32,
    p: array<vec4<f32>, 8>,
    n: array<vec3<f32>, 8>,
    f: array<u32, 8>,
}

fn make_cylinder(c: vec3<f32>, q: vec4<f32>, s: vec4<f32>) -> Cylinder {
    return Cylinder(
        c,
        quat_rotate(q, vec3<f32>(0.0, 0.0, 1.0)),
        quat_rotate(q, vec3<f32>(1.0, 0.0, 0.0)),
        quat_rotate(q, vec3<f32>(0.0, 1.0, 0.0)),
        s.y,
        s.x,
    );
}

fn cyl_end(cy: Cylinder, e: u32) -> vec3<f32> {
    return cy.c + cy.a * select(cy.hl, -cy.hl, e == 0u);
}

// Rim point of disc e farthest along d (the disc centre when d is along the axis).
fn cyl_rim_support(cy: Cylinder, e: u32, d: vec3<f32>) -> vec3<f32> {
    let w = d - cy.a * dot(d, cy.a);
    let l = length(w);
    if l > 1e-12 {
        return cyl_end(cy, e) + w * (cy.r / l);
    }
    return cyl_end(cy, e);
}

fn cyl_push(m: ptr<function, CylContacts>, p: vec3<f32>, n: vec3<f32>, gap: f32, f: u32, env: f32) {
    if gap <= env && (*m).count < 8u {
        (*m).p[(*m).count] = vec4<f32>(p, gap);
        (*m).n[(*m).count] = n;
        (*m).f[(*m).count] = f;
        (*m).count += 1u;
    }
}

// Surface point q against the half-space dot(x - x0, n) >= 0.
fn cyl_plane_point(m: ptr<function, CylContacts>, q: vec3<f32>, n: vec3<f32>, x0: vec3<f32>, f: u32, env: f32) {
    let gap = dot(q - x0, n);
    cyl_push(m, q - n * (0.5 * gap), n, gap, f, env);
}

// 4 rim points per flat end disc (offset + 4e + k), else each disc's deepest rim point
// (offset + 8 + e); features ascend.
fn cylinder_plane(cy: Cylinder, n: vec3<f32>, x0: vec3<f32>, env: f32, offset: u32) -> CylContacts {
    var m: CylContacts;
    m.count = 0u;
    let an = dot(cy.a, n);
    let flat = 1.0 - an * an < CYL_FLAT * CYL_FLAT;
    if flat {
        var dirs = array<vec3<f32>, 4>(cy.u, cy.v, -cy.u, -cy.v);
        for (var e = 0u; e < 2u; e++) {
            for (var k = 0u; k < 4u; k++) {
                let q = cyl_end(cy, e) + dirs[k] * cy.r;
                cyl_plane_point(&m, q, n, x0, offset + 4u * e + k, env);
            }
        }
    } else {
        for (var e = 0u; e < 2u; e++) {
            cyl_plane_point(&m, cyl_rim_support(cy, e, -n), n, x0, offset + 8u + e, env);
        }
    }
    return m;
}

// Normal from the cylinder to the sphere; feature 0.
fn cylinder_sphere(cy: Cylinder, s: vec3<f32>, rs: f32, env: f32) -> CylContacts {
    var m: CylContacts;
    m.count = 0u;
    let p = s - cy.c;
    let z = dot(p, cy.a);
    let pr = p - cy.a * z;
    let rho = length(pr);
    var radial = cy.u;
    if rho > 0.0 {
        radial = pr / rho;
    }
    let sz = select(-1.0, 1.0, z >= 0.0);
    var q: vec3<f32>;
    var n: vec3<f32>;
    if abs(z) <= cy.hl && rho <= cy.r {
        if cy.r - rho < cy.hl - abs(z) {
            q = cy.c + cy.a * z + radial * cy.r;
            n = radial;
        } else {
            q = cy.c + pr + cy.a * (sz * cy.hl);
            n = cy.a * sz;
        }
    } else {
        q = cy.c + cy.a * clamp(z, -cy.hl, cy.hl) + radial * min(rho, cy.r);
        let d = s - q;
        let dist = length(d);
        n = radial;
        if dist > 0.0 {
            n = d / dist;
        }
    }
    let gap = dot(s - q, n) - rs;
    cyl_push(&m, q + n * (0.5 * gap), n, gap, 0u, env);
    return m;
}

// Radial unit direction (world) and distance of x from a cylinder container's axis.
fn cyl_radial(x: vec3<f32>, xa: vec3<f32>, q: vec4<f32>) -> vec4<f32> {
    let l = quat_rotate_inv(q, x - xa).xy;
    let rho = length(l);
    var d = vec2<f32>(1.0, 0.0);
    if rho > 0.0 {
        d = l / rho;
    }
    return vec4<f32>(quat_rotate(q, vec3<f32>(d, 0.0)), rho);
}

// Side wall of a cylinder container (axis local z) per end disc (features e), normals
// inwards; the floor and lid are planes (collide_walls.wgsl, features 10 + .., 20 + ..).
fn cylinder_container_side(cy: Cylinder, xa: vec3<f32>, q: vec4<f32>, rad: f32, env: f32) -> CylContacts {
    var m: CylContacts;
    m.count = 0u;
    for (var e = 0u; e < 2u; e++) {
        let d0 = cyl_radial(cyl_end(cy, e), xa, q);
        let d1 = cyl_radial(cyl_rim_support(cy, e, d0.xyz), xa, q);
        let pw = cyl_rim_support(cy, e, d1.xyz);
        let dr = cyl_radial(pw, xa, q);
        let gap = rad - dr.w;
        cyl_push(&m, pw + dr.xyz * (0.5 * gap), -dr.xyz, gap, e, env);
    }
    return m;
}
// cylinder:end
