//! Rolling and spinning resistance (rows 3–5, `src/model/rows` "Rolling and spinning"):
//! the GPU solver against its f64 twin on random 6-row contact sets, and a rolling and a
//! spinning sphere against their analytic deceleration.

use crate::common::*;
use bristlecone::bodies::{BodyInit, BodyState, SHAPE_PLANE};
use bristlecone::collide::{BoundaryShape, CollideSettings};
use bristlecone::gpu::{buffers, shared_context, GpuContext};
use bristlecone::model::rows::{material_row, with_rolling, MaterialRow};
use bristlecone::reference::integrate::to_f64;
use bristlecone::reference::solve as cpu;
use bristlecone::scene::FrictionModel;
use bristlecone::solve::gauss::GS_COLOURS;
use bristlecone::solve::{
    build_csr, counts_words, Cone, Contact, Solve, SolveInputs, SolverKind, SolverSettings,
};
use bristlecone::step::{ContactSetup, Simulation, StepSettings};
use glam::DVec3;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const DT: f32 = 1e-3;

/// Random bodies (2 fixed walls first, then spheres with random orientation, anisotropic
/// inertia, velocities and spins) and random contacts between them with sorted unique keys
/// and random materials among `nm`.
fn random_problem(
    seed: u64,
    n_bodies: usize,
    n_contacts: usize,
    nm: u32,
) -> (BodyState, Vec<Contact>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let state = random_bodies(&mut rng, n_bodies, 4.0);
    let mat = |rng: &mut ChaCha8Rng| (rng.random_range(0..nm) << 16) | rng.random_range(0..nm);
    let contacts = random_contacts(&mut rng, &state, n_contacts, mat);
    (state, contacts)
}

/// Saved warm-start keys and records (as f64).
type Saved = (Vec<(u32, u32, u32)>, Vec<[f64; 4]>);

struct GpuOut {
    gamma: Vec<[f32; 4]>,
    rolling: Vec<[f32; 4]>,
    scalars: bristlecone::solve::SolverScalars,
    history: Vec<[f32; 4]>,
    state: BodyState,
    /// The saved records (keys, f32 records) before the last solve.
    saved_before: Saved,
}

/// `solves` GPU solves of the same contacts from the same velocities (later ones differ by
/// the saved records: the warm start and γ_n⁻ of the rolling bounds).
fn run_gpu(
    ctx: &GpuContext,
    state: &BodyState,
    contacts: &[Contact],
    st: &SolverSettings,
    models: &[MaterialRow],
    solves: usize,
) -> GpuOut {
    let bodies = bristlecone::bodies::GpuBodies::upload(ctx, state).unwrap();
    let n = contacts.len() as u32;
    let mut solve = Solve::new(ctx, &bodies, n, st, DT).unwrap();
    solve.set_models(ctx, models).unwrap();
    let (off, ent) = build_csr(state.len(), contacts);
    let cb = buffers::storage_from(ctx, "contacts", contacts).unwrap();
    let counts = buffers::storage_from(ctx, "counts", &counts_words(n)).unwrap();
    let offs = buffers::storage_from(ctx, "offsets", &off).unwrap();
    let ents = buffers::storage_from(ctx, "entries", &ent).unwrap();
    let stats = buffers::storage_from(ctx, "stats", &[0u32; 8]).unwrap();
    let mut saved_before: Saved = (Vec::new(), Vec::new());
    for _ in 0..solves {
        let (k, r) = solve.read_warm_start(ctx).unwrap();
        saved_before = (
            k.iter().map(|k| (k[0], k[1], k[2])).collect(),
            r.iter()
                .map(|r| r.map(|x| f32::from_bits(x) as f64))
                .collect(),
        );
        bodies.write(ctx, state);
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        let inputs = SolveInputs {
            contacts: &cb,
            counts: &counts,
            body_offsets: &offs,
            body_entries: &ents,
            step_stats: &stats,
        };
        solve.record(ctx, &mut enc, inputs);
        ctx.queue.submit([enc.finish()]);
    }
    GpuOut {
        gamma: solve.read_impulses(ctx, n).unwrap(),
        rolling: solve.read_rolling_impulses(ctx, n).unwrap(),
        scalars: solve.read_scalars(ctx).unwrap(),
        history: solve.read_history(ctx).unwrap(),
        state: bodies.download_kinematics(ctx).unwrap(),
        saved_before,
    }
}

fn max_abs(g: &[[f64; 3]]) -> f64 {
    g.iter().flatten().fold(0.0f64, |m, x| m.max(x.abs()))
}

fn max_diff(g: &[[f32; 4]], c: &[[f64; 3]]) -> f64 {
    g.iter()
        .zip(c)
        .flat_map(|(a, b)| (0..3).map(move |k| (a[k] as f64 - b[k]).abs()))
        .fold(0.0, f64::max)
}

/// Materials: no resistance, rolling and spinning, rolling only, spinning only (a compliant
/// one among them, so rows 3–5 meet a compliance E_n too).
fn rolling_models() -> Vec<MaterialRow> {
    let c = material_row(&FrictionModel::Coulomb);
    vec![
        c,
        with_rolling(c, 0.3, 0.2),
        with_rolling(c, 0.1, 0.0),
        with_rolling(
            material_row(&FrictionModel::Compliant {
                stiffness: 1e6,
                damping: 100.0,
            }),
            0.0,
            0.4,
        ),
    ]
}

/// GPU vs f64 twin with rows 3–5 on 1000 random contacts: two solves (the second has the
/// bounds μ r_eff γ_n⁻ from the first; the twin's second solve starts from the GPU's saved
/// records, so that the first solve's f32 rounding of γ_n does not move the bounds), same
/// sweeps and APGD decisions, γ (rows 0–2 and 3–5) and velocities within f32 rounding grown
/// over the sweeps. Returns the GPU's run and its settings.
fn gpu_matches_cpu(kind: SolverKind, cone: Cone) -> (GpuOut, SolverSettings) {
    gpu_matches_cpu_on(kind, cone, 1000)
}

/// [`gpu_matches_cpu`] with 1000 contacts among `n_bodies` bodies.
fn gpu_matches_cpu_on(kind: SolverKind, cone: Cone, n_bodies: usize) -> (GpuOut, SolverSettings) {
    let ctx = shared_context();
    let models = rolling_models();
    let (state, contacts) = random_problem(17, n_bodies, 1000, models.len() as u32);
    let st = SolverSettings {
        kind,
        max_iterations: 40,
        tolerance: 0.0,
        omega: 0.6,
        recovery_speed: 0.5,
        warm_start: true,
        cone,
        max_outer: 3,
        ..SolverSettings::default()
    };
    let g = run_gpu(&ctx, &state, &contacts, &st, &models, 2);
    let b64 = to_f64(&state);
    let dt = DT as f64;
    let (keys, saved) = &g.saved_before;
    assert_eq!(keys.len(), contacts.len());
    let gamma: Vec<[f64; 3]> = saved.iter().map(|r| [r[0], r[1], r[2]]).collect();
    let ws = cpu::WarmStart {
        keys,
        gamma: &gamma,
        saved,
    };
    let c = cpu::solve_models(&b64, &contacts, &st, dt, Some(ws), &models);
    // The rows must matter: many are live, and the answer without them is far from this one.
    let live = c
        .gamma_rolling
        .iter()
        .filter(|g| g.iter().any(|x| *x != 0.0))
        .count();
    assert!(
        live > 300,
        "only {live} contacts with rolling / spinning impulses"
    );
    let plain = cpu::solve_models(&b64, &contacts, &st, dt, Some(ws), &models[..1]);
    let dw = c
        .omega
        .iter()
        .zip(&plain.omega)
        .map(|(a, b)| (*a - *b).length())
        .fold(0.0, f64::max);
    assert!(dw > 0.1, "rows 3–5 change ω by only {dw} rad/s");
    assert_eq!(g.scalars.iterations, c.iterations);
    assert_eq!(g.scalars.outer, c.outer);
    assert_eq!(g.history.len(), c.history.len());
    let acc = |h: &[[f32; 4]]| h.iter().map(|h| h[3] != 0.0).collect::<Vec<_>>();
    let acc_c: Vec<bool> = c.history.iter().map(|h| h[3] != 0.0).collect();
    assert_eq!(acc(&g.history), acc_c, "APGD backtracking decisions differ");
    let r0 = c.residual0;
    assert!(
        (g.scalars.res0 as f64 - r0).abs() <= 1e-5 * r0,
        "residual of γ⁰: {} vs the twin's {r0}",
        g.scalars.res0
    );
    for (k, (hg, hc)) in g.history.iter().zip(&c.history).enumerate() {
        let err = (hg[0] as f64 - hc[0]).abs();
        assert!(
            err <= 2e-4 * r0 + 2e-3 * hc[0],
            "sweep {k}: residual {} vs {}",
            hg[0],
            hc[0]
        );
    }
    let (dg, sg) = (max_diff(&g.gamma, &c.gamma), max_abs(&c.gamma));
    let (dr, sr) = (
        max_diff(&g.rolling, &c.gamma_rolling),
        max_abs(&c.gamma_rolling),
    );
    assert!(dg <= 1e-4 * sg, "γ differs by {dg} (scale {sg})");
    assert!(dr <= 1e-4 * sr, "rows 3–5 differ by {dr} (scale {sr})");
    let vs = c
        .vel
        .iter()
        .chain(&c.omega)
        .map(|v| v.length())
        .fold(0.0, f64::max);
    let mut dv: f64 = 0.0;
    for b in 0..state.len() {
        let (v, w) = (g.state.vel[b], g.state.omega[b]);
        let v = DVec3::new(v[0] as f64, v[1] as f64, v[2] as f64);
        let w = DVec3::new(w[0] as f64, w[1] as f64, w[2] as f64);
        dv = dv
            .max((v - c.vel[b]).length())
            .max((w - c.omega[b]).length());
    }
    assert!(dv <= 1e-4 * vs, "velocities differ by {dv} (scale {vs})");
    eprintln!(
        "{kind:?} {cone:?}: {live} live 6-row contacts, {} sweeps, residual {r0:.3e} → {:.3e}, \
         max |Δγ|/max|γ| = {:.2e}, rows 3–5 {:.2e}, Δω without them {dw:.2} rad/s",
        c.iterations,
        c.residual,
        dg / sg,
        dr / sr
    );
    (g, st)
}

#[test]
fn rolling_rows_jacobi_on_gpu_equal_the_f64_twin() {
    gpu_matches_cpu(SolverKind::Jacobi, Cone::Relaxed);
}

#[test]
fn rolling_rows_apgd_on_gpu_equal_the_f64_twin() {
    gpu_matches_cpu(SolverKind::Apgd, Cone::Relaxed);
}

/// Gauss–Seidel's second block per contact (rows 3–5 in the contact's colour, their own
/// majorant and lagged bounds; ω = 0.6, so both of its projections run): the same sweeps as
/// the twin, and a second run of the same solves gives the same bits (the order inside a
/// colour varies from run to run and must change none). 1000 contacts among 250 bodies, so
/// that the neighbours of the busiest grains' contacts hold every colour and part of the
/// constraints (70) fall into the left-over class (its projected Jacobi step on rows 3–5
/// runs too).
#[test]
fn rolling_rows_gauss_seidel_on_gpu_equal_the_f64_twin_and_rerun_bit_identical() {
    let n_bodies = 250;
    let models = rolling_models();
    let (state, contacts) = random_problem(17, n_bodies, 1000, models.len() as u32);
    let b64 = to_f64(&state);
    let schur = cpu::Schur::new(&b64, &contacts);
    let colours = bristlecone::reference::gauss_seidel::colours(&schur, contacts.len());
    let left = colours.iter().filter(|&&k| k == GS_COLOURS - 1).count();
    assert!(
        (20..=500).contains(&left),
        "{left} of 1000 contacts left over: both classes must be exercised"
    );
    eprintln!("{left} of 1000 contacts left over");
    let (g, st) = gpu_matches_cpu_on(SolverKind::GaussSeidel, Cone::Relaxed, n_bodies);
    let again = run_gpu(&shared_context(), &state, &contacts, &st, &models, 2);
    let bits = |g: &[[f32; 4]]| g.iter().flatten().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&g.gamma), bits(&again.gamma));
    assert_eq!(bits(&g.rolling), bits(&again.rolling));
    assert_eq!(bits(&g.state.omega), bits(&again.state.omega));
    assert_eq!(g.scalars, again.scalars);
}

/// The f64 twin's Gauss–Seidel with rows 3–5 against its APGD: the two solve the same cone
/// complementarity problem, so solved to 10⁻⁸ m/s per row they give the same velocities
/// (Nγ, hence the bodies' Δv, is unique even where γ is not). The bounds μ r_eff γ_n⁻ come
/// from a first solve's saved records, as they would from the step before. The bodies have
/// anisotropic inertia and lever arms off the normal, so a contact's two tangential
/// majorant entries differ: the sweeps reach the problem's solution only because the block
/// step uses the larger of them for both rows, the metric its cone or disk is projected in.
#[test]
fn rolling_rows_gauss_seidel_twin_reaches_the_apgd_twins_solution() {
    let models = rolling_models();
    let (state, contacts) = random_problem(29, 60, 150, models.len() as u32);
    let b64 = to_f64(&state);
    let dt = DT as f64;
    let st = |kind, omega| SolverSettings {
        kind,
        max_iterations: 20_000,
        tolerance: 1e-8,
        omega,
        recovery_speed: 0.5,
        warm_start: true,
        ..SolverSettings::default()
    };
    let apgd = st(SolverKind::Apgd, 1.0);
    let first = cpu::solve_models(&b64, &contacts, &apgd, dt, None, &models);
    let keys: Vec<_> = contacts.iter().map(|c| cpu::warm_key(c, false)).collect();
    let gamma: Vec<[f64; 3]> = first.saved.iter().map(|r| [r[0], r[1], r[2]]).collect();
    let ws = cpu::WarmStart {
        keys: &keys,
        gamma: &gamma,
        saved: &first.saved,
    };
    let a = cpu::solve_models(&b64, &contacts, &apgd, dt, Some(ws), &models);
    for omega in [1.0, 1.3] {
        let gs = st(SolverKind::GaussSeidel, omega);
        let g = cpu::solve_models(&b64, &contacts, &gs, dt, Some(ws), &models);
        assert!(
            a.converged && g.converged,
            "apgd {} / gs {}",
            a.residual,
            g.residual
        );
        let live = g
            .gamma_rolling
            .iter()
            .filter(|r| r.iter().any(|x| *x != 0.0));
        let live = live.count();
        assert!(
            live > 30,
            "only {live} contacts with rolling / spinning impulses"
        );
        let scale = a.omega.iter().map(|w| w.length()).fold(0.0, f64::max);
        let what = format!("ω = {omega}: {live} live rows 3–5, gs against apgd");
        assert_same_velocities(&g, &a, scale, &what);
    }
}

#[test]
fn rolling_rows_exact_cone_apgd_on_gpu_equal_the_f64_twin() {
    gpu_matches_cpu(SolverKind::Apgd, Cone::Exact);
}

/// A sphere (m = 1 kg, r = 5 cm, μ = 0.5) resting on a plane under gravity, launched with
/// velocity `v0` and angular velocity `w0`; plane and sphere both have (μ_r, μ_spin) (the
/// pair takes the min), solved by `kind`. Returns the sphere's (t, v, ω) every `every` steps
/// for `steps` steps.
fn ball_on_plane(
    kind: SolverKind,
    v0: [f32; 3],
    w0: [f32; 3],
    coef: (f64, f64),
    steps: u32,
    every: u32,
) -> Vec<(f64, DVec3, DVec3)> {
    let (r, m, dt) = (0.05f32, 1.0f32, 1e-3f64);
    let plane = BodyInit {
        material: 1,
        ..BodyInit::fixed(SHAPE_PLANE, 0, [0.0; 3], 1.0)
    };
    let ball = BodyInit {
        inv_mass: 1.0 / m,
        inv_inertia: [1.0 / (0.4 * m * r * r); 3],
        material: 0,
        velocity: v0,
        angular_velocity: w0,
        ..BodyInit::sphere([0.0, 0.0, r], r, 1.0)
    };
    let row = with_rolling(material_row(&FrictionModel::Coulomb), coef.0, coef.1);
    let settings = StepSettings {
        dt,
        gravity: [0.0, 0.0, -9.81],
        contact: Some(ContactSetup {
            shapes: vec![BoundaryShape::Plane],
            collide: CollideSettings {
                envelope: 0.1 * r,
                friction: vec![0.5, 0.5],
            },
            solver: SolverSettings {
                kind,
                max_iterations: 50,
                tolerance: 1e-7,
                omega: if kind == SolverKind::GaussSeidel {
                    1.0
                } else {
                    SolverSettings::default().omega
                },
                warm_start: true,
                ..SolverSettings::default()
            },
            models: vec![row, row],
            patch_cells: 0,
        }),
    };
    let state = BodyState::from_inits(&[plane, ball]);
    let mut sim = Simulation::new(shared_context(), &state, settings).unwrap();
    let mut out = Vec::new();
    for k in 1..=steps / every {
        sim.advance(every, 1).unwrap();
        let s = sim.read_state().unwrap();
        let d = |a: [f32; 4]| DVec3::new(a[0] as f64, a[1] as f64, a[2] as f64);
        out.push(((k * every) as f64 * dt, d(s.vel[1]), d(s.omega[1])));
    }
    out
}

/// Least-squares slope of y(t).
fn slope(pts: &[(f64, f64)]) -> f64 {
    let n = pts.len() as f64;
    let (mt, my) = pts
        .iter()
        .fold((0.0, 0.0), |s, p| (s.0 + p.0 / n, s.1 + p.1 / n));
    let (stt, sty) = pts.iter().fold((0.0, 0.0), |s, p| {
        (s.0 + (p.0 - mt) * (p.0 - mt), s.1 + (p.0 - mt) * (p.1 - my))
    });
    sty / stt
}

/// Rolling resistance: a sphere rolling at 0.1 m/s (ω = v/r) with μ_r = 0.02 decelerates at
/// (5/7) μ_r g = 0.1401 m/s² (the bound torque μ_r r m g against m r² + I), without slip;
/// it stops at v₀/a = 0.71 s and then stays at rest (the rows hold it, no reversal).
/// Budget: 1000 steps of 2 bodies.
#[test]
fn rolling_sphere_decelerates_at_the_analytic_rate_and_stops() {
    let (v0, r, a_exact) = rolling_sphere_stops(SolverKind::Apgd, 0.02);
    // Without resistance it keeps rolling (the deceleration is the rows', not numerical).
    let free = ball_on_plane(
        SolverKind::Apgd,
        [v0 as f32, 0.0, 0.0],
        [0.0, (v0 / r) as f32, 0.0],
        (0.0, 0.0),
        200,
        10,
    );
    let a_free = -slope(&free.iter().map(|p| (p.0, p.1.x)).collect::<Vec<_>>());
    assert!(
        a_free.abs() < 0.01 * a_exact,
        "free sphere decelerates at {a_free}"
    );
}

/// The same rolling sphere with `kind = "gauss_seidel"` and μ_r = 0.06 (a = 0.420 m/s², a
/// stop at 0.24 s): its rows 3–5 block gives the same deceleration, no slip and the stop.
/// Budget: 350 steps of 2 bodies.
#[test]
fn rolling_sphere_with_gauss_seidel_decelerates_at_the_analytic_rate_and_stops() {
    rolling_sphere_stops(SolverKind::GaussSeidel, 0.06);
}

/// The rolling sphere's run with resistance μ_r, checked against (5/7) μ_r g (fitted over
/// 7–84 % of the time to the stop t_s), no slip, and rest from 1.12 t_s on (run to 1.4 t_s);
/// returns (v₀, r, the analytic deceleration).
fn rolling_sphere_stops(kind: SolverKind, mu_r: f64) -> (f64, f64, f64) {
    let (v0, r, g, every) = (0.1f64, 0.05f64, 9.81f64, 25);
    let a_exact = 5.0 / 7.0 * mu_r * g;
    let t_stop = v0 / a_exact;
    let steps = ((1.4 * t_stop / 1e-3 / every as f64).ceil() as u32) * every;
    let run = ball_on_plane(
        kind,
        [v0 as f32, 0.0, 0.0],
        [0.0, (v0 / r) as f32, 0.0],
        (mu_r, 0.0),
        steps,
        every,
    );
    let fit: Vec<(f64, f64)> = run
        .iter()
        .filter(|p| p.0 >= 0.07 * t_stop && p.0 <= 0.84 * t_stop)
        .map(|p| (p.0, p.1.x))
        .collect();
    let a = -slope(&fit);
    // Rolling without slip all along: contact-point speed v − ω r ≈ 0.
    let slip = run
        .iter()
        .map(|p| (p.1.x - p.2.y * r).abs())
        .fold(0.0, f64::max);
    let rest = run
        .iter()
        .filter(|p| p.0 >= 1.12 * t_stop)
        .map(|p| p.1.length().max(p.2.length() * r))
        .fold(0.0, f64::max);
    eprintln!(
        "{kind:?} rolling: a = {a:.5} m/s² vs (5/7) μ_r g = {a_exact:.5} ({:+.3} %), max slip \
         {slip:.2e} m/s, speed after {:.2} s {rest:.2e} m/s",
        100.0 * (a / a_exact - 1.0),
        1.12 * t_stop
    );
    assert!((a / a_exact - 1.0).abs() < 0.02, "a = {a} vs {a_exact}");
    assert!(slip < 1e-3, "slips at {slip} m/s");
    assert!(rest < 1e-4, "still moving at {rest} m/s after stopping");
    (v0, r, a_exact)
}

/// Spinning resistance: a sphere spinning at 20 rad/s about the normal with μ_spin = 0.02
/// slows at α = μ_spin r m g / I = (5/2) μ_spin g / r = 9.81 rad/s² and stops at 2.04 s
/// (checked over the first 0.5 s, within 2 %); it does not translate.
#[test]
fn spinning_sphere_slows_at_the_analytic_rate() {
    let (w0, r, mu_s, g) = (20.0f64, 0.05f64, 0.02f64, 9.81f64);
    let run = ball_on_plane(
        SolverKind::Apgd,
        [0.0; 3],
        [0.0, 0.0, w0 as f32],
        (0.0, mu_s),
        500,
        10,
    );
    let alpha_exact = 2.5 * mu_s * g / r;
    let fit: Vec<(f64, f64)> = run
        .iter()
        .filter(|p| p.0 >= 0.05)
        .map(|p| (p.0, p.2.z))
        .collect();
    let alpha = -slope(&fit);
    let drift = run.iter().map(|p| p.1.length()).fold(0.0, f64::max);
    eprintln!(
        "spinning: α = {alpha:.4} rad/s² vs (5/2) μ_spin g / r = {alpha_exact:.4} ({:+.3} %), drift {drift:.1e} m/s",
        100.0 * (alpha / alpha_exact - 1.0)
    );
    assert!(
        (alpha / alpha_exact - 1.0).abs() < 0.02,
        "α = {alpha} vs {alpha_exact}"
    );
    assert!(
        drift < 1e-4,
        "the spinning sphere translates at {drift} m/s"
    );
}
