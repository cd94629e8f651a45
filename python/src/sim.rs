//! `bristlecone.Simulation`: the library facade's simulation behind a lock, so that threads
//! stepping different simulations never wait on each other's locks (only on the device
//! queue they share), and a failed call leaves it as it was.

use crate::scene::Scene;
use crate::{guard, SceneError};
use bristlecone::facade::{self, Error};
use bristlecone::gpu::BackendChoice;
use bristlecone::render::ViewLayer;
use bristlecone::run::RunError;
use numpy::{PyArray1, PyArrayMethods};
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

pub(crate) fn backend_choice(backend: &str) -> PyResult<BackendChoice> {
    match backend {
        "auto" => Ok(BackendChoice::Auto),
        "vulkan" => Ok(BackendChoice::Vulkan),
        "gl" => Ok(BackendChoice::Gl),
        other => Err(PyValueError::new_err(format!(
            "argument 'backend': expected \"auto\", \"vulkan\" or \"gl\" (got {other:?})"
        ))),
    }
}

fn py_error(e: Error) -> PyErr {
    match e {
        Error::Argument(m) => PyValueError::new_err(m),
        Error::Run(RunError::Scene(e)) => SceneError::new_err(e.to_string()),
        Error::Run(
            e @ (RunError::Io(_) | RunError::OutDir { .. } | RunError::ReadScene { .. }),
        ) => PyOSError::new_err(e.to_string()),
        Error::Run(e @ RunError::Resume { .. }) => PyValueError::new_err(e.to_string()),
        Error::Run(e) => PyRuntimeError::new_err(e.to_string()),
        Error::Render(e) => crate::render::render_error(e),
    }
}

/// A sequence of `N` numbers (list, tuple, NumPy array), or a `TypeError`/`ValueError`
/// naming `argument` and the expected shape.
pub(crate) fn numbers<const N: usize>(
    argument: &str,
    value: &Bound<'_, PyAny>,
) -> PyResult<[f64; N]> {
    let items: Vec<f64> = value.extract().or_else(|_| {
        value
            .call_method0("tolist")
            .and_then(|l| l.extract())
            .map_err(|_| {
                PyTypeError::new_err(format!(
                    "argument '{argument}': expected {N} numbers (got {})",
                    value
                        .get_type()
                        .name()
                        .map(|n| n.to_string())
                        .unwrap_or_default()
                ))
            })
    })?;
    items.try_into().map_err(|v: Vec<f64>| {
        PyValueError::new_err(format!(
            "argument '{argument}': expected shape ({N},) (got {} numbers)",
            v.len()
        ))
    })
}

/// A flat vector as an `(n, K)` NumPy array (owned by NumPy: valid after further steps).
fn rows<'py, T: numpy::Element, const K: usize>(
    py: Python<'py>,
    v: Vec<[T; K]>,
) -> PyResult<Bound<'py, PyAny>> {
    let n = v.len();
    let flat: Vec<T> = v.into_flattened();
    Ok(PyArray1::from_vec(py, flat).reshape([n, K])?.into_any())
}

fn column<'py, T: numpy::Element>(py: Python<'py>, v: Vec<T>) -> Bound<'py, PyAny> {
    PyArray1::from_vec(py, v).into_any()
}

/// A scene's simulation on a GPU adapter (lavapipe without a GPU): `Simulation(scene,
/// backend="auto")`. Bodies are numbered as in the engine: the scene's boundaries first,
/// then its `[[body]]` tables, then each generator's grains (`state()["first_grain"]`).
#[pyclass(module = "bristlecone")]
pub struct Simulation {
    inner: Mutex<facade::Simulation>,
    /// The scene's text and the path it names: its `[render]` table for `render()`.
    scene_text: String,
    scene_path: PathBuf,
}

impl Simulation {
    fn sim(&self) -> PyResult<MutexGuard<'_, facade::Simulation>> {
        self.inner.lock().map_err(|_| {
            PyRuntimeError::new_err(
                "this simulation was left inconsistent by an earlier internal error",
            )
        })
    }

    fn open(
        py: Python<'_>,
        scene: &Scene,
        backend: &str,
        checkpoint: Option<PathBuf>,
    ) -> PyResult<Self> {
        let choice = backend_choice(backend)?;
        let (parsed, hash) = scene.parse()?;
        let sim = py.detach(move || -> Result<_, Error> {
            let ctx = facade::context(choice)?;
            match checkpoint {
                Some(path) => facade::Simulation::resume(parsed, hash, ctx, &path),
                None => facade::Simulation::with_hash(parsed, hash, ctx),
            }
        });
        let sim = sim.map_err(py_error)?;
        Ok(Simulation {
            inner: Mutex::new(sim),
            scene_text: scene.text()?,
            scene_path: scene.path().to_path_buf(),
        })
    }

    /// The scene's `[render]` table.
    pub(crate) fn render_table(&self) -> PyResult<ViewLayer> {
        bristlecone::render::settings::read_table(&self.scene_text, &self.scene_path)
            .map_err(crate::render::render_error)
    }

    /// The current state drawn with `view` (see `bristlecone::facade::Simulation::render`).
    pub(crate) fn render(&self, view: &ViewLayer) -> PyResult<(Vec<u8>, u32, u32)> {
        self.sim()?.render(view).map_err(py_error)
    }
}

#[pymethods]
impl Simulation {
    /// Builds `scene` on the device (`backend`: "auto", "vulkan" or "gl"); raises
    /// `SceneError` for a scene the loader refuses.
    #[new]
    #[pyo3(signature = (scene, backend = "auto"))]
    fn new(py: Python<'_>, scene: &Scene, backend: &str) -> PyResult<Self> {
        guard(|| Self::open(py, scene, backend, None))
    }

    /// `scene`'s simulation continued from `checkpoint` (written by `Simulation.checkpoint`
    /// or by `bristlecone run` of the same scene text); bit-identical to never stopping.
    #[staticmethod]
    #[pyo3(signature = (scene, checkpoint, backend = "auto"))]
    fn resume(py: Python<'_>, scene: &Scene, checkpoint: PathBuf, backend: &str) -> PyResult<Self> {
        guard(|| Self::open(py, scene, backend, Some(checkpoint)))
    }

    /// Takes `n` steps (the scene's prescribed motion applied at its steps). The GIL is
    /// released while the device works; Ctrl-C raises `KeyboardInterrupt` after the current
    /// batch (at most 50 steps), leaving a simulation that can be checkpointed.
    #[pyo3(signature = (n = 1))]
    fn step(&self, py: Python<'_>, n: i64) -> PyResult<()> {
        guard(|| {
            let n = u64::try_from(n).map_err(|_| {
                PyValueError::new_err(format!("argument 'n': must be ≥ 0 (got {n})"))
            })?;
            let total = self.sim()?.step_index() + n;
            loop {
                let done = py.detach(|| -> PyResult<bool> {
                    let mut sim = self.sim()?;
                    sim.step_batch(total).map_err(py_error)?;
                    Ok(sim.step_index() >= total)
                })?;
                if done {
                    return Ok(());
                }
                py.check_signals()?;
            }
        })
    }

    /// Simulated time (s).
    #[getter]
    fn time(&self) -> PyResult<f64> {
        guard(|| Ok(self.sim()?.time()))
    }

    /// Steps taken since step 0.
    #[getter]
    fn step_index(&self) -> PyResult<u64> {
        guard(|| Ok(self.sim()?.step_index()))
    }

    /// Every body now, as NumPy arrays (copies, owned by Python): positions (N,3) float32,
    /// orientations (N,4) float32 quaternions [x,y,z,w], velocities (N,3), angular_velocities
    /// (N,3), ids (N,) uint32, shape (N,) uint32, motion (N,) uint32 (0 dynamic, 1
    /// kinematic, 2 fixed), material (N,) uint32, radius (N,) float32 (bounding), sizes (N,3)
    /// float32; and step, time, first_grain.
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        guard(|| {
            let s = py.detach(|| self.sim()?.state().map_err(py_error))?;
            let d = PyDict::new(py);
            let n = s.len() as u32;
            d.set_item("step", s.step)?;
            d.set_item("time", s.time)?;
            d.set_item("first_grain", s.first_grain)?;
            d.set_item("positions", rows(py, s.positions)?)?;
            d.set_item("orientations", rows(py, s.orientations)?)?;
            d.set_item("velocities", rows(py, s.velocities)?)?;
            d.set_item("angular_velocities", rows(py, s.angular_velocities)?)?;
            d.set_item("ids", column(py, (0..n).collect::<Vec<u32>>()))?;
            d.set_item("shape", column(py, s.shape))?;
            d.set_item("motion", column(py, s.motion))?;
            d.set_item("material", column(py, s.material))?;
            d.set_item("radius", column(py, s.radius))?;
            d.set_item("sizes", rows(py, s.sizes)?)?;
            Ok(d)
        })
    }

    /// The contacts of the last step (empty before the first): body_a, body_b (M,) uint32,
    /// points (M,3) float64 (on A), normals (M,3) float32 (A to B), gaps (M,) float32,
    /// impulses (M,3) float32 (normal, two tangential; N·s), forces (M,3) float64 (on B, N).
    fn contacts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        guard(|| {
            let c = py.detach(|| self.sim()?.contacts().map_err(py_error))?;
            let d = PyDict::new(py);
            d.set_item("body_a", column(py, c.body_a))?;
            d.set_item("body_b", column(py, c.body_b))?;
            d.set_item("points", rows(py, c.points)?)?;
            d.set_item("normals", rows(py, c.normals)?)?;
            d.set_item("gaps", column(py, c.gaps))?;
            d.set_item("impulses", rows(py, c.impulses)?)?;
            d.set_item("forces", rows(py, c.forces)?)?;
            Ok(d)
        })
    }

    /// The last recorded step's statistics: step, time, kinetic_energy, contacts,
    /// iterations, residual, max_penetration (None before the first step).
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        guard(|| {
            let sim = self.sim()?;
            let Some(r) = sim.last_record() else {
                return Ok(None);
            };
            let d = PyDict::new(py);
            d.set_item("step", r.step)?;
            d.set_item("time", r.time)?;
            d.set_item("kinetic_energy", r.totals.kinetic_energy)?;
            d.set_item("contacts", r.contacts)?;
            d.set_item("iterations", r.iterations)?;
            d.set_item("residual", r.residual)?;
            d.set_item("max_penetration", r.max_penetration)?;
            Ok(Some(d))
        })
    }

    /// The scene's `[[measure]]` time series so far, sampled at the steps `bristlecone run`
    /// samples them (from step 0; after `resume`, from the first sample after the
    /// checkpoint): a dict name -> dict column -> (samples,) float64 array, with "time" (s)
    /// first and then the columns of the command line's `measurements/NAME.csv`.
    fn measurements<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        guard(|| {
            let all = self.sim()?.measurements();
            let d = PyDict::new(py);
            for m in all {
                let series = PyDict::new(py);
                series.set_item("time", column(py, m.times))?;
                for (k, name) in m.columns.iter().enumerate() {
                    let values: Vec<f64> = m.rows.iter().map(|r| r[k]).collect();
                    series.set_item(name, column(py, values))?;
                }
                d.set_item(m.name, series)?;
            }
            Ok(d)
        })
    }

    /// The unit of every column of `measurements()`: a dict name -> dict column -> unit
    /// ("s", "kg", "kg/s", "m", "J", "N", "N m", "deg"; "1" for a count or a ratio).
    fn measurement_units<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        guard(|| {
            let all = self.sim()?.measurements();
            let d = PyDict::new(py);
            for m in all {
                let units = PyDict::new(py);
                units.set_item("time", "s")?;
                for (name, unit) in m.columns.iter().zip(&m.units) {
                    units.set_item(name, *unit)?;
                }
                d.set_item(m.name, units)?;
            }
            Ok(d)
        })
    }

    /// Sets body `body`'s velocity (m/s) and angular velocity (rad/s, world) for the next
    /// step; dynamic and kinematic bodies (a fixed one refuses).
    #[pyo3(signature = (body, velocity, angular_velocity = None))]
    fn set_velocity(
        &self,
        body: usize,
        velocity: &Bound<'_, PyAny>,
        angular_velocity: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        guard(|| {
            let v = numbers::<3>("velocity", velocity)?;
            let w = match angular_velocity {
                Some(w) => numbers::<3>("angular_velocity", w)?,
                None => [0.0; 3],
            };
            self.sim()?.set_velocity(body, v, w).map_err(py_error)
        })
    }

    /// Places kinematic body `body` at `position` (m) with `orientation` (unit quaternion
    /// [x, y, z, w]; default: unrotated) before the next step.
    #[pyo3(signature = (body, position, orientation = None))]
    fn set_kinematic_pose(
        &self,
        body: usize,
        position: &Bound<'_, PyAny>,
        orientation: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        guard(|| {
            let p = numbers::<3>("position", position)?;
            let q = match orientation {
                Some(q) => numbers::<4>("orientation", q)?,
                None => [0.0, 0.0, 0.0, 1.0],
            };
            self.sim()?.set_kinematic_pose(body, p, q).map_err(py_error)
        })
    }

    /// Gravity (m/s²) from the next step on.
    fn set_gravity(&self, gravity: &Bound<'_, PyAny>) -> PyResult<()> {
        guard(|| {
            let g = numbers::<3>("gravity", gravity)?;
            self.sim()?.set_gravity(g).map_err(py_error)
        })
    }

    /// Material `material`'s Coulomb friction coefficient (≥ 0) from the next step on,
    /// exactly as a run of the changed scene resumed here.
    fn set_friction(&self, py: Python<'_>, material: &str, friction: f64) -> PyResult<()> {
        guard(|| {
            py.detach(|| {
                self.sim()?
                    .set_friction(material, friction)
                    .map_err(py_error)
            })
        })
    }

    /// The motor target of joint `joint` (velocity or position, as the motor's kind).
    fn set_motor_target(&self, py: Python<'_>, joint: usize, target: f64) -> PyResult<()> {
        guard(|| {
            py.detach(|| {
                self.sim()?
                    .set_motor_target(joint, target)
                    .map_err(py_error)
            })
        })
    }

    /// Writes a checkpoint of the current step to `path` in the command line's format
    /// (`bristlecone run SCENE --resume path` continues it). It carries the parameters set
    /// since the scene (gravity, friction, motor targets), which a resume, here or from the
    /// command line, continues with; without any it is the command line's byte for byte.
    fn checkpoint(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        guard(|| py.detach(|| self.sim()?.checkpoint(&path).map_err(py_error)))
    }

    /// Writes the command line's output frame of the current step into the run directory
    /// `dir`, the same files `bristlecone run` writes at this step: frames/particles_STEP.vtp
    /// and the boundary and body surfaces, contacts (with `[output] contacts = true`) and
    /// joints, each indexed by its .pvd. Returns the particle frame's path.
    fn write_frame(&self, py: Python<'_>, dir: PathBuf) -> PyResult<PathBuf> {
        guard(|| py.detach(|| self.sim()?.write_frame(&dir).map_err(py_error)))
    }

    fn __repr__(&self) -> String {
        match self.sim() {
            Ok(s) => format!(
                "Simulation('{}': step {}, t = {} s)",
                s.scene().name,
                s.step_index(),
                s.time()
            ),
            Err(_) => "Simulation(failed)".into(),
        }
    }
}
