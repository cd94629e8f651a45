//! Inflow and outflow in the run loop (scene side: `crate::scene::flow`).
//!
//! Grains come and go by changing their motion kind: an inflow activates parked grains of
//! its pool, an outflow parks live grains again (`Simulation::activate`, `park`). The body
//! count never changes, so no GPU stage is resized and a checkpoint's `bodies` section
//! already says which grains are live; the counters below travel in its `flow` section.
//!
//! Events happen before step `s` for every inflow or outflow with `s % every == 0`, on the
//! state after step `s` (batches end there): first the outflows take out the dynamic grains
//! whose centre is in their region, then each inflow places the grains due by `t = s·dt`
//! (`floor(rate·t)` grains, or while the mass inserted stays within `mass_rate·t`). A grain is
//! placed at a uniform random point of the region where its bounding sphere overlaps no live
//! grain and no grain of the same wave; candidates are drawn from the inflow's seed and the
//! step index (ChaCha8, one stream per step), so a resumed run places the same grains. A
//! grain that finds no room within `max_attempts` candidates waits, with those after it, for
//! the next wave.
//!
//! The run loop writes each inflow's and outflow's rows to `measurements/NAME.csv`; the
//! library's simulation ([`crate::Simulation`]) keeps them in memory instead.

use std::borrow::Cow;
use std::path::Path;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::bodies::{BodyState, MOTION_DYNAMIC, MOTION_PARKED};
use crate::io::{Checkpoint, IoError};
use crate::measure::{MeasurementId, MeasurementWriter};
use crate::scene::flow::{FlowRate, Inflow, Outflow};
use crate::scene::{Motion, Scene};
use crate::step::{Activation, Simulation};

use super::RunError;

/// The checkpoint section of the counters.
pub(crate) const SECTION: &str = "flow";

/// Relative margin kept between a placed grain and its neighbours, so that the f32
/// rounding of the placed centre cannot turn touching into overlapping.
const PLACE_MARGIN: f64 = 1e-6;

const INFLOW_COLUMNS: [&str; 3] = ["inserted", "inserted_mass", "waiting"];
const INFLOW_UNITS: [&str; 3] = ["1", "kg", "1"];
const OUTFLOW_COLUMNS: [&str; 3] = ["removed", "removed_mass", "live_mass"];
const OUTFLOW_UNITS: [&str; 3] = ["1", "kg", "kg"];

/// Where an inflow's or outflow's rows go: its CSV file, or (without one) memory.
#[derive(Default)]
struct Rows {
    file: Option<MeasurementId>,
    kept: Vec<(f64, Vec<f64>)>,
}

/// One inflow's or outflow's rows kept in memory ([`Flow::kept`]).
pub(crate) struct KeptRows<'a> {
    pub name: &'a str,
    pub columns: &'static [&'static str],
    pub units: &'static [&'static str],
    pub rows: &'a [(f64, Vec<f64>)],
}

struct InflowState {
    spec: Inflow,
    /// Body index of the pool's first grain.
    first: usize,
    inserted: u64,
    inserted_mass: f64,
    rows: Rows,
}

struct OutflowState {
    spec: Outflow,
    removed: u64,
    removed_mass: f64,
    rows: Rows,
}

pub(crate) struct Flow {
    inflows: Vec<InflowState>,
    outflows: Vec<OutflowState>,
    /// Mass of every body (0 for boundaries and bodies that are not dynamic).
    mass: Vec<f64>,
    nb: usize,
    dt: f64,
    writer: Option<MeasurementWriter>,
    /// The bodies that left or entered the scene in the current event.
    changed: Vec<usize>,
}

impl Flow {
    /// The scene's inflows and outflows, their measurement files in `dir`, or their rows
    /// kept in memory without one (continued after `resumed`, whose counters they take; a
    /// restart takes the counters of `from` and starts the files afresh).
    pub(crate) fn new(
        scene: &Scene,
        dir: Option<&Path>,
        resumed: Option<&Checkpoint>,
        from: Option<&Checkpoint>,
    ) -> Result<Self, RunError> {
        let nb = crate::setup::boundary_count(scene);
        let mut mass = vec![0.0; nb];
        mass.extend(scene.bodies.iter().map(|b| match b.motion {
            Motion::Dynamic => b.mass,
            _ => 0.0,
        }));
        let mut flow = Flow {
            inflows: Vec::new(),
            outflows: Vec::new(),
            mass,
            nb,
            dt: scene.sim.dt,
            writer: None,
            changed: Vec::new(),
        };
        if scene.inflows.is_empty() && scene.outflows.is_empty() {
            return Ok(flow);
        }
        flow.writer = dir.map(MeasurementWriter::new).transpose()?;
        // The event at the checkpoint's step comes after the checkpoint: it is done again.
        let mut open = |name: &str, columns: &[&str]| -> Result<Rows, RunError> {
            let Some(writer) = flow.writer.as_mut() else {
                return Ok(Rows::default());
            };
            let file = match resumed {
                Some(ck) => writer.resume(name, columns, ck.time - 0.5 * scene.sim.dt)?,
                None => writer.create(name, columns)?,
            };
            Ok(Rows {
                file: Some(file),
                kept: Vec::new(),
            })
        };
        let mut inflows = Vec::new();
        let mut pool_mass = Vec::new();
        for f in &scene.inflows {
            inflows.push(InflowState {
                first: flow.mass.len() + pool_mass.len(),
                inserted: 0,
                inserted_mass: 0.0,
                rows: open(&f.name, &INFLOW_COLUMNS)?,
                spec: f.clone(),
            });
            pool_mass.extend(f.pool.iter().map(|g| g.mass));
        }
        let mut outflows = Vec::new();
        for o in &scene.outflows {
            outflows.push(OutflowState {
                removed: 0,
                removed_mass: 0.0,
                rows: open(&o.name, &OUTFLOW_COLUMNS)?,
                spec: o.clone(),
            });
        }
        (flow.inflows, flow.outflows) = (inflows, outflows);
        flow.mass.extend(pool_mass);
        if let Some(ck) = resumed.or(from) {
            flow.restore(ck)?;
        }
        Ok(flow)
    }

    /// The first event step after `s`.
    pub(crate) fn next_after(&self, s: u64) -> Option<u64> {
        let every = self.inflows.iter().map(|f| f.spec.every);
        let every = every.chain(self.outflows.iter().map(|o| o.spec.every));
        every.map(|k| (s / k + 1) * k).min()
    }

    /// The events due before step `s`; the bodies that left or entered the scene.
    pub(crate) fn apply(&mut self, sim: &mut Simulation, s: u64) -> Result<Vec<usize>, RunError> {
        let due = |every: u64| s.is_multiple_of(every);
        if !self.inflows.iter().any(|f| due(f.spec.every))
            && !self.outflows.iter().any(|o| due(o.spec.every))
        {
            return Ok(Vec::new());
        }
        let mut state = sim.download_kinematics()?;
        let time = s as f64 * self.dt;
        for k in 0..self.outflows.len() {
            if due(self.outflows[k].spec.every) {
                self.remove(k, sim, &mut state, time)?;
            }
        }
        for k in 0..self.inflows.len() {
            if due(self.inflows[k].spec.every) {
                self.insert(k, sim, &mut state, s)?;
            }
        }
        Ok(std::mem::take(&mut self.changed))
    }

    /// Outflow `k` parks the dynamic grains whose centre is in its region.
    fn remove(
        &mut self,
        k: usize,
        sim: &mut Simulation,
        state: &mut BodyState,
        time: f64,
    ) -> Result<(), RunError> {
        let o = &mut self.outflows[k];
        for b in self.nb..state.len() {
            let p = state.pos[b];
            let centre = [p[0], p[1], p[2]].map(f64::from);
            if state.info[b][0] == MOTION_DYNAMIC && o.spec.region.contains(centre) {
                sim.park(b as u32, [p[0], p[1], p[2]], p[3])?;
                state.info[b][0] = MOTION_PARKED;
                self.changed.push(b);
                o.removed += 1;
                o.removed_mass += self.mass[b];
            }
        }
        let live_mass = (self.nb..state.len())
            .filter(|&b| state.info[b][0] == MOTION_DYNAMIC)
            .map(|b| self.mass[b])
            .sum::<f64>()
            + 0.0; // an empty sum is -0.0
        let row = [o.removed as f64, o.removed_mass, live_mass];
        append(&mut self.writer, &mut o.rows, time, &row)
    }

    /// Inflow `k`'s wave before step `s`.
    fn insert(
        &mut self,
        k: usize,
        sim: &mut Simulation,
        state: &mut BodyState,
        s: u64,
    ) -> Result<(), RunError> {
        let time = s as f64 * self.dt;
        let f = &mut self.inflows[k];
        let spec = &f.spec;
        let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
        rng.set_stream(s);
        let (lo, hi) = spec.region.aabb();
        let r_max = spec.pool.iter().map(|g| g.radius).fold(0.0, f64::max);
        // Live grains that can touch a grain placed in the region.
        let mut near: Vec<([f64; 3], f64)> = (self.nb..state.len())
            .filter(|&b| state.info[b][0] != MOTION_PARKED)
            .map(|b| {
                let p = state.pos[b];
                ([p[0], p[1], p[2]].map(f64::from), f64::from(p[3]))
            })
            .filter(|(c, r)| (0..3).all(|a| c[a] + r + r_max >= lo[a] && c[a] - r - r_max <= hi[a]))
            .collect();
        let pool = f.first..f.first + spec.pool.len();
        while let Some(next) = pool.clone().find(|&b| state.info[b][0] == MOTION_PARKED) {
            let grain = spec.pool[next - f.first];
            let due = match spec.rate {
                FlowRate::Grains(r) => (f.inserted as f64) < (r * time).floor(),
                FlowRate::Mass(r) => f.inserted_mass + grain.mass <= r * time,
            };
            if !due {
                break;
            }
            let Some(c) = place(spec, grain.radius, &near, &mut rng) else {
                break;
            };
            let spread = |mean: [f64; 3], w: f64, rng: &mut ChaCha8Rng| {
                mean.map(|m| (m + w * (2.0 * rng.random::<f64>() - 1.0)) as f32)
            };
            let a = Activation {
                position: c.map(|x| x as f32),
                orientation: [0.0, 0.0, 0.0, 1.0],
                velocity: spread(spec.velocity, spec.velocity_spread, &mut rng),
                angular_velocity: spread(
                    spec.angular_velocity,
                    spec.angular_velocity_spread,
                    &mut rng,
                ),
            };
            sim.activate(next as u32, grain.radius as f32, &a);
            state.info[next][0] = MOTION_DYNAMIC;
            self.changed.push(next);
            let placed = a.position.map(f64::from);
            state.pos[next] = [
                a.position[0],
                a.position[1],
                a.position[2],
                grain.radius as f32,
            ];
            near.push((placed, grain.radius));
            f.inserted += 1;
            f.inserted_mass += grain.mass;
        }
        // Grains due and not placed (no room, or the pool is all in the scene).
        let mean_mass = spec.pool.iter().map(|g| g.mass).sum::<f64>() / spec.pool.len() as f64;
        let waiting = match spec.rate {
            FlowRate::Grains(r) => (r * time).floor() - f.inserted as f64,
            FlowRate::Mass(r) => ((r * time - f.inserted_mass) / mean_mass).floor(),
        };
        let row = [f.inserted as f64, f.inserted_mass, waiting.max(0.0)];
        append(&mut self.writer, &mut f.rows, time, &row)
    }

    /// The counters, for the checkpoint's [`SECTION`] (None without inflows and outflows).
    pub(crate) fn section(&self) -> Option<Vec<u8>> {
        if self.inflows.is_empty() && self.outflows.is_empty() {
            return None;
        }
        let mut out = Vec::new();
        for f in &self.inflows {
            out.extend(f.inserted.to_le_bytes());
            out.extend(f.inserted_mass.to_bits().to_le_bytes());
        }
        for o in &self.outflows {
            out.extend(o.removed.to_le_bytes());
            out.extend(o.removed_mass.to_bits().to_le_bytes());
        }
        Some(out)
    }

    fn restore(&mut self, ck: &Checkpoint) -> Result<(), RunError> {
        let bytes = ck.section(SECTION)?;
        let words: Vec<u64> = bytes
            .chunks_exact(8)
            .map(|w| u64::from_le_bytes(w.try_into().unwrap_or_default()))
            .collect();
        let n = 2 * (self.inflows.len() + self.outflows.len());
        if bytes.len() != 8 * n {
            return Err(RunError::Io(IoError::Parse {
                path: std::path::PathBuf::from(SECTION),
                line: 0,
                message: format!(
                    "the checkpoint's `{SECTION}` section holds {} bytes; this scene's {} inflows and {} outflows need {}",
                    bytes.len(),
                    self.inflows.len(),
                    self.outflows.len(),
                    8 * n
                ),
            }));
        }
        let mut w = words.chunks_exact(2);
        for f in &mut self.inflows {
            let c = w.next().unwrap_or(&[0, 0]);
            (f.inserted, f.inserted_mass) = (c[0], f64::from_bits(c[1]));
        }
        for o in &mut self.outflows {
            let c = w.next().unwrap_or(&[0, 0]);
            (o.removed, o.removed_mass) = (c[0], f64::from_bits(c[1]));
        }
        Ok(())
    }

    /// The rows kept in memory, inflows first, in scene order (none when they go to files).
    pub(crate) fn kept(&self) -> Vec<KeptRows<'_>> {
        fn kept<'a>(
            name: &'a str,
            columns: &'static [&'static str],
            units: &'static [&'static str],
            rows: &'a Rows,
        ) -> Option<KeptRows<'a>> {
            rows.file.is_none().then_some(KeptRows {
                name,
                columns,
                units,
                rows: &rows.kept,
            })
        }
        let inflows = self.inflows.iter().filter_map(|f| {
            kept(
                &f.spec.name,
                &INFLOW_COLUMNS[..],
                &INFLOW_UNITS[..],
                &f.rows,
            )
        });
        let outflows = self.outflows.iter().filter_map(|o| {
            kept(
                &o.spec.name,
                &OUTFLOW_COLUMNS[..],
                &OUTFLOW_UNITS[..],
                &o.rows,
            )
        });
        inflows.chain(outflows).collect()
    }

    /// Writes the rows queued so far (with the statistics, at frames and checkpoints).
    pub(crate) fn flush(&mut self) -> Result<(), RunError> {
        match self.writer.as_mut() {
            Some(w) => Ok(w.flush()?),
            None => Ok(()),
        }
    }
}

/// Appends a row at `time` to its file (through `writer`) or to memory.
fn append(
    writer: &mut Option<MeasurementWriter>,
    rows: &mut Rows,
    time: f64,
    row: &[f64],
) -> Result<(), RunError> {
    match (rows.file, writer) {
        (Some(id), Some(w)) => Ok(w.append(id, time, row)?),
        _ => {
            rows.kept.push((time, row.to_vec()));
            Ok(())
        }
    }
}

/// A centre in `spec`'s region where a grain of radius `r` overlaps none of `near`.
fn place(
    spec: &Inflow,
    r: f64,
    near: &[([f64; 3], f64)],
    rng: &mut ChaCha8Rng,
) -> Option<[f64; 3]> {
    (0..spec.max_attempts).find_map(|_| {
        let c = spec.region.sample(r, rng);
        let clear = near.iter().all(|(q, rq)| {
            let d2: f64 = (0..3).map(|a| (c[a] - q[a]).powi(2)).sum();
            let min = (r + rq) * (1.0 + PLACE_MARGIN);
            d2 >= min * min
        });
        clear.then_some(c)
    })
}

/// `state` without its parked grains (boundaries first, then the live grains in order), for
/// the measurements that read grain positions.
pub(crate) fn live_view(state: &BodyState, nb: usize) -> Cow<'_, BodyState> {
    let parked = |b: usize| state.info[b][0] == MOTION_PARKED;
    if !(nb..state.len()).any(parked) {
        return Cow::Borrowed(state);
    }
    let keep: Vec<usize> = (0..state.len()).filter(|&b| b < nb || !parked(b)).collect();
    let pick4 = |v: &Vec<[f32; 4]>| keep.iter().map(|&b| v[b]).collect();
    Cow::Owned(BodyState {
        pos: pick4(&state.pos),
        rot: pick4(&state.rot),
        vel: pick4(&state.vel),
        omega: pick4(&state.omega),
        mass_props: pick4(&state.mass_props),
        force: pick4(&state.force),
        torque: pick4(&state.torque),
        info: keep.iter().map(|&b| state.info[b]).collect(),
    })
}
