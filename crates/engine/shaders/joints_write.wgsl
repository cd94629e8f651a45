// Joints (book: Joints; src/joints, src/model/rows "Joints"): per joint row block, from the
// bodies' current poses, the constraint record appended after this step's contacts
// (contacts[n_contacts + j]) and its right-hand side offset (rhs[n_contacts + j].xyz):
// drift stabilisation C/dt clamped to ±v_recover (bilateral) or max(C/dt, −v_recover)
// (unilateral: limits, rope), or the motor's target. The solver adds G v* at assembly.
// CPU twin: `reference::joints`.
//
// Block definition (5 vec4, see `joints::Block`): anchor A (local; world for the world) + A,
// anchor B + B, frame q_A, frame q_B (joint axis = frame z), (p0, p1, p2, kind).

struct JointParams {
    blocks: u32,
    capacity: u32, // constraints (contacts + joint blocks) the solver's arrays hold
    _pad0: u32,
    _pad1: u32,
    dt: f32,
    recovery_speed: f32,
    _pad2: f32,
    _pad3: f32,
}

@group(0) @binding(0) var<uniform> params: JointParams;
@group(0) @binding(1) var<storage, read> blocks: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> pos: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> rot: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> counts: array<u32>;
@group(0) @binding(5) var<storage, read_write> contacts: array<Contact>; // chunked(4)
@group(0) @binding(6) var<storage, read_write> rhs: array<vec4<f32>>;

// Must match src/joints (and the flags in shaders/common/solve.wgsl).
const WORLD: u32 = 0xffffffffu;
const JOINT_BIT: u32 = 0x80000000u;
const JOINT_ANGULAR: u32 = 0x40000000u;
const PROJ_LOWER: u32 = 8u; // 1 << 3
const PROJ_BOX: u32 = 16u; // 2 << 3
const OVERFLOW_CONTACTS: u32 = 2u;

const K_POINT: u32 = 0u;
const K_POINT_PERP: u32 = 1u;
const K_ANGLE3: u32 = 2u;
const K_ANGLE2: u32 = 3u;
const K_ANGLE1: u32 = 4u;
const K_DISTANCE: u32 = 5u;
const K_LIN_LOWER: u32 = 6u;
const K_LIN_UPPER: u32 = 7u;
const K_ANG_LOWER: u32 = 8u;
const K_ANG_UPPER: u32 = 9u;
const K_LIN_MOTOR: u32 = 10u;
const K_ANG_MOTOR: u32 = 11u;

const IDENTITY: vec4<f32> = vec4<f32>(0.0, 0.0, 0.0, 1.0);

fn body_pos(b: u32) -> vec3<f32> {
    return select(pos[min(b, arrayLength(&pos) - 1u)].xyz, vec3<f32>(0.0), b == WORLD);
}

fn body_rot(b: u32) -> vec4<f32> {
    return select(rot[min(b, arrayLength(&rot) - 1u)], IDENTITY, b == WORLD);
}

fn bilateral(c: f32) -> f32 {
    let v = params.recovery_speed;
    return clamp(c / params.dt, -v, v);
}

fn unilateral(c: f32) -> f32 {
    return max(c / params.dt, -params.recovery_speed);
}

// Hinge angle of frame B about frame A's z, in (−π, π].
fn hinge_angle(fa: vec4<f32>, fb: vec4<f32>) -> f32 {
    var q = quat_mul(vec4<f32>(-fa.xyz, fa.w), fb);
    if q.w < 0.0 {
        q = -q;
    }
    return 2.0 * atan2(q.z, q.w);
}

// A unit vector along d, or `fallback` when d is (nearly) zero.
fn unit_or(d: vec3<f32>, fallback: vec3<f32>) -> vec3<f32> {
    let l = length(d);
    return select(fallback, d / l, l > 1e-12);
}

// Motor offset: velocity target (p0 = 0): −target; position target (p0 = 1): (x − target)/dt.
fn motor_offset(p: vec4<f32>, x: f32) -> f32 {
    return select(-p.y, (x - p.y) / params.dt, p.x != 0.0);
}

// Box projection flag and bound F_max dt (none when F_max is not positive or infinite).
fn motor_box(fmax: f32) -> vec2<u32> {
    let b = fmax * params.dt;
    let on = fmax > 0.0 && b < 3.0e38;
    return vec2<u32>(select(0u, PROJ_BOX, on), bitcast<u32>(select(0.0, b, on)));
}

@compute @workgroup_size(256)
fn write(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let j = linear_index(gid, nwg);
    let nb = params.blocks;
    let cap = params.capacity;
    let first = counts[0];
    if j == 0u {
        // The joint rows count as needed constraints, so a regrowth makes room for them.
        counts[2] = counts[2] + nb;
        if first + nb > cap {
            counts[1] = counts[1] | OVERFLOW_CONTACTS;
        }
    }
    if j >= nb || first + j >= cap {
        return;
    }
    let d0 = blocks[5u * j];
    let d1 = blocks[5u * j + 1u];
    let a = bitcast<u32>(d0.w);
    let b = bitcast<u32>(d1.w);
    let prm = blocks[5u * j + 4u];
    let kind = bitcast<u32>(prm.w);
    let xa = body_pos(a);
    let xb = body_pos(b);
    let qa = body_rot(a);
    let qb = body_rot(b);
    let fa = quat_mul(qa, blocks[5u * j + 2u]);
    let fb = quat_mul(qb, blocks[5u * j + 3u]);
    let pa = xa + quat_rotate(qa, d0.xyz);
    let pb = xb + quat_rotate(qb, d1.xyz);
    let za = quat_rotate(fa, vec3<f32>(0.0, 0.0, 1.0));
    // Linear rows: lever arms to B's anchor from both centres (exact for axes fixed in A).
    let ra = pb - xa;
    let rb = pb - xb;
    var n = za;
    var flags = JOINT_BIT;
    var off = vec3<f32>(0.0);
    var bound = 0u;
    let d = pb - pa;
    switch kind {
        case K_POINT, K_POINT_PERP: {
            // Point: rows along the line between the body centres (the world: its anchor) and
            // across it — for spheres the principal directions of the block's N_ii, so the
            // per-row scaling separates stretch (m⁻¹) from swing (m⁻¹ + r²/I). Prismatic: z.
            if kind == K_POINT {
                let line = select(ra - rb, -rb, a == WORLD);
                n = unit_or(line, za);
            }
            let e = vec3<f32>(dot(d, n), dot(d, tangent_u(n)), dot(d, tangent_w(n)));
            off = vec3<f32>(bilateral(e.x), bilateral(e.y), bilateral(e.z));
            flags |= select(7u, 6u, kind == K_POINT_PERP);
        }
        case K_ANGLE3: {
            var q = quat_mul(fb, vec4<f32>(-fa.xyz, fa.w));
            if q.w < 0.0 {
                q = -q;
            }
            let th = 2.0 * q.xyz;
            off = vec3<f32>(bilateral(dot(th, n)), bilateral(dot(th, tangent_u(n))), bilateral(dot(th, tangent_w(n))));
            flags |= JOINT_ANGULAR | 7u;
        }
        case K_ANGLE2: {
            let c = cross(za, quat_rotate(fb, vec3<f32>(0.0, 0.0, 1.0)));
            off = vec3<f32>(0.0, bilateral(dot(c, tangent_u(n))), bilateral(dot(c, tangent_w(n))));
            flags |= JOINT_ANGULAR | 6u;
        }
        case K_ANGLE1: {
            let xa_ = quat_rotate(fa, vec3<f32>(1.0, 0.0, 0.0));
            let yb = quat_rotate(fb, vec3<f32>(0.0, 1.0, 0.0));
            n = unit_or(cross(yb, xa_), za);
            off = vec3<f32>(bilateral(dot(xa_, yb)), 0.0, 0.0);
            flags |= JOINT_ANGULAR | 1u;
        }
        case K_DISTANCE: {
            // n from B's anchor to A's: the row's C = L − |d| ≥ 0 is the rope's "gap".
            n = unit_or(-d, za);
            let c = prm.x - length(d);
            let rope = prm.y != 0.0;
            off.x = select(bilateral(c), unilateral(c), rope);
            flags |= 1u | select(0u, PROJ_LOWER, rope);
        }
        case K_LIN_LOWER, K_LIN_UPPER: {
            let s = dot(d, za);
            let up = kind == K_LIN_UPPER;
            n = select(za, -za, up);
            off.x = unilateral(select(s - prm.x, prm.x - s, up));
            flags |= 1u | PROJ_LOWER;
        }
        case K_ANG_LOWER, K_ANG_UPPER: {
            let th = hinge_angle(fa, fb);
            let up = kind == K_ANG_UPPER;
            n = select(za, -za, up);
            off.x = unilateral(select(th - prm.x, prm.x - th, up));
            flags |= JOINT_ANGULAR | 1u | PROJ_LOWER;
        }
        case K_LIN_MOTOR: {
            off.x = motor_offset(prm, dot(d, za));
            let bx = motor_box(prm.z);
            flags |= 1u | bx.x;
            bound = bx.y;
        }
        default: { // K_ANG_MOTOR
            off.x = motor_offset(prm, hinge_angle(fa, fb));
            let bx = motor_box(prm.z);
            flags |= JOINT_ANGULAR | 1u | bx.x;
            bound = bx.y;
        }
    }
    var rec: Contact;
    rec.n_gap = vec4<f32>(n, 0.0);
    rec.ra = vec4<f32>(ra, bitcast<f32>(bound));
    rec.rb = vec4<f32>(rb, 0.0);
    rec.ids = vec4<u32>(a, b, j, flags);
    contacts_put(first + j, rec);
    rhs[first + j] = vec4<f32>(off, 0.0);
}
