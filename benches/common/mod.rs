//! Helpers shared by the `harness = false` benches (included with `mod common;`).

/// The value of environment variable `key` parsed as `T`, or `default` when unset or bad.
pub fn env<T: std::str::FromStr>(key: &str, default: T) -> T {
    std::env::var(key)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
