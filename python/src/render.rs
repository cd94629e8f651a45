//! `bristlecone.render`: a picture of a run directory's frame or of a simulation's current
//! state, drawn by the command line's renderer (`bristlecone render`) with its options.

use crate::guard;
use crate::sim::{backend_choice, numbers, Simulation};
use bristlecone::render::{
    self as renderer, camera::Preset, ColorBy, FrameSelect, RenderError, ViewLayer,
};
use numpy::{PyArray1, PyArrayMethods};
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;

pub(crate) fn render_error(e: RenderError) -> PyErr {
    match e {
        e @ (RenderError::Options(_) | RenderError::Run { .. } | RenderError::Frame { .. }) => {
            PyValueError::new_err(e.to_string())
        }
        e @ RenderError::Io(_) => PyOSError::new_err(e.to_string()),
        e => PyRuntimeError::new_err(e.to_string()),
    }
}

/// A parsed keyword value, or a `ValueError` naming `key`.
fn parsed<T>(key: &str, r: Result<T, String>) -> PyResult<T> {
    r.map_err(|m| PyValueError::new_err(format!("argument '{key}': {m}")))
}

/// The keyword options that only a run directory takes.
struct RunDirOptions {
    frame: Option<usize>,
    scene: Option<PathBuf>,
    scale: Option<f64>,
}

/// The options of `render(...)`: the view settings (as the command line's flags), the
/// backend, and those for a run directory.
fn options(
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<(ViewLayer, String, RunDirOptions, Vec<&'static str>)> {
    let mut v = ViewLayer::default();
    let mut backend = "auto".to_string();
    let mut run = RunDirOptions {
        frame: None,
        scene: None,
        scale: None,
    };
    let mut given = Vec::new();
    let Some(kwargs) = kwargs else {
        return Ok((v, backend, run, given));
    };
    let text = |key: &str, value: &Bound<'_, PyAny>| -> PyResult<String> {
        value
            .extract()
            .map_err(|_| PyTypeError::new_err(format!("argument '{key}': expected a str")))
    };
    for (k, value) in kwargs.iter() {
        let key: String = k.extract()?;
        if value.is_none() {
            continue;
        }
        let typed = |what: &str| PyTypeError::new_err(format!("argument '{key}': expected {what}"));
        match key.as_str() {
            "camera" => v.camera = Some(parsed(&key, text(&key, &value)?.parse::<Preset>())?),
            "eye" => v.eye = Some(numbers::<3>("eye", &value)?),
            "target" => v.target = Some(numbers::<3>("target", &value)?),
            "up" => v.up = Some(numbers::<3>("up", &value)?),
            "fov" => v.fov = Some(value.extract().map_err(|_| typed("a number"))?),
            "width" => v.width = Some(value.extract().map_err(|_| typed("an int ≥ 0"))?),
            "height" => v.height = Some(value.extract().map_err(|_| typed("an int ≥ 0"))?),
            "background" => {
                let c = renderer::settings::parse_color(&text(&key, &value)?);
                v.background = Some(parsed(&key, c)?)
            }
            "color_by" => v.color_by = Some(parsed(&key, text(&key, &value)?.parse::<ColorBy>())?),
            "range" => {
                let [lo, hi] = numbers::<2>("range", &value)?;
                v.range = Some((lo, hi));
            }
            "force_chains" => v.force_chains = Some(value.extract().map_err(|_| typed("a bool"))?),
            "shadows" => v.shadows = Some(value.extract().map_err(|_| typed("a bool"))?),
            "supersample" => {
                v.supersample = Some(value.extract().map_err(|_| typed("an int ≥ 0"))?)
            }
            "backend" => backend = text(&key, &value)?,
            "frame" => {
                run.frame = Some(value.extract().map_err(|_| typed("an int ≥ 0"))?);
                given.push("frame");
            }
            "scene" => {
                run.scene = Some(value.extract().map_err(|_| typed("a path"))?);
                given.push("scene");
            }
            "scale" => {
                run.scale = Some(value.extract().map_err(|_| typed("a number"))?);
                given.push("scale");
            }
            other => {
                return Err(PyTypeError::new_err(format!(
                    "render() got an unexpected keyword argument '{other}'"
                )))
            }
        }
    }
    Ok((v, backend, run, given))
}

/// Draws a run directory's frame (`source`: its path) or a simulation's current state
/// (`source`: a `Simulation`) as `bristlecone render` does, with its options as keywords:
/// camera ("iso", "front", "top"), eye and target, up, fov, width, height, background,
/// color_by ("speed", "material"), range, force_chains, shadows, supersample, backend; for a
/// run directory also frame (index in particles.pvd; default the last), scene and scale.
/// Without `path`: the image as a NumPy array (height, width, 3) uint8. With `path`: writes
/// it there as PNG (the command line's bytes for the same run and options) and returns the
/// path.
#[pyfunction]
#[pyo3(signature = (source, path = None, **options))]
pub(crate) fn render<'py>(
    py: Python<'py>,
    source: &Bound<'py, PyAny>,
    path: Option<PathBuf>,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    guard(|| {
        let (view, backend, run, given) = self::options(options)?;
        let choice = backend_choice(&backend)?;
        let (rgb, w, h) = if let Ok(sim) = source.cast::<Simulation>() {
            if let Some(name) = given.first() {
                return Err(PyValueError::new_err(format!(
                    "argument '{name}': only for a run directory (a simulation is drawn at its current step)"
                )));
            }
            let sim = sim.borrow();
            let sim: &Simulation = &sim;
            let view = view.over(&sim.render_table()?);
            py.detach(|| sim.render(&view))?
        } else {
            let dir: PathBuf = source.extract().map_err(|_| {
                PyTypeError::new_err(
                    "argument 'source': expected a run directory (str or os.PathLike) or a Simulation",
                )
            })?;
            let opts = renderer::RenderOptions {
                frames: run.frame.map_or(FrameSelect::Last, FrameSelect::Index),
                out: None,
                scene: run.scene,
                scale: run.scale,
                flags: view,
            };
            py.detach(|| {
                let ctx = bristlecone::facade::context(choice)
                    .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
                renderer::render_image(ctx, &dir, &opts).map_err(render_error)
            })?
        };
        match path {
            None => Ok(PyArray1::from_vec(py, rgb)
                .reshape([h as usize, w as usize, 3])?
                .into_any()),
            Some(path) => {
                let png = renderer::image::encode_png(&rgb, w, h).map_err(render_error)?;
                bristlecone::io::write_atomic(&path, |f| f.write_all(&png)).map_err(|e| {
                    PyOSError::new_err(format!("cannot write {}: {e}", path.display()))
                })?;
                Ok(path.into_pyobject(py)?.into_any())
            }
        }
    })
}
