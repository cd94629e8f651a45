//! Numbers as scene messages print them: `0.5`, `2500`, `1e300`, `1.5e-7`; never the
//! hundreds of digits that `f64`'s `Display` writes for very large or very small values.

pub use bristlecone_model::friction::Num;

/// Whether the GPU's `f32` holds `x` as a normal number (or zero): no overflow to infinity,
/// no flush to zero.
pub(crate) fn fits_f32(x: f64) -> bool {
    x == 0.0 || (x.abs() >= f32::MIN_POSITIVE as f64 && x.abs() <= f32::MAX as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readable() {
        let s = |x: f64| Num(x).to_string();
        assert_eq!(s(1e300), "1e300");
        assert_eq!(s(-1e300), "-1e300");
        assert_eq!(s(1e-300), "1e-300");
        assert_eq!(s(1.5e-7), "1.5e-7");
        assert_eq!(s(0.001), "0.001");
        assert_eq!(s(2500.0), "2500");
        assert_eq!(s(0.5), "0.5");
        assert_eq!(s(0.0), "0");
        assert_eq!(s(1e6), "1e6");
        assert!(fits_f32(1e38) && fits_f32(0.0) && fits_f32(-2e-38));
        assert!(!fits_f32(1e39) && !fits_f32(1e-39) && !fits_f32(-1e300));
    }
}
