//! f64 CPU twins of the distributed and reduced models: the oracle for the GPU stages.

use super::limit::LimitSurface;
use super::{beta, AffineWrench, Integrator, LugreParams, PatchShape, Twist, Wrench};

/// A patch under a normal force.
#[derive(Clone, Debug, PartialEq)]
pub struct Patch {
    pub shape: PatchShape,
    /// Normal force f_N (N).
    pub f_n: f64,
}

fn norm2(v: [f64; 2]) -> f64 {
    (v[0] * v[0] + v[1] * v[1]).sqrt()
}

/// Steady-state deflection z* = g(|v|) v / (σ0 |v|) (eq. 11); 0 at rest.
pub fn z_steady(p: &LugreParams, v: [f64; 2]) -> [f64; 2] {
    let vn = norm2(v);
    if vn == 0.0 {
        return [0.0; 2];
    }
    let s = p.g(vn) / (p.sigma0 * vn);
    [v[0] * s, v[1] * s]
}

/// Rate factor κ with ż = v − κ z (eq. 15): β σ0 |v| / g(|v|).
pub fn kappa(p: &LugreParams, z: [f64; 2], v: [f64; 2]) -> f64 {
    let vn = norm2(v);
    let b = if p.elasto_plastic {
        beta(&z, &z_steady(p, v), &v, p.z_ba_ratio)
    } else {
        1.0
    };
    b * p.sigma0 * vn / p.g(vn)
}

/// One cell over one step: returns the cell force per unit normal load (the force the
/// body exerts on the bristles, `l` of eq. 9) and the new deflection.
pub fn cell_step(
    p: &LugreParams,
    z: [f64; 2],
    v: [f64; 2],
    dt: f64,
    int: Integrator,
) -> ([f64; 2], [f64; 2]) {
    let k = kappa(p, z, v);
    match int {
        Integrator::Explicit => {
            let mut dz = [v[0] - k * z[0], v[1] - k * z[1]];
            if p.stability {
                let zs = z_steady(p, v);
                for d in 0..2 {
                    let lim = ((zs[d] - z[d]) / dt).abs();
                    dz[d] = dz[d].abs().min(lim) * dz[d].signum();
                }
            }
            let l = [0, 1].map(|d| p.sigma0 * z[d] + p.sigma1 * dz[d] + p.sigma2 * v[d]);
            (l, [z[0] + dt * dz[0], z[1] + dt * dz[1]])
        }
        Integrator::Implicit => {
            let (c0, c1) = cell_affine(p, z, k, dt);
            let zn = [0, 1].map(|d| (z[d] + dt * v[d]) / (1.0 + dt * k));
            ([c0[0] + c1 * v[0], c0[1] + c1 * v[1]], zn)
        }
    }
}

/// The implicit cell force `l = c0 + c1 v⁺` for a frozen rate factor κ (book: Contact models, "Models as rows"):
/// z⁺ = a (z + dt v⁺), a = 1/(1 + dt κ), l = σ0 z⁺ + σ1 (z⁺ − z)/dt + σ2 v⁺.
pub fn cell_affine(p: &LugreParams, z: [f64; 2], kappa: f64, dt: f64) -> ([f64; 2], f64) {
    let a = 1.0 / (1.0 + dt * kappa);
    let s = p.sigma0 + p.sigma1 / dt;
    let c1 = s * a * dt + p.sigma2;
    let c0 = [0, 1].map(|d| s * a * z[d] - p.sigma1 * z[d] / dt);
    (c0, c1)
}

/// Steady-state cell force per unit normal load (eq. 12): g(|v|) v̂ + σ2 v.
pub fn cell_steady(p: &LugreParams, v: [f64; 2]) -> [f64; 2] {
    let zs = z_steady(p, v);
    [0, 1].map(|d| p.sigma0 * zs[d] + p.sigma2 * v[d])
}

/// Sums cell forces `l_i` into the wrench on the body (eqs. 13–14).
fn wrench_of(patch: &Patch, mut l: impl FnMut(usize, [f64; 2]) -> [f64; 2]) -> Wrench {
    let (mut fx, mut fy, mut tau) = (0.0, 0.0, 0.0);
    for (i, w) in patch.shape.weights.iter().enumerate() {
        if *w == 0.0 {
            continue;
        }
        let c = patch.shape.cell(i);
        let li = l(i, c);
        fx -= w * li[0];
        fy -= w * li[1];
        tau -= w * (c[0] * li[1] - c[1] * li[0]);
    }
    let f = patch.f_n;
    Wrench::about_centre(f * fx, f * fy, f * tau, patch.shape.cop)
}

/// Sliding velocity `v + ω × ρ` of the cell at `c` under the twist `t`.
pub fn cell_velocity(t: Twist, c: [f64; 2]) -> [f64; 2] {
    [t.vx - t.omega * c[1], t.vy + t.omega * c[0]]
}

/// The bilinear blend of the paper's steady-state evaluation: when the centre of rotation
/// lies inside the grid, the four pure rotations about the surrounding cell corners with
/// their bilinear weights; otherwise the twist itself with weight 1.
pub fn steady_blend(shape: &PatchShape, t: Twist) -> Vec<(f64, Twist)> {
    if t.omega == 0.0 {
        return vec![(1.0, t)];
    }
    let cor = [-t.vy / t.omega, t.vx / t.omega];
    let x0 = shape.nx as f64 * shape.h / 2.0;
    let y0 = shape.ny as f64 * shape.h / 2.0;
    let fx = (cor[0] + x0) / shape.h;
    let fy = (cor[1] + y0) / shape.h;
    let (ix, iy) = (fx.floor(), fy.floor());
    if !(ix >= 0.0 && ix < shape.nx as f64 && iy >= 0.0 && iy < shape.ny as f64) {
        return vec![(1.0, t)];
    }
    let (dx, dy) = (fx - ix, fy - iy);
    let corner = |ox: f64, oy: f64| {
        let c = [(ix + ox) * shape.h - x0, (iy + oy) * shape.h - y0];
        Twist::new(t.omega * c[1], -t.omega * c[0], t.omega)
    };
    vec![
        ((1.0 - dx) * (1.0 - dy), corner(0.0, 0.0)),
        (dx * (1.0 - dy), corner(1.0, 0.0)),
        ((1.0 - dx) * dy, corner(0.0, 1.0)),
        (dx * dy, corner(1.0, 1.0)),
    ]
}

/// The distributed model's steady-state wrench (eq. 12 in 13–14, with the bilinear blend).
pub fn steady(p: &LugreParams, patch: &Patch, t: Twist) -> Wrench {
    let blend = steady_blend(&patch.shape, t);
    wrench_of(patch, |_, c| {
        let mut l = [0.0; 2];
        for (s, tw) in &blend {
            let li = cell_steady(p, cell_velocity(*tw, c));
            l[0] += s * li[0];
            l[1] += s * li[1];
        }
        l
    })
}

/// The distributed model: per-cell 2-D bristle states of many patches.
#[derive(Clone, Debug)]
pub struct DistributedCpu {
    pub params: LugreParams,
    pub patches: Vec<Patch>,
    /// Deflections per patch, per cell.
    pub z: Vec<Vec<[f64; 2]>>,
}

impl DistributedCpu {
    pub fn new(params: LugreParams, patches: Vec<Patch>) -> Self {
        let z = patches
            .iter()
            .map(|p| vec![[0.0; 2]; p.shape.weights.len()])
            .collect();
        DistributedCpu { params, patches, z }
    }

    /// Advances every patch one step under its twist; returns the wrenches.
    pub fn step(&mut self, twists: &[Twist], dt: f64, int: Integrator) -> Vec<Wrench> {
        let p = self.params;
        self.patches
            .iter()
            .zip(self.z.iter_mut())
            .zip(twists)
            .map(|((patch, z), t)| {
                wrench_of(patch, |i, c| {
                    let (l, zn) = cell_step(&p, z[i], cell_velocity(*t, c), dt, int);
                    z[i] = zn;
                    l
                })
            })
            .collect()
    }

    /// One implicit step under `twists` with the rate factors frozen at `lin` (what a
    /// coupled solver does: `lin` = last step's twist, `twists` = the solved ones). The
    /// wrench equals [`Self::affine`]`(k, lin[k], dt).eval(twists[k])`.
    pub fn step_linearised(&mut self, twists: &[Twist], lin: &[Twist], dt: f64) -> Vec<Wrench> {
        let p = self.params;
        let mut out = Vec::with_capacity(self.patches.len());
        for (k, patch) in self.patches.iter().enumerate() {
            let z = &mut self.z[k];
            out.push(wrench_of(patch, |i, c| {
                let v = cell_velocity(twists[k], c);
                let kap = kappa(&p, z[i], cell_velocity(lin[k], c));
                let (c0, c1) = cell_affine(&p, z[i], kap, dt);
                z[i] = [0, 1].map(|d| (z[i][d] + dt * v[d]) / (1.0 + dt * kap));
                [c0[0] + c1 * v[0], c0[1] + c1 * v[1]]
            }));
        }
        out
    }

    /// Steady-state wrenches (no state change).
    pub fn steady(&self, twists: &[Twist]) -> Vec<Wrench> {
        self.patches
            .iter()
            .zip(twists)
            .map(|(pa, t)| steady(&self.params, pa, *t))
            .collect()
    }

    /// Patch `k`'s wrench over the next implicit step as an affine function of the twist,
    /// the rate factors frozen at the cell velocities of `t_lin` (for a solver: the last
    /// step's twist). Torque about the patch centre.
    pub fn affine(&self, k: usize, t_lin: Twist, dt: f64) -> AffineWrench {
        let patch = &self.patches[k];
        let mut s = [0.0f64; 7]; // Σwc1, Σwc1x, Σwc1y, Σwc1|ρ|², Σwc0x, Σwc0y, Σw(ρ×c0)
        for (i, w) in patch.shape.weights.iter().enumerate() {
            let c = patch.shape.cell(i);
            let z = self.z[k][i];
            let kap = kappa(&self.params, z, cell_velocity(t_lin, c));
            let (c0, c1) = cell_affine(&self.params, z, kap, dt);
            add_cell_sums(&mut s, *w, c, c0, c1);
        }
        affine_from_sums(&s, patch.f_n)
    }
}

/// Adds cell (weight `w`, centre `c`, affine force `c0 + c1 v`) to the sums
/// (Σwc1, Σwc1x, Σwc1y, Σwc1|ρ|², Σwc0x, Σwc0y, Σw(ρ×c0)) of [`affine_from_sums`].
pub fn add_cell_sums(s: &mut [f64; 7], w: f64, c: [f64; 2], c0: [f64; 2], c1: f64) {
    let add = [
        c1,
        c1 * c[0],
        c1 * c[1],
        c1 * (c[0] * c[0] + c[1] * c[1]),
        c0[0],
        c0[1],
        c[0] * c0[1] - c[1] * c0[0],
    ];
    s.iter_mut().zip(add).for_each(|(a, b)| *a += w * b);
}

/// `K = f_N Σ w c1 [[1, 0, −y], [0, 1, x], [−y, x, x²+y²]]`, `k0 = f_N Σ w (c0, ρ × c0)`.
pub fn affine_from_sums(s: &[f64; 7], f_n: f64) -> AffineWrench {
    let k =
        [[s[0], 0.0, -s[2]], [0.0, s[0], s[1]], [-s[2], s[1], s[3]]].map(|r| r.map(|v| v * f_n));
    AffineWrench {
        k,
        k0: [s[4] * f_n, s[5] * f_n, s[6] * f_n],
    }
}

/// A patch of the reduced model: its limit surface and normal force.
#[derive(Clone, Debug)]
pub struct ReducedPatch {
    pub ls: LimitSurface,
    pub f_n: f64,
    /// Use the ellipsoid approximation instead of the pre-computed limit surface.
    pub ellipsoid: bool,
}

/// The reduced model: 3 bristle states per patch (at the centre of pressure).
#[derive(Clone, Debug)]
pub struct ReducedCpu {
    pub params: LugreParams,
    pub patches: Vec<ReducedPatch>,
    pub z: Vec<[f64; 3]>,
}

impl ReducedCpu {
    pub fn new(params: LugreParams, patches: Vec<ReducedPatch>) -> Self {
        let z = vec![[0.0; 3]; patches.len()];
        ReducedCpu { params, patches, z }
    }

    pub fn step(&mut self, twists: &[Twist], dt: f64, int: Integrator) -> Vec<Wrench> {
        let p = self.params;
        self.patches
            .iter()
            .zip(self.z.iter_mut())
            .zip(twists)
            .map(|((rp, z), t)| reduced_step(&p, rp, z, *t, Some((dt, int))))
            .collect()
    }

    pub fn steady(&self, twists: &[Twist]) -> Vec<Wrench> {
        let p = self.params;
        self.patches
            .iter()
            .zip(twists)
            .map(|(rp, t)| reduced_step(&p, rp, &mut [0.0; 3], *t, None))
            .collect()
    }
}

/// One reduced-model evaluation (Arslan Waltersson & Karayiannidis §V, eqs. 28–34 with the typos fixed):
/// `step = None` gives the steady state and leaves `z` alone.
pub fn reduced_step(
    p: &LugreParams,
    rp: &ReducedPatch,
    z: &mut [f64; 3],
    t: Twist,
    step: Option<(f64, Integrator)>,
) -> Wrench {
    let ls = &rp.ls;
    let v = t.at(ls.cop);
    let v3 = [v.vx, v.vy, v.omega];
    let r = ls.r;
    // A = diag(1, 1, r²) with the skew terms that move the CoR (paper's code).
    let (sx, sy) = if rp.ellipsoid { (0.0, 0.0) } else { ls.skew(v) };
    let av = [v3[0] + sx * v3[2], v3[1] + sy * v3[2], r * r * v3[2]];
    let vn2 =
        v3[0] * v3[0] + v3[1] * v3[1] + r * r * v3[2] * v3[2] + (sx * v3[0] + sy * v3[1]) * v3[2];
    let vn = vn2.max(0.0).sqrt();
    let s = [1.0, 1.0, r];
    let w: [f64; 3] = if rp.ellipsoid {
        av
    } else {
        let h = ls.lookup(v);
        [0, 1, 2].map(|d| -s[d] * h[d] * vn)
    };
    let g = p.g(vn);
    let zs = if vn > 0.0 {
        w.map(|x| x * g / (p.sigma0 * vn))
    } else {
        [0.0; 3]
    };
    let visc = [
        p.sigma2 * av[0],
        p.sigma2 * av[1],
        p.sigma2 * ls.visc * av[2],
    ];
    let l: [f64; 3] = match step {
        None => [0, 1, 2].map(|d| p.sigma0 * zs[d] + visc[d]),
        Some((dt, int)) => {
            let b = if p.elasto_plastic {
                let un = |a: [f64; 3]| [a[0], a[1], a[2] / r];
                beta(&un(*z), &un(zs), &un(w), p.z_ba_ratio)
            } else {
                1.0
            };
            let k = b * p.sigma0 * vn / g;
            let z0 = *z;
            let dz = match int {
                Integrator::Explicit => {
                    let mut dz = [0, 1, 2].map(|d| w[d] - k * z0[d]);
                    if p.stability {
                        for d in 0..3 {
                            let lim = ((zs[d] - z0[d]) / dt).abs();
                            dz[d] = dz[d].abs().min(lim) * dz[d].signum();
                        }
                    }
                    dz
                }
                Integrator::Implicit => {
                    [0, 1, 2].map(|d| ((z0[d] + dt * w[d]) / (1.0 + dt * k) - z0[d]) / dt)
                }
            };
            let zn = [0, 1, 2].map(|d| z0[d] + dt * dz[d]);
            *z = zn;
            let zf = if int == Integrator::Explicit { z0 } else { zn };
            [0, 1, 2].map(|d| p.sigma0 * zf[d] + p.sigma1 * dz[d] + visc[d])
        }
    };
    let f = rp.f_n;
    Wrench::about_cop(-f * l[0], -f * l[1], -f * l[2], ls.cop)
}

/// Quasi-static pushing by limit-surface theory: the ratio ω/v_x of the twist (v_x, 0, ω)
/// at which the patch's steady-state friction balances a push along x whose line of action
/// lies at lateral offset `y` from the patch centre, i.e. τ/f_x = −y (the twist is normal
/// to the limit surface at the pushing wrench). The root nearest ω = 0 (τ/f_x also changes
/// sign where f_x does, near a pure spin): bracketed by doubling |ω/v_x| from 0.1, then
/// bisected.
pub fn push_turn_rate(p: &LugreParams, patch: &Patch, y: f64) -> f64 {
    let ratio = |k: f64| {
        let t = Twist {
            vx: 1.0,
            vy: 0.0,
            omega: k,
        };
        let w = steady(p, patch, t);
        w.tau / w.fx + y
    };
    let dir = -y.signum();
    let (mut lo, mut hi) = (0.0, 0.1 * dir);
    while ratio(hi).signum() == ratio(lo).signum() && hi.abs() < 1e6 {
        (lo, hi) = (hi, 2.0 * hi);
    }
    let s_lo = ratio(lo).signum();
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if ratio(mid).signum() == s_lo {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}
