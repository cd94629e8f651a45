//! Angle of repose of a heap (z up), fitted to its free-surface profile.
//!
//! Method: every grain's top `z + r` is placed at its horizontal distance ρ from the heap's
//! axis (a vertical line through `centre` for a conical heap, [`HeapAxis::Radial`]; a
//! vertical plane `x = centre.x` or `y = centre.y` for a planar heap in a slot). Bins of one
//! mean grain diameter along ρ keep their highest top (the surface grain). The flank is the
//! band of ρ given, or by default 0.2–0.8 of the heap's reach R (the 0.98 quantile of ρ,
//! so a few grains that rolled away do not set it): the apex is rounded by a grain or two
//! and the toe spreads. Least squares of z = a − s ρ over the flank bins gives the slope s
//! and the angle atan(s). Both sides of a planar heap (and every azimuth of a conical one)
//! enter the same fit, so a heap that leans to one side still reads its mean slope.

use crate::bodies::BodyState;

pub use crate::scene::HeapAxis;

/// A fitted heap slope.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Repose {
    /// Angle of repose, degrees (atan of the slope).
    pub angle_deg: f64,
    /// Slope s of z = a − s ρ (positive for a heap).
    pub slope: f64,
    /// Intercept a: the fitted surface's height on the axis.
    pub apex: f64,
    /// Number of profile bins in the fit.
    pub bins: usize,
    /// Root-mean-square vertical distance (m) of the fitted bins from the line: how far the
    /// surface is from a straight flank. Grain-scale roughness gives about a grain radius;
    /// several radii mean the band holds no straight flank (a standing column's edge, a
    /// flat top) and the angle does not describe the heap.
    pub flank_rms: f64,
}

impl Repose {
    const NONE: Repose = Repose {
        angle_deg: f64::NAN,
        slope: f64::NAN,
        apex: f64::NAN,
        bins: 0,
        flank_rms: f64::NAN,
    };
}

/// The heap's slope from the grains `first_grain..` of `state`. `centre` = (x, y) of the axis
/// (None: the grains' mean x, y); `flank` = the band of ρ (m) to fit (None: 0.2–0.8 of the
/// heap's reach). All NaN (and 0 bins) when fewer than 3 bins of the flank hold a grain.
pub fn repose_angle(
    state: &BodyState,
    first_grain: usize,
    axis: HeapAxis,
    centre: Option<[f64; 2]>,
    flank: Option<[f64; 2]>,
) -> Repose {
    let grains: Vec<[f64; 4]> = state
        .pos
        .iter()
        .skip(first_grain)
        .map(|p| p.map(|x| x as f64))
        .filter(|p| p.iter().all(|x| x.is_finite()))
        .collect();
    if grains.is_empty() {
        return Repose::NONE;
    }
    let n = grains.len() as f64;
    let c = centre.unwrap_or_else(|| {
        let s = grains
            .iter()
            .fold([0.0, 0.0], |s, p| [s[0] + p[0], s[1] + p[1]]);
        [s[0] / n, s[1] / n]
    });
    let rho = |p: &[f64; 4]| match axis {
        HeapAxis::Radial => (p[0] - c[0]).hypot(p[1] - c[1]),
        HeapAxis::X => (p[0] - c[0]).abs(),
        HeapAxis::Y => (p[1] - c[1]).abs(),
    };
    let mut pts: Vec<(f64, f64)> = grains.iter().map(|p| (rho(p), p[2] + p[3])).collect();
    let mean_r = grains.iter().map(|p| p[3]).sum::<f64>() / n;
    let [lo, hi] = flank.unwrap_or_else(|| {
        let mut r: Vec<f64> = pts.iter().map(|q| q.0).collect();
        let k = ((0.98 * (r.len() - 1) as f64).round() as usize).min(r.len() - 1);
        let (_, &mut reach, _) = r.select_nth_unstable_by(k, f64::total_cmp);
        [0.2 * reach, 0.8 * reach]
    });
    let width = 2.0 * mean_r;
    if !(hi > lo && width > 0.0) {
        return Repose::NONE;
    }
    pts.retain(|q| q.0 >= lo && q.0 <= hi);
    let nb = (((hi - lo) / width).ceil() as usize).max(1);
    // Highest top per bin, at the bin's centre.
    let mut top = vec![f64::NEG_INFINITY; nb];
    for (r, z) in pts {
        let b = (((r - lo) / width) as usize).min(nb - 1);
        top[b] = top[b].max(z);
    }
    let prof: Vec<(f64, f64)> = top
        .iter()
        .enumerate()
        .filter(|(_, z)| z.is_finite())
        .map(|(b, &z)| (lo + (b as f64 + 0.5) * width, z))
        .collect();
    fit(&prof)
}

/// Least squares z = a − s ρ over the profile points.
fn fit(prof: &[(f64, f64)]) -> Repose {
    if prof.len() < 3 {
        return Repose::NONE;
    }
    let m = prof.len() as f64;
    let (mx, mz) = prof
        .iter()
        .fold((0.0, 0.0), |s, q| (s.0 + q.0 / m, s.1 + q.1 / m));
    let (sxz, sxx) = prof.iter().fold((0.0, 0.0), |s, q| {
        let dx = q.0 - mx;
        (s.0 + dx * (q.1 - mz), s.1 + dx * dx)
    });
    let slope = -sxz / sxx;
    let apex = mz + slope * mx;
    let sq = prof
        .iter()
        .map(|q| (q.1 - (apex - slope * q.0)).powi(2))
        .sum::<f64>();
    Repose {
        angle_deg: slope.atan().to_degrees(),
        slope,
        apex,
        bins: prof.len(),
        flank_rms: (sq / m).sqrt(),
    }
}
