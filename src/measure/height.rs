//! Bed height and free-surface profile from the tops of the grains (z up).

use crate::bodies::BodyState;

/// Top of each grain: centre z plus bounding radius (exact for spheres, an upper bound for
/// other shapes). Non-finite values are skipped.
fn tops(state: &BodyState, first_grain: usize) -> impl Iterator<Item = (&[f32; 4], f64)> {
    state
        .pos
        .iter()
        .skip(first_grain)
        .map(|p| (p, p[2] as f64 + p[3] as f64))
        .filter(|(_, top)| top.is_finite())
}

/// The `quantile` (0..=1, e.g. 0.95) of the grain tops `z + r` over all grains, with linear
/// interpolation between order statistics (the "type 7" quantile of R and NumPy's default).
///
/// A high quantile rather than the maximum keeps a few bouncing or saltating grains from
/// setting the height. O(N) (selection, not a sort). NaN when there are no grains or
/// `quantile` is NaN; `quantile` is clamped to [0, 1].
pub fn bed_height(state: &BodyState, first_grain: usize, quantile: f64) -> f64 {
    let mut v: Vec<f64> = tops(state, first_grain).map(|(_, t)| t).collect();
    if v.is_empty() || quantile.is_nan() {
        return f64::NAN;
    }
    let h = quantile.clamp(0.0, 1.0) * (v.len() - 1) as f64;
    let k = (h.floor() as usize).min(v.len() - 1);
    let frac = h - k as f64;
    let (_, &mut lo, upper) = v.select_nth_unstable_by(k, f64::total_cmp);
    if frac == 0.0 || upper.is_empty() {
        return lo;
    }
    let hi = upper.iter().copied().fold(f64::INFINITY, f64::min);
    lo + frac * (hi - lo)
}

/// Free-surface profile along x (`axis` 0) or y (`axis` 1): `bins` equal bins spanning
/// `range`, each as (bin centre, highest grain top `z + r` among grains whose centre lies
/// in the bin), NaN for an empty bin. Grains outside `range` are ignored; the upper end of
/// the range belongs to the last bin. O(N + bins).
///
/// Returns an empty vector when `bins` is 0. Panics if `axis` is not 0 or 1.
pub fn surface_profile(
    state: &BodyState,
    first_grain: usize,
    axis: usize,
    bins: usize,
    range: (f64, f64),
) -> Vec<(f64, f64)> {
    assert!(
        axis < 2,
        "surface_profile: axis must be 0 (x) or 1 (y), got {axis}"
    );
    let (lo, hi) = range;
    let width = (hi - lo) / bins as f64;
    let mut out: Vec<(f64, f64)> = (0..bins)
        .map(|b| (lo + (b as f64 + 0.5) * width, f64::NAN))
        .collect();
    if bins == 0 || !(width > 0.0 && width.is_finite()) {
        return out;
    }
    for (p, top) in tops(state, first_grain) {
        let x = p[axis] as f64;
        if !(x >= lo && x <= hi) {
            continue;
        }
        let b = (((x - lo) / width) as usize).min(bins - 1);
        let cell = &mut out[b].1;
        if cell.is_nan() || top > *cell {
            *cell = top;
        }
    }
    out
}
