//! `bristlecone._native`: the Python package's extension module, a thin layer over the
//! engine's library facade (`bristlecone::facade`). Scenes built in code are TOML documents
//! checked by the command line's loader (`scene`), so they carry its validation and its
//! messages and write back to TOML exactly; a simulation is the facade's (`sim`).
//!
//! No Rust panic reaches Python: every entry point runs under `guard`, which turns one
//! into a `RuntimeError` (a defect to report, never an expected outcome).

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

mod convert;
mod render;
mod scene;
mod sim;

pyo3::create_exception!(
    bristlecone,
    SceneError,
    PyValueError,
    "A scene the loader refuses: the message is `file:line:column: field: what is wrong` \
     (for a scene built in code, the field names the builder's argument)."
);

/// Runs `work`, turning a panic into a `RuntimeError` that says it is a defect.
pub(crate) fn guard<T>(work: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)) {
        Ok(r) => r,
        Err(panic) => {
            let what = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("(no message)");
            Err(PyRuntimeError::new_err(format!(
                "internal error in bristlecone (please report it): {what}"
            )))
        }
    }
}

/// The GPU adapter a backend opens, as `bristlecone info` prints it: a list with one dict
/// (name, backend, device_type, driver) per backend choice that opens.
#[pyfunction]
#[pyo3(signature = (backend = "auto"))]
fn adapters(py: Python<'_>, backend: &str) -> PyResult<Vec<Py<PyAny>>> {
    guard(|| {
        let choice = sim::backend_choice(backend)?;
        let ctx = py
            .detach(|| bristlecone::facade::context(choice))
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        let d = pyo3::types::PyDict::new(py);
        d.set_item("name", &ctx.info.name)?;
        d.set_item("backend", format!("{:?}", ctx.info.backend))?;
        d.set_item("device_type", format!("{:?}", ctx.info.device_type))?;
        d.set_item(
            "driver",
            format!("{} {}", ctx.info.driver, ctx.info.driver_info),
        )?;
        d.set_item("description", ctx.describe())?;
        Ok(vec![d.into_any().unbind()])
    })
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("SceneError", m.py().get_type::<SceneError>())?;
    m.add_class::<scene::Scene>()?;
    m.add_class::<sim::Simulation>()?;
    m.add_function(wrap_pyfunction!(adapters, m)?)?;
    m.add_function(wrap_pyfunction!(render::render, m)?)?;
    Ok(())
}
