// Distributed planar LuGre, one time step: one invocation per patch, which walks its cells
// row by row and sums the wrench (and, for the implicit step, the affine block) in a fixed
// order: each row, then the row sums (book: Contact models, "Models as rows"). No workgroup memory and no barriers:
// on lavapipe a barrier switches every fiber of the workgroup and workgroup memory is
// accessed lane by lane, which made the former tree reduction over 256 invocations the
// larger part of the step.
// out[3k]   = (f_x, f_y, tau about the patch centre, 0)
// out[3k+1] = (S0, Sx, Sy, Srr) = sums of w c1 (1, x, y, x^2+y^2)      (implicit only)
// out[3k+2] = (sums of w c0_x, w c0_y, w (x c0_y - y c0_x), 0)          (implicit only)
// In a coupled solver (lugre_patch) the rate factors are frozen at the last step's twist:
// FLAG_LINEARISED takes kappa (and beta) from twists[count + k], the lagged twist, and
// FLAG_KEEP leaves the cells as they are (the affine block before the solve).

@group(0) @binding(0) var<uniform> params: PatchParams;
@group(0) @binding(1) var<storage, read> descs: array<PatchDesc>;
@group(0) @binding(2) var<storage, read> weights: array<f32>;
@group(0) @binding(3) var<storage, read> twists: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> z: array<vec2<f32>>;
@group(0) @binding(5) var<storage, read_write> out: array<vec4<f32>>;

// Patches per workgroup (src/patch/gpu.rs STEP_WG): small groups spread 10³ patches over
// the cores.
const STEP_WG: u32 = 64u;

// One cell's contribution to the three sums (b, c only for the implicit step).
struct CellSums {
    a: vec4<f32>,
    b: vec4<f32>,
    c: vec4<f32>,
}

// Updates cell i (unless FLAG_KEEP) at centre r under the twist t, rate factors at tl.
fn cell_update(p: PatchParams, i: u32, r: vec2<f32>, t: vec3<f32>, tl: vec3<f32>) -> CellSums {
    var s = CellSums(vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
    let v = cell_velocity(t, r);
    let vl = cell_velocity(tl, r);
    let z0 = z[i];
    let vn = length(vl);
    // One Stribeck evaluation per cell: κ = σ0|v|/g and z_ss = g v/(σ0|v|) share g.
    let g = stribeck(p, vn);
    var kap = p.sigma0 * vn / g;
    let zs_len = select(0.0, g / p.sigma0, vn > 0.0);
    if (p.flags & FLAG_EP) != 0u {
        let zn = length(z0);
        let cosine = dot(z0 / (zn + 1e-10), vl / (vn + 1e-10));
        kap *= beta_ep(zn, zs_len, cosine, p.z_ba_ratio);
    }
    var l: vec2<f32>;
    if (p.flags & FLAG_IMPLICIT) != 0u {
        let aa = 1.0 / (1.0 + p.dt * kap);
        let sg = p.sigma0 + p.sigma1 / p.dt;
        let c1 = sg * aa * p.dt + p.sigma2;
        let c0 = sg * aa * z0 - p.sigma1 * z0 / p.dt;
        l = c0 + c1 * v;
        if (p.flags & FLAG_KEEP) == 0u {
            z[i] = aa * (z0 + p.dt * v);
        }
        s.b = c1 * vec4<f32>(1.0, r.x, r.y, dot(r, r));
        s.c = vec4<f32>(c0, r.x * c0.y - r.y * c0.x, 0.0);
    } else {
        var dz = v - kap * z0;
        if (p.flags & FLAG_STABILITY) != 0u {
            let zs = vl * select(0.0, zs_len / vn, vn > 0.0);
            dz = min(abs(dz), abs((zs - z0) / p.dt)) * sign(dz);
        }
        l = p.sigma0 * z0 + p.sigma1 * dz + p.sigma2 * v;
        z[i] = z0 + p.dt * dz;
    }
    s.a = vec4<f32>(l, r.x * l.y - r.y * l.x, 0.0);
    return s;
}

@compute @workgroup_size(64)
fn step(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = gid.x + gid.y * nwg.x * STEP_WG;
    if k >= params.count {
        return;
    }
    let d = descs[k];
    let p = params;
    let t = twists[k].xyz;
    let tl = select(t, twists[p.count + k].xyz, (p.flags & FLAG_LINEARISED) != 0u);
    var a = vec4<f32>(0.0);
    var b = vec4<f32>(0.0);
    var c = vec4<f32>(0.0);
    // Cell centres as cell_centre() computes them, without its integer division.
    let hx = 0.5 - 0.5 * f32(d.nx);
    let hy = 0.5 - 0.5 * f32(d.ny);
    var i = d.offset;
    for (var iy = 0u; iy < d.ny; iy++) {
        let y = (f32(iy) + hy) * d.h;
        // Row sums first, then the rows: a two-level order keeps the f32 rounding of 441
        // terms near that of the former tree.
        var ra = vec4<f32>(0.0);
        var rb = vec4<f32>(0.0);
        var rc = vec4<f32>(0.0);
        for (var ix = 0u; ix < d.nx; ix++) {
            let w = weights[i];
            // Zero-weight cells (outside the outline) are neither updated nor summed.
            if w != 0.0 {
                let s = cell_update(p, i, vec2<f32>((f32(ix) + hx) * d.h, y), t, tl);
                ra += w * s.a;
                rb += w * s.b;
                rc += w * s.c;
            }
            i++;
        }
        a += ra;
        b += rb;
        c += rc;
    }
    out[3u * k] = -d.f_n * a;
    if (p.flags & FLAG_IMPLICIT) != 0u {
        out[3u * k + 1u] = b;
        out[3u * k + 2u] = c;
    }
}
