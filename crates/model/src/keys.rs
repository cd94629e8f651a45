//! What is wrong with a key of a scene table that a registry entry reads (a friction model's
//! `[[material]] model` keys, a shape family's `[[body]]` size keys): the entry words the
//! problem in the user's terms, the scene layer adds the file, line and field.

use std::fmt;

/// What is wrong with one key.
#[derive(Debug, Clone, PartialEq)]
pub enum Problem {
    /// A required key is not given.
    Missing,
    NotPositive(f64),
    Negative(f64),
    /// Any other rule, worded in full.
    Invalid(String),
}

/// A key of a friction model or of a shape family, and what is wrong with it.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyError {
    pub key: &'static str,
    pub problem: Problem,
}

impl KeyError {
    pub fn invalid(key: &'static str, message: impl Into<String>) -> Self {
        KeyError {
            key,
            problem: Problem::Invalid(message.into()),
        }
    }
}

/// A required number > 0, as given (`None`: not given).
pub fn positive(key: &'static str, given: Option<f64>) -> Result<f64, KeyError> {
    let problem = match given {
        Some(x) if x > 0.0 => return Ok(x),
        Some(x) => Problem::NotPositive(x),
        None => Problem::Missing,
    };
    Err(KeyError { key, problem })
}

/// Displays an `f64` readably: plain for magnitudes in [1e-3, 1e6), else scientific, always
/// the shortest text that reads back to the same value (never the hundreds of digits that
/// `f64`'s `Display` writes for very large or very small values).
#[derive(Clone, Copy, Debug)]
pub struct Num(pub f64);

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let x = self.0;
        let a = x.abs();
        if x == 0.0 || !x.is_finite() || (1e-3..1e6).contains(&a) {
            write!(f, "{x}")
        } else {
            write!(f, "{x:e}")
        }
    }
}
