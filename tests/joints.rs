//! Joints (book: Joints): the GPU joint stage and the solver's joint rows against their f64
//! twins on random joint sets of real size, then physics against analytic answers.

use crate::common::*;
use bristlecone::bodies::{BodyInit, BodyState};
use bristlecone::gpu::{buffers, shared_context, GpuContext};
use bristlecone::joints::{block_lists, blocks_of, Joint, JointKind, Joints, MotorTarget};
use bristlecone::reference::integrate::to_f64;
use bristlecone::reference::{joints as cpu_joints, solve as cpu};
use bristlecone::solve::{
    build_csr, counts_words, Cone, Contact, Solve, SolveInputs, SolverKind, SolverSettings,
};
use glam::{DQuat, DVec3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const DT: f32 = 1e-3;

fn unit(rng: &mut ChaCha8Rng) -> DVec3 {
    loop {
        let v = DVec3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
        );
        if v.length() > 0.1 && v.length() < 1.0 {
            return v.normalize();
        }
    }
}

/// Random bodies (2 fixed first), random joints of every kind (a tenth to the world, with
/// limits and motors on some revolute and prismatic ones), placed without error, then the
/// bodies moved a little so every block has a position error.
fn random_joints(
    seed: u64,
    n_bodies: usize,
    n_joints: usize,
) -> (BodyState, BodyState, Vec<Joint>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let state = random_bodies(&mut rng, n_bodies, 2.0);
    let mut joints = Vec::new();
    while joints.len() < n_joints {
        let b = rng.random_range(2..n_bodies as u32);
        let a = if rng.random_range(0..10) == 0 {
            None
        } else {
            Some(rng.random_range(0..n_bodies as u32)).filter(|&a| a != b)
        };
        let kind = match rng.random_range(0..7) {
            0 => JointKind::Spherical,
            1 | 2 => JointKind::Revolute,
            3 => JointKind::Prismatic,
            4 => JointKind::Fixed,
            5 => JointKind::Universal,
            _ => JointKind::Distance {
                length: 0.0,
                rope: rng.random_range(0..2) == 1,
            },
        };
        let p = DVec3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            0.5,
        );
        let mut j = Joint::new(kind, a, b);
        j = if matches!(kind, JointKind::Distance { .. }) {
            j.between(&state, p, p + 0.2 * unit(&mut rng))
        } else {
            j.at(&state, p, unit(&mut rng))
        };
        if matches!(kind, JointKind::Revolute | JointKind::Prismatic) {
            if rng.random_range(0..2) == 0 {
                j = j.with_limits(-0.01, 0.02);
            }
            let target = if rng.random_range(0..2) == 0 {
                MotorTarget::Velocity(rng.random_range(-1.0..1.0))
            } else {
                MotorTarget::Position(rng.random_range(-0.1..0.1))
            };
            let fmax = [f64::INFINITY, 5.0, 0.01][rng.random_range(0..3)];
            j = j.with_motor(target, fmax);
        }
        joints.push(j);
    }
    let mut moved = state.clone();
    for i in 2..n_bodies {
        for k in 0..3 {
            moved.pos[i][k] += rng.random_range(-0.002..0.002);
        }
        let q = moved.rot[i];
        let dq = DQuat::from_scaled_axis(0.01 * unit(&mut rng));
        let q = dq * DQuat::from_xyzw(q[0] as f64, q[1] as f64, q[2] as f64, q[3] as f64);
        moved.rot[i] = [q.x as f32, q.y as f32, q.z as f32, q.w as f32];
    }
    (state, moved, joints)
}

/// The joint stage on the GPU: (records, offsets) of every block after `contacts` dummy
/// contacts.
fn gpu_joint_rows(
    ctx: &GpuContext,
    state: &BodyState,
    joints: &[Joint],
    contacts: u32,
    v_rec: f32,
) -> (Vec<Contact>, Vec<[f32; 4]>) {
    let bodies = bristlecone::bodies::GpuBodies::upload(ctx, state).unwrap();
    let stage = Joints::new(ctx, joints, state.len(), DT, v_rec).unwrap();
    let nb = stage.n_blocks();
    let cap = contacts + nb;
    stage.set_params(ctx, cap, DT, v_rec);
    let counts = buffers::storage_from(ctx, "counts", &counts_words(contacts)).unwrap();
    let recs = buffers::storage_zeroed(ctx, "contacts", cap as u64 * 64).unwrap();
    let rhs = buffers::storage_zeroed(ctx, "rhs", cap as u64 * 16).unwrap();
    let mut enc = ctx.device.create_command_encoder(&Default::default());
    stage.record(
        ctx,
        &mut enc,
        &bodies.pos,
        &bodies.rot,
        &counts,
        &recs,
        &rhs,
    );
    ctx.queue.submit([enc.finish()]);
    let r: Vec<Contact> = buffers::read_buffer(ctx, &recs, cap as usize).unwrap();
    let o: Vec<[f32; 4]> = buffers::read_buffer(ctx, &rhs, cap as usize).unwrap();
    let c: Vec<u32> = buffers::read_buffer(ctx, &counts, 4).unwrap();
    assert_eq!(
        c[2],
        contacts + nb,
        "needed constraints include the joint rows"
    );
    assert_eq!(c[1], 0, "no overflow");
    (
        r[contacts as usize..].to_vec(),
        o[contacts as usize..].to_vec(),
    )
}

#[test]
fn joint_stage_on_gpu_equals_the_f64_twin_on_3000_random_joints() {
    let ctx = shared_context();
    let (_, moved, joints) = random_joints(3, 2000, 3000);
    let v_rec = 0.5;
    let (g_rec, g_off) = gpu_joint_rows(&ctx, &moved, &joints, 77, v_rec);
    let (blocks, _) = blocks_of(&joints);
    let (c_rec, c_off) =
        cpu_joints::write_blocks(&to_f64(&moved), &blocks, DT as f64, v_rec as f64);
    assert_eq!(g_rec.len(), c_rec.len());
    let mut worst = [0.0f64; 3];
    let mut active = 0;
    for (j, ((gr, cr), (go, co))) in g_rec
        .iter()
        .zip(&c_rec)
        .zip(g_off.iter().zip(&c_off))
        .enumerate()
    {
        assert_eq!(gr.ids, cr.ids, "block {j}: bodies, index or flags");
        for k in 0..4 {
            worst[0] = worst[0].max((gr.n_gap[k] - cr.n_gap[k]).abs() as f64);
            worst[1] =
                worst[1].max((gr.ra[k] - cr.ra[k]).abs().max((gr.rb[k] - cr.rb[k]).abs()) as f64);
        }
        for k in 0..3 {
            // Offsets are errors/dt: a point error is the difference of two f32 anchors
            // x + R r with |x|, |r| up to ~2 m (ε ≈ 1.2e-7 m each, a few per error), a hinge
            // angle comes from f32 quaternion products (~4e-7 rad); over dt = 1e-3 s that is
            // up to ~5e-4 m/s (rad/s), plus 1e-4 relative.
            let d = (go[k] as f64 - co[k]).abs();
            worst[2] = worst[2].max(d / (5e-4 + 1e-4 * co[k].abs()));
            active += (co[k].abs() > 1e-3) as usize;
        }
    }
    eprintln!("joint stage: {} blocks, max |Δn| {:.2e}, |Δr| {:.2e}, offset err/(5e-4 + 1e-4 |off|) {:.2}", g_rec.len(), worst[0], worst[1], worst[2]);
    assert!(
        active > g_rec.len(),
        "the perturbed poses give position errors ({active} rows)"
    );
    assert!(
        worst[0] < 1e-5 && worst[1] < 1e-5,
        "records differ: {worst:?}"
    );
    assert!(worst[2] <= 1.0, "offsets differ: {worst:?}");
}

/// Random contacts (sorted unique keys) between the bodies of `state`.
fn random_contacts(seed: u64, state: &BodyState, n: usize) -> Vec<Contact> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let nb = state.len() as u32;
    let mut keys = std::collections::BTreeSet::new();
    while keys.len() < n {
        let a = rng.random_range(0..nb);
        let b = rng.random_range(0..nb);
        if a != b {
            keys.insert((a.min(b), a.max(b), rng.random_range(0..2u32)));
        }
    }
    keys.into_iter()
        .map(|(a, b, f)| {
            let n = unit(&mut rng);
            let (ra_len, rb_len) = (state.pos[a as usize][3], state.pos[b as usize][3]);
            let ra = (n + 0.3 * unit(&mut rng)).normalize() * ra_len as f64;
            let rb = (-n + 0.3 * unit(&mut rng)).normalize() * rb_len as f64;
            Contact {
                n_gap: [
                    n.x as f32,
                    n.y as f32,
                    n.z as f32,
                    rng.random_range(-0.004..0.001),
                ],
                ra: [
                    ra.x as f32,
                    ra.y as f32,
                    ra.z as f32,
                    rng.random_range(0.1..0.8),
                ],
                rb: [rb.x as f32, rb.y as f32, rb.z as f32, 0.0],
                ids: [a, b, f, 0],
            }
        })
        .collect()
}

/// GPU solve of contacts + joint blocks (records and offsets from the twin, as the joint
/// stage would write them) against `reference::solve::solve_all`, sweep for sweep.
fn solver_matches_twin(kind: SolverKind, sweeps: u32) {
    let ctx = shared_context();
    let (_, moved, joints) = random_joints(5, 1500, 1000);
    let contacts = random_contacts(6, &moved, 1500);
    let (blocks, _) = blocks_of(&joints);
    let b64 = to_f64(&moved);
    let (jrec, joff) = cpu_joints::write_blocks(&b64, &blocks, DT as f64, 0.5);
    let nc = contacts.len();
    let mut all = contacts.clone();
    all.extend(&jrec);
    let st = SolverSettings {
        kind,
        max_iterations: sweeps,
        tolerance: 1e-9,
        omega: 0.6,
        recovery_speed: 0.5,
        warm_start: false,
        cone: Cone::Relaxed,
        max_outer: 1,
        ..SolverSettings::default()
    };
    // GPU.
    let bodies = bristlecone::bodies::GpuBodies::upload(&ctx, &moved).unwrap();
    let mut solve = Solve::new(&ctx, &bodies, all.len() as u32, &st, DT).unwrap();
    solve
        .set_joints(
            &ctx,
            blocks.len() as u32,
            &block_lists(moved.len(), &blocks),
        )
        .unwrap();
    let (off, ent) = build_csr(moved.len(), &contacts);
    let recs = buffers::storage_from(&ctx, "contacts", &all).unwrap();
    let counts = buffers::storage_from(&ctx, "counts", &counts_words(nc as u32)).unwrap();
    let offs = buffers::storage_from(&ctx, "offsets", &off).unwrap();
    let ents = buffers::storage_from(&ctx, "entries", &ent).unwrap();
    let stats = buffers::storage_from(&ctx, "stats", &[0u32; 8]).unwrap();
    let rhs: Vec<[f32; 4]> = joff
        .iter()
        .map(|o| [o[0] as f32, o[1] as f32, o[2] as f32, 0.0])
        .collect();
    ctx.queue.write_buffer(
        solve.rhs_buffer(),
        nc as u64 * 16,
        bytemuck::cast_slice(&rhs),
    );
    // The offsets the twin gets are the ones the GPU reads (f32).
    let joff32: Vec<[f64; 3]> = rhs
        .iter()
        .map(|o| [o[0] as f64, o[1] as f64, o[2] as f64])
        .collect();
    let mut enc = ctx.device.create_command_encoder(&Default::default());
    let inputs = SolveInputs {
        contacts: &recs,
        counts: &counts,
        body_offsets: &offs,
        body_entries: &ents,
        step_stats: &stats,
    };
    solve.record(&ctx, &mut enc, inputs);
    ctx.queue.submit([enc.finish()]);
    let g = solve.read_impulses(&ctx, all.len() as u32).unwrap();
    let sc = solve.read_scalars(&ctx).unwrap();
    let hist = solve.read_history(&ctx).unwrap();
    let gstate = bodies.download_kinematics(&ctx).unwrap();
    // Twin.
    let c = cpu::solve_all(&b64, &all, &st, DT as f64, None, &[], &joff32);
    assert_eq!(sc.n_contacts as usize, all.len());
    assert_eq!(sc.iterations, c.iterations);
    let acc_g: Vec<bool> = hist.iter().map(|h| h[3] != 0.0).collect();
    let acc_c: Vec<bool> = c.history.iter().map(|h| h[3] != 0.0).collect();
    assert_eq!(acc_g, acc_c, "APGD backtracking decisions differ");
    let r0 = c.residual0;
    assert!(
        (sc.res0 as f64 - r0).abs() <= 1e-5 * r0,
        "initial residual {} vs {r0}",
        sc.res0
    );
    for (k, (hg, hc)) in hist.iter().zip(&c.history).enumerate() {
        let err = (hg[0] as f64 - hc[0]).abs();
        assert!(
            err <= 2e-4 * r0 + 2e-3 * hc[0],
            "sweep {k}: residual {} vs {}",
            hg[0],
            hc[0]
        );
    }
    let scale = c.gamma.iter().flatten().fold(0.0f64, |m, x| m.max(x.abs()));
    let worst = g
        .iter()
        .zip(&c.gamma)
        .flat_map(|(a, b)| (0..3).map(move |k| (a[k] as f64 - b[k]).abs()))
        .fold(0.0f64, f64::max);
    // Joint rows carry impulses (not all clamped to zero).
    let joint_scale = c.gamma[nc..]
        .iter()
        .flatten()
        .fold(0.0f64, |m, x| m.max(x.abs()));
    assert!(
        joint_scale > 0.1 * scale,
        "joint impulses {joint_scale} vs {scale}"
    );
    eprintln!(
        "{kind:?}: {nc} contacts + {} joint blocks, {} sweeps, residual {r0:.3e} → {:.3e}, max |Δγ|/max|γ| = {:.2e}",
        blocks.len(),
        c.iterations,
        c.residual,
        worst / scale
    );
    assert!(
        worst <= 1e-4 * scale,
        "γ differs by {worst} (scale {scale})"
    );
    let vscale = c.vel.iter().map(|v| v.length()).fold(0.0, f64::max);
    for (b, v) in c.vel.iter().enumerate() {
        let vg = gstate.vel[b];
        let d = (DVec3::new(vg[0] as f64, vg[1] as f64, vg[2] as f64) - *v).length();
        assert!(d <= 1e-4 * vscale, "body {b}: velocity differs by {d}");
    }
}

#[test]
fn jacobi_with_joint_rows_on_gpu_equals_the_f64_twin() {
    solver_matches_twin(SolverKind::Jacobi, 40);
}

#[test]
fn apgd_with_joint_rows_on_gpu_equals_the_f64_twin() {
    solver_matches_twin(SolverKind::Apgd, 40);
}

#[test]
fn gauss_seidel_with_joint_rows_on_gpu_equals_the_f64_twin() {
    solver_matches_twin(SolverKind::GaussSeidel, 40);
}

// ---------------------------------------------------------------------------------------
// Physics through the whole step (free velocity → collision → joint stage → solve → positions).

use bristlecone::collide::CollideSettings;
use bristlecone::step::{ContactSetup, Simulation, StepSettings};

const G: f64 = 9.81;

/// A sphere of mass `m` and radius `r` (I = 2/5 m r²) at rest at `p`.
fn ball(p: DVec3, r: f64, m: f64) -> BodyInit {
    let i = 0.4 * m * r * r;
    BodyInit {
        inv_mass: (1.0 / m) as f32,
        inv_inertia: [(1.0 / i) as f32; 3],
        ..BodyInit::sphere([p.x as f32, p.y as f32, p.z as f32], r as f32, 1.0)
    }
}

fn simulation(inits: &[BodyInit], dt: f64, solver: SolverSettings) -> Simulation {
    let state = BodyState::from_inits(inits);
    let settings = StepSettings {
        dt,
        gravity: [0.0, 0.0, -G],
        contact: Some(ContactSetup {
            models: Vec::new(),
            patch_cells: 0,
            shapes: Vec::new(),
            collide: CollideSettings {
                envelope: 1e-3,
                friction: vec![0.3],
            },
            solver,
        }),
    };
    Simulation::new(shared_context(), &state, settings).unwrap()
}

fn apgd(max_iterations: u32, tolerance: f32) -> SolverSettings {
    SolverSettings {
        kind: SolverKind::Apgd,
        max_iterations,
        tolerance,
        recovery_speed: 0.5,
        ..SolverSettings::default()
    }
}

fn v3(a: [f32; 4]) -> DVec3 {
    DVec3::new(a[0] as f64, a[1] as f64, a[2] as f64)
}

/// Complete elliptic integral of the first kind K(k) by the arithmetic–geometric mean.
fn elliptic_k(k: f64) -> f64 {
    let (mut a, mut b) = (1.0f64, (1.0 - k * k).sqrt());
    for _ in 0..20 {
        (a, b) = (0.5 * (a + b), (a * b).sqrt());
    }
    std::f64::consts::PI / (2.0 * a)
}

/// A ball on a spherical joint to the world (a physical pendulum, pivot at the origin)
/// released at rest from θ₀ = 60° in the xz plane (it stays there): twice the time between its first two passes through
/// θ = 0 (a half period) against T = 4 √(I_O/(m g L)) K(sin(θ₀/2)), I_O = 2/5 m r² + m L²
/// (the exact period of a rigid pendulum; 7.3 % longer than the small-angle one, so the
/// amplitude dependence is tested); tolerance 0.5 % with dt = 5e-4 s. Energy (kinetic +
/// potential) stays within 1 % of m g L, the joint's drift below 1e-4 L.
#[test]
fn pendulum_period_matches_the_elliptic_integral() {
    let (l, r, m, th0) = (0.1f64, 0.01, 0.1, 60f64.to_radians());
    let p0 = DVec3::new(l * th0.sin(), 0.0, -l * th0.cos());
    let dt = 5e-4;
    let mut sim = simulation(&[ball(p0, r, m)], dt, apgd(100, 1e-6));
    let state = sim.read_state().unwrap();
    // (A revolute joint gives the same motion, but its hinge rows and the point rows share the
    // bob's rotation: with r/L = 0.1 the out-of-plane mode has κ ≈ 1000 after scaling and
    // every step runs the sweep cap; the spherical joint converges in a few sweeps.)
    let j = Joint::new(JointKind::Spherical, None, 0).at(&state, DVec3::ZERO, DVec3::Y);
    sim.set_joints(&[j]).unwrap();
    let i_o = 0.4 * m * r * r + m * l * l;
    let k = (th0 / 2.0).sin();
    let exact = 4.0 * (i_o / (m * G * l)).sqrt() * elliptic_k(k);
    let energy = |s: &BodyState| {
        let (x, v, w) = (v3(s.pos[0]), v3(s.vel[0]), v3(s.omega[0]));
        0.5 * m * v.length_squared() + 0.5 * 0.4 * m * r * r * w.length_squared() + m * G * x.z
    };
    let e0 = energy(&state);
    let every = 8;
    let (mut t, mut prev) = (0.0, th0);
    let mut crossings = Vec::new();
    let mut worst_e: f64 = 0.0;
    let mut worst_drift: f64 = 0.0;
    let mut sweeps = 0;
    while crossings.len() < 2 && t < exact {
        sweeps = sweeps.max(
            sim.advance(every, 1)
                .unwrap()
                .iter()
                .map(|r| r.iterations)
                .max()
                .unwrap(),
        );
        t += every as f64 * dt;
        let s = sim.read_state().unwrap();
        let x = v3(s.pos[0]);
        let th = x.x.atan2(-x.z);
        worst_drift = worst_drift.max((x.length() - l).abs()).max(x.y.abs());
        worst_e = worst_e.max((energy(&s) - e0).abs());
        // θ is nearly linear in t near 0 (θ'' = −(m g L/I_O) sin θ ≈ 0): linear interpolation.
        if (prev > 0.0) != (th > 0.0) {
            crossings.push(t - every as f64 * dt * th / (th - prev));
        }
        prev = th;
    }
    assert_eq!(
        crossings.len(),
        2,
        "two passes through θ = 0 within a period"
    );
    let period = 2.0 * (crossings[1] - crossings[0]);
    let err = (period - exact).abs() / exact;
    eprintln!(
        "pendulum: at most {sweeps} sweeps per step, {} budget redos",
        sim.batched.budget_redos
    );
    eprintln!(
        "pendulum: period {period:.5} s vs exact {exact:.5} s ({:.3} %), energy drift {:.2e} m g L, joint drift {:.2e} L",
        100.0 * err,
        worst_e / (m * G * l),
        worst_drift / l
    );
    assert!(err < 5e-3, "period {period} vs {exact}");
    assert!(worst_e < 1e-2 * m * G * l, "energy drift {worst_e}");
    assert!(worst_drift < 1e-4 * l, "joint drift {worst_drift}");
}

/// A chain of `n` balls on spherical joints hanging from the world (link length l), at rest
/// from the start: after `steps` steps every joint's drift is below 1e-4 l and the top
/// joint carries the chain's weight n m g within 1 %.
fn hanging_chain(n: usize, steps: u32) {
    let (l, r, m) = (0.05f64, 0.01, 0.02);
    let inits: Vec<BodyInit> = (0..n)
        .map(|i| ball(DVec3::new(0.0, 0.0, -(i as f64 + 0.5) * l), r, m))
        .collect();
    let mut sim = simulation(&inits, 1e-3, apgd(1000, 1e-7));
    let state = sim.read_state().unwrap();
    let joints: Vec<Joint> = (0..n)
        .map(|i| {
            let a = (i > 0).then(|| i as u32 - 1);
            Joint::new(JointKind::Spherical, a, i as u32).at(
                &state,
                DVec3::new(0.0, 0.0, -(i as f64) * l),
                DVec3::Z,
            )
        })
        .collect();
    sim.set_joints(&joints).unwrap();
    let t0 = std::time::Instant::now();
    let rec = sim.advance(steps, 1).unwrap();
    eprintln!(
        "chain sweeps per step: {:?}",
        rec.iter().map(|r| r.iterations).collect::<Vec<_>>()
    );
    let s = sim.read_state().unwrap();
    let mut drift: f64 = 0.0;
    for i in 0..n {
        let above = if i == 0 {
            DVec3::ZERO
        } else {
            v3(s.pos[i - 1]) - DVec3::new(0.0, 0.0, 0.5 * l)
        };
        let here = v3(s.pos[i]) + DVec3::new(0.0, 0.0, 0.5 * l);
        drift = drift.max((here - above).length());
    }
    let react = sim.joint_reactions().unwrap();
    let weight = n as f64 * m * G;
    let top = react[0].force.z;
    eprintln!(
        "chain of {n}: {steps} steps in {:.1} s, last solve {} sweeps (residual {:.2e}), drift {:.2e} l, top tension {top:.5} N vs weight {weight:.5} N ({:+.3} %)",
        t0.elapsed().as_secs_f64(),
        rec.last().unwrap().iterations,
        rec.last().unwrap().residual,
        drift / l,
        100.0 * (top - weight) / weight
    );
    assert!(drift < 1e-4 * l, "joint drift {drift}");
    assert!(
        (top - weight).abs() < 1e-2 * weight,
        "top tension {top} vs {weight}"
    );
}

#[test]
fn hanging_chain_holds_its_weight_without_drift() {
    hanging_chain(100, 12);
}

/// A ball on an arm of length L held horizontal by a revolute motor (velocity target
/// +1 rad/s, lifting) whose torque limit is half the gravity torque m g L: the motor stalls
/// at its limit (reported torque = the limit within 0.1 %) and the arm falls; with twice the
/// gravity torque it lifts the arm at the target speed (within 1 %) after 60 steps.
#[test]
fn motor_with_a_torque_limit_stalls_at_the_limit() {
    for (factor, stalls) in [(0.5, true), (2.0, false)] {
        let (l, r, m) = (0.2f64, 0.02, 0.5);
        // Tolerance 1e-5: the hinge's out-of-plane mode is ill-conditioned (see the pendulum);
        // the saturated motor row is exact whatever the sweeps (box projection).
        let mut sim = simulation(
            &[ball(DVec3::new(l, 0.0, 0.0), r, m)],
            1e-3,
            apgd(100, 1e-5),
        );
        let state = sim.read_state().unwrap();
        // Axis −y: a positive speed about it lifts a ball on +x (ω × r along +z).
        let limit = factor * m * G * l;
        let j = Joint::new(JointKind::Revolute, None, 0)
            .at(&state, DVec3::ZERO, -DVec3::Y)
            .with_motor(MotorTarget::Velocity(1.0), limit);
        sim.set_joints(&[j]).unwrap();
        // The free arm reaches 1 rad/s after (I_O ω)/(τ_max − m g L) ≈ 0.02 s at the limit.
        sim.advance(60, 60).unwrap();
        let s = sim.read_state().unwrap();
        let w = -v3(s.omega[0]).y;
        let tau = sim.joint_reactions().unwrap()[0].motor;
        eprintln!(
            "motor limit {limit:.4} N·m ({factor} m g L): torque {tau:.5}, speed {w:.4} rad/s"
        );
        if stalls {
            assert!(
                (tau.abs() - limit).abs() < 1e-3 * limit,
                "torque {tau} vs limit {limit}"
            );
            assert!(w < 0.0, "the arm falls: ω = {w}");
        } else {
            assert!(tau.abs() < limit, "torque {tau} within the limit {limit}");
            assert!((w - 1.0).abs() < 1e-2, "lifts at the target speed: ω = {w}");
        }
    }
}

/// Newton's cradle: N = 5 equal balls (r, m) each hung from the world by a distance joint of
/// length L from pivots 2r apart, so neighbours touch at rest; ball 0 is released from
/// θ₀ = 30° and arrives at v₀ = √(2 g L (1 − cos θ₀)).
///
/// The CCP model's prediction: a contact row has no restitution (the step's velocities
/// minimise the kinetic energy subject to v_n ≥ −φ/dt, i.e. a perfectly inelastic impulse),
/// and a touching row meets ball 0 as one simultaneous impact. The minimum-energy velocities
/// with no approach at any of the N − 1 contacts are all equal, so momentum m v₀ is shared:
/// every ball moves on at v₀/N and the kinetic energy falls to E/N (80 % lost for N = 5),
/// not the physical cradle's "one ball in, one ball out" (that needs restitution and the
/// impact's wave, which a velocity-level CCP step does not have). The joints are vertical at
/// impact, so they take no horizontal impulse: momentum is conserved through it.
/// Checked 4 steps after ball 1 first moves (dt = 5e-4 s): every ball's velocity within
/// 0.5 % of v₀/N (v₀ measured the step before; it is the exact arrival speed within 1 %),
/// horizontal momentum within 0.2 % and kinetic energy within 0.5 % of E/N. Then the five
/// swing as one: up to the next turning point no gap opens wider than r/10 and they rise to
/// L(1 − cos θ₀)/N² within 1 %.
#[test]
fn newtons_cradle_shares_momentum_as_the_inelastic_ccp_model_predicts() {
    let (n, l, r, m, th0) = (5usize, 0.1f64, 0.01, 0.05, 30f64.to_radians());
    let pivot = |i: usize| DVec3::new(2.0 * r * i as f64, 0.0, 0.0);
    let inits: Vec<BodyInit> = (0..n)
        .map(|i| {
            let p = if i == 0 {
                DVec3::new(-l * th0.sin(), 0.0, -l * th0.cos())
            } else {
                pivot(i) - DVec3::new(0.0, 0.0, l)
            };
            ball(p, r, m)
        })
        .collect();
    let dt = 5e-4;
    let mut sim = simulation(&inits, dt, apgd(500, 1e-7));
    let state = sim.read_state().unwrap();
    let joints: Vec<Joint> = (0..n)
        .map(|i| {
            let kind = JointKind::Distance {
                length: l,
                rope: false,
            };
            Joint::new(kind, None, i as u32).between(&state, pivot(i), v3(state.pos[i]))
        })
        .collect();
    sim.set_joints(&joints).unwrap();
    let vx = |s: &BodyState| (0..n).map(|i| s.vel[i][0] as f64).collect::<Vec<_>>();
    let kinetic = |s: &BodyState| {
        (0..n)
            .map(|i| 0.5 * m * v3(s.vel[i]).length_squared())
            .sum::<f64>()
    };
    // Swing down until ball 1 moves (the impact step).
    let mut before = sim.read_state().unwrap();
    let mut steps = 0;
    loop {
        sim.advance(1, 1).unwrap();
        steps += 1;
        let s = sim.read_state().unwrap();
        if s.vel[1][0] > 1e-3 {
            break;
        }
        before = s;
        assert!(steps < 2000, "ball 0 never reached ball 1");
    }
    let v0 = before.vel[0][0] as f64;
    let exact_v0 = (2.0 * G * l * (1.0 - th0.cos())).sqrt();
    let p_before: f64 = vx(&before).iter().sum::<f64>() * m;
    let e_before = kinetic(&before);
    sim.advance(4, 1).unwrap();
    let after = sim.read_state().unwrap();
    let v = vx(&after);
    let p_after: f64 = v.iter().sum::<f64>() * m;
    let e_after = kinetic(&after);
    let share = v0 / n as f64;
    let worst = v.iter().map(|x| (x - share).abs()).fold(0.0, f64::max);
    eprintln!(
        "cradle: impact after {steps} steps, v0 {v0:.5} (exact {exact_v0:.5}); after: {v:.5?} vs v0/N {share:.5} (worst {:.3} %); momentum {:+.3} %; energy {e_after:.4e} vs E/N {:.4e} ({:+.3} %)",
        100.0 * worst / share,
        100.0 * (p_after - p_before) / p_before,
        e_before / n as f64,
        100.0 * (e_after - e_before / n as f64) / (e_before / n as f64)
    );
    assert!(
        (v0 - exact_v0).abs() < 1e-2 * exact_v0,
        "arrival speed {v0} vs {exact_v0}"
    );
    assert!(worst < 5e-3 * share, "velocities {v:?} vs v0/N = {share}");
    assert!(
        (p_after - p_before).abs() < 2e-3 * p_before,
        "momentum {p_after} vs {p_before}"
    );
    let e_pred = e_before / n as f64;
    assert!(
        (e_after - e_pred).abs() < 5e-3 * e_pred,
        "energy {e_after} vs E/N {e_pred}"
    );
    // Swing on together to the turning point (ball 4's velocity changes sign).
    let h0 = l * (1.0 - th0.cos());
    let (mut top, mut spread) = (f64::MIN, 0.0f64);
    for _ in 0..2000 {
        sim.advance(1, 1).unwrap();
        let s = sim.read_state().unwrap();
        let rise = s.pos[n - 1][2] as f64 + l;
        let gaps = (1..n).map(|i| (v3(s.pos[i]) - v3(s.pos[i - 1])).length() - 2.0 * r);
        spread = spread.max(gaps.fold(0.0, f64::max));
        top = top.max(rise);
        if s.vel[n - 1][0] < 0.0 {
            break;
        }
    }
    let h_pred = h0 / (n * n) as f64;
    eprintln!(
        "cradle: rises to {top:.4e} m vs L(1 − cos θ₀)/N² = {h_pred:.4e} m ({:+.2} %), widest gap {spread:.2e} m",
        100.0 * (top - h_pred) / h_pred
    );
    assert!(
        (top - h_pred).abs() < 1e-2 * h_pred,
        "rise {top} vs {h_pred}"
    );
    assert!(spread < 0.1 * r, "the balls part: gap {spread}");
}

// ---------------------------------------------------------------------------------------
// Scene files: [[joint]] validation.

use bristlecone::scene::{self, SceneError};
use std::path::Path;

/// Lines 1–17: two named bodies (one fixed).
const JOINT_BASE: &str = r#"[simulation]
dt = 1e-3
steps = 10
[[material]]
name = "steel"
density = 7800.0
friction = 0.3
[[body]]
name = "arm"
radius = 0.02
position = [0.1, 0.0, 0.0]
[[body]]
name = "post"
radius = 0.02
position = [0.0, 0.0, 0.5]
motion = "fixed"

"#;

fn joint_scene(joint: &str) -> Result<scene::Scene, SceneError> {
    scene::parse_str(&format!("{JOINT_BASE}{joint}"), Path::new("j.toml"))
}

#[track_caller]
fn joint_err(joint: &str, field: &str, line: usize, msg: &str) {
    let e = joint_scene(joint)
        .err()
        .unwrap_or_else(|| panic!("expected an error for {joint}"));
    assert_eq!(e.field, field, "field of: {e}");
    assert_eq!(e.line, Some(line), "line of: {e}");
    assert!(e.message.contains(msg), "message of `{e}` lacks `{msg}`");
}

#[test]
fn scene_joints_are_read_and_bad_ones_named_by_file_line_field() {
    let s = joint_scene(
        "[[joint]]\nkind = \"revolute\"\nbody_b = \"arm\"\nanchor = [0.0, 0.0, 0.0]\naxis = [0.0, 2.0, 0.0]\nlimits = [-0.5, 0.5]\nmotor_velocity = 1.0\nmotor_max_force = 2.0\n",
    )
    .unwrap();
    let j = &s.joints[0];
    assert_eq!((j.body_a, j.body_b, j.axis), (None, 0, [0.0, 1.0, 0.0]));
    assert_eq!(j.limits, Some((-0.5, 0.5)));
    assert_eq!(
        j.motor,
        Some(bristlecone::joints::Motor {
            target: MotorTarget::Velocity(1.0),
            max_force: 2.0
        })
    );
    // The library joint: body index after the boundaries, no initial error.
    let state = bristlecone::setup::build_bodies(&s);
    let lib = scene::joints::build_joints(&s.joints, 0, &state);
    assert_eq!((lib[0].body_a, lib[0].body_b), (None, 0));
    let d = joint_scene("[[joint]]\nkind = \"distance\"\nbody_a = \"post\"\nbody_b = \"arm\"\nanchor = [0.0, 0.0, 0.5]\nanchor_b = [0.1, 0.0, 0.0]\nrope = true\n").unwrap();
    assert!(
        matches!(d.joints[0].kind, JointKind::Distance { rope: true, length } if (length - 0.26f64.sqrt()).abs() < 1e-12)
    );

    // Line 18 is `[[joint]]`; fields follow on 19, 20, …
    joint_err(
        "[[joint]]\nkind = \"revolute\"\nbody_b = \"nope\"\nanchor = [0.0, 0.0, 0.0]\n",
        "joint[0].body_b",
        20,
        "unknown body `nope`",
    );
    joint_err("[[joint]]\nkind = \"revolute\"\nbody_b = \"arm\"\nanchor = [0.0, 0.0, 0.0]\naxis = [0.0, 0.0, 0.0]\n", "joint[0].axis", 22, "zero-length axis");
    joint_err("[[joint]]\nkind = \"prismatic\"\nbody_b = \"arm\"\nanchor = [0.0, 0.0, 0.0]\nlimits = [0.3, 0.1]\n", "joint[0].limits", 22, "lower 0.3 > upper 0.1");
    joint_err(
        "[[joint]]\nkind = \"fixed\"\nbody_b = \"post\"\nanchor = [0.0, 0.0, 0.0]\n",
        "joint[0].body_b",
        20,
        "two fixed",
    );
    joint_err(
        "[[joint]]\nkind = \"hinge\"\nbody_b = \"arm\"\nanchor = [0.0, 0.0, 0.0]\n",
        "joint[0].kind",
        19,
        "unknown joint kind `hinge`",
    );
    joint_err("[[joint]]\nkind = \"spherical\"\nbody_b = \"arm\"\nanchor = [0.0, 0.0, 0.0]\nlimits = [0.0, 1.0]\n", "joint[0].limits", 22, "does not apply to joint kind `spherical`");
    joint_err("[[joint]]\nkind = \"revolute\"\nbody_a = \"arm\"\nbody_b = \"arm\"\nanchor = [0.0, 0.0, 0.0]\n", "joint[0].body_b", 21, "two different bodies");
    joint_err("[[joint]]\nkind = \"revolute\"\nbody_b = \"arm\"\nanchor = [0.0, 0.0, 0.0]\nmotor_max_force = 1.0\n", "joint[0].motor_max_force", 22, "without a motor target");
    joint_err(
        "[[joint]]\nkind = \"distance\"\nbody_b = \"arm\"\nanchor = [0.0, 0.0, 0.0]\n",
        "joint[0].anchor_b",
        18,
        "missing field `anchor_b`",
    );
}

/// Joint impulses are warm-started by key from the buffer that checkpoints save: a run with
/// joints (spherical, revolute with a motor and limits, rope) resumed halfway is
/// bit-identical to one run straight through; its VTK joint frames are checked after it.
#[test]
fn resuming_a_scene_with_joints_is_bit_identical_to_running_through() {
    use bristlecone::run::{run_scene, RunOptions, Silent};
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "{}{}",
        JOINT_BASE.replace("steps = 10", "steps = 40"),
        r#"[[body]]
name = "bob"
radius = 0.02
position = [0.2, 0.0, 0.0]
[[joint]]
kind = "revolute"
body_b = "arm"
anchor = [0.0, 0.0, 0.0]
axis = [0.0, 1.0, 0.0]
limits = [-1.0, 0.2]
motor_velocity = 0.5
motor_max_force = 0.05
[[joint]]
kind = "distance"
body_a = "arm"
body_b = "bob"
anchor = [0.1, 0.0, 0.0]
anchor_b = [0.2, 0.0, 0.0]
rope = true
[[joint]]
kind = "spherical"
body_a = "post"
body_b = "bob"
anchor = [0.1, 0.0, 0.25]
"#
    );
    let scene = dir.path().join("joints.toml");
    std::fs::write(&scene, text).unwrap();
    let run = |out: &Path, steps: Option<u64>, resume: Option<std::path::PathBuf>| {
        let opts = RunOptions {
            out_dir: Some(out.to_path_buf()),
            steps,
            resume,
            from: None,
            overwrite: false,
        };
        let stop = std::sync::atomic::AtomicBool::new(false);
        run_scene(shared_context(), &scene, &opts, &stop, &mut Silent).unwrap()
    };
    let (full, split) = (dir.path().join("full"), dir.path().join("split"));
    run(&full, None, None);
    let half = run(&split, Some(20), None);
    let saved = dir.path().join("half.bin");
    std::fs::copy(&half.checkpoint, &saved).unwrap();
    run(&split, None, Some(saved));
    let a = std::fs::read_to_string(full.join("stats.csv")).unwrap();
    let b = std::fs::read_to_string(split.join("stats.csv")).unwrap();
    for (la, lb) in a.lines().zip(b.lines()) {
        if la.rsplit_once(',').unwrap().0 != lb.rsplit_once(',').unwrap().0 {
            eprintln!("full : {la}\nsplit: {lb}");
        }
    }
    let x = std::fs::read(full.join("checkpoint.bin")).unwrap();
    let y = std::fs::read(split.join("checkpoint.bin")).unwrap();
    assert!(
        x == y,
        "resumed run with joints differs from the straight run"
    );
    // measurements/joints.csv: same rows either way; the arm's motor (limit 0.05 N·m
    // against ~0.26 N·m of gravity) sits at its limit.
    let ja = std::fs::read_to_string(full.join("measurements/joints.csv")).unwrap();
    let jb = std::fs::read_to_string(split.join("measurements/joints.csv")).unwrap();
    assert_eq!(ja, jb, "joints.csv of the resumed run");
    let header: Vec<&str> = ja.lines().next().unwrap().split(',').collect();
    let last: Vec<f64> = ja
        .lines()
        .last()
        .unwrap()
        .split(',')
        .map(|x| x.parse().unwrap())
        .collect();
    let col = header.iter().position(|c| *c == "j0_motor").unwrap();
    assert_eq!(
        header.len(),
        1 + 3 * 7,
        "time + 7 columns per joint: {header:?}"
    );
    assert!(
        (last[col].abs() - 0.05).abs() < 1e-4,
        "motor torque {}",
        last[col]
    );
    joint_frames_read_back(&full, &split, last[col]);
}

fn poly_piece(path: &Path) -> vtkio::model::PolyDataPiece {
    use vtkio::model::{DataSet, Piece, Vtk};
    match Vtk::import(path).unwrap().data {
        DataSet::PolyData { mut pieces, .. } => match pieces.remove(0) {
            Piece::Inline(p) => *p,
            other => panic!("unexpected piece {other:?}"),
        },
        other => panic!("not poly data: {other:?}"),
    }
}

fn vtk_array(attrs: &[vtkio::model::Attribute], name: &str) -> Vec<f64> {
    use vtkio::model::Attribute;
    attrs
        .iter()
        .find_map(|a| match a {
            Attribute::DataArray(d) if d.name == name => d.data.clone().cast_into::<f64>(),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no array {name}"))
}

/// The joint frames of the run above (revolute to the world with a motor, rope arm–bob,
/// spherical post–bob): one `joints_STEP.vtp` per particle frame, indexed by `joints.pvd`
/// (the same after resuming); each parses with vtkio as 6 points (anchor on A, on B) and
/// 3 line cells; the revolute's world anchor is the origin, its axes +y on both sides, the
/// bilateral joints' anchor pairs meet within 1e-3 m, the rope is at most its length, body
/// ids are −1 for the world, and the last frame's motor cell is `joints.csv`'s torque.
fn joint_frames_read_back(full: &Path, split: &Path, motor_csv: f64) {
    let pvd = |dir: &Path, name: &str| bristlecone::io::Collection::read(dir.join(name)).unwrap();
    let (frames, particles) = (pvd(full, "joints.pvd"), pvd(full, "particles.pvd"));
    assert_eq!(frames.entries().len(), particles.entries().len());
    assert_eq!(frames.entries(), pvd(split, "joints.pvd").entries());
    for (k, (_, name)) in frames.entries().iter().enumerate() {
        let piece = poly_piece(&full.join(name));
        let p = piece.points.cast_into::<f64>().unwrap();
        assert_eq!(p.len(), 6 * 3, "{name}: two points per joint");
        let Some(vtkio::model::VertexNumbers::XML {
            connectivity,
            offsets,
        }) = &piece.lines
        else {
            panic!("{name}: no line cells")
        };
        assert_eq!(connectivity, &[0, 1, 2, 3, 4, 5]);
        assert_eq!(offsets, &[2, 4, 6]);
        let pt = |i: usize| DVec3::new(p[3 * i], p[3 * i + 1], p[3 * i + 2]);
        assert_eq!(pt(0), DVec3::ZERO, "{name}: the revolute's world anchor");
        assert!(pt(0).distance(pt(1)) < 1e-3, "{name}: revolute anchors");
        assert!(pt(2).distance(pt(3)) < 0.1 + 1e-3, "{name}: rope length");
        assert!(pt(4).distance(pt(5)) < 1e-3, "{name}: spherical anchors");
        let axis = vtk_array(&piece.data.point, "axis");
        assert!(DVec3::new(axis[0], axis[1], axis[2]).distance(DVec3::Y) < 1e-6);
        assert!(DVec3::new(axis[3], axis[4], axis[5]).distance(DVec3::Y) < 1e-3);
        let body = vtk_array(&piece.data.point, "body");
        assert_eq!(body[0], -1.0);
        assert!(body[4] >= 0.0 && body[1] != body[3] && body[3] == body[5]);
        assert_eq!(vtk_array(&piece.data.cell, "joint"), [0.0, 1.0, 2.0]);
        let motor = vtk_array(&piece.data.cell, "motor");
        if k == 0 {
            assert_eq!(motor[0], 0.0, "no step taken at the first frame");
        }
        if k + 1 == frames.entries().len() {
            assert!(
                (motor[0] - motor_csv).abs() < 1e-6,
                "{} vs {motor_csv}",
                motor[0]
            );
            assert_eq!(vtk_array(&piece.data.cell, "force").len(), 9);
        }
    }
    eprintln!("joint frames: {} files read back", frames.entries().len());
}

/// Angle (about +y, in the xz plane: atan2(z, x) of a body-fixed x axis) of a body's rotation
/// relative to its start: rotating by θ about +y lowers atan2(z, x) by θ.
fn turn_about_y(q: [f32; 4]) -> f64 {
    let q = DQuat::from_xyzw(q[0] as f64, q[1] as f64, q[2] as f64, q[3] as f64);
    let x = q * DVec3::X;
    x.z.atan2(x.x)
}

/// A planar four-bar (crank-rocker: ground 0.14 m, crank 0.05, coupler 0.15, rocker 0.12,
/// Grashof) in the xz plane without gravity: crank and rocker on revolute joints to the world
/// (axis y), the coupler on spherical joints to both; a velocity motor turns the crank at
/// 4 rad/s for 0.3 s. The coupler's angle follows the loop-closure kinematics of the
/// simulated crank angle within 1e-3 rad at every sample.
#[test]
fn four_bar_linkage_moves_as_its_kinematics_say() {
    let (a, b, c, d) = (0.05f64, 0.15, 0.12, 0.14);
    let o2 = DVec3::new(d, 0.0, 0.0);
    // The joint C of crank angle φ (upper branch): circles (B, b) and (O₂, c).
    let joint_c = |phi: f64| {
        let bp = DVec3::new(a * phi.cos(), 0.0, a * phi.sin());
        let v = o2 - bp;
        let l = v.length();
        let x = (b * b - c * c + l * l) / (2.0 * l);
        let h = (b * b - x * x).sqrt();
        let e = v / l;
        let perp = DVec3::new(-e.z, 0.0, e.x);
        (bp, bp + x * e + h * perp)
    };
    let coupler_angle = |phi: f64| {
        let (bp, cp) = joint_c(phi);
        (cp.z - bp.z).atan2(cp.x - bp.x)
    };
    let phi0 = std::f64::consts::FRAC_PI_2;
    let (bp, cp) = joint_c(phi0);
    // Links as small spheres at their midpoints with rod inertia (m L²/12 across).
    let rod = |p: DVec3, len: f64| {
        let m = 0.05;
        let i = (m * len * len / 12.0).max(1e-7);
        BodyInit {
            inv_mass: (1.0 / m) as f32,
            inv_inertia: [(1.0 / i) as f32; 3],
            ..BodyInit::sphere([p.x as f32, p.y as f32, p.z as f32], 0.005, 1.0)
        }
    };
    let inits = [
        rod(0.5 * bp, a),
        rod(0.5 * (bp + cp), b),
        rod(0.5 * (o2 + cp), c),
    ];
    let state = BodyState::from_inits(&inits);
    let settings = StepSettings {
        dt: 1e-3,
        gravity: [0.0; 3],
        contact: Some(ContactSetup {
            models: Vec::new(),
            patch_cells: 0,
            shapes: Vec::new(),
            collide: CollideSettings {
                envelope: 1e-3,
                friction: vec![0.3],
            },
            solver: apgd(200, 1e-6),
        }),
    };
    let mut sim = Simulation::new(shared_context(), &state, settings).unwrap();
    let joints = [
        Joint::new(JointKind::Revolute, None, 0)
            .at(&state, DVec3::ZERO, -DVec3::Y)
            .with_motor(MotorTarget::Velocity(4.0), f64::INFINITY),
        Joint::new(JointKind::Spherical, Some(0), 1).at(&state, bp, DVec3::Z),
        Joint::new(JointKind::Spherical, Some(1), 2).at(&state, cp, DVec3::Z),
        Joint::new(JointKind::Revolute, None, 2).at(&state, o2, DVec3::Y),
    ];
    sim.set_joints(&joints).unwrap();
    let psi0 = coupler_angle(phi0);
    let mut worst: f64 = 0.0;
    let mut phi = phi0;
    for _ in 0..10 {
        sim.advance(30, 30).unwrap();
        let s = sim.read_state().unwrap();
        phi = phi0 + turn_about_y(s.rot[0]);
        let psi = psi0 + turn_about_y(s.rot[1]);
        worst = worst.max((psi - coupler_angle(phi)).abs());
    }
    eprintln!(
        "four-bar: crank turned {:.3} rad, max |coupler − kinematics| {worst:.2e} rad",
        phi - phi0
    );
    assert!(
        (phi - phi0 - 1.2).abs() < 0.02,
        "the motor turns the crank 1.2 rad: {}",
        phi - phi0
    );
    assert!(worst < 1e-3, "coupler angle off by {worst} rad");
}

// ---------------------------------------------------------------------------------------
// A motorised drum: a dynamic cylinder-container boundary on a revolute joint to the world.

/// Drum of radius 30 mm and length 20 mm (axis y through the base centre at z = 50 mm),
/// mass 0.2 kg, I = 1.8e-4 kg·m² about its axis, holding ~100 glass beads (r = 2 mm), on a
/// revolute joint to the world about its axis with a velocity motor (ω = π rad/s, `limit`).
fn drum_scene(limit: f64, steps: u32) -> String {
    format!(
        r#"[simulation]
dt = 1e-3
steps = {steps}
[solver]
kind = "apgd"
max_iterations = 100
tolerance = 1e-6
envelope = 0.001
[[material]]
name = "glass"
density = 2500.0
friction = 0.4
[[generator]]
kind = "random_fill"
material = "glass"
region = {{ kind = "box", min = [-0.015, -0.007, 0.028], max = [0.015, 0.007, 0.05] }}
radius = 0.002
count = 100
max_attempts = 20000
seed = 3
[[boundary]]
name = "drum"
kind = "cylinder_container"
material = "glass"
motion = "dynamic"
mass = 0.2
inertia = [1e-4, 1e-4, 1.8e-4]
position = [0.0, -0.01, 0.05]
axis = [0.0, 1.0, 0.0]
radius = 0.03
height = 0.02
[[joint]]
kind = "revolute"
body_b = "drum"
anchor = [0.0, -0.01, 0.05]
axis = [0.0, 1.0, 0.0]
motor_velocity = {W_DRUM}
motor_max_force = {limit}
"#
    )
}

const W_DRUM: f64 = std::f64::consts::PI;

/// Runs the drum scene for `spin` steps, then `samples` × 5 more, sampling every 5th step:
/// (motor torque, the grains' torque on the drum about its axis, drum ω about y).
fn run_drum(limit: f64, spin: u32, samples: u32) -> Vec<(f64, f64, f64)> {
    use bristlecone::{measure::boundary_wrench, run::contact_forces, setup};
    let s = scene::parse_str(
        &drum_scene(limit, spin + 5 * samples),
        Path::new("drum.toml"),
    )
    .unwrap();
    assert_eq!(s.boundaries[0].mass, Some((0.2, [1e-4, 1e-4, 1.8e-4])));
    let state = setup::build_bodies(&s);
    let mut sim = Simulation::new(shared_context(), &state, setup::step_settings(&s)).unwrap();
    let joints = scene::joints::build_joints(&s.joints, setup::boundary_count(&s), &state);
    assert_eq!(
        (joints[0].body_a, joints[0].body_b),
        (None, 0),
        "the drum is body 0"
    );
    sim.set_joints(&joints).unwrap();
    sim.advance(spin, spin as u64).unwrap();
    let mut out = Vec::new();
    for _ in 0..samples {
        sim.advance(5, 5).unwrap();
        let st = sim.download_kinematics().unwrap();
        let (c, imp) = sim.read_contacts().unwrap();
        let forces = contact_forces(&st, &c, &imp, 1e-3);
        let (_, tq) = boundary_wrench(&forces, 0, [0.0, -0.01, 0.05]);
        let motor = sim.joint_reactions().unwrap()[0].motor;
        out.push((motor, tq[1], st.omega[0][1] as f64));
    }
    out
}

fn mean(x: impl Iterator<Item = f64>) -> f64 {
    let v: Vec<f64> = x.collect();
    v.iter().sum::<f64>() / v.len() as f64
}

/// In steady rotation about a principal axis the drum's angular momentum is constant, so
/// the motor torque balances the grains' torque about the axis (gravity acts at the drum's
/// origin, on the axis: no torque; the hinge's other rows act on or across the axis).
/// After 0.15 s of spin-up, averaged over 0.1 s (every 5th step): the drum turns at the
/// motor speed within 1 %, the motor is below its limit, and motor torque + grains' torque
/// ≈ 0 within 0.1 % of the mean grains' torque, every sample within 1 % (and that torque must
/// be a real load: the drum lifts the bed).
/// With a limit of a third of that torque the motor sits at its limit and the drum stalls.
#[test]
fn motorised_drum_torque_balances_the_grains_torque() {
    let limit = 0.1;
    let s = run_drum(limit, 150, 20);
    let motor = mean(s.iter().map(|x| x.0));
    let grains = mean(s.iter().map(|x| x.1));
    let w = mean(s.iter().map(|x| x.2));
    let wmin = s.iter().map(|x| x.2).fold(f64::INFINITY, f64::min);
    let worst = s.iter().map(|x| (x.0 + x.1).abs()).fold(0.0, f64::max);
    eprintln!(
        "drum: motor {motor:.6} N·m, grains {grains:.6} N·m (mean sum {:.2e}, worst sample {worst:.2e}), ω mean {w:.5} (min {wmin:.5}) rad/s",
        motor + grains
    );
    // The bed's weight (~0.01 kg) lifted ~10 mm off the axis: ~1e-3 N·m, resisting (−y).
    assert!(grains < -2e-4, "the grains load the drum: {grains}");
    assert!(
        (motor + grains).abs() < 1e-3 * grains.abs() && worst < 1e-2 * grains.abs(),
        "motor {motor} vs grains' torque {grains}"
    );
    assert!(motor < 0.5 * limit, "motor below its limit: {motor}");
    assert!((w - W_DRUM).abs() < 1e-2 * W_DRUM, "drum ω {w}");

    // Stall: a third of the needed torque. The motor saturates; the drum cannot lift the bed.
    let weak = grains.abs() / 3.0;
    let s = run_drum(weak, 100, 10);
    let m = mean(s.iter().map(|x| x.0));
    let w = mean(s.iter().map(|x| x.2));
    eprintln!("stalled drum: limit {weak:.6} N·m, motor {m:.6} N·m, ω mean {w:.5} rad/s");
    assert!(
        s.iter().all(|x| (x.0.abs() - weak).abs() < 1e-3 * weak),
        "the motor sits at its limit"
    );
    assert!(w < 0.2 * W_DRUM, "the drum stalls: ω = {w}");
}

/// `motion = "dynamic"` on a boundary needs explicit positive `mass` and `inertia`; other
/// boundaries may not have them; a joint of a non-dynamic boundary and the world is refused.
#[test]
fn dynamic_boundaries_are_validated_by_file_line_field() {
    let base = drum_scene(0.1, 10);
    let err = |from: &str, to: &str| {
        assert!(base.contains(from), "{from}");
        let e = scene::parse_str(&base.replacen(from, to, 1), Path::new("drum.toml"))
            .err()
            .unwrap_or_else(|| panic!("expected an error for {to}"));
        eprintln!("{e}");
        (e.field.clone(), e.line, e.message.clone())
    };
    let (f, l, m) = err("mass = 0.2\n", "");
    assert_eq!((f.as_str(), l), ("boundary[0].mass", Some(21)));
    assert!(m.contains("explicit `mass`"), "{m}");
    let (f, l, m) = err("inertia = [1e-4, 1e-4, 1.8e-4]\n", "");
    assert_eq!((f.as_str(), l), ("boundary[0].inertia", Some(21)));
    assert!(m.contains("explicit `inertia`"), "{m}");
    let (f, l, m) = err("mass = 0.2", "mass = 0.0");
    assert_eq!((f.as_str(), l), ("boundary[0].mass", Some(26)));
    assert!(m.contains("must be positive"), "{m}");
    let (f, l, m) = err("1.8e-4]", "-1.0]");
    assert_eq!((f.as_str(), l), ("boundary[0].inertia", Some(27)));
    assert!(m.contains("must be positive"), "{m}");
    let (f, l, m) = err("motion = \"dynamic\"", "motion = \"fixed\"");
    assert_eq!((f.as_str(), l), ("boundary[0].mass", Some(26)));
    assert!(m.contains("only a dynamic boundary"), "{m}");
    let fixed = base
        .replacen("motion = \"dynamic\"", "motion = \"fixed\"", 1)
        .replacen("mass = 0.2\n", "", 1)
        .replacen("inertia = [1e-4, 1e-4, 1.8e-4]\n", "", 1);
    let e = scene::parse_str(&fixed, Path::new("drum.toml")).unwrap_err();
    assert_eq!(e.field, "joint[0].body_b", "{e}");
    assert!(e.message.contains("two fixed"), "{e}");
}
