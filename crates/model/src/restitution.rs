//! A coefficient of restitution as the damping of a compliant normal law: the rebound of the
//! Kelvin–Voigt spring–damper and of the Hunt–Crossley law as functions of their damping, and
//! their inverses by bisection (why these laws and not closed-form fits: `rows::compliant`).
//! Plain f64 functions of one number: the models' files turn a material's restitution into
//! its table row with them, and the row math reads the same conversions.

/// The smallest restitution of a Kelvin–Voigt contact given by e: ζ → 1 gives e → e⁻²
/// (the overdamped spring–damper is not converted).
pub const KV_E_MIN: f64 = 0.136;

/// The smallest restitution of a Hunt–Crossley contact given by e (χ(0.05) ≈ 36; smaller e
/// needs ever larger χ and a stiff integration).
pub const HC_E_MIN: f64 = 0.05;

/// Rebound of the Kelvin–Voigt spring–damper without adhesion, damping ratio ζ ∈ [0, 1):
/// x = (v₀/ω_d) e^{−ζωt} sin ω_d t leaves at ω_d t = φ = π − atan2(2ζs, 1 − 2ζ²)
/// (s = √(1 − ζ²)), where k x + c ẋ = 0; e = e^{−ζφ/s} |cos φ − ζ/s sin φ|.
pub fn kv_restitution(zeta: f64) -> f64 {
    let s = (1.0 - zeta * zeta).sqrt();
    let phi = std::f64::consts::PI - (2.0 * zeta * s).atan2(1.0 - 2.0 * zeta * zeta);
    (-zeta * phi / s).exp() * (phi.cos() - zeta / s * phi.sin()).abs()
}

/// The damping ratio ζ whose rebound without adhesion is e ∈ [KV_E_MIN, 1].
pub fn kv_zeta(e: f64) -> f64 {
    bisect(e, 0.0, 1.0 - 1e-9, kv_restitution)
}

/// Rebound of F = k δ^1.5 (1 + χ δ̇/v₀) without adhesion, in units where k = m = v₀ = 1:
/// x'' = −x^1.5 (1 + χ x') from x = 0, x' = 1, until x = 0 or the force vanishes (RK4,
/// the end interpolated linearly inside the last step).
pub fn hc_restitution(chi: f64) -> f64 {
    let h = 1e-3 / (1.0 + chi);
    let f = |x: f64, v: f64| -x.max(0.0).powf(1.5) * (1.0 + chi * v).max(0.0);
    let (mut x, mut v) = (0.0f64, 1.0f64);
    loop {
        let (k1x, k1v) = (v, f(x, v));
        let (k2x, k2v) = (v + 0.5 * h * k1v, f(x + 0.5 * h * k1x, v + 0.5 * h * k1v));
        let (k3x, k3v) = (v + 0.5 * h * k2v, f(x + 0.5 * h * k2x, v + 0.5 * h * k2v));
        let (k4x, k4v) = (v + h * k3v, f(x + h * k3x, v + h * k3v));
        let xn = x + h / 6.0 * (k1x + 2.0 * k2x + 2.0 * k3x + k4x);
        let vn = v + h / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v);
        if xn <= 0.0 && v < 0.0 {
            // Crossing x = 0 inside the step: interpolate the speed.
            let t = x / (x - xn);
            return -(v + t * (vn - v));
        }
        if v < 0.0 && 1.0 + chi * vn <= 0.0 {
            // The damping would pull: the contact leaves when the force vanishes.
            let (g0, g1) = (1.0 + chi * v, 1.0 + chi * vn);
            let t = g0 / (g0 - g1);
            return -(v + t * (vn - v));
        }
        (x, v) = (xn, vn);
    }
}

/// The χ whose Hunt–Crossley rebound (n = 1.5) is e ∈ [HC_E_MIN, 1].
pub fn hc_chi(e: f64) -> f64 {
    let mut hi = 1.0;
    while hc_restitution(hi) > e {
        hi *= 2.0;
    }
    bisect(e, 0.0, hi, hc_restitution)
}

/// x in [lo, hi] with f(x) = target for a decreasing f (f(lo) ≥ target ≥ f(hi)).
fn bisect(target: f64, mut lo: f64, mut hi: f64, f: impl Fn(f64) -> f64) -> f64 {
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if f(mid) > target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}
