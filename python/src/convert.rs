//! Python values → TOML values for the scene builder: the same types a scene file holds.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use toml::Value;

/// `value` as TOML, or a `TypeError` naming `argument` (a builder keyword, with the path to a
/// nested item such as `region.min[1]`).
pub fn to_toml(argument: &str, value: &Bound<'_, PyAny>) -> PyResult<Value> {
    if value.is_instance_of::<PyBool>() {
        return Ok(Value::Boolean(value.extract()?));
    }
    if value.is_instance_of::<PyInt>() {
        return value.extract::<i64>().map(Value::Integer).map_err(|_| {
            PyTypeError::new_err(format!("argument '{argument}': integer out of range"))
        });
    }
    if value.is_instance_of::<PyFloat>() {
        return Ok(Value::Float(value.extract()?));
    }
    if value.is_instance_of::<PyString>() {
        return Ok(Value::String(value.extract()?));
    }
    if let Ok(d) = value.cast::<PyDict>() {
        let mut t = toml::Table::new();
        for (k, v) in d.iter() {
            let key: String = k.extract().map_err(|_| {
                PyTypeError::new_err(format!("argument '{argument}': dict keys must be str"))
            })?;
            let item = to_toml(&format!("{argument}.{key}"), &v)?;
            t.insert(key, item);
        }
        return Ok(Value::Table(t));
    }
    if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        let items: Vec<Bound<'_, PyAny>> = value.try_iter()?.collect::<PyResult<_>>()?;
        return items
            .iter()
            .enumerate()
            .map(|(i, v)| to_toml(&format!("{argument}[{i}]"), v))
            .collect::<PyResult<Vec<_>>>()
            .map(Value::Array);
    }
    // NumPy arrays and scalars, os.PathLike: through their plain Python value.
    if value.hasattr("tolist")? {
        return to_toml(argument, &value.call_method0("tolist")?);
    }
    if value.hasattr("__fspath__")? {
        return to_toml(argument, &value.call_method0("__fspath__")?);
    }
    Err(PyTypeError::new_err(format!(
        "argument '{argument}': expected a number, str, bool, list or dict (got {})",
        value.get_type().name()?
    )))
}
