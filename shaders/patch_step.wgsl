// Distributed planar LuGre, one time step: 32 patches per 256-wide workgroup, 8 lanes each
// (one SIMD fiber of lavapipe) striding over the patch's cells (441 cells of a 21x21 grid:
// 55 each), then a fixed-order sum of the 8 lanes' partials of the wrench and, for the
// implicit step, of the affine block (DESIGN §3). On lavapipe a workgroup barrier switches
// every fiber of the workgroup: one patch per workgroup with a 9-level tree cost ~10 barriers
// per patch. benches/patch.rs at 10⁴ patches (back-to-back runs on one lavapipe, machine
// shared, so indicative): 64 / 32 / 16 / 8 lanes
// per patch gave 1.4 / 2.8 / 2.6 / 2.9·10⁷ cell-updates/s against 1.0·10⁷ before.
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

@compute @workgroup_size(256)
fn step(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let k = group_index(wid, nwg) * PATCHES_PER_GROUP + lid / PATCH_LANES;
    let lane = lid % PATCH_LANES;
    // Every lane reaches the barriers of the reduction, patch or not.
    let live = k < params.count;
    let d = descs[min(k, params.count - 1u)];
    let kk = min(k, params.count - 1u);
    let t = twists[kk].xyz;
    let p = params;
    let tl = select(t, twists[p.count + kk].xyz, (p.flags & FLAG_LINEARISED) != 0u);
    let keep = (p.flags & FLAG_KEEP) != 0u;
    let implicit = (p.flags & FLAG_IMPLICIT) != 0u;
    var a = vec4<f32>(0.0);
    var b = vec4<f32>(0.0);
    var c = vec4<f32>(0.0);
    let n = select(0u, d.nx * d.ny, live);
    for (var i = lane; i < n; i += PATCH_LANES) {
        let w = weights[d.offset + i];
        if w == 0.0 {
            continue;
        }
        let r = cell_centre(d, i);
        let v = cell_velocity(t, r);
        let vl = cell_velocity(tl, r);
        let z0 = z[d.offset + i];
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
        if implicit {
            let aa = 1.0 / (1.0 + p.dt * kap);
            let s = p.sigma0 + p.sigma1 / p.dt;
            let c1 = s * aa * p.dt + p.sigma2;
            let c0 = s * aa * z0 - p.sigma1 * z0 / p.dt;
            l = c0 + c1 * v;
            if !keep {
                z[d.offset + i] = aa * (z0 + p.dt * v);
            }
            b += w * c1 * vec4<f32>(1.0, r.x, r.y, dot(r, r));
            c += w * vec4<f32>(c0, r.x * c0.y - r.y * c0.x, 0.0);
        } else {
            var dz = v - kap * z0;
            if (p.flags & FLAG_STABILITY) != 0u {
                let zs = vl * select(0.0, zs_len / vn, vn > 0.0);
                dz = min(abs(dz), abs((zs - z0) / p.dt)) * sign(dz);
            }
            l = p.sigma0 * z0 + p.sigma1 * dz + p.sigma2 * v;
            z[d.offset + i] = z0 + p.dt * dz;
        }
        a += w * vec4<f32>(l, r.x * l.y - r.y * l.x, 0.0);
    }
    let base = lid - lane;
    if implicit {
        reduce_lanes3(lid, lane, a, b, c);
        if live && lane == 0u {
            out[3u * k + 1u] = red_b[base];
            out[3u * k + 2u] = red_c[base];
        }
    } else {
        reduce_lanes1(lid, lane, a);
    }
    if live && lane == 0u {
        out[3u * k] = -d.f_n * red_a[base];
    }
}
