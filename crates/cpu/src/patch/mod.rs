//! Planar LuGre friction on contact patches (Arslan Waltersson & Karayiannidis):
//! the distributed model (a grid of 2-D bristle cells under a pressure distribution) and
//! the reduced model (3 bristle states per patch and a pre-computed limit surface).
//!
//! Conventions (all models, CPU and GPU):
//! - Frame: the patch frame, x and y in the contact plane, origin at the centre of the cell
//!   grid; cell `(ix, iy)` sits at `((ix + ½ − nx/2) h, (iy + ½ − ny/2) h)`.
//! - Twist `(v_x, v_y, ω)`: velocity of the moving body relative to the surface, at the
//!   patch centre; a cell at `ρ` slides with `v + ω × ρ = (v_x − ω ρ_y, v_y + ω ρ_x)`.
//! - Wrench `(f_x, f_y, τ)`: friction acting on the moving body (opposes sliding), torque
//!   about the patch centre; [`Wrench::tau_cop`] is the torque about the centre of pressure.
//! - Forces scale with the normal force `f_N`; cell weights `w_i` (pressure × area) sum to 1.

pub mod couple;
pub mod cpu;
pub mod limit;
pub mod pressure;

/// The elasto-plastic factor is the friction vocabulary's (the LuGre rows use it too).
pub use crate::model::elasto_plastic::beta;
pub use cpu::{DistributedCpu, ReducedCpu};
pub use limit::LimitSurface;
pub use pressure::{Outline, PatchShape, Pressure};

/// LuGre parameters per unit normal force, in the paper's symbols (Table I).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LugreParams {
    /// Coulomb friction coefficient μ_c.
    pub mu_c: f64,
    /// Static friction coefficient μ_s.
    pub mu_s: f64,
    /// Stribeck velocity v_s [m/s].
    pub v_s: f64,
    /// Stribeck exponent γ.
    pub gamma: f64,
    /// Bristle stiffness σ0 [1/m].
    pub sigma0: f64,
    /// Bristle damping σ1 [s/m].
    pub sigma1: f64,
    /// Viscous coefficient σ2 [s/m].
    pub sigma2: f64,
    /// Elasto-plastic extension (Arslan Waltersson & Karayiannidis eqs. 15–18) on or off (plain LuGre).
    pub elasto_plastic: bool,
    /// Break-away deflection as a fraction of the steady-state deflection, z_ba / z_max.
    pub z_ba_ratio: f64,
    /// Explicit Euler only: limit the deflection rate so that one step does not pass the
    /// steady-state deflection (the authors' code, `stability = True`).
    pub stability: bool,
}

impl Default for LugreParams {
    /// The paper's Table I.
    fn default() -> Self {
        LugreParams {
            mu_c: 1.0,
            mu_s: 1.2,
            v_s: 1e-3,
            gamma: 2.0,
            sigma0: 1e6,
            sigma1: 8e2,
            sigma2: 0.2,
            elasto_plastic: true,
            z_ba_ratio: 0.9,
            stability: true,
        }
    }
}

impl LugreParams {
    /// Stribeck curve g(v) = μ_c + (μ_s − μ_c) exp(−|v/v_s|^γ).
    pub fn g(&self, v: f64) -> f64 {
        self.mu_c + (self.mu_s - self.mu_c) * (-(v / self.v_s).abs().powf(self.gamma)).exp()
    }

    /// Checks that the parameters describe a model; the message names the symbol.
    pub fn validate(&self) -> Result<(), String> {
        let pos = [
            ("mu_c", self.mu_c),
            ("v_s", self.v_s),
            ("gamma", self.gamma),
            ("sigma0", self.sigma0),
        ];
        for (name, v) in pos {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!("{name} must be finite and > 0 (got {v})"));
            }
        }
        for (name, v) in [("sigma1", self.sigma1), ("sigma2", self.sigma2)] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!("{name} must be finite and >= 0 (got {v})"));
            }
        }
        if !(self.mu_s.is_finite() && self.mu_s >= self.mu_c) {
            return Err(format!("mu_s must be >= mu_c (got {})", self.mu_s));
        }
        if !(self.z_ba_ratio > 0.0 && self.z_ba_ratio < 1.0) {
            return Err(format!(
                "z_ba_ratio must lie in (0, 1) (got {})",
                self.z_ba_ratio
            ));
        }
        Ok(())
    }
}

/// Time integration of the bristle states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Integrator {
    /// Explicit Euler, as the paper (needs dt ≲ 2/(σ0 |v|/g) … in practice dt ≤ 1e-5 s at σ0 = 1e6).
    Explicit,
    /// Implicit in the bristle state with the rate factor κ = β σ0 |v| / g frozen
    /// (book: Contact models, "Models as rows"): unconditionally stable, and the wrench is affine in the twist.
    Implicit,
}

/// A planar twist at the patch centre.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Twist {
    pub vx: f64,
    pub vy: f64,
    pub omega: f64,
}

impl Twist {
    pub const fn new(vx: f64, vy: f64, omega: f64) -> Self {
        Twist { vx, vy, omega }
    }

    /// The same motion described at the point `p` (velocity of the body point at `p`).
    pub fn at(&self, p: [f64; 2]) -> Twist {
        Twist::new(
            self.vx - self.omega * p[1],
            self.vy + self.omega * p[0],
            self.omega,
        )
    }
}

/// Friction wrench on the moving body.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Wrench {
    pub fx: f64,
    pub fy: f64,
    /// Torque about the patch centre.
    pub tau: f64,
    /// Torque about the centre of pressure.
    pub tau_cop: f64,
}

impl Wrench {
    /// Builds a wrench from the torque about the centre, adding the torque about `cop`.
    pub fn about_centre(fx: f64, fy: f64, tau: f64, cop: [f64; 2]) -> Wrench {
        Wrench {
            fx,
            fy,
            tau,
            tau_cop: tau - (cop[0] * fy - cop[1] * fx),
        }
    }

    /// Builds a wrench from the torque about `cop`.
    pub fn about_cop(fx: f64, fy: f64, tau_cop: f64, cop: [f64; 2]) -> Wrench {
        Wrench {
            fx,
            fy,
            tau: tau_cop + (cop[0] * fy - cop[1] * fx),
            tau_cop,
        }
    }
}

/// The patch wrench as an affine function of the twist, valid for one implicit step:
/// `wrench = −(K · twist + k0)`, torque about the patch centre, `K` symmetric positive
/// semi-definite. This is the compliance block and offset a solver row needs (book: Contact models, "Models as rows").
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AffineWrench {
    pub k: [[f64; 3]; 3],
    pub k0: [f64; 3],
}

impl AffineWrench {
    pub fn eval(&self, t: Twist) -> [f64; 3] {
        let v = [t.vx, t.vy, t.omega];
        let mut out = [0.0; 3];
        for (r, o) in out.iter_mut().enumerate() {
            *o = -(self.k[r][0] * v[0] + self.k[r][1] * v[1] + self.k[r][2] * v[2] + self.k0[r]);
        }
        out
    }
}
