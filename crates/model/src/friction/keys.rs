//! How a friction model reads its keys: the scene layer gives them through [`ModelKeys`] and
//! turns a [`KeyError`] into an error naming the file, line and field; the models word their
//! messages in the user's terms.

pub use crate::keys::{KeyError, Num, Problem};

/// A friction model's keys as the scene file gives them (`[[material]] model = { … }`).
pub trait ModelKeys {
    fn number(&self, key: &str) -> Option<f64>;
    fn text(&self, key: &str) -> Option<&str>;
    fn flag(&self, key: &str) -> Option<bool>;
    fn integer(&self, key: &str) -> Option<i64>;
    /// Whether the key is given at all (any type).
    fn has(&self, key: &str) -> bool;
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
    crate::keys::positive(key, keys.number(key))
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
