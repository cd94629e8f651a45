//! Peer comparison with Rapier (`rapier3d`, feature `peer`): the bench scenes built in Rapier
//! and run in the same process on the same machine, side by side with Bristlecone.
//!
//! Rapier settings, following its documentation for the scale: `length_unit` = the particle
//! diameter (so its allowed linear error, prediction distance and corrective velocity scale with
//! the grains), the same dt (1 ms), gravity, friction (μ = 0.5, combine rule Min, as
//! Bristlecone's min(μ_A, μ_B)) and restitution 0 (combine rule Min), density 2500 kg/m³ (same
//! mass and inertia). Sleeping is disabled so that both engines step every body every step
//! (Bristlecone has no sleeping); CCD is off (Rapier's default). Two Rapier configurations run:
//! * `default`: Rapier's default solver (4 solver iterations = substeps, each 1 PGS sweep and 1
//!   stabilization sweep);
//! * `matched`: `num_solver_iterations` = Bristlecone's max sweeps ÷ 2, so both engines do the
//!   same number of sweeps over the contacts per step (Bristlecone: one APGD sweep = one
//!   matrix-free product; Rapier: one PGS sweep with bias + one stabilization sweep per
//!   substep).
//!
//! Rapier runs single-threaded (no `parallel` feature). Timing covers only the step calls of
//! each engine (Bristlecone: `advance` batches including their stats readback); measurements
//! (penetration, energy) are taken between steps outside the timed part.

use super::scenes::{BenchScene, SceneKind, Wall};
use crate::gpu::GpuContext;
use crate::solve::SolverSettings;
use crate::step::Simulation;
use rapier3d::prelude::*;
use serde::Serialize;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// The physical outcome and cost of one engine on one scene.
#[derive(Clone, Debug, Serialize)]
pub struct EngineRun {
    pub engine: String,
    pub settings: String,
    /// Wall time per step over steps 2..N (step 1 alone when N = 1).
    pub seconds_per_step: f64,
    /// Wall time of step 1 (Bristlecone: with the shader compilation that the driver does
    /// at first use and the contact sizing; Rapier: with its first broad phase).
    pub first_step_seconds: f64,
    /// 0.95 quantile of the grain tops (z + r) of the grains still above the bin floor.
    pub bed_height: f64,
    /// Grains below the bin floor (z < 0: discharged through the orifice).
    pub discharged_fraction: f64,
    /// Max penetration over all steps (m, ≥ 0).
    pub max_penetration: f64,
    /// Contacts at the last step (Bristlecone: within the envelope; Rapier: manifold points).
    pub contacts_end: usize,
    /// (step, kinetic energy J) at the sample steps.
    pub kinetic_energy: Vec<(u64, f64)>,
}

#[derive(Clone, Debug, Serialize)]
pub struct PeerRow {
    pub scene: SceneKind,
    pub grains: usize,
    /// Bed height of the initial lattice, measured as for the runs (m).
    pub initial_bed_height: f64,
    pub steps: u32,
    pub runs: Vec<EngineRun>,
}

#[derive(Clone, Debug, Serialize)]
pub struct PeerReport {
    pub adapter: String,
    pub rapier_version: &'static str,
    pub rows: Vec<PeerRow>,
}

/// Quantile (type 7) of the tops of grains with centre above z = 0; NaN when none.
fn bed_height(pos: &[[f32; 3]], r: f32) -> f64 {
    let mut tops: Vec<f64> = pos
        .iter()
        .filter(|p| p[2] > 0.0)
        .map(|p| (p[2] + r) as f64)
        .collect();
    if tops.is_empty() {
        return f64::NAN;
    }
    tops.sort_by(f64::total_cmp);
    let h = 0.95 * (tops.len() - 1) as f64;
    let k = h.floor() as usize;
    let hi = tops[(k + 1).min(tops.len() - 1)];
    tops[k] + (h - k as f64) * (hi - tops[k])
}

fn discharged(pos: &[[f32; 3]]) -> f64 {
    pos.iter().filter(|p| p[2] < 0.0).count() as f64 / pos.len().max(1) as f64
}

fn sample_steps(steps: u32) -> u32 {
    (steps / 20).max(1)
}

/// Bristlecone on `scene` for `steps` steps.
pub fn run_bristlecone(
    ctx: &Arc<GpuContext>,
    scene: &BenchScene,
    steps: u32,
    solver: SolverSettings,
) -> Result<EngineRun, String> {
    let e = |e: crate::gpu::GpuError| e.to_string();
    let state = scene.body_state();
    let nb = scene.walls.len();
    let mut sim = Simulation::new(ctx.clone(), &state, scene.step_settings(solver)).map_err(e)?;
    let every = sample_steps(steps) as u64;
    let mut ke = vec![(0, 0.0)];
    let mut pen = 0.0f64;
    let mut contacts = 0;
    let mut timed = Vec::new();
    let mut done = 0;
    // Step 1 alone (it compiles the shaders), then batches of up to 100 steps; statistics
    // of every step from the GPU ring.
    while done < steps {
        let k = if done == 0 { 1 } else { 100.min(steps - done) };
        let t = Instant::now();
        let recs = sim.advance(k, 1).map_err(e)?;
        timed.push(t.elapsed().as_secs_f64());
        done += k;
        for r in &recs {
            pen = pen.max(r.max_penetration);
            if r.step % every == 0 || r.step == steps as u64 {
                ke.push((r.step, r.totals.kinetic_energy));
            }
        }
        contacts = recs.last().unwrap().contacts as usize;
    }
    let s = sim.read_state().map_err(e)?;
    let pos: Vec<[f32; 3]> = s.pos[nb..].iter().map(|p| [p[0], p[1], p[2]]).collect();
    Ok(EngineRun {
        engine: "bristlecone".into(),
        settings: format!(
            "{:?}, max {} sweeps, tolerance {:e} m/s, recovery {} m/s, envelope {} m, dt {} s",
            solver.kind,
            solver.max_iterations,
            solver.tolerance,
            solver.recovery_speed,
            scene.envelope,
            scene.dt
        ),
        seconds_per_step: per_step(&timed, steps),
        first_step_seconds: timed[0],
        bed_height: bed_height(&pos, scene.radius),
        discharged_fraction: discharged(&pos),
        max_penetration: pen,
        contacts_end: contacts,
        kinetic_energy: ke,
    })
}

/// Builds `scene` in Rapier with `iterations` solver iterations (substeps).
pub fn rapier_world(scene: &BenchScene, iterations: usize) -> (PhysicsWorld, Vec<RigidBodyHandle>) {
    let mut w = PhysicsWorld::new();
    w.gravity = Vector::new(
        scene.gravity[0] as f32,
        scene.gravity[1] as f32,
        scene.gravity[2] as f32,
    );
    let p = &mut w.integration_parameters;
    p.dt = scene.dt as f32;
    p.length_unit = 2.0 * scene.radius;
    p.num_solver_iterations = iterations;
    let ground = w.bodies.insert(RigidBodyBuilder::fixed().build());
    let wall_collider = |b: ColliderBuilder| {
        b.friction(scene.friction)
            .friction_combine_rule(CoefficientCombineRule::Min)
            .restitution(0.0)
            .restitution_combine_rule(CoefficientCombineRule::Min)
    };
    for wall in &scene.walls {
        let c = match *wall {
            // A half-space as a thick slab whose top face is the plane.
            Wall::Plane { z } => {
                ColliderBuilder::cuboid(10.0, 10.0, 0.5).translation(Vector::new(0.0, 0.0, z - 0.5))
            }
            Wall::Cuboid { center, half } => ColliderBuilder::cuboid(half[0], half[1], half[2])
                .translation(Vector::new(center[0], center[1], center[2])),
        };
        w.colliders
            .insert_with_parent(wall_collider(c).build(), ground, &mut w.bodies);
    }
    let mut handles = Vec::with_capacity(scene.grains.len());
    for g in &scene.grains {
        let h = w.bodies.insert(
            RigidBodyBuilder::dynamic()
                .translation(Vector::new(g[0], g[1], g[2]))
                .can_sleep(false)
                .build(),
        );
        let c = ColliderBuilder::ball(scene.radius)
            .density(scene.density)
            .friction(scene.friction)
            .friction_combine_rule(CoefficientCombineRule::Min)
            .restitution(0.0)
            .restitution_combine_rule(CoefficientCombineRule::Min)
            .build();
        w.colliders.insert_with_parent(c, h, &mut w.bodies);
        handles.push(h);
    }
    (w, handles)
}

fn rapier_ke(w: &PhysicsWorld, handles: &[RigidBodyHandle], r: f32) -> f64 {
    handles
        .iter()
        .map(|h| {
            let b = &w.bodies[*h];
            let m = b.mass() as f64;
            let (v, om) = (b.linvel(), b.angvel());
            let i = 0.4 * m * (r as f64).powi(2);
            0.5 * m * v.length_squared() as f64 + 0.5 * i * om.length_squared() as f64
        })
        .sum()
}

/// Deepest penetration and number of contact points with dist ≤ 0 in the current contacts.
fn rapier_contacts(w: &PhysicsWorld) -> (f64, usize) {
    let mut pen = 0.0f64;
    let mut n = 0;
    for pair in w.narrow_phase.contact_pairs() {
        for m in pair.manifolds() {
            for p in &m.points {
                if p.dist <= 0.0 {
                    n += 1;
                }
                pen = pen.max(-p.dist as f64);
            }
        }
    }
    (pen, n)
}

/// Rapier on `scene` for `steps` steps with `iterations` solver iterations.
pub fn run_rapier(scene: &BenchScene, steps: u32, iterations: usize, label: &str) -> EngineRun {
    let (mut w, handles) = rapier_world(scene, iterations);
    let every = sample_steps(steps);
    let mut ke = vec![(0, 0.0)];
    let mut pen = 0.0f64;
    let mut contacts = 0;
    let mut timed = Vec::new();
    for s in 1..=steps as u64 {
        let t = Instant::now();
        w.step();
        timed.push(t.elapsed().as_secs_f64());
        let (p, n) = rapier_contacts(&w);
        pen = pen.max(p);
        contacts = n;
        if s % every as u64 == 0 || s == steps as u64 {
            ke.push((s, rapier_ke(&w, &handles, scene.radius)));
        }
    }
    let pos: Vec<[f32; 3]> = handles
        .iter()
        .map(|h| {
            let t = w.bodies[*h].translation();
            [t.x, t.y, t.z]
        })
        .collect();
    let p = &w.integration_parameters;
    EngineRun {
        engine: format!("rapier {label}"),
        settings: format!(
            "rapier3d {}, TGS-soft, num_solver_iterations {}, internal PGS {}, stabilization {}, \
             length_unit {} m, dt {} s, friction {} (Min), restitution 0 (Min), \
             sleeping off, CCD off, single thread",
            rapier3d::VERSION,
            p.num_solver_iterations,
            p.num_internal_pgs_iterations,
            p.num_internal_stabilization_iterations,
            p.length_unit,
            p.dt,
            scene.friction
        ),
        seconds_per_step: per_step(&timed, steps),
        first_step_seconds: timed[0],
        bed_height: bed_height(&pos, scene.radius),
        discharged_fraction: discharged(&pos),
        max_penetration: pen,
        contacts_end: contacts,
        kinetic_energy: ke,
    }
}

/// Seconds per step over steps 2..`steps` from the wall times of step 1 and then of each
/// batch (Rapier: of each step); step 1 alone when it is the only one.
fn per_step(timed: &[f64], steps: u32) -> f64 {
    if steps <= 1 {
        return timed[0];
    }
    timed[1..].iter().sum::<f64>() / (steps - 1) as f64
}

/// Runs every scene at every size in both engines.
pub fn compare(
    ctx: &Arc<GpuContext>,
    scenes: &[SceneKind],
    sizes: &[usize],
    steps: u32,
    solver: SolverSettings,
    log: &mut dyn FnMut(&str),
) -> Result<PeerReport, String> {
    let steps = steps.max(1);
    let mut rows = Vec::new();
    for &kind in scenes {
        for &n in sizes {
            if let Err(reason) = super::fits(ctx, n) {
                log(&format!("peer: skip {} {n}: {reason}", kind.name()));
                continue;
            }
            let scene = BenchScene::build(kind, n);
            let mut runs = vec![run_bristlecone(ctx, &scene, steps, solver)?];
            log(&format!("peer {} {n}: bristlecone done", kind.name()));
            runs.push(run_rapier(&scene, steps, 4, "default"));
            log(&format!("peer {} {n}: rapier default done", kind.name()));
            let matched = (solver.max_iterations as usize / 2).max(1);
            runs.push(run_rapier(&scene, steps, matched, "matched"));
            log(&format!("peer {} {n}: rapier matched done", kind.name()));
            rows.push(PeerRow {
                scene: kind,
                grains: n,
                initial_bed_height: bed_height(&scene.grains, scene.radius),
                steps,
                runs,
            });
        }
    }
    Ok(PeerReport {
        adapter: ctx.describe(),
        rapier_version: rapier3d::VERSION,
        rows,
    })
}

impl PeerReport {
    pub fn table(&self) -> String {
        let mut s = format!(
            "peer comparison (Bristlecone on {}, Rapier {} on the CPU, same process)\n",
            self.adapter, self.rapier_version
        );
        s += &format!(
            "{:<7} {:>7} {:>5} {:<16} {:>10} {:>8} {:>9} {:>9} {:>7} {:>8} {:>8} {:>10} {:>10}\n",
            "scene",
            "grains",
            "steps",
            "engine",
            "ms/step",
            "vs BC",
            "1st ms",
            "bed h mm",
            "out %",
            "pen/d",
            "contacts",
            "KE mid J",
            "KE end J"
        );
        for r in &self.rows {
            s += &format!(
                "{} {}: bed height of the initial lattice {:.2} mm\n",
                r.scene.name(),
                r.grains,
                r.initial_bed_height * 1e3
            );
            let base = r.runs[0].seconds_per_step;
            for e in &r.runs {
                let mid = e.kinetic_energy[e.kinetic_energy.len() / 2].1;
                let end = e.kinetic_energy.last().unwrap().1;
                s += &format!(
                    "{:<7} {:>7} {:>5} {:<16} {:>10.2} {:>8.2} {:>9.1} {:>9.2} {:>7.1} {:>8.1e} {:>8} {:>10.3e} {:>10.3e}\n",
                    r.scene.name(),
                    r.grains,
                    r.steps,
                    e.engine,
                    e.seconds_per_step * 1e3,
                    e.seconds_per_step / base,
                    e.first_step_seconds * 1e3,
                    e.bed_height * 1e3,
                    e.discharged_fraction * 100.0,
                    e.max_penetration / (2.0 * super::scenes::RADIUS as f64),
                    e.contacts_end,
                    mid,
                    end
                );
            }
        }
        s += "ms/step: wall time per step over steps 2..N. vs BC: time per step / Bristlecone's \
              (> 1: Bristlecone faster). 1st ms: step 1 alone (Bristlecone: with the driver's \
              shader compilation). bed h: 0.95 quantile of \
              grain tops in the bin. out: grains discharged below the bin floor. pen/d: max \
              penetration over all steps / diameter.\nsettings:\n";
        if let Some(r) = self.rows.first() {
            for e in &r.runs {
                s += &format!("  {}: {}\n", e.engine, e.settings);
            }
        }
        s
    }

    /// Writes `peer.csv` (one line per engine and scene, plus the energy histories) and
    /// `peer.json`.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let mut csv = String::from(
            "scene,grains,steps,engine,seconds_per_step,first_step_seconds,bed_height_m,discharged_fraction,\
             max_penetration_m,contacts_end,kinetic_energy_history\n",
        );
        for r in &self.rows {
            for e in &r.runs {
                let hist: Vec<String> = e
                    .kinetic_energy
                    .iter()
                    .map(|(s, k)| format!("{s}:{k:e}"))
                    .collect();
                csv += &format!(
                    "{},{},{},{},{},{},{},{},{},{},{}\n",
                    r.scene.name(),
                    r.grains,
                    r.steps,
                    e.engine,
                    e.seconds_per_step,
                    e.first_step_seconds,
                    e.bed_height,
                    e.discharged_fraction,
                    e.max_penetration,
                    e.contacts_end,
                    hist.join(" ")
                );
            }
        }
        std::fs::write(dir.join("peer.csv"), csv)?;
        let json = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        std::fs::write(dir.join("peer.json"), json)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A resting lattice stays put in Rapier too (the scene is built the same way).
    #[test]
    fn rapier_pile_stays_at_rest() {
        let scene = BenchScene::build(SceneKind::Pile, 100);
        let r = run_rapier(&scene, 10, 4, "default");
        let h0 = bed_height(&scene.grains, scene.radius);
        assert!((r.bed_height - h0).abs() < 0.1 * scene.radius as f64);
        assert_eq!(r.discharged_fraction, 0.0);
        assert!(r.contacts_end > 100, "{}", r.contacts_end);
    }
}
