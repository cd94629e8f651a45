//! The elasto-plastic extension of LuGre (Dupont et al. 2002, in the planar form of Arslan
//! Waltersson & Karayiannidis): the factor β that turns the bristle deflection rate off below
//! the break-away deflection. Shared by the solver's LuGre rows (`super::rows`) and the
//! patch models (`bristlecone_engine::patch`), so it lives with the vocabulary both read.

/// The elasto-plastic factor β(z, z_ss, v) (Arslan Waltersson & Karayiannidis eqs. 16–18, any dimension): 0 below
/// the break-away deflection, a sine ramp up to the steady-state deflection |z_ss|, 1 above
/// (eq. 18's last case is `≥`), times ε = (v̂·ẑ + 1)/2.
pub fn beta(z: &[f64], z_ss: &[f64], v: &[f64], z_ba_ratio: f64) -> f64 {
    let norm = |a: &[f64]| a.iter().map(|x| x * x).sum::<f64>().sqrt();
    let zn = norm(z);
    let z_max = norm(z_ss);
    let z_ba = z_ba_ratio * z_max;
    let b = if zn <= z_ba {
        0.0
    } else if zn < z_max {
        0.5 * (std::f64::consts::PI * (zn - 0.5 * (z_max + z_ba)) / (z_max - z_ba)).sin() + 0.5
    } else {
        1.0
    };
    let vn = norm(v);
    let c: f64 = z
        .iter()
        .zip(v)
        .map(|(a, b)| a / (zn + 1e-10) * b / (vn + 1e-10))
        .sum();
    b * (c + 1.0) / 2.0
}
