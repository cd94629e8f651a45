// Reduced planar LuGre (Arslan Waltersson & Karayiannidis §V): 3 bristle states per patch at the centre of
// pressure and the pre-computed limit surface (bilinear in theta, phi). One invocation
// per patch. out[k] = (f_x, f_y, tau about the CoP, 0).

struct ReducedDesc {
    r: f32,
    visc: f32,
    cop: vec2<f32>,
    delta: vec2<f32>,
    f_n: f32,
    n_ls: u32,
    offset: u32,
    ellipsoid: u32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> params: PatchParams;
@group(0) @binding(1) var<storage, read> rdescs: array<ReducedDesc>;
@group(0) @binding(2) var<storage, read> table: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> twists: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> zr: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> out: array<vec4<f32>>;

const PI: f32 = 3.14159265358979;

fn lookup(d: ReducedDesc, v: vec3<f32>) -> vec3<f32> {
    let n = f32(d.n_ls);
    var th = atan2(v.y, v.x);
    if v.z < 0.0 {
        th += PI;
    }
    th = th - 2.0 * PI * floor(th / (2.0 * PI));
    let a1 = min(th * 2.0 * n / PI, 4.0 * n);
    let a2 = min(atan2(length(v.xy), d.r * abs(v.z)) * 2.0 * n / PI, n);
    let i1 = min(u32(floor(a1)), 4u * d.n_ls - 1u);
    let i2 = min(u32(floor(a2)), d.n_ls - 1u);
    let d1 = a1 - f32(i1);
    let d2 = a2 - f32(i2);
    let np = d.n_ls + 1u;
    let base = d.offset + i1 * np + i2;
    let h = (1.0 - d1) * (1.0 - d2) * table[base].xyz + d1 * (1.0 - d2) * table[base + np].xyz
        + (1.0 - d1) * d2 * table[base + 1u].xyz + d1 * d2 * table[base + np + 1u].xyz;
    if v.z < 0.0 {
        return -h;
    }
    return h;
}

fn skew(d: ReducedDesc, v: vec3<f32>) -> vec2<f32> {
    let dn = length(d.delta);
    if dn == 0.0 {
        return vec2<f32>(0.0);
    }
    let pn = abs(d.delta) / dn;
    let nn = length(v.xy * pn);
    let s_n = 2.0 * atan2(d.r * abs(v.z), nn) / PI;
    return vec2<f32>(-s_n * d.delta.y, s_n * d.delta.x);
}

@compute @workgroup_size(256)
fn reduced(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = linear_index(gid, nwg);
    if k >= params.count {
        return;
    }
    let p = params;
    let d = rdescs[k];
    let tc = twists[k].xyz;
    // Twist at the CoP.
    let v = vec3<f32>(tc.x - tc.z * d.cop.y, tc.y + tc.z * d.cop.x, tc.z);
    var sk = vec2<f32>(0.0);
    if d.ellipsoid == 0u {
        sk = skew(d, v);
    }
    let av = vec3<f32>(v.x + sk.x * v.z, v.y + sk.y * v.z, d.r * d.r * v.z);
    let vn = sqrt(max(dot(v.xy, v.xy) + d.r * d.r * v.z * v.z + (sk.x * v.x + sk.y * v.y) * v.z, 0.0));
    let s = vec3<f32>(1.0, 1.0, d.r);
    var w = av;
    if d.ellipsoid == 0u {
        w = -s * lookup(d, v) * vn;
    }
    let g = stribeck(p, vn);
    var zs = vec3<f32>(0.0);
    if vn > 0.0 {
        zs = w * (g / (p.sigma0 * vn));
    }
    let visc = p.sigma2 * av * vec3<f32>(1.0, 1.0, d.visc);
    var l: vec3<f32>;
    if (p.flags & FLAG_STEADY) != 0u {
        l = p.sigma0 * zs + visc;
    } else {
        let z0 = zr[k].xyz;
        var b = 1.0;
        if (p.flags & FLAG_EP) != 0u {
            let zu = z0 / s;
            let wu = w / s;
            let zn = length(zu);
            let cosine = dot(zu / (zn + 1e-10), wu / (length(wu) + 1e-10));
            b = beta_ep(zn, length(zs / s), cosine, p.z_ba_ratio);
        }
        let kap = b * p.sigma0 * vn / g;
        var dz: vec3<f32>;
        var zf = z0;
        if (p.flags & FLAG_IMPLICIT) != 0u {
            let zn = (z0 + p.dt * w) / (1.0 + p.dt * kap);
            dz = (zn - z0) / p.dt;
            zf = zn;
        } else {
            dz = w - kap * z0;
            if (p.flags & FLAG_STABILITY) != 0u {
                dz = min(abs(dz), abs((zs - z0) / p.dt)) * sign(dz);
            }
        }
        zr[k] = vec4<f32>(z0 + p.dt * dz, 0.0);
        l = p.sigma0 * zf + p.sigma1 * dz + visc;
    }
    out[k] = vec4<f32>(-d.f_n * l, 0.0);
}
