//! `bristlecone.Scene`: a scene file's TOML document, loaded or built table by table.
//!
//! Each builder call adds its table to the document and runs the command line's loader on
//! the result: an error about the new table (its field path starts with the table's) is
//! raised as `SceneError` and the table is not added, so a refused call leaves the scene as
//! it was. A scene still missing `[simulation]` is checked with a stand-in one; other
//! whole-scene rules (at least one body) wait for `validate()` or `Simulation(scene)`.

use crate::{convert, guard, SceneError};
use bristlecone::run::{self, RunError};
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;
use toml::{Table, Value};

/// Where a scene built in code says its errors are, and its relative mesh paths' base (the
/// working directory).
const BUILT_LABEL: &str = "scene.toml";

/// A scene: from a file (`Scene.from_file`), from TOML text (`Scene.from_toml`) or built in
/// code (`Scene()` then `simulation(...)`, `material(...)`, `body(...)`, ...). Keyword
/// arguments are the scene file's keys (docs: Scene reference); values are numbers, str,
/// bool, lists (or NumPy arrays) and dicts for inline tables.
#[pyclass(module = "bristlecone")]
#[derive(Clone)]
pub struct Scene {
    doc: Table,
    /// The file's text while unchanged: written back and hashed as it is.
    source: Option<String>,
    /// The file (or label) errors name; its directory is the base of relative mesh paths.
    path: PathBuf,
    /// `scale` of `Scene.from_file` (generators shrunk as `run --scale` does).
    scale: Option<f64>,
}

pub(crate) fn scene_error(e: RunError) -> PyErr {
    match e {
        RunError::Scene(e) => SceneError::new_err(e.to_string()),
        RunError::ReadScene { .. } => PyOSError::new_err(e.to_string()),
        e => PyValueError::new_err(e.to_string()),
    }
}

impl Scene {
    /// The scene the loader builds from this document, with the hash its checkpoints carry.
    pub(crate) fn parse(&self) -> PyResult<(bristlecone::scene::Scene, u64)> {
        run::parse_scene_scaled(&self.text()?, &self.path, self.scale).map_err(scene_error)
    }

    /// The file (or label) errors name.
    pub(crate) fn path(&self) -> &std::path::Path {
        &self.path
    }

    pub(crate) fn text(&self) -> PyResult<String> {
        match &self.source {
            Some(s) => Ok(s.clone()),
            None => toml::to_string(&self.doc)
                .map_err(|e| PyValueError::new_err(format!("cannot write the scene as TOML: {e}"))),
        }
    }

    fn table_of(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Table> {
        let mut t = Table::new();
        if let Some(kw) = kwargs {
            for (k, v) in kw.iter() {
                let key: String = k.extract()?;
                let value = convert::to_toml(&key, &v)?;
                t.insert(key, value);
            }
        }
        Ok(t)
    }

    /// `candidate` replaces the document unless the loader refuses a field under `prefix`.
    fn accept(&mut self, candidate: Table, prefix: &str) -> PyResult<()> {
        let mut checked = candidate.clone();
        if !checked.contains_key("simulation") {
            let mut stand_in = Table::new();
            stand_in.insert("dt".into(), Value::Float(1e-3));
            stand_in.insert("steps".into(), Value::Integer(1));
            checked.insert("simulation".into(), Value::Table(stand_in));
        }
        let text = toml::to_string(&checked)
            .map_err(|e| PyValueError::new_err(format!("cannot write the scene as TOML: {e}")))?;
        if let Err(RunError::Scene(e)) = run::parse_scene_scaled(&text, &self.path, self.scale) {
            let ours = e.field == prefix
                || e.field.starts_with(&format!("{prefix}."))
                || e.field.starts_with(&format!("{prefix}["));
            if ours {
                return Err(SceneError::new_err(e.to_string()));
            }
        }
        self.doc = candidate;
        self.source = None;
        Ok(())
    }

    /// Merges keys into the single table `[name]`.
    fn set_table(&mut self, name: &str, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
        let keys = Self::table_of(kwargs)?;
        let mut candidate = self.doc.clone();
        let entry = candidate
            .entry(name.to_string())
            .or_insert_with(|| Value::Table(Table::new()));
        let Value::Table(t) = entry else {
            return Err(PyValueError::new_err(format!("[{name}] is not a table")));
        };
        t.extend(keys);
        self.accept(candidate, name)
    }

    /// Appends one `[[name]]` table; returns its index.
    fn push_table(&mut self, name: &str, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<usize> {
        let table = Self::table_of(kwargs)?;
        let mut candidate = self.doc.clone();
        let entry = candidate
            .entry(name.to_string())
            .or_insert_with(|| Value::Array(Vec::new()));
        let Value::Array(items) = entry else {
            return Err(PyValueError::new_err(format!(
                "[[{name}]] is not an array of tables"
            )));
        };
        items.push(Value::Table(table));
        let index = items.len() - 1;
        self.accept(candidate, &format!("{name}[{index}]"))?;
        Ok(index)
    }
}

#[pymethods]
impl Scene {
    /// An empty scene to build in code; errors name `scene.toml` (what `to_toml()` gives).
    #[new]
    fn new() -> Self {
        Scene {
            doc: Table::new(),
            source: None,
            path: PathBuf::from(BUILT_LABEL),
            scale: None,
        }
    }

    /// The scene file at `path`, checked as `bristlecone run` checks it (`SceneError` with
    /// file:line:field); `scale` in (0, 1] shrinks its generators as `run --scale` does.
    #[staticmethod]
    #[pyo3(signature = (path, scale = None))]
    fn from_file(path: PathBuf, scale: Option<f64>) -> PyResult<Self> {
        guard(|| {
            let text = bristlecone::input::read_toml(&path, "scene file").map_err(|e| {
                PyOSError::new_err(format!("cannot read scene file {}: {e}", path.display()))
            })?;
            Self::from_text(text, path, scale)
        })
    }

    /// A scene from TOML text; `path` is what errors name and the base of relative mesh
    /// paths.
    #[staticmethod]
    #[pyo3(signature = (text, path = PathBuf::from(BUILT_LABEL)))]
    fn from_toml(text: String, path: PathBuf) -> PyResult<Self> {
        guard(|| Self::from_text(text, path, None))
    }

    /// `[simulation]`: dt, steps or duration, gravity, name (merged into the table).
    #[pyo3(signature = (**kwargs))]
    fn simulation(&mut self, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
        guard(|| self.set_table("simulation", kwargs))
    }

    /// `[solver]`: kind, max_iterations, tolerance, envelope, cone, ... (merged).
    #[pyo3(signature = (**kwargs))]
    fn solver(&mut self, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
        guard(|| self.set_table("solver", kwargs))
    }

    /// `[output]`: dir, frame_every / frame_interval, vtk, contacts, checkpoint_every, ...
    #[pyo3(signature = (**kwargs))]
    fn output(&mut self, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
        guard(|| self.set_table("output", kwargs))
    }

    /// One `[[material]]`: name, density, friction, model, rolling_friction, ... Returns its
    /// index (the material index of `Simulation.state()`).
    #[pyo3(signature = (**kwargs))]
    fn material(&mut self, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<usize> {
        guard(|| self.push_table("material", kwargs))
    }

    /// One `[[body]]` of any shape (radius; shape = "box" with half_extents; capsule,
    /// cylinder, clump, convex, ...), with material, position, velocity, motion, schedule.
    /// Returns its index among the `[[body]]` tables.
    #[pyo3(signature = (**kwargs))]
    fn body(&mut self, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<usize> {
        guard(|| self.push_table("body", kwargs))
    }

    /// One `[[generator]]` (random_fill, lattice, ...).
    #[pyo3(signature = (**kwargs))]
    fn generator(&mut self, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<usize> {
        guard(|| self.push_table("generator", kwargs))
    }

    /// One `[[boundary]]` (plane, box_container, cylinder_container, mesh, ...); boundaries
    /// are the first bodies of the simulation, in this order.
    #[pyo3(signature = (**kwargs))]
    fn boundary(&mut self, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<usize> {
        guard(|| self.push_table("boundary", kwargs))
    }

    /// One `[[joint]]` (spherical, revolute, prismatic, fixed; limits and motor).
    #[pyo3(signature = (**kwargs))]
    fn joint(&mut self, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<usize> {
        guard(|| self.push_table("joint", kwargs))
    }

    /// One `[[measure]]` (written by `bristlecone run` into measurements/NAME.csv).
    #[pyo3(signature = (**kwargs))]
    fn measure(&mut self, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<usize> {
        guard(|| self.push_table("measure", kwargs))
    }

    /// Checks the whole scene as `bristlecone run` does; raises `SceneError`.
    fn validate(&self) -> PyResult<()> {
        guard(|| self.parse().map(|_| ()))
    }

    /// The scene as a scene file: `bristlecone run` of it gives the same bits as
    /// `Simulation(scene)` (a file loaded unchanged comes back as it was read).
    fn to_toml(&self) -> PyResult<String> {
        guard(|| self.text())
    }

    /// Writes `to_toml()` to `path`.
    fn write(&self, path: PathBuf) -> PyResult<()> {
        guard(|| {
            std::fs::write(&path, self.text()?)
                .map_err(|e| PyOSError::new_err(format!("cannot write {}: {e}", path.display())))
        })
    }

    /// The scene's name (`[simulation].name`, or the file's stem); checks the scene.
    #[getter]
    fn name(&self) -> PyResult<String> {
        guard(|| Ok(self.parse()?.0.name))
    }

    /// How many bodies the scene makes (explicit and generated, not the boundaries).
    #[getter]
    fn n_bodies(&self) -> PyResult<usize> {
        guard(|| Ok(self.parse()?.0.bodies.len()))
    }

    fn __repr__(&self) -> String {
        let count = |k: &str| {
            self.doc
                .get(k)
                .and_then(Value::as_array)
                .map_or(0, Vec::len)
        };
        format!(
            "Scene({}: {} materials, {} bodies, {} generators, {} boundaries, {} joints)",
            self.path.display(),
            count("material"),
            count("body"),
            count("generator"),
            count("boundary"),
            count("joint")
        )
    }
}

impl Scene {
    fn from_text(text: String, path: PathBuf, scale: Option<f64>) -> PyResult<Self> {
        run::parse_scene_scaled(&text, &path, scale).map_err(scene_error)?;
        let doc: Table = text
            .parse()
            .map_err(|e| SceneError::new_err(format!("{}: {e}", path.display())))?;
        Ok(Scene {
            doc,
            source: Some(text),
            path,
            scale,
        })
    }
}
