//! A restart with changed parameters (`run SCENE --from CHECKPOINT`): the state of the bodies
//! (positions, orientations, velocities), the contact state a checkpoint carries (warm start,
//! patch cells, Lemke's basis), the step and the time come from a checkpoint of a scene with
//! the same bodies; everything else (materials, solver, outputs, duration, boundaries'
//! schedules, applied loads) from the new scene. The outputs start fresh in their own
//! directory, from the checkpoint's step. `--resume` stays the strict path: same scene text,
//! bit-identical continuation.
//!
//! "The same bodies" means the same count and, body by body, the same shape kind, shape table
//! index, bounding radius and motion kind (fixed, kinematic, or dynamic — a body the new scene
//! releases before the checkpoint's step counts as dynamic). The first difference is named.
//! A kinematic body moves on with the new scene's schedule: its velocity is the last entry
//! before the checkpoint's step (the entries at that step apply as the run starts), or its
//! initial velocity when none is.

use std::path::Path;

use super::{RunError, Schedules};
use crate::bodies::{BodyState, MOTION_DYNAMIC, MOTION_FIXED, MOTION_KINEMATIC};
use crate::io::{self, Checkpoint};
use crate::scene::Scene;
use crate::step::Simulation;

/// Restores `sim` (opened on `scene`, whose initial bodies are `initial`) from the checkpoint
/// at `from`, of a scene with the same bodies.
pub(super) fn restore_from(
    sim: &mut Simulation,
    from: &Path,
    scene: &Scene,
    initial: &BodyState,
) -> Result<Checkpoint, RunError> {
    let ck = io::read_checkpoint(from)?;
    let fail = |message: String| RunError::Restart {
        path: from.to_path_buf(),
        message,
    };
    let saved = ck
        .section("bodies")
        .map_err(|e| fail(e.to_string()))
        .and_then(|b| {
            BodyState::from_bytes(b).ok_or_else(|| fail("the 'bodies' section is malformed".into()))
        })?;
    same_time_step(&ck, scene.sim.dt).map_err(fail)?;
    let state = merged_state(&saved, initial, &Schedules::new(scene), ck.step).map_err(fail)?;
    sim.restore_carried(ck.step, &state, &ck, false)
        .map_err(fail)?;
    Ok(ck)
}

/// `--from` keeps the step count and the time, so both runs must have the same `dt`.
fn same_time_step(ck: &Checkpoint, dt: f64) -> Result<(), String> {
    if ck.step == 0 || ck.step as f64 * dt == ck.time {
        return Ok(());
    }
    Err(format!(
        "it was taken at t = {} s after {} steps (dt = {:e} s) but this scene's dt is {dt:e} s: \
         a restart keeps the step count and the time, so sim.dt must stay the same",
        ck.time,
        ck.step,
        ck.time / ck.step as f64
    ))
}

fn motion_name(m: u32) -> &'static str {
    match m {
        MOTION_DYNAMIC => "dynamic",
        MOTION_KINEMATIC => "kinematic",
        MOTION_FIXED => "fixed",
        _ => "unknown",
    }
}

/// The body `i` in words: a boundary by its index, a scene body by its index among the
/// bodies.
fn body_name(i: usize, n_boundaries: usize) -> String {
    match i.checked_sub(n_boundaries) {
        None => format!("boundary {i}"),
        Some(k) => format!("body {k}"),
    }
}

/// The new scene's bodies at the checkpoint's `step`: the saved positions, orientations and
/// velocities of the dynamic bodies, the new scene's everything else (mass, inertia,
/// material, loads) and the velocities its schedule gives the kinematic ones. Refuses, naming
/// the first difference, when the bodies are not the same.
pub(super) fn merged_state(
    saved: &BodyState,
    initial: &BodyState,
    schedules: &Schedules,
    step: u64,
) -> Result<BodyState, String> {
    if saved.len() != initial.len() {
        return Err(format!(
            "it holds {} bodies (boundaries included) but this scene has {}: a restart needs \
             the same bodies",
            saved.len(),
            initial.len()
        ));
    }
    let mut state = initial.clone();
    // The new scene's schedule up to (not including) `step`: releases and velocities.
    for c in schedules.changes.iter().filter(|c| c.0 < step) {
        let b = c.1 as usize;
        state.vel[b] = [c.2[0], c.2[1], c.2[2], 0.0];
        state.omega[b] = [c.3[0], c.3[1], c.3[2], 0.0];
        if let Some(mp) = c.4 {
            state.mass_props[b] = mp;
            state.info[b][0] = MOTION_DYNAMIC;
        }
    }
    let nb = crate::step::boundary_count(initial);
    for i in 0..state.len() {
        let (old, new) = (saved.info[i], state.info[i]);
        let differ = |what: &str, was: String, is: String| {
            Err(format!(
                "{} differs: its {what} is {was} in the checkpoint and {is} in this scene (a \
                 restart needs the same bodies)",
                body_name(i, nb)
            ))
        };
        if old[2] != new[2] || old[3] != new[3] {
            let kind = |info: [u32; 4]| format!("shape kind {} (table index {})", info[2], info[3]);
            return differ("shape", kind(old), kind(new));
        }
        if saved.pos[i][3] != state.pos[i][3] {
            let r = |p: [f32; 4]| format!("{} m", p[3]);
            return differ("bounding radius", r(saved.pos[i]), r(state.pos[i]));
        }
        if old[0] != new[0] {
            let m = |info: [u32; 4]| motion_name(info[0]).to_string();
            return differ("motion", m(old), m(new));
        }
        state.pos[i] = saved.pos[i];
        state.rot[i] = saved.rot[i];
        if new[0] == MOTION_DYNAMIC {
            state.vel[i] = saved.vel[i];
            state.omega[i] = saved.omega[i];
        }
    }
    Ok(state)
}

/// A restart writes into a directory of its own: never the one of the run it starts from.
pub(super) fn check_out_dir(from: &Path, dir: &Path) -> Result<(), RunError> {
    let canonical = |p: &Path| std::fs::canonicalize(p).ok();
    let from_dir = from.parent().map(|p| {
        if p.as_os_str().is_empty() {
            Path::new(".")
        } else {
            p
        }
    });
    let same = match (from_dir.and_then(canonical), canonical(dir)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    };
    if same {
        return Err(RunError::Restart {
            path: from.to_path_buf(),
            message: format!(
                "a restart writes fresh outputs and would replace the run it starts from in {}: \
                 pass another --out",
                dir.display()
            ),
        });
    }
    Ok(())
}
