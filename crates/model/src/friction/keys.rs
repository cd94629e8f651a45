//! How a friction model reads its keys: the scene layer gives them through [`ModelKeys`] and
//! turns a [`KeyError`] into an error naming the file, line and field; the models word their
//! messages in the user's terms.

use std::fmt;

/// A friction model's keys as the scene file gives them (`[[material]] model = { … }`).
pub trait ModelKeys {
    fn number(&self, key: &str) -> Option<f64>;
    fn text(&self, key: &str) -> Option<&str>;
    fn flag(&self, key: &str) -> Option<bool>;
    fn integer(&self, key: &str) -> Option<i64>;
    /// Whether the key is given at all (any type).
    fn has(&self, key: &str) -> bool;
}

/// What is wrong with one key of a friction model.
#[derive(Debug, Clone, PartialEq)]
pub enum Problem {
    /// A key the model requires is not given.
    Missing,
    NotPositive(f64),
    Negative(f64),
    /// Any other rule, worded in full.
    Invalid(String),
}

/// A friction model's key and what is wrong with it.
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

/// A required number.
pub fn required(keys: &dyn ModelKeys, key: &'static str) -> Result<f64, KeyError> {
    keys.number(key).ok_or(KeyError {
        key,
        problem: Problem::Missing,
    })
}

/// A required number > 0.
pub fn positive(keys: &dyn ModelKeys, key: &'static str) -> Result<f64, KeyError> {
    let x = required(keys, key)?;
    if x > 0.0 {
        Ok(x)
    } else {
        Err(KeyError {
            key,
            problem: Problem::NotPositive(x),
        })
    }
}

/// A required number ≥ 0.
pub fn non_negative(keys: &dyn ModelKeys, key: &'static str) -> Result<f64, KeyError> {
    let x = required(keys, key)?;
    if x >= 0.0 {
        Ok(x)
    } else {
        Err(KeyError {
            key,
            problem: Problem::Negative(x),
        })
    }
}

/// A restitution coefficient in [min, 1]; `why` explains the lower bound.
pub fn restitution(keys: &dyn ModelKeys, min: f64, why: &str) -> Result<f64, KeyError> {
    let e = required(keys, "restitution")?;
    if !(e > 0.0 && e <= 1.0) {
        return Err(KeyError::invalid(
            "restitution",
            format!("must be in (0, 1], got {}", Num(e)),
        ));
    }
    if e < min {
        return Err(KeyError::invalid(
            "restitution",
            format!("must be at least {min} here, got {} ({why})", Num(e)),
        ));
    }
    Ok(e)
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
