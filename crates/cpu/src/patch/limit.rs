//! The pre-computed limit surface of the reduced model (Arslan Waltersson & Karayiannidis §V-D): normalised
//! steady-state wrenches of the distributed model (μ = 1, σ2 = 0) on a (θ, φ) grid of
//! twist directions about the centre of pressure, looked up bilinearly.

use super::{PatchShape, Twist, Wrench};
use std::f64::consts::{FRAC_PI_2, PI};

/// A patch's limit surface: `4·N_ls × N_ls` cells over θ ∈ [0, 2π), φ ∈ [0, π/2], stored
/// as their `(4·N_ls + 1) × (N_ls + 1)` corner samples.
#[derive(Clone, Debug, PartialEq)]
pub struct LimitSurface {
    pub n_ls: usize,
    /// Radius r = τ_max / (μ f_N) about the centre of pressure (eq. 25): Σ w |ρ − cop|.
    pub r: f64,
    /// Viscous scale s of the spin row, Σ w |ρ − cop|² / r² (eq. 29).
    pub visc: f64,
    pub cop: [f64; 2],
    /// Offset of the centre of rotation of a pure spin at the CoP (paper's code, `delta_x/y`).
    pub delta: [f64; 2],
    /// Normalised wrench `(f_x/f_max, f_y/f_max, τ/τ_max)` at corner `(iθ, iφ)`, index
    /// `iθ·(N_ls+1) + iφ`.
    pub points: Vec<[f64; 3]>,
}

/// The twist of table corner `(iθ, iφ)` about the CoP (eq. 35 with r' = r):
/// `(r cos θ sin φ, r sin θ sin φ, cos φ)`.
pub fn corner_twist(n_ls: usize, r: f64, it: usize, ip: usize) -> Twist {
    let th = it as f64 * FRAC_PI_2 / n_ls as f64;
    let ph = ip as f64 * FRAC_PI_2 / n_ls as f64;
    Twist::new(r * th.cos() * ph.sin(), r * th.sin() * ph.sin(), ph.cos())
}

/// The steady-state evaluations a limit surface needs, in two rounds: first the pure
/// spin and the pure slide about the CoP (giving r and the normalisation), then the
/// table corners. Works for any evaluator of the unit-friction steady wrench (twist at the
/// patch centre), so the GPU and the CPU twin build tables the same way.
pub fn build_many(
    shapes: &[PatchShape],
    n_ls: usize,
    mut eval: impl FnMut(&[(usize, Twist)]) -> Vec<Wrench>,
) -> Vec<LimitSurface> {
    let centre = |k: usize, t: Twist| t.at([-shapes[k].cop[0], -shapes[k].cop[1]]);
    let mut jobs = Vec::new();
    for k in 0..shapes.len() {
        jobs.push((k, centre(k, Twist::new(0.0, 0.0, 1.0))));
        jobs.push((k, centre(k, Twist::new(1.0, 0.0, 0.0))));
    }
    let first = eval(&jobs);
    let nt = 4 * n_ls + 1;
    let np = n_ls + 1;
    let mut jobs = Vec::new();
    let mut out = Vec::new();
    for (k, shape) in shapes.iter().enumerate() {
        let tau_max = first[2 * k].tau_cop.abs();
        let f_max = first[2 * k + 1].fx.abs();
        // r = τ_max / (μ f_N) of a spin about the CoP (eq. 25), summed exactly over the
        // cells: the bilinear blend would smear it by O(h) (1 % on a 21-cell line).
        let r = shape
            .weights
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let c = shape.cell(i);
                w * (c[0] - shape.cop[0]).hypot(c[1] - shape.cop[1])
            })
            .sum::<f64>();
        for it in 0..nt {
            for ip in 0..np {
                jobs.push((k, centre(k, corner_twist(n_ls, r, it, ip))));
            }
        }
        let visc = shape
            .weights
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let c = shape.cell(i);
                w * ((c[0] - shape.cop[0]).powi(2) + (c[1] - shape.cop[1]).powi(2))
            })
            .sum::<f64>()
            / (r * r);
        out.push((
            f_max,
            tau_max,
            LimitSurface {
                n_ls,
                r,
                visc,
                cop: shape.cop,
                delta: [0.0; 2],
                points: Vec::new(),
            },
        ));
    }
    let table = eval(&jobs);
    out.into_iter()
        .enumerate()
        .map(|(k, (f_max, tau_max, mut ls))| {
            ls.points = table[k * nt * np..(k + 1) * nt * np]
                .iter()
                .map(|w| [w.fx / f_max, w.fy / f_max, w.tau_cop / tau_max])
                .collect();
            ls.delta = ls.find_delta();
            ls
        })
        .collect()
}

impl LimitSurface {
    /// Normalised wrench for a twist about the CoP, bilinear in (θ, φ) (eqs. 36–43;
    /// φ = atan2(‖v_t‖, r|ω|)). Odd in the twist: a negative spin mirrors the surface.
    pub fn lookup(&self, v: Twist) -> [f64; 3] {
        let n = self.n_ls as f64;
        let mut th = v.vy.atan2(v.vx);
        if v.omega < 0.0 {
            th += PI;
        }
        th = th.rem_euclid(2.0 * PI);
        let a1 = (th * 2.0 * n / PI).min(4.0 * n);
        let vt = (v.vx * v.vx + v.vy * v.vy).sqrt();
        let a2 = (vt.atan2(self.r * v.omega.abs()) * 2.0 * n / PI).min(n);
        let (i1, i2) = (
            (a1.floor() as usize).min(4 * self.n_ls - 1),
            (a2.floor() as usize).min(self.n_ls - 1),
        );
        let (d1, d2) = (a1 - i1 as f64, a2 - i2 as f64);
        let np = self.n_ls + 1;
        let at = |a: usize, b: usize| self.points[a * np + b];
        let c = [
            ((1.0 - d1) * (1.0 - d2), at(i1, i2)),
            (d1 * (1.0 - d2), at(i1 + 1, i2)),
            ((1.0 - d1) * d2, at(i1, i2 + 1)),
            (d1 * d2, at(i1 + 1, i2 + 1)),
        ];
        let sgn = if v.omega < 0.0 { -1.0 } else { 1.0 };
        [0, 1, 2].map(|d| sgn * c.iter().map(|(s, p)| s * p[d]).sum::<f64>())
    }

    /// Skew terms `(s_x, s_y)` of the velocity scaling `A` (paper's code): they shift the
    /// centre of rotation of a spin by `delta`, fading out as the motion turns to sliding.
    pub fn skew(&self, v: Twist) -> (f64, f64) {
        let dn = (self.delta[0].powi(2) + self.delta[1].powi(2)).sqrt();
        if dn == 0.0 {
            return (0.0, 0.0);
        }
        let (px, py) = (self.delta[0].abs() / dn, self.delta[1].abs() / dn);
        let nn = ((v.vx * px).powi(2) + (v.vy * py).powi(2)).sqrt();
        let s_n = 2.0 * (self.r * v.omega.abs()).atan2(nn) / PI;
        (-s_n * self.delta[1], s_n * self.delta[0])
    }

    /// The centre of rotation, relative to the CoP, at which a spin meets no net force on
    /// the table: fixed-point iteration of the paper's `update_delta_x_y`.
    fn find_delta(&self) -> [f64; 2] {
        let h = self.lookup(Twist::new(0.0, 0.0, 1.0));
        let (vx0, vy0) = (self.r * h[0], self.r * h[1]);
        let (mut vx, mut vy) = (vx0, vy0);
        for _ in 0..200 {
            let h = self.lookup(Twist::new(vx, vy, 1.0));
            if h[0].hypot(h[1]) <= 1e-6 {
                break;
            }
            if vx0.abs() > 1e-12 {
                vx *= (self.r * h[0] + vx0) / vx0;
            }
            if vy0.abs() > 1e-12 {
                vy *= (self.r * h[1] + vy0) / vy0;
            }
        }
        if !(vx.is_finite() && vy.is_finite()) {
            return [0.0; 2];
        }
        [-vy, vx]
    }
}
