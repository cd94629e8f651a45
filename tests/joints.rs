//! Joints (issue #15): the GPU joint stage and the solver's joint rows against their f64
//! twins on random joint sets of real size, then physics against analytic answers.

use bristlecone::bodies::{BodyInit, BodyState, MOTION_FIXED, SHAPE_PLANE};
use bristlecone::gpu::{buffers, shared_context, GpuContext};
use bristlecone::joints::{blocks_of, block_lists, Joint, JointKind, Joints, MotorTarget};
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
fn random_joints(seed: u64, n_bodies: usize, n_joints: usize) -> (BodyState, BodyState, Vec<Joint>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut inits = Vec::new();
    for i in 0..n_bodies {
        let mut b = BodyInit::sphere(
            [
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
                rng.random_range(0.0..1.0),
            ],
            rng.random_range(0.05..0.15),
            2500.0,
        );
        let q = DQuat::from_euler(
            glam::EulerRot::XYZ,
            rng.random_range(0.0..6.0),
            rng.random_range(0.0..6.0),
            rng.random_range(0.0..6.0),
        );
        b.orientation = [q.x as f32, q.y as f32, q.z as f32, q.w as f32];
        for k in 0..3 {
            b.inv_inertia[k] *= rng.random_range(0.5..2.0);
            b.velocity[k] = rng.random_range(-0.5..0.5);
            b.angular_velocity[k] = rng.random_range(-2.0..2.0);
        }
        if i < 2 {
            b.motion = MOTION_FIXED;
            b.inv_mass = 0.0;
            b.inv_inertia = [0.0; 3];
            b.shape = SHAPE_PLANE;
        }
        inits.push(b);
    }
    let state = BodyState::from_inits(&inits);
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
        let p = DVec3::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0), 0.5);
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
    let counts = buffers::storage_from(ctx, "counts", &counts_words(contacts));
    let recs = buffers::storage_zeroed(ctx, "contacts", cap as u64 * 64).unwrap();
    let rhs = buffers::storage_zeroed(ctx, "rhs", cap as u64 * 16).unwrap();
    let mut enc = ctx.device.create_command_encoder(&Default::default());
    stage.record(ctx, &mut enc, &bodies.pos, &bodies.rot, &counts, &recs, &rhs);
    ctx.queue.submit([enc.finish()]);
    let r: Vec<Contact> = buffers::read_buffer(ctx, &recs, cap as usize).unwrap();
    let o: Vec<[f32; 4]> = buffers::read_buffer(ctx, &rhs, cap as usize).unwrap();
    let c: Vec<u32> = buffers::read_buffer(ctx, &counts, 4).unwrap();
    assert_eq!(c[2], contacts + nb, "needed constraints include the joint rows");
    assert_eq!(c[1], 0, "no overflow");
    (r[contacts as usize..].to_vec(), o[contacts as usize..].to_vec())
}

#[test]
fn joint_stage_on_gpu_equals_the_f64_twin_on_3000_random_joints() {
    let ctx = shared_context();
    let (_, moved, joints) = random_joints(3, 2000, 3000);
    let v_rec = 0.5;
    let (g_rec, g_off) = gpu_joint_rows(&ctx, &moved, &joints, 77, v_rec);
    let (blocks, _) = blocks_of(&joints);
    let (c_rec, c_off) = cpu_joints::write_blocks(&to_f64(&moved), &blocks, DT as f64, v_rec as f64);
    assert_eq!(g_rec.len(), c_rec.len());
    let mut worst = [0.0f64; 3];
    let mut active = 0;
    for (j, ((gr, cr), (go, co))) in g_rec.iter().zip(&c_rec).zip(g_off.iter().zip(&c_off)).enumerate() {
        assert_eq!(gr.ids, cr.ids, "block {j}: bodies, index or flags");
        for k in 0..4 {
            worst[0] = worst[0].max((gr.n_gap[k] - cr.n_gap[k]).abs() as f64);
            worst[1] = worst[1].max((gr.ra[k] - cr.ra[k]).abs().max((gr.rb[k] - cr.rb[k]).abs()) as f64);
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
    assert!(active > g_rec.len(), "the perturbed poses give position errors ({active} rows)");
    assert!(worst[0] < 1e-5 && worst[1] < 1e-5, "records differ: {worst:?}");
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
                n_gap: [n.x as f32, n.y as f32, n.z as f32, rng.random_range(-0.004..0.001)],
                ra: [ra.x as f32, ra.y as f32, ra.z as f32, rng.random_range(0.1..0.8)],
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
    };
    // GPU.
    let bodies = bristlecone::bodies::GpuBodies::upload(&ctx, &moved).unwrap();
    let mut solve = Solve::new(&ctx, &bodies, all.len() as u32, &st, DT).unwrap();
    solve.set_joints(&ctx, blocks.len() as u32, &block_lists(moved.len(), &blocks));
    let (off, ent) = build_csr(moved.len(), &contacts);
    let recs = buffers::storage_from(&ctx, "contacts", &all);
    let counts = buffers::storage_from(&ctx, "counts", &counts_words(nc as u32));
    let offs = buffers::storage_from(&ctx, "offsets", &off);
    let ents = buffers::storage_from(&ctx, "entries", &ent);
    let stats = buffers::storage_from(&ctx, "stats", &[0u32; 8]);
    let rhs: Vec<[f32; 4]> = joff.iter().map(|o| [o[0] as f32, o[1] as f32, o[2] as f32, 0.0]).collect();
    ctx.queue.write_buffer(solve.rhs_buffer(), nc as u64 * 16, bytemuck::cast_slice(&rhs));
    // The offsets the twin gets are the ones the GPU reads (f32).
    let joff32: Vec<[f64; 3]> = rhs.iter().map(|o| [o[0] as f64, o[1] as f64, o[2] as f64]).collect();
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
    assert!((sc.res0 as f64 - r0).abs() <= 1e-5 * r0, "initial residual {} vs {r0}", sc.res0);
    for (k, (hg, hc)) in hist.iter().zip(&c.history).enumerate() {
        let err = (hg[0] as f64 - hc[0]).abs();
        assert!(err <= 2e-4 * r0 + 2e-3 * hc[0], "sweep {k}: residual {} vs {}", hg[0], hc[0]);
    }
    let scale = c.gamma.iter().flatten().fold(0.0f64, |m, x| m.max(x.abs()));
    let worst = g
        .iter()
        .zip(&c.gamma)
        .flat_map(|(a, b)| (0..3).map(move |k| (a[k] as f64 - b[k]).abs()))
        .fold(0.0f64, f64::max);
    // Joint rows carry impulses (not all clamped to zero).
    let joint_scale = c.gamma[nc..].iter().flatten().fold(0.0f64, |m, x| m.max(x.abs()));
    assert!(joint_scale > 0.1 * scale, "joint impulses {joint_scale} vs {scale}");
    eprintln!(
        "{kind:?}: {nc} contacts + {} joint blocks, {} sweeps, residual {r0:.3e} → {:.3e}, max |Δγ|/max|γ| = {:.2e}",
        blocks.len(),
        c.iterations,
        c.residual,
        worst / scale
    );
    assert!(worst <= 1e-4 * scale, "γ differs by {worst} (scale {scale})");
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
