//! The GPU CCP solver against its f64 twin (iteration for iteration) and against the
//! independent barrier-method oracle on small problems.

use crate::common::*;
use bristlecone::bodies::{BodyInit, BodyState, SHAPE_PLANE};
use bristlecone::gpu::{buffers, shared_context, GpuContext};
use bristlecone::model::rows::{material_row, with_cohesion, MaterialRow};
use bristlecone::reference::integrate::{to_f64, Body64};
use bristlecone::reference::{oracle, solve as cpu};
use bristlecone::scene::FrictionModel;
use bristlecone::solve::{
    build_csr, counts_words, Cone, Contact, Solve, SolveInputs, SolverKind, SolverScalars,
    SolverSettings,
};
use glam::DVec3;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const DT: f32 = 1e-3;

#[derive(Clone)]
struct Problem {
    state: BodyState,
    contacts: Vec<Contact>,
}

struct GpuRun {
    gamma: Vec<[f32; 4]>,
    scalars: SolverScalars,
    history: Vec<[f32; 4]>,
    state: BodyState,
    stats: Vec<u32>,
    /// The saved records (warm-start impulses / model state) of the last solve.
    saved: Vec<[f32; 4]>,
}

/// The buffers collision would hand the solver, uploaded from a problem.
struct Inputs {
    contacts: wgpu::Buffer,
    counts: wgpu::Buffer,
    offsets: wgpu::Buffer,
    entries: wgpu::Buffer,
    stats: wgpu::Buffer,
}

impl Inputs {
    fn upload(ctx: &GpuContext, pb: &Problem) -> Inputs {
        let (off, ent) = build_csr(pb.state.len(), &pb.contacts);
        Inputs {
            contacts: buffers::storage_from(ctx, "contacts", &pb.contacts).unwrap(),
            counts: buffers::storage_from(ctx, "counts", &counts_words(pb.contacts.len() as u32))
                .unwrap(),
            offsets: buffers::storage_from(ctx, "offsets", &off).unwrap(),
            entries: buffers::storage_from(ctx, "entries", &ent).unwrap(),
            stats: buffers::storage_from(ctx, "stats", &[0u32; 8]).unwrap(),
        }
    }

    fn get(&self) -> SolveInputs<'_> {
        SolveInputs {
            contacts: &self.contacts,
            counts: &self.counts,
            body_offsets: &self.offsets,
            body_entries: &self.entries,
            step_stats: &self.stats,
        }
    }
}

/// Runs `solves` consecutive solves on the same contacts and velocities (the body velocities
/// are reset to the problem's before each, so later solves differ only by the warm start).
fn run_gpu(ctx: &GpuContext, pb: &Problem, settings: &SolverSettings, solves: usize) -> GpuRun {
    run_gpu_models(ctx, pb, settings, solves, &[])
}

/// [`run_gpu`] with a per-material contact model table.
fn run_gpu_models(
    ctx: &GpuContext,
    pb: &Problem,
    settings: &SolverSettings,
    solves: usize,
    models: &[MaterialRow],
) -> GpuRun {
    run_gpu_lanes(ctx, pb, settings, solves, models, Adapter::default())
}

/// The kernels' layout choices that follow the adapter: `None` keeps the adapter's default,
/// `Some` sets a GPU's (`true`) or a CPU adapter's (`false`) choice.
#[derive(Clone, Copy, Default)]
struct Adapter {
    /// The sweep's product lanes ([`Solve::set_gpu_lanes`]).
    gpu_lanes: Option<bool>,
    /// The gather's lever arm from the loaded record ([`Solve::set_arm_from_row`], negated).
    arm_from_record: Option<bool>,
}

/// Both of a GPU's layout choices, run on whatever adapter the suite has.
const GPU_LAYOUT: Adapter = Adapter {
    gpu_lanes: Some(true),
    arm_from_record: Some(true),
};

/// [`run_gpu_models`] with the kernels' layout choices of `adapter`.
fn run_gpu_lanes(
    ctx: &GpuContext,
    pb: &Problem,
    settings: &SolverSettings,
    solves: usize,
    models: &[MaterialRow],
    adapter: Adapter,
) -> GpuRun {
    let bodies = bristlecone::bodies::GpuBodies::upload(ctx, &pb.state).unwrap();
    let mut solve = Solve::new(ctx, &bodies, pb.contacts.len() as u32, settings, DT).unwrap();
    solve.set_models(ctx, models).unwrap();
    if let Some(on) = adapter.gpu_lanes {
        solve.set_gpu_lanes(on);
    }
    if let Some(on) = adapter.arm_from_record {
        solve.set_arm_from_row(!on);
    }
    let inputs = Inputs::upload(ctx, pb);
    for _ in 0..solves {
        bodies.write(ctx, &pb.state);
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        solve.record(ctx, &mut enc, inputs.get());
        ctx.queue.submit([enc.finish()]);
    }
    GpuRun {
        gamma: solve.read_impulses(ctx, pb.contacts.len() as u32).unwrap(),
        scalars: solve.read_scalars(ctx).unwrap(),
        history: solve.read_history(ctx).unwrap(),
        state: bodies.download_kinematics(ctx).unwrap(),
        stats: buffers::read_buffer(ctx, &inputs.stats, 8).unwrap(),
        saved: solve
            .read_warm_start(ctx)
            .unwrap()
            .1
            .iter()
            .map(|r| r.map(f32::from_bits))
            .collect(),
    }
}

/// The solver's tolerance (RMS per row, 3 rows per contact) equivalent to a 2-norm `norm`.
fn per_row(norm: f64, contacts: usize) -> f32 {
    (norm / (3.0 * contacts.max(1) as f64).sqrt()) as f32
}

fn settings(kind: SolverKind, max_iterations: u32, tolerance: f32) -> SolverSettings {
    SolverSettings {
        kind,
        max_iterations,
        tolerance,
        // η = 3/trace(B_ii) (contact-count scaled) makes Jacobi provably convergent for
        // ω < 2/3; 0.6 is the default. Gauss–Seidel over-relaxed, so that both of its
        // projections run.
        omega: if kind == SolverKind::GaussSeidel {
            1.3
        } else {
            0.6
        },
        recovery_speed: 0.5,
        slop: 0.0,
        stabilisation: 1.0,
        warm_start: false,
        cone: Cone::Relaxed,
        max_outer: 1,
        coarse_slab: 0.0,
    }
}

fn sort_contacts(c: &mut [Contact]) {
    c.sort_by_key(|c| c.key());
}

/// Random bodies (2 fixed walls first, then spheres with random orientation, anisotropic
/// inertia and velocities) and random contacts between them with sorted unique keys.
fn random_problem(seed: u64, n_bodies: usize, n_contacts: usize) -> Problem {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let state = random_bodies(&mut rng, n_bodies, 2.0);
    let contacts = random_contacts(&mut rng, &state, n_contacts, |_| 0);
    Problem { state, contacts }
}

/// Ground plane (body 0, fixed, at the origin) and a column of `n` touching spheres of radius
/// `r` on it, each with free velocity `v0` plus one step of gravity.
fn stack(n: usize, r: f32, mu: f32, v0: [f32; 3], gap: f32) -> Problem {
    let plane = BodyInit::fixed(SHAPE_PLANE, 0, [0.0; 3], 1.0);
    let mut inits = vec![plane];
    let mut contacts = Vec::new();
    for i in 0..n {
        let z = r + 2.0 * r * i as f32 + gap * (i as f32 + 1.0);
        let mut b = BodyInit::sphere([0.0, 0.0, z], r, 2500.0);
        b.velocity = [v0[0], v0[1], v0[2] - 9.81 * DT];
        inits.push(b);
        let (ra, rb) = if i == 0 {
            ([0.0, 0.0, 0.0], [0.0, 0.0, -r])
        } else {
            ([0.0, 0.0, r], [0.0, 0.0, -r])
        };
        contacts.push(Contact {
            n_gap: [0.0, 0.0, 1.0, gap],
            ra: [ra[0], ra[1], ra[2] + gap * 0.5 * (i > 0) as u8 as f32, mu],
            rb: [rb[0], rb[1], rb[2] - gap * 0.5, 0.0],
            ids: [i as u32, i as u32 + 1, 0, 0],
        });
    }
    sort_contacts(&mut contacts);
    Problem {
        state: BodyState::from_inits(&inits),
        contacts,
    }
}

fn bodies64(pb: &Problem) -> Vec<Body64> {
    to_f64(&pb.state)
}

fn p_norm(out: &cpu::SolveOutput) -> f64 {
    out.p
        .iter()
        .map(|p| p.iter().map(|x| x * x).sum::<f64>())
        .sum::<f64>()
        .sqrt()
}

fn max_abs(g: &[[f64; 3]]) -> f64 {
    g.iter().flatten().fold(0.0f64, |m, x| m.max(x.abs()))
}

/// GPU vs f64 twin on a random set: same number of sweeps, same accept/reject decisions, and
/// γ, residual history and velocities equal within f32 rounding grown over the sweeps.
/// With the exact cone: up to 3 cone problems of up to `sweeps` sweeps each, ended by the
/// tolerance `tol`, the same count reported.
fn gpu_matches_cpu(
    kind: SolverKind,
    cone: Cone,
    n_bodies: usize,
    n_contacts: usize,
    sweeps: u32,
    tol: f32,
) -> u32 {
    gpu_matches_cpu_models(kind, cone, n_bodies, n_contacts, sweeps, tol, &[])
}

/// [`gpu_matches_cpu`] with a model table: each contact gets random materials (A, B) among
/// the table's entries, so every mixing case occurs.
fn gpu_matches_cpu_models(
    kind: SolverKind,
    cone: Cone,
    n_bodies: usize,
    n_contacts: usize,
    sweeps: u32,
    tol: f32,
    models: &[MaterialRow],
) -> u32 {
    let pb = (n_bodies, n_contacts);
    gpu_matches_cpu_lanes(kind, cone, pb, sweeps, tol, models, Adapter::default())
}

/// [`gpu_matches_cpu_models`] with the kernels' layout choices of [`run_gpu_lanes`].
fn gpu_matches_cpu_lanes(
    kind: SolverKind,
    cone: Cone,
    (n_bodies, n_contacts): (usize, usize),
    sweeps: u32,
    tol: f32,
    models: &[MaterialRow],
    adapter: Adapter,
) -> u32 {
    let ctx = shared_context();
    let mut pb = random_problem(11, n_bodies, n_contacts);
    if !models.is_empty() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let nm = models.len() as u32;
        for c in &mut pb.contacts {
            c.ids[3] = (rng.random_range(0..nm) << 16) | rng.random_range(0..nm);
        }
    }
    let st = SolverSettings {
        cone,
        max_outer: 3,
        ..settings(kind, sweeps, tol)
    };
    // Two solves: the second one's bristle offset −E_T γ_T⁻ uses the first one's impulses.
    let solves = if models.is_empty() { 1 } else { 2 };
    let g = run_gpu_lanes(&ctx, &pb, &st, solves, models, adapter);
    let b64 = bodies64(&pb);
    let mut c = cpu::solve_models(&b64, &pb.contacts, &st, DT as f64, None, models);
    if solves == 2 {
        let keys: Vec<_> = pb.contacts.iter().map(|c| c.key()).collect();
        let ws = cpu::WarmStart {
            keys: &keys,
            gamma: &c.gamma,
            saved: &c.saved,
        };
        c = cpu::solve_models(&b64, &pb.contacts, &st, DT as f64, Some(ws), models);
    }
    if !models.is_empty() {
        // The models must matter: the all-Coulomb answer is far from this one.
        let rigid = cpu::solve(&b64, &pb.contacts, &st, DT as f64, None);
        let d = max_abs(
            &c.gamma
                .iter()
                .zip(&rigid.gamma)
                .map(|(a, b)| [a[0] - b[0], a[1] - b[1], a[2] - b[2]])
                .collect::<Vec<_>>(),
        );
        assert!(d > 0.1 * max_abs(&c.gamma), "models change γ by only {d}");
    }
    assert_eq!(g.scalars.iterations, c.iterations);
    assert_eq!(g.scalars.outer, c.outer);
    assert_eq!(
        g.stats[7],
        c.outer.max(1),
        "cone problems in the step stats"
    );
    eprintln!(
        "{kind:?} {cone:?}: {} cone problems, {} sweeps, converged {}, residual {:.3e}",
        c.outer, c.iterations, c.converged, c.residual
    );
    assert_eq!(g.history.len(), c.history.len());
    let accepted_gpu: Vec<bool> = g.history.iter().map(|h| h[3] != 0.0).collect();
    let accepted_cpu: Vec<bool> = c.history.iter().map(|h| h[3] != 0.0).collect();
    assert_eq!(
        accepted_gpu, accepted_cpu,
        "APGD backtracking decisions differ"
    );
    if kind == SolverKind::GaussSeidel {
        // The momentum's restarts (β = 0 after a sweep that is not a cone problem's first),
        // while the residual is above f32's resolution of the impulses (the test product's
        // sign is noise below it).
        let resolved = |k: usize| c.history[k][0] > 1e-5 * c.residual0;
        let restarts = |h: &[[f64; 4]]| -> Vec<usize> {
            (1..h.len())
                .filter(|&k| resolved(k) && h[k][2] == 0.0)
                .collect()
        };
        let gpu: Vec<[f64; 4]> = g.history.iter().map(|h| h.map(f64::from)).collect();
        assert_eq!(
            restarts(&gpu),
            restarts(&c.history),
            "momentum restarts differ"
        );
        eprintln!("restarts after sweeps {:?}", restarts(&c.history));
    }
    // Residuals: relative to the first one.
    let r0 = c.residual0;
    assert!(
        (g.scalars.res0 as f64 - r0).abs() <= 1e-5 * r0,
        "initial residual {} vs {}",
        g.scalars.res0,
        r0
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
    let scale = max_abs(&c.gamma);
    let mut worst: f64 = 0.0;
    for (gg, gc) in g.gamma.iter().zip(&c.gamma) {
        for k in 0..3 {
            worst = worst.max((gg[k] as f64 - gc[k]).abs());
        }
    }
    assert!(
        worst <= 1e-4 * scale,
        "γ differs by {worst} (scale {scale})"
    );
    if !models.is_empty() {
        // The saved records (γ, or the tanh / LuGre state z and slip s), per lane against the
        // lane's largest value: checks the state the next step starts from.
        assert_eq!(g.saved.len(), c.saved.len());
        for k in 0..4 {
            let lane = |r: &[f64; 4]| r[k].abs();
            let sc = c.saved.iter().map(lane).fold(0.0, f64::max);
            let d = g
                .saved
                .iter()
                .zip(&c.saved)
                .map(|(a, b)| (a[k] as f64 - b[k]).abs())
                .fold(0.0, f64::max);
            assert!(d <= 1e-4 * sc, "saved lane {k} differs by {d} (scale {sc})");
        }
    }
    let vscale = c.vel.iter().map(|v| v.length()).fold(0.0, f64::max);
    let (mut worst_v, mut worst_b) = (0.0, 0);
    for (b, v) in c.vel.iter().enumerate() {
        let vg = g.state.vel[b];
        let d = (DVec3::new(vg[0] as f64, vg[1] as f64, vg[2] as f64) - *v).length();
        if d > worst_v {
            (worst_v, worst_b) = (d, b);
        }
    }
    eprintln!(
        "worst velocity difference {:.2e} of the largest velocity",
        worst_v / vscale
    );
    // 3e-4: where 40 APGD sweeps take the residual down 1000× (Hunt–Crossley: 32 → 0.029),
    // the f32 rounding of the early sweeps grows against it (the residuals drift apart by
    // ~1 % by sweep 40, with the same decisions); the twin itself moves by < 1e-7 of the
    // largest velocity when v* moves by 1e-7. Measured: ≤ 1.1e-4 on lavapipe.
    assert!(
        worst_v <= 3e-4 * vscale,
        "body {worst_b}: velocity differs by {worst_v} (scale {vscale})"
    );
    eprintln!(
        "{kind:?} {cone:?}: {} contacts, {sweeps} sweeps, residual {:.3e} → {:.3e}, max |Δγ|/max|γ| = {:.2e}",
        n_contacts,
        r0,
        c.residual,
        worst / scale
    );
    c.outer
}

#[test]
fn jacobi_on_gpu_equals_the_f64_twin_on_3000_random_contacts() {
    gpu_matches_cpu(SolverKind::Jacobi, Cone::Relaxed, 1000, 3000, 40, 0.0);
}

#[test]
fn gauss_seidel_on_gpu_equals_the_f64_twin_on_3000_random_contacts() {
    gpu_matches_cpu(SolverKind::GaussSeidel, Cone::Relaxed, 1000, 3000, 40, 0.0);
}

/// A bed 6 × 6 × 4 on one dynamic slab (`hub_slab`): the slab's 40 contacts make it a hub,
/// which links nothing in the colouring, takes no Δv from the visits and is gathered after
/// each sweep, with its mass split over its contacts in their majorants. Gauss–Seidel on the
/// GPU takes the twin's 40 sweeps to the same impulses, for a slab of a tenth of the bed's
/// mass and of ten times it; the twin with the slab linking its contacts (no hub) ends far
/// from them, so the check sees whether the GPU treats the slab as a hub.
#[test]
fn gauss_seidel_with_a_hub_body_on_gpu_equals_the_f64_twin() {
    use bristlecone::reference::gauss_seidel::{hub_slab, solve_hub_split};
    let ctx = shared_context();
    for ratio in [0.1, 10.0] {
        let (state, contacts) = hub_slab(6, 4, ratio, DT);
        let pb = Problem { state, contacts };
        let st = settings(SolverKind::GaussSeidel, 40, 0.0);
        let g = run_gpu(&ctx, &pb, &st, 1);
        let bodies = bodies64(&pb);
        let c = cpu::solve(&bodies, &pb.contacts, &st, DT as f64, None);
        let linked = solve_hub_split(&bodies, &pb.contacts, &st, DT as f64, None, usize::MAX);
        assert_eq!(g.scalars.iterations, c.iterations);
        let scale = max_abs(&c.gamma);
        let apart = |a: &[[f64; 3]]| {
            (g.gamma.iter().zip(a))
                .flat_map(|(x, y)| (0..3).map(move |k| (x[k] as f64 - y[k]).abs()))
                .fold(0.0, f64::max)
        };
        let (worst, from_linked) = (apart(&c.gamma), apart(&linked.gamma));
        eprintln!("slab {ratio}× the bed: γ within {worst:.2e} of the twin's, {from_linked:.2e} of the linked twin's (scale {scale:.2e})");
        assert!(
            worst <= 1e-4 * scale,
            "γ differs by {worst} (scale {scale})"
        );
        assert!(
            from_linked > 1e-2 * scale,
            "γ is the linked twin's ({from_linked})"
        );
    }
}

// Gauss–Seidel's colours and block steps with the other sets and compliances: Kelvin–Voigt
// rows (E in the block diagonal), tanh disks (model state), bristle boxes; and the exact
// cone's outer loop, several cone problems each solved to the tolerance.
#[test]
fn gauss_seidel_with_compliant_tanh_and_bristle_rows_equals_the_f64_twin() {
    for models in [compliant_models(), tanh_models(), bristle_box_models()] {
        let kind = SolverKind::GaussSeidel;
        gpu_matches_cpu_models(kind, Cone::Relaxed, 3000, 1000, 40, 0.0, &models);
    }
}

#[test]
fn exact_cone_gauss_seidel_on_gpu_equals_the_f64_twin_on_1000_random_contacts() {
    let kind = SolverKind::GaussSeidel;
    assert!(gpu_matches_cpu(kind, Cone::Exact, 3000, 1000, 100, 2e-2) >= 2);
}

#[test]
fn apgd_on_gpu_equals_the_f64_twin_on_3000_random_contacts() {
    gpu_matches_cpu(SolverKind::Apgd, Cone::Relaxed, 1000, 3000, 40, 0.0);
}

// A GPU's layout (product lanes of 4, strided; the gather's lever arm from the loaded
// record), which lavapipe does not pick, run here so that it is not left untested: the same
// sweeps as the twin.
#[test]
fn apgd_and_jacobi_with_the_gpu_layout_equal_the_f64_twin_on_3000_random_contacts() {
    for kind in [SolverKind::Apgd, SolverKind::Jacobi] {
        let pb = (1000, 3000);
        gpu_matches_cpu_lanes(kind, Cone::Relaxed, pb, 40, 0.0, &[], GPU_LAYOUT);
    }
}

// Where the gather takes a lever arm changes loads, not arithmetic: the same bits.
#[test]
fn the_gathers_lever_arm_from_the_record_or_its_own_row_gives_the_same_bits() {
    let ctx = shared_context();
    let pb = random_problem(23, 1000, 3000);
    let st = settings(SolverKind::Apgd, 40, 0.0);
    let run = |from_record| {
        let adapter = Adapter {
            arm_from_record: Some(from_record),
            ..Adapter::default()
        };
        run_gpu_lanes(&ctx, &pb, &st, 2, &[], adapter)
    };
    let (record, row) = (run(true), run(false));
    let bits = |g: &[[f32; 4]]| g.iter().flatten().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&record.gamma), bits(&row.gamma), "impulses");
    assert!(
        record.gamma.iter().flatten().any(|&x| x != 0.0),
        "no impulse"
    );
    assert_eq!(bits(&record.state.vel), bits(&row.state.vel), "velocities");
    assert_eq!(bits(&record.state.omega), bits(&row.state.omega), "spins");
}

#[test]
fn exact_cone_jacobi_on_gpu_equals_the_f64_twin_on_1000_random_contacts() {
    // Tolerance 0: the first cone problem hits the cap, which ends the outer iterations.
    assert_eq!(
        gpu_matches_cpu(SolverKind::Jacobi, Cone::Exact, 3000, 1000, 40, 0.0),
        1
    );
}

#[test]
fn exact_cone_apgd_on_gpu_equals_the_f64_twin_on_1000_random_contacts() {
    // Each cone problem is solved to the tolerance: several run.
    assert!(gpu_matches_cpu(SolverKind::Apgd, Cone::Exact, 3000, 1000, 100, 2e-2) >= 2);
}

/// Kelvin–Voigt contacts of two materials and Coulomb ones (every mixing case): the
/// compliance E_n ~ 1/(dt² k) is 1–100× the rigid diagonal of N here.
fn compliant_models() -> Vec<MaterialRow> {
    let kv = |k: f64, c: f64| {
        material_row(&FrictionModel::Compliant {
            stiffness: k,
            damping: c,
        })
    };
    vec![
        material_row(&FrictionModel::Coulomb),
        kv(2e5, 300.0),
        kv(1e6, 0.0),
    ]
}

/// Hunt–Crossley contacts (two materials, n = 1.5 and 1) and Coulomb ones: the linearised
/// E_n = 1/(dt² k₁ + dt c₁) is comparable to the rigid diagonal at mm penetrations, and open
/// contacts of n = 1.5 are inactive (no force before touching).
fn hunt_crossley_models() -> Vec<MaterialRow> {
    let hc = |k: f64, n: f64, a: f64| {
        material_row(&FrictionModel::HuntCrossley {
            stiffness: k,
            exponent: n,
            damping: a,
        })
    };
    vec![
        material_row(&FrictionModel::Coulomb),
        hc(1e8, 1.5, 0.2),
        hc(5e6, 1.0, 0.5),
    ]
}

#[test]
fn hunt_crossley_jacobi_on_gpu_equals_the_f64_twin_on_1000_random_contacts() {
    gpu_matches_cpu_models(
        SolverKind::Jacobi,
        Cone::Relaxed,
        1000,
        1000,
        40,
        0.0,
        &hunt_crossley_models(),
    );
}

#[test]
fn hunt_crossley_apgd_on_gpu_equals_the_f64_twin_on_1000_random_contacts() {
    gpu_matches_cpu_models(
        SolverKind::Apgd,
        Cone::Relaxed,
        1000,
        1000,
        40,
        0.0,
        &hunt_crossley_models(),
    );
}

/// Compliant contact from physical quantities (`rows::compliant`): Hertz stiffness
/// k = 4/3 E* √R* per contact from (E, ν) with χ(e) damping at the contact's impact speed v₀
/// (the second solve reads v₀ from the first one's saved records), and Kelvin–Voigt with the
/// damping c = 2ζ(e)√(k m*) per contact from the effective normal mass.
fn hertz_models() -> Vec<MaterialRow> {
    let h = |e: f64, nu: f64, r: f64| {
        material_row(&FrictionModel::HuntCrossleyHertz {
            youngs_modulus: e,
            poisson_ratio: nu,
            restitution: r,
        })
    };
    vec![
        material_row(&FrictionModel::Coulomb),
        h(2e8, 0.3, 0.6),
        h(5e7, 0.45, 0.9),
    ]
}

fn kv_restitution_models() -> Vec<MaterialRow> {
    let kv = |k: f64, e: f64| {
        material_row(&FrictionModel::CompliantRestitution {
            stiffness: k,
            restitution: e,
        })
    };
    vec![
        material_row(&FrictionModel::Coulomb),
        kv(2e5, 0.5),
        kv(1e6, 0.9),
    ]
}

#[test]
fn hertz_restitution_apgd_on_gpu_equals_the_f64_twin_on_1000_random_contacts() {
    gpu_matches_cpu_models(
        SolverKind::Apgd,
        Cone::Relaxed,
        1000,
        1000,
        40,
        0.0,
        &hertz_models(),
    );
}

#[test]
fn kv_restitution_jacobi_on_gpu_equals_the_f64_twin_on_1000_random_contacts() {
    gpu_matches_cpu_models(
        SolverKind::Jacobi,
        Cone::Relaxed,
        1000,
        1000,
        40,
        0.0,
        &kv_restitution_models(),
    );
}

/// Smooth tanh friction (two slip velocities) and Coulomb contacts: the second solve's
/// secant compliance E_T = s⁻/(μ γ_n⁻ tanh(s⁻/v_s)) comes from the first solve's records.
fn tanh_models() -> Vec<MaterialRow> {
    let t = |v: f64| material_row(&FrictionModel::Tanh { slip_velocity: v });
    vec![material_row(&FrictionModel::Coulomb), t(0.3), t(1.0)]
}

#[test]
fn tanh_jacobi_on_gpu_equals_the_f64_twin_on_1000_random_contacts() {
    gpu_matches_cpu_models(
        SolverKind::Jacobi,
        Cone::Relaxed,
        1000,
        1000,
        40,
        0.0,
        &tanh_models(),
    );
}

#[test]
fn tanh_apgd_on_gpu_equals_the_f64_twin_on_1000_random_contacts() {
    gpu_matches_cpu_models(
        SolverKind::Apgd,
        Cone::Relaxed,
        1000,
        1000,
        40,
        0.0,
        &tanh_models(),
    );
}

/// Point LuGre (two bristle stiffnesses) and Coulomb contacts: the first solve has no γ_n⁻ (no
/// friction) and saves z⁺ = a dt v_T⁺; the second solve's E_T = 1/(γ_n⁻ c1), offset c0/c1 and
/// guard cone come from those records, and its saved z⁺, s⁺ are compared too. Two
/// elasto-plastic materials (ratios 0.5, 0.8) mix with each other (σ0 in series, ratio by
/// min), with plain LuGre (→ plain) and Coulomb; σ0 = 1e3 puts z_ss = g/σ0 ~ 1e-3 m at the
/// size of the first step's z⁺ = a dt v_T⁺, so the saved κ/σ0 = β s/g meets all of β's
/// branches (elastic, sine ramp, plastic, and the direction factor).
fn lugre_models() -> Vec<MaterialRow> {
    let l = |s0: f64, s1: f64, ratio: Option<f64>| {
        material_row(&FrictionModel::LuGre {
            sigma0: s0,
            sigma1: s1,
            sigma2: 0.4,
            mu_static: 1.0,
            v_stribeck: 0.3,
            breakaway_ratio: ratio,
        })
    };
    vec![
        material_row(&FrictionModel::Coulomb),
        l(1e4, 30.0, None),
        l(1e5, 300.0, None),
        l(1e3, 10.0, Some(0.5)),
        l(1e4, 30.0, Some(0.8)),
    ]
}

/// The solver's copy of the elasto-plastic β (`beta_ep` in `solve_assemble.wgsl`) is the
/// patch model's (`shaders/common/patch.wgsl`), character for character; the f64 twin calls
/// `patch::beta` for both.
#[test]
fn the_solver_and_patch_elasto_plastic_beta_are_the_same_wgsl() {
    let f = |path: &str| {
        let text =
            std::fs::read_to_string(format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))).unwrap();
        let start = text.find("fn beta_ep(").expect("no beta_ep");
        let len = text[start..].find("\n}\n").expect("unterminated beta_ep");
        text[start..start + len].to_string()
    };
    assert_eq!(
        f("crates/engine/shaders/solve_assemble.wgsl"),
        f("crates/engine/shaders/common/patch.wgsl")
    );
}

#[test]
fn lugre_jacobi_on_gpu_equals_the_f64_twin_on_1000_random_contacts() {
    gpu_matches_cpu_models(
        SolverKind::Jacobi,
        Cone::Relaxed,
        1000,
        1000,
        40,
        0.0,
        &lugre_models(),
    );
}

#[test]
fn lugre_apgd_on_gpu_equals_the_f64_twin_on_1000_random_contacts() {
    gpu_matches_cpu_models(
        SolverKind::Apgd,
        Cone::Relaxed,
        1000,
        1000,
        40,
        0.0,
        &lugre_models(),
    );
}

/// A warm-started solve starts from each contact's saved record projected on the contact's own
/// set, as the twin does: point LuGre and Coulomb contacts, one solve of 20 Jacobi sweeps, then
/// one of none (it returns its start). The records (γ_n⁻, z_u, z_w, s⁻) carry a bristle state z
/// also where γ_n⁻ = 0 (a contact that separated), whose start is 0 on its disk: z_w lies in the
/// state lane a cone's cohesive shift uses, and must not move that start.
#[test]
fn warm_started_lugre_starts_where_the_f64_twin_starts() {
    let ctx = shared_context();
    let models = lugre_models();
    let mut pb = random_problem(11, 300, 300);
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for c in &mut pb.contacts {
        c.ids[3] = (rng.random_range(0..5) << 16) | rng.random_range(0..5);
    }
    let first = SolverSettings {
        warm_start: true,
        ..settings(SolverKind::Jacobi, 20, 0.0)
    };
    let start_only = SolverSettings {
        max_iterations: 0,
        ..first
    };
    let bodies = bristlecone::bodies::GpuBodies::upload(&ctx, &pb.state).unwrap();
    let mut solve = Solve::new(&ctx, &bodies, pb.contacts.len() as u32, &first, DT).unwrap();
    solve.set_models(&ctx, &models).unwrap();
    let inputs = Inputs::upload(&ctx, &pb);
    for st in [&first, &start_only] {
        solve.set_settings(&ctx, st).unwrap();
        bodies.write(&ctx, &pb.state);
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        solve.record(&ctx, &mut enc, inputs.get());
        ctx.queue.submit([enc.finish()]);
    }
    let gpu = solve.read_impulses(&ctx, pb.contacts.len() as u32).unwrap();
    let b64 = bodies64(&pb);
    let c = cpu::solve_models(&b64, &pb.contacts, &first, DT as f64, None, &models);
    let keys: Vec<_> = pb.contacts.iter().map(|c| c.key()).collect();
    let ws = cpu::WarmStart {
        keys: &keys,
        gamma: &c.gamma,
        saved: &c.saved,
    };
    let start = cpu::solve_models(
        &b64,
        &pb.contacts,
        &start_only,
        DT as f64,
        Some(ws),
        &models,
    );
    let separated = (0..keys.len())
        .filter(|&i| c.saved[i][0] == 0.0 && c.saved[i][2] < 0.0)
        .count();
    assert!(
        separated >= 10,
        "only {separated} separated contacts with z_w < 0"
    );
    let scale = max_abs(&start.gamma);
    assert!(scale > 0.0, "no contact has a warm start");
    // Per contact: a start is the record's own values (no sweep mixes them), so each is
    // compared against its own size; a separated contact's start is 0 up to f32 noise.
    let mut worst: f64 = 0.0;
    for (i, (g, s)) in gpu.iter().zip(&start.gamma).enumerate() {
        let size = s.iter().map(|x| x.abs()).fold(0.0, f64::max);
        for k in 0..3 {
            let d = (g[k] as f64 - s[k]).abs();
            worst = worst.max(d / (size + scale));
            assert!(
                d <= 1e-5 * size + 1e-7 * scale,
                "contact {i}: start {g:?}, twin {s:?} (largest start {scale:.3e})"
            );
        }
    }
    eprintln!(
        "{separated} separated contacts; worst |Δγ⁰| {worst:.1e} (largest start {scale:.3e})"
    );
}

/// Bristle contacts of two stiffnesses and Coulomb ones: E_T = 1/(k_b dt²) is 1–10× the rigid
/// diagonal, and the second solve's offset comes from the first one's impulses.
/// Bristle friction with the paper's box projection |γ_u|, |γ_w| ≤ μ γ_n⁻ (the second solve's
/// box half-width comes from the first one's normal impulses), and Coulomb contacts.
fn bristle_box_models() -> Vec<MaterialRow> {
    let b = |k: f64| material_row(&FrictionModel::BristleBox { stiffness: k });
    vec![material_row(&FrictionModel::Coulomb), b(1e5), b(1e6)]
}

#[test]
fn bristle_box_apgd_on_gpu_equals_the_f64_twin_on_1000_random_contacts() {
    gpu_matches_cpu_models(
        SolverKind::Apgd,
        Cone::Relaxed,
        1000,
        1000,
        40,
        0.0,
        &bristle_box_models(),
    );
}

fn bristle_models() -> Vec<MaterialRow> {
    let b = |k: f64| material_row(&FrictionModel::Bristle { stiffness: k });
    vec![material_row(&FrictionModel::Coulomb), b(1e5), b(1e6)]
}

#[test]
fn bristle_jacobi_on_gpu_equals_the_f64_twin_on_1000_random_contacts() {
    gpu_matches_cpu_models(
        SolverKind::Jacobi,
        Cone::Relaxed,
        1000,
        1000,
        40,
        0.0,
        &bristle_models(),
    );
}

#[test]
fn bristle_apgd_on_gpu_equals_the_f64_twin_on_1000_random_contacts() {
    gpu_matches_cpu_models(
        SolverKind::Apgd,
        Cone::Relaxed,
        1000,
        1000,
        40,
        0.0,
        &bristle_models(),
    );
}

#[test]
fn compliant_jacobi_on_gpu_equals_the_f64_twin_on_1000_random_contacts() {
    gpu_matches_cpu_models(
        SolverKind::Jacobi,
        Cone::Relaxed,
        1000,
        1000,
        40,
        0.0,
        &compliant_models(),
    );
}

#[test]
fn compliant_apgd_on_gpu_equals_the_f64_twin_on_1000_random_contacts() {
    gpu_matches_cpu_models(
        SolverKind::Apgd,
        Cone::Relaxed,
        1000,
        1000,
        40,
        0.0,
        &compliant_models(),
    );
}

/// A cube-like body (side 0.2 m, 8 kg) resting on the plane on its 4 bottom corners: 12
/// unknowns, 6 degrees of freedom, so N is singular (γ is not unique, v⁺ is).
fn box_on_plane(v0: [f32; 3], w0: [f32; 3], mu: f32) -> Problem {
    let plane = BodyInit::fixed(SHAPE_PLANE, 0, [0.0; 3], 1.0);
    let (h, m) = (0.1f32, 8.0f32);
    let i = m * (2.0 * h) * (2.0 * h) / 6.0;
    let mut b = BodyInit::sphere([0.0, 0.0, h], h, 1.0);
    b.inv_mass = 1.0 / m;
    b.inv_inertia = [1.0 / i; 3];
    b.velocity = [v0[0], v0[1], v0[2] - 9.81 * DT];
    b.angular_velocity = w0;
    let contacts = [(-h, -h), (-h, h), (h, -h), (h, h)]
        .iter()
        .enumerate()
        .map(|(k, &(x, y))| Contact {
            n_gap: [0.0, 0.0, 1.0, 0.0],
            ra: [x, y, 0.0, mu],
            rb: [x, y, -h, 0.0],
            ids: [0, 1, k as u32, 0],
        })
        .collect();
    Problem {
        state: BodyState::from_inits(&[plane, b]),
        contacts,
    }
}

fn small_problems() -> Vec<(&'static str, Problem, bool)> {
    vec![
        // (name, problem, γ unique)
        (
            "sphere at rest on a plane",
            stack(1, 0.1, 0.5, [0.0; 3], 0.0),
            true,
        ),
        ("two-sphere stack", stack(2, 0.1, 0.5, [0.0; 3], 0.0), true),
        (
            "three-sphere stack, penetrating",
            stack(3, 0.05, 0.4, [0.0; 3], -1e-4),
            true,
        ),
        (
            "sphere sliding (μ = 0.3, 1 m/s)",
            stack(1, 0.1, 0.3, [1.0, 0.0, 0.0], 0.0),
            true,
        ),
        (
            "sphere sticking (μ = 0.5, 1 mm/s)",
            stack(1, 0.1, 0.5, [0.001, 0.0, 0.0], 0.0),
            true,
        ),
        (
            "two-sphere stack sliding",
            stack(2, 0.1, 0.2, [0.5, 0.2, 0.0], 0.0),
            true,
        ),
        (
            "box on four corners (singular N)",
            box_on_plane([0.3, 0.0, 0.0], [0.0, 0.5, 0.2], 0.4),
            false,
        ),
    ]
}

/// The oracle covers the convex models (`oracle::DenseCcp::with_rows`: N + E and p with the
/// models' offsets): Kelvin–Voigt and Hunt–Crossley normal compliance and bristle friction
/// (compliance E_T and offset −E_T γ_T⁻ from a first solve's impulses) on small penetrating
/// sliding stacks. The f64 twin and APGD on the GPU (two solves each: the second is compared)
/// reach the oracle's minimiser (unique: N + E is positive definite here): γ within 1e-7
/// (twin) and 2e-4 (GPU, f32) of max |γ|.
#[test]
fn solvers_reach_the_oracle_with_compliant_and_bristle_rows() {
    let ctx = shared_context();
    let models = [
        FrictionModel::Compliant {
            stiffness: 2e5,
            damping: 300.0,
        },
        FrictionModel::HuntCrossley {
            stiffness: 1e8,
            exponent: 1.5,
            damping: 0.2,
        },
        FrictionModel::Bristle { stiffness: 1e4 },
    ];
    let problems = [
        stack(3, 0.05, 0.4, [0.3, 0.0, 0.0], -1e-4),
        stack(2, 0.1, 0.2, [0.5, 0.2, 0.0], -2e-4),
    ];
    for model in &models {
        let table = vec![material_row(model)];
        for pb in &problems {
            let b64 = bodies64(pb);
            let nc = pb.contacts.len();
            let st = settings(SolverKind::Apgd, 20_000, per_row(1e-12, nc));
            let c1 = cpu::solve_models(&b64, &pb.contacts, &st, DT as f64, None, &table);
            let keys: Vec<_> = pb.contacts.iter().map(|c| c.key()).collect();
            let ws = cpu::WarmStart {
                keys: &keys,
                gamma: &c1.gamma,
                saved: &c1.saved,
            };
            let c = cpu::solve_models(&b64, &pb.contacts, &st, DT as f64, Some(ws), &table);
            let rigid = bristlecone::model::rows::RigidOffset::plain(0.5);
            let (_, _, e) = cpu::assemble_models(&b64, &pb.contacts, DT as f64, rigid, &table);
            let ccp = oracle::DenseCcp::new(&b64, &pb.contacts, DT as f64, 0.5).with_rows(&c.p, &e);
            let or = oracle::solve(&ccp, 1e-13);
            let gscale = max_abs(&or.gamma);
            let diff = |g: &[[f64; 3]]| {
                g.iter()
                    .zip(&or.gamma)
                    .flat_map(|(a, b)| (0..3).map(move |k| (a[k] - b[k]).abs()))
                    .fold(0.0, f64::max)
            };
            let dc = diff(&c.gamma);
            let gst = settings(SolverKind::Apgd, 2000, per_row(1e-6 * ccp.p.norm(), nc));
            let g = run_gpu_models(&ctx, pb, &gst, 2, &table);
            let g64: Vec<[f64; 3]> = g
                .gamma
                .iter()
                .map(|x| [x[0] as f64, x[1] as f64, x[2] as f64])
                .collect();
            let dg = diff(&g64);
            eprintln!(
                "{model:?}, {nc} contacts: max|γ| {gscale:.3e}, twin {:.2e}, GPU {:.2e} ({} sweeps)",
                dc / gscale,
                dg / gscale,
                g.scalars.iterations
            );
            assert!(e.iter().any(|x| x[0] > 0.0 || x[1] > 0.0), "no compliance");
            assert!(
                dc <= 1e-7 * gscale,
                "{model:?}: twin γ off the oracle by {dc}"
            );
            assert!(
                dg <= 2e-4 * gscale,
                "{model:?}: GPU γ off the oracle by {dg}"
            );
        }
    }
}

/// The three solvers, on the CPU (f64) and on the GPU (f32), converge to the oracle's minimiser on
/// small problems: the residual falls below tolerance relative to ‖p‖, γ matches the oracle
/// (where γ is unique) and v⁺ matches it always.
#[test]
fn every_solver_reaches_the_oracle_solution_on_small_problems() {
    let ctx = shared_context();
    for (name, pb, unique) in small_problems() {
        let b64 = bodies64(&pb);
        let ccp = oracle::DenseCcp::new(&b64, &pb.contacts, DT as f64, 0.5);
        let or = oracle::solve(&ccp, 1e-13);
        let og = nalgebra::DVector::from_iterator(
            3 * or.gamma.len(),
            or.gamma.iter().flatten().copied(),
        );
        let ov = ccp.velocities(&b64, &og);
        let pn = ccp.p.norm();
        let gscale = max_abs(&or.gamma);
        // Velocity scale: the largest free or final speed.
        let vscale = ov
            .iter()
            .zip(&b64)
            .map(|(v, b)| v.0.length().max(b.vel.length()))
            .fold(0.0, f64::max);
        for kind in [
            SolverKind::Apgd,
            SolverKind::Jacobi,
            SolverKind::GaussSeidel,
        ] {
            // f64 twin: 1e-9 relative residual. Jacobi on the singular box converges
            // linearly but slowly (its steps are bounded by the contact-count scaled η).
            let cpu_cap = if kind == SolverKind::Jacobi {
                100_000
            } else {
                20_000
            };
            let nc = pb.contacts.len();
            let st = settings(kind, cpu_cap, per_row(1e-9 * pn, nc));
            let c = cpu::solve(&b64, &pb.contacts, &st, DT as f64, None);
            assert!(
                c.converged,
                "{name} {kind:?} (CPU): residual {:.3e}",
                c.residual / pn
            );
            // f32 GPU: 1e-6 relative residual for APGD, the singular box included (it needs
            // ~5000 sweeps there: f32 rounding rejects many backtracking trials, but it gets
            // to an exact zero residual). Projected Jacobi's f32 iterates stall at a few 1e-6
            // on the penetrating stack (its steps ω·η·g fall below half an ulp of γ), so it gets
            // 1e-5; on the singular box it creeps (3.4e-5 after 20 000 sweeps), so 1e-4.
            let rel = match (unique, kind) {
                (_, SolverKind::Apgd) => 1e-6,
                (true, _) => 1e-5,
                (false, _) => 1e-4,
            };
            let cap = match (unique, kind) {
                (true, SolverKind::Apgd) => 400,
                (false, SolverKind::Apgd) => 6000,
                (_, _) => 1200,
            };
            let st = settings(kind, cap, per_row(rel * pn, nc));
            let g = run_gpu(&ctx, &pb, &st, 1);
            assert!(
                g.scalars.converged != 0,
                "{name} {kind:?} (GPU): residual {:.3e} after {} sweeps",
                g.scalars.best as f64 / pn,
                g.scalars.iterations
            );
            let g64: Vec<[f64; 3]> = g
                .gamma
                .iter()
                .map(|x| [x[0] as f64, x[1] as f64, x[2] as f64])
                .collect();
            // The residual of the GPU's γ, recomputed in f64.
            let r = cpu::residual(&b64, &pb.contacts, &g64, DT as f64, 0.5);
            assert!(
                r <= 2.0 * rel * pn,
                "{name} {kind:?}: f64 residual of the GPU γ {:.3e}",
                r / pn
            );
            for (who, gam, vel) in [
                ("CPU", &c.gamma, c.vel.clone()),
                (
                    "GPU",
                    &g64,
                    g.state
                        .vel
                        .iter()
                        .map(|v| DVec3::new(v[0] as f64, v[1] as f64, v[2] as f64))
                        .collect(),
                ),
            ] {
                let tol_g = match (who, unique) {
                    ("CPU", _) => 1e-6,
                    (_, true) => 1e-4,
                    (_, false) => 1e-3,
                };
                if unique {
                    for (a, b) in gam.iter().zip(&or.gamma) {
                        for k in 0..3 {
                            assert!(
                                (a[k] - b[k]).abs() <= tol_g * gscale,
                                "{name} {kind:?} {who}: γ {a:?} vs oracle {b:?}"
                            );
                        }
                    }
                }
                for (b, v) in vel.iter().enumerate() {
                    assert!(
                        (*v - ov[b].0).length() <= tol_g * vscale.max(1e-3),
                        "{name} {kind:?} {who}: body {b} v⁺ {v} vs oracle {}",
                        ov[b].0
                    );
                }
            }
            eprintln!(
                "{name} {kind:?}: CPU {} sweeps, GPU {} sweeps, oracle objective {:.6e}",
                c.iterations, g.scalars.iterations, or.objective
            );
        }
    }
}

/// The sphere at rest: γ_n = m g dt exactly (normal impulse balances one step of gravity).
#[test]
fn sphere_on_plane_gets_the_weight_impulse() {
    let pb = stack(1, 0.1, 0.5, [0.0; 3], 0.0);
    let m = 1.0 / pb.state.mass_props[1][3] as f64;
    let g = run_gpu(
        &shared_context(),
        &pb,
        &settings(SolverKind::Apgd, 200, 1e-7),
        1,
    );
    let expect = m * 9.81 * DT as f64;
    assert!((g.gamma[0][0] as f64 - expect).abs() <= 1e-5 * expect);
    assert!(
        g.gamma[0][1].abs() <= 1e-6 * expect as f32 && g.gamma[0][2].abs() <= 1e-6 * expect as f32
    );
    assert!(g.state.vel[1][2].abs() < 1e-6);
}

#[test]
fn two_gpu_solves_give_bit_identical_impulses() {
    let ctx = shared_context();
    let pb = random_problem(5, 600, 2000);
    for kind in [
        SolverKind::Apgd,
        SolverKind::Jacobi,
        SolverKind::GaussSeidel,
    ] {
        let st = settings(kind, 25, 0.0);
        let a = run_gpu(&ctx, &pb, &st, 1);
        let b = run_gpu(&ctx, &pb, &st, 1);
        let bits = |g: &[[f32; 4]]| g.iter().flatten().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&a.gamma), bits(&b.gamma), "{kind:?}");
        assert_eq!(a.scalars, b.scalars);
        assert_eq!(bits(&a.state.vel), bits(&b.state.vel));
    }
}

#[test]
fn apgd_best_residual_is_monotone_and_reported_in_the_stats() {
    let pb = random_problem(9, 800, 2500);
    let g = run_gpu(
        &shared_context(),
        &pb,
        &settings(SolverKind::Apgd, 60, 0.0),
        1,
    );
    let mut best = g.scalars.res0;
    for h in &g.history {
        assert!(h[1] <= best, "best residual rose: {} > {best}", h[1]);
        assert!(h[1] <= h[0] || h[3] == 0.0);
        best = h[1];
    }
    assert!(g.history.iter().any(|h| h[3] == 0.0) || g.history.len() == 60);
    assert_eq!(g.stats[2], g.scalars.iterations);
    // The stats report the best residual as the tolerance measures it: RMS per row.
    let rms = g.scalars.best / (3.0 * pb.contacts.len() as f32).sqrt();
    let reported = f32::from_bits(g.stats[3]);
    assert!(
        (reported - rms).abs() <= 1e-6 * rms,
        "stats residual {reported}, best {} / √(3n) = {rms}",
        g.scalars.best
    );
    let pen = pb.contacts.iter().map(|c| -c.n_gap[3]).fold(0.0, f32::max);
    assert_eq!(f32::from_bits(g.stats[4]), pen);
    // The returned impulses have the best residual (recomputed in f64).
    let g64: Vec<[f64; 3]> = g
        .gamma
        .iter()
        .map(|x| [x[0] as f64, x[1] as f64, x[2] as f64])
        .collect();
    let r = cpu::residual(&bodies64(&pb), &pb.contacts, &g64, DT as f64, 0.5);
    assert!(
        (r - best as f64).abs() <= 1e-3 * best as f64,
        "{r} vs {best}"
    );
}

/// Warm start from the converged impulses of the same problem: the second solve starts at
/// the solution and stops within 2 sweeps (0 when γ⁰ already meets the tolerance).
#[test]
fn warm_start_from_the_solution_converges_at_once() {
    let ctx = shared_context();
    for (name, pb, unique) in small_problems() {
        for kind in [SolverKind::Apgd, SolverKind::Jacobi] {
            let b64 = bodies64(&pb);
            let pn = cpu::solve(&b64, &pb.contacts, &settings(kind, 0, 0.0), DT as f64, None);
            let rel = if unique { 1e-5 } else { 1e-4 };
            let cap = if kind == SolverKind::Apgd { 400 } else { 1200 };
            let tol = per_row(rel * p_norm(&pn), pb.contacts.len());
            let mut st = settings(kind, cap, tol);
            st.warm_start = true;
            let cold = run_gpu(&ctx, &pb, &st, 1);
            let warm = run_gpu(&ctx, &pb, &st, 2);
            assert!(
                cold.scalars.converged != 0,
                "{name} {kind:?}: {:?} {:?}",
                cold.scalars,
                &cold.history[cold.history.len().saturating_sub(5)..]
            );
            assert!(
                warm.scalars.iterations <= 2,
                "{name} {kind:?}: {} sweeps warm vs {} cold",
                warm.scalars.iterations,
                cold.scalars.iterations
            );
        }
    }
}

/// The warm-start tests' problem: a 3-sphere stack on a plane and its GPU solve (APGD, warm
/// start, up to 500 sweeps to 1e-7 m/s).
struct WarmStack {
    pb: Problem,
    bodies: bristlecone::bodies::GpuBodies,
    solve: Solve,
    inputs: Inputs,
}

impl WarmStack {
    fn new() -> Self {
        let ctx = shared_context();
        let pb = stack(3, 0.05, 0.4, [0.1, 0.0, 0.0], 0.0);
        let mut st = settings(SolverKind::Apgd, 500, 1e-7);
        st.warm_start = true;
        let bodies = bristlecone::bodies::GpuBodies::upload(&ctx, &pb.state).unwrap();
        let solve = Solve::new(&ctx, &bodies, 3, &st, DT).unwrap();
        let inputs = Inputs::upload(&ctx, &pb);
        WarmStack {
            pb,
            bodies,
            solve,
            inputs,
        }
    }

    /// One solve from the stack's free velocities; its scalars.
    fn run(&self) -> SolverScalars {
        let ctx = shared_context();
        self.bodies.write(&ctx, &self.pb.state);
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        self.solve.record(&ctx, &mut enc, self.inputs.get());
        ctx.queue.submit([enc.finish()]);
        self.solve.read_scalars(&ctx).unwrap()
    }
}

/// A cold solve needs sweeps, the warm-started one after it (same problem) at most 2.
fn assert_warm_pays(cold: &SolverScalars, warm: &SolverScalars) {
    assert!(
        cold.iterations > 5 && warm.iterations <= 2,
        "{} / {}",
        cold.iterations,
        warm.iterations
    );
}

/// Growing the contact buffers keeps the warm-start data.
#[test]
fn grow_keeps_the_warm_start() {
    let (ctx, mut w) = (shared_context(), WarmStack::new());
    let cold = w.run();
    let g_cold = w.solve.read_impulses(&ctx, 3).unwrap();
    w.solve.grow(&ctx, 5000).unwrap();
    // Rounded up to whole 256 B segments (16 contacts).
    assert_eq!(w.solve.capacity(), 5008);
    let warm = w.run();
    assert_warm_pays(&cold, &warm);
    let g_warm = w.solve.read_impulses(&ctx, 3).unwrap();
    for (a, b) in g_cold.iter().zip(&g_warm) {
        for k in 0..3 {
            assert!((a[k] - b[k]).abs() <= 1e-4 * g_cold[0][0]);
        }
    }
}

/// Between solves the warm-start impulses live in `nv`'s first segment: a change of row
/// layout (solver kind, a stateful model table) re-allocates `nv` and must carry them over
/// bit for bit.
#[test]
fn a_layout_change_keeps_the_warm_start() {
    let (ctx, mut w) = (shared_context(), WarmStack::new());
    let cold = w.run();
    let saved = w.solve.read_warm_start(&ctx).unwrap();
    assert_eq!(saved.0.len(), 3);
    assert!(saved.1.iter().any(|g| g[0] != 0), "no impulse saved");
    let before = w.solve.bytes_per_contact();
    w.solve
        .set_settings(&ctx, &settings(SolverKind::Jacobi, 500, 1e-7))
        .unwrap();
    assert_ne!(w.solve.bytes_per_contact(), before, "no re-allocation");
    assert_eq!(
        w.solve.read_warm_start(&ctx).unwrap(),
        saved,
        "APGD -> Jacobi"
    );
    w.solve.set_models(&ctx, &tanh_models()).unwrap();
    assert_eq!(w.solve.read_warm_start(&ctx).unwrap(), saved, "-> stateful");
    w.solve.set_models(&ctx, &[]).unwrap();
    let mut back = settings(SolverKind::Apgd, 500, 1e-7);
    back.warm_start = true;
    w.solve.set_settings(&ctx, &back).unwrap();
    assert_eq!(w.solve.read_warm_start(&ctx).unwrap(), saved, "-> APGD");
    let warm = w.run();
    assert_warm_pays(&cold, &warm);
}

/// The warm start keeps A as per-body rows: a restored list (a checkpoint) whose A is no body
/// of the solve, or which is out of order, is an error that names the entry, and the solve
/// keeps its own list.
#[test]
fn a_foreign_warm_start_is_a_named_error() {
    let (ctx, w) = (shared_context(), WarmStack::new());
    let mut solve = w.solve;
    let n = w.pb.state.len() as u32;
    let good = vec![[0, 1, 0, 0], [1, 2, 0, 0], [u32::MAX, 0, 0, 0]];
    let impulses = vec![[1u32, 2, 3, 0]; 3];
    solve.write_warm_start(&ctx, &good, &impulses).unwrap();
    assert_eq!(
        solve.read_warm_start(&ctx).unwrap(),
        (good.clone(), impulses.clone())
    );
    let foreign = vec![[0, 1, 0, 0], [n + 5, n + 6, 0, 0]];
    let err = solve
        .write_warm_start(&ctx, &foreign, &impulses[..2])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("key 1") && err.contains(&format!("body {}", n + 5)),
        "{err}"
    );
    let unsorted = vec![[1, 2, 0, 0], [0, 1, 0, 0]];
    let err = solve
        .write_warm_start(&ctx, &unsorted, &impulses[..2])
        .unwrap_err()
        .to_string();
    assert!(err.contains("ascending"), "{err}");
    assert_eq!(solve.read_warm_start(&ctx).unwrap(), (good, impulses));
}

/// A rod (m = 1 kg, L = 1 m, I = m L²/12 about the relevant transverse axis) at θ = 60° to a
/// plane, its lower end touching it and sliding at 3 m/s towards the upper end's side, so
/// friction acts along +x: A = (1/m)(1 + 3 (cos²θ − μ sin θ cos θ)), −0.85 for μ = 2 (the
/// classic Painlevé configuration) and +1.36 for μ = 0.3. The GPU counts the first and not the
/// second (as the f64 twin does), and the solve returns finite impulses.
#[test]
fn painleve_configuration_is_flagged_and_an_ordinary_one_is_not() {
    let ctx = shared_context();
    let theta = 60f32.to_radians();
    let (l, m) = (1.0f32, 1.0f32);
    for (mu, flagged) in [(2.0f32, 1u32), (0.3, 0)] {
        let plane = BodyInit::fixed(SHAPE_PLANE, 0, [0.0; 3], 1.0);
        let h = 0.5 * l * theta.sin();
        let mut rod = BodyInit::sphere([0.0, 0.0, h], 0.5 * l, 1.0);
        rod.inv_mass = 1.0 / m;
        rod.inv_inertia = [12.0 / (m * l * l); 3];
        rod.velocity = [-3.0, 0.0, -9.81 * DT];
        let contact = Contact {
            n_gap: [0.0, 0.0, 1.0, 0.0],
            ra: [-0.5 * l * theta.cos(), 0.0, 0.0, mu],
            rb: [-0.5 * l * theta.cos(), 0.0, -h, 0.0],
            ids: [0, 1, 0, 0],
        };
        let pb = Problem {
            state: BodyState::from_inits(&[plane, rod]),
            contacts: vec![contact],
        };
        let st = settings(SolverKind::Apgd, 100, 1e-6);
        let g = run_gpu(&ctx, &pb, &st, 1);
        let c = cpu::solve(&bodies64(&pb), &pb.contacts, &st, DT as f64, None);
        assert_eq!(c.painleve, flagged, "twin, μ = {mu}");
        assert_eq!(g.stats[6], flagged, "GPU, μ = {mu}");
        // Tangentially compliant rows (bristle: E_T > 0, p_T holding −E_T γ_T⁻) are not
        // rigid Coulomb contacts: never counted.
        let bristle = [material_row(&FrictionModel::Bristle { stiffness: 1e5 })];
        let gb = run_gpu_models(&ctx, &pb, &st, 2, &bristle);
        let cb = cpu::solve_models(&bodies64(&pb), &pb.contacts, &st, DT as f64, None, &bristle);
        assert_eq!((gb.stats[6], cb.painleve), (0, 0), "bristle, μ = {mu}");
        assert!(
            g.gamma[0].iter().all(|x| x.is_finite()),
            "μ = {mu}: {:?}",
            g.gamma[0]
        );
    }
}

/// Why `step::Simulation` skips the Painlevé diagnostic where every grain is a dynamic
/// sphere: on the contacts collision finds between 600 random overlapping spheres and a plane,
/// sliding at up to 3 m/s and spinning at up to 50 rad/s with μ = 2, nearly every contact
/// slides and neither the GPU (diagnostic on) nor the f64 twin counts one (a sphere's arm lies
/// along the normal, so A = m_A⁻¹ + m_B⁻¹ > 0). The rod above, a sphere-shaped body with an
/// arm off its normal, shows that the arms, not the shape flag, decide.
#[test]
fn sphere_contacts_from_collision_never_count_as_painleve() {
    let ctx = shared_context();
    let mut rng = ChaCha8Rng::seed_from_u64(29);
    let mut inits = vec![BodyInit::fixed(SHAPE_PLANE, 0, [0.0; 3], 1.0)];
    for _ in 0..600 {
        let r = rng.random_range(0.02..0.04);
        let (x, y, z) = (
            rng.random_range(-0.3..0.3),
            rng.random_range(-0.3..0.3),
            rng.random_range(0.01..0.3),
        );
        let mut b = BodyInit::sphere([x, y, z], r, 2500.0);
        b.velocity = [0; 3].map(|_: i32| rng.random_range(-3.0..3.0));
        b.angular_velocity = [0; 3].map(|_: i32| rng.random_range(-50.0..50.0));
        inits.push(b);
    }
    let state = BodyState::from_inits(&inits);
    let collide = bristlecone::collide::CollideSettings {
        envelope: 0.002,
        friction: vec![2.0],
    };
    let contacts = gpu_contacts(
        &state,
        &[bristlecone::collide::BoundaryShape::Plane],
        &collide,
    );
    let pb = Problem { state, contacts };
    let sliding = pb
        .contacts
        .iter()
        .filter(|c| {
            let v = |b: u32, r: [f32; 4]| {
                let (b, r) = (b as usize, d3(r));
                d3(pb.state.vel[b]) + d3(pb.state.omega[b]).cross(r)
            };
            let dv = v(c.ids[1], c.rb) - v(c.ids[0], c.ra);
            let n = d3(c.n_gap);
            (dv - n * dv.dot(n)).length() > 0.1
        })
        .count();
    assert!(
        pb.contacts.len() > 600 && sliding * 10 > pb.contacts.len() * 9,
        "{} contacts, {sliding} sliding",
        pb.contacts.len()
    );
    let st = settings(SolverKind::Apgd, 50, 1e-6);
    let g = run_gpu(&ctx, &pb, &st, 1);
    let c = cpu::solve(&bodies64(&pb), &pb.contacts, &st, DT as f64, None);
    assert_eq!((g.stats[6], c.painleve), (0, 0));
}

/// The rigid offset with a slop s and a factor β (rows::RigidOffset): 0 inside −s ≤ Φ < 0,
/// Φ/dt for a gap, β(Φ + s)/dt beyond the slop (capped), continuous at both ends.
#[test]
fn rigid_offset_has_a_dead_band_and_is_continuous() {
    use bristlecone::model::rows::RigidOffset;
    let (dt, s) = (1e-3, 1e-6);
    let r = RigidOffset {
        v_recover: 0.1,
        slop: s,
        beta: 0.5,
    };
    assert_eq!(r.offset(-0.5 * s, dt), 0.0);
    assert_eq!(r.offset(-s, dt), 0.0);
    assert_eq!(r.offset(2e-6, dt), 2e-6 / dt);
    assert!((r.offset(-3e-6, dt) - 0.5 * (-2e-6) / dt).abs() < 1e-12);
    assert_eq!(r.offset(-1.0, dt), -0.1, "capped at the recovery speed");
    for phi in [0.0, -s] {
        let (lo, hi) = (r.offset(phi - 1e-12, dt), r.offset(phi + 1e-12, dt));
        assert!((lo - hi).abs() < 1e-8, "jump at Φ = {phi}: {lo} vs {hi}");
    }
    // s = 0, β = 1 is the classic max(Φ/dt, −v).
    let plain = RigidOffset::plain(0.1);
    for phi in [-1.0, -1e-5, 0.0, 1e-5] {
        assert_eq!(plain.offset(phi, dt), (phi / dt).max(-0.1));
    }
}

/// GPU = twin with a slop and β < 1 on 1000 random contacts whose gaps straddle the band:
/// same right-hand side, same sweeps, γ within f32 rounding; and the band matters (many
/// contacts' offsets differ from the classic one), so the check cannot pass with it ignored.
#[test]
fn slop_and_stabilisation_on_gpu_equal_the_f64_twin() {
    let ctx = shared_context();
    let pb = random_problem(17, 300, 1000);
    for kind in [SolverKind::Jacobi, SolverKind::Apgd] {
        let st = SolverSettings {
            slop: 0.002,
            stabilisation: 0.3,
            ..settings(kind, 60, per_row(1e-4, 1000))
        };
        let g = run_gpu(&ctx, &pb, &st, 1);
        let rhs = {
            let bodies = bristlecone::bodies::GpuBodies::upload(&ctx, &pb.state).unwrap();
            let solve = Solve::new(&ctx, &bodies, 1000, &st, DT).unwrap();
            let inputs = Inputs::upload(&ctx, &pb);
            let mut enc = ctx.device.create_command_encoder(&Default::default());
            solve.record(&ctx, &mut enc, inputs.get());
            ctx.queue.submit([enc.finish()]);
            solve.read_rhs(&ctx, 1000).unwrap()
        };
        let b64 = bodies64(&pb);
        let c = cpu::solve(&b64, &pb.contacts, &st, DT as f64, None);
        let classic = cpu::solve(
            &b64,
            &pb.contacts,
            &SolverSettings {
                slop: 0.0,
                stabilisation: 1.0,
                ..st
            },
            DT as f64,
            None,
        );
        let pscale = c.p.iter().map(|p| p[0].abs()).fold(0.0, f64::max);
        let mut changed = 0;
        for (i, (pg, pc)) in rhs.iter().zip(&c.p).enumerate() {
            assert!(
                (pg[0] as f64 - pc[0]).abs() <= 1e-6 * pscale,
                "contact {i}: p_n {} vs {}",
                pg[0],
                pc[0]
            );
            changed += ((pc[0] - classic.p[i][0]).abs() > 1e-3 * pscale) as usize;
        }
        assert!(changed > 300, "only {changed} offsets changed by the band");
        assert_eq!(g.scalars.iterations, c.iterations);
        let scale = max_abs(&c.gamma);
        let worst = g
            .gamma
            .iter()
            .zip(&c.gamma)
            .flat_map(|(a, b)| (0..3).map(move |k| (a[k] as f64 - b[k]).abs()))
            .fold(0.0, f64::max);
        assert!(worst <= 1e-4 * scale, "{kind:?}: γ differs by {worst}");
        eprintln!(
            "{kind:?}: {changed} offsets in the band, {} sweeps, |Δγ|/max|γ| = {:.1e}",
            c.iterations,
            worst / scale
        );
    }
}

/// Cohesive materials (pull-offs whose F_c dt is of the order of the impulses) and a plain
/// one, Coulomb and Kelvin–Voigt, so pairs with and without cohesion and both models occur.
fn cohesive_models() -> Vec<MaterialRow> {
    let coulomb = material_row(&FrictionModel::Coulomb);
    let kv = material_row(&FrictionModel::Compliant {
        stiffness: 1e6,
        damping: 50.0,
    });
    vec![
        coulomb,
        with_cohesion(coulomb, 2000.0, 0.0),
        with_cohesion(coulomb, 500.0, 2e4),
        with_cohesion(kv, 1000.0, 5e3),
    ]
}

/// The cohesive rows matter in the random problem: many contacts end in tension.
fn contacts_in_tension(kind: SolverKind) -> usize {
    let models = cohesive_models();
    let mut pb = random_problem(11, 1000, 1000);
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for c in &mut pb.contacts {
        c.ids[3] = (rng.random_range(0..4u32) << 16) | rng.random_range(0..4u32);
    }
    let st = settings(kind, 40, 0.0);
    let c = cpu::solve_models(&bodies64(&pb), &pb.contacts, &st, DT as f64, None, &models);
    c.gamma.iter().filter(|g| g[0] < -1e-6).count()
}

#[test]
fn cohesion_apgd_on_gpu_equals_the_f64_twin_on_1000_random_contacts() {
    let tension = contacts_in_tension(SolverKind::Apgd);
    assert!(tension > 50, "only {tension} contacts in tension");
    gpu_matches_cpu_models(
        SolverKind::Apgd,
        Cone::Relaxed,
        1000,
        1000,
        40,
        0.0,
        &cohesive_models(),
    );
}

#[test]
fn cohesion_exact_cone_jacobi_on_gpu_equals_the_f64_twin_on_1000_random_contacts() {
    gpu_matches_cpu_models(
        SolverKind::Jacobi,
        Cone::Exact,
        1000,
        1000,
        40,
        0.0,
        &cohesive_models(),
    );
}

/// A 3 × 3 × 2 lattice of touching spheres at rest on a floor; a kinematic ball held in a
/// hollow of its top layer, just above four spheres, released after 6 steps (its four
/// contacts then share a moving body: they need four colours); a dynamic ball 2 mm
/// above a corner sphere that lands (one more contact). The constraint graph holds for
/// steps, changes, and holds again.
const COLOUR_GRAPH_SCENE: &str = r#"
[simulation]
dt = 1e-3
steps = 36

[solver]
kind = "gauss_seidel"
max_iterations = 30

[[material]]
name = "glass"
density = 2500.0
friction = 0.5

[[body]]
name = "held"
radius = 0.005
position = [0.005, 0.005, 0.0221]
motion = "kinematic"

[[body]]
name = "dropped"
radius = 0.005
position = [-0.01, -0.01, 0.027]

[[generator]]
kind = "lattice"
region = { kind = "box", min = [-0.015, -0.015, 0.0], max = [0.015, 0.015, 0.02] }
radius = 0.005
spacing = 0.01

[[boundary]]
kind = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
"#;

/// Gauss–Seidel keeps its colouring while the constraint graph (the constraints and the
/// moving bodies each couples) is unchanged: the same scene stepped with the colouring kept
/// and with it recomputed every step gives the same bits in every step's statistics and in
/// the bodies, through steps where the graph holds (kept), changes (a released body starts
/// to move, a dropped one lands: recomputed) and holds again; batches redone with a larger
/// sweep budget re-run steps against whatever colouring the buffer holds.
#[test]
fn gauss_seidel_keeps_its_colouring_while_the_graph_holds_with_the_same_bits() {
    use bristlecone::step::{BenchKnobs, Simulation};
    let scene =
        bristlecone::scene::parse_str(COLOUR_GRAPH_SCENE, std::path::Path::new("graph")).unwrap();
    let run = |keep: bool| {
        let state = bristlecone::setup::build_bodies(&scene);
        let settings = bristlecone::setup::step_settings(&scene);
        let mut sim = Simulation::new(shared_context(), &state, settings).unwrap();
        sim.set_colour_reuse(keep);
        let mut records = Vec::new();
        for batch in 0..6 {
            if batch == 1 {
                // The release of the held ball, as a schedule's (`run`) does it.
                let b = &scene.bodies[0];
                let ii = b.inertia.map(|x| (1.0 / x) as f32);
                let held = scene.boundaries.len() as u32;
                sim.set_dynamic(held, [ii[0], ii[1], ii[2], (1.0 / b.mass) as f32]);
            }
            records.extend(sim.advance(6, 1).unwrap());
        }
        let kept = sim.colourings_kept().unwrap();
        (sim, records, kept)
    };
    let (a, ra, (checked, kept)) = run(true);
    let (b, rb, forced) = run(false);
    eprintln!(
        "colouring kept in {kept} of {checked} solves; contacts per step {:?}; sweeps {:?}; \
         redone batches {}",
        ra.iter().map(|r| r.contacts).collect::<Vec<_>>(),
        ra.iter().map(|r| r.iterations).collect::<Vec<_>>(),
        a.batched.budget_redos
    );
    assert_eq!(forced, (0, 0), "the forced run checked its graph");
    assert!(
        kept >= 10,
        "the colouring was kept in {kept} of {checked} solves only"
    );
    assert!(
        checked - kept >= 3,
        "the graph never changed after the first step: {kept} of {checked} kept"
    );
    assert_eq!(ra.len(), rb.len());
    for (x, y) in ra.iter().zip(&rb) {
        assert_eq!(
            (
                x.contacts,
                x.iterations,
                x.residual.to_bits(),
                x.max_penetration.to_bits()
            ),
            (
                y.contacts,
                y.iterations,
                y.residual.to_bits(),
                y.max_penetration.to_bits()
            ),
            "step {}: the statistics differ",
            x.step
        );
        assert_eq!(
            x.totals.kinetic_energy.to_bits(),
            y.totals.kinetic_energy.to_bits(),
            "step {}: the kinetic energy differs",
            x.step
        );
    }
    assert_same_bodies(&a, &b);
}

/// A dynamic ball of radius 50 mm on the floor with 40 beads (radius 5 mm) resting on its top
/// in rings 12° apart, and one bead dropped onto the topmost: the ball's bead and floor
/// contacts make it a hub.
fn hub_graph_scene() -> String {
    let mut text = String::from(
        r#"
[simulation]
dt = 1e-3
steps = 30

[solver]
kind = "gauss_seidel"
max_iterations = 40

[[material]]
name = "glass"
density = 2500.0
friction = 0.5

[[boundary]]
kind = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]

[[body]]
name = "ball"
radius = 0.05
position = [0.0, 0.0, 0.05]

[[body]]
name = "dropped"
radius = 0.005
position = [0.0, 0.0, 0.118]
"#,
    );
    // Rings at 0°, 12°, 24° and 36° from the top, as many beads as fit 10.1 mm apart.
    for (ring, count) in [1, 6, 13, 20].into_iter().enumerate() {
        let polar = (12.0 * ring as f64).to_radians();
        for k in 0..count {
            let azimuth = std::f64::consts::TAU * k as f64 / count as f64;
            let d = 0.05501;
            let p = [
                d * polar.sin() * azimuth.cos(),
                d * polar.sin() * azimuth.sin(),
                0.05 + d * polar.cos(),
            ];
            text += &format!(
                "\n[[body]]\nradius = 0.005\nposition = [{}, {}, {}]\n",
                p[0], p[1], p[2]
            );
        }
    }
    text
}

/// Gauss–Seidel with a hub (`hub_graph_scene`): the colouring lists the slab as a hub and
/// keeps it while the graph holds, and the run gives the same bits with the colouring kept,
/// with it recomputed every step and when run again, through the dropped bead's landing.
#[test]
fn gauss_seidel_with_a_hub_keeps_its_colouring_and_reruns_with_the_same_bits() {
    use bristlecone::step::{BenchKnobs, Simulation};
    let scene =
        bristlecone::scene::parse_str(&hub_graph_scene(), std::path::Path::new("hub")).unwrap();
    let run = |keep: bool| {
        let state = bristlecone::setup::build_bodies(&scene);
        let settings = bristlecone::setup::step_settings(&scene);
        let mut sim = Simulation::new(shared_context(), &state, settings).unwrap();
        sim.set_colour_reuse(keep);
        let records = sim.advance(30, 1).unwrap();
        let (checked, kept) = sim.colourings_kept().unwrap();
        let hubs = sim.gauss_hubs().unwrap();
        (sim, records, (checked, kept), hubs)
    };
    let (a, ra, (checked, kept), hubs) = run(true);
    let (b, rb, _, hubs_b) = run(false);
    let (c, rc, _, _) = run(true);
    eprintln!(
        "hubs {hubs}; colouring kept in {kept} of {checked} solves; contacts {:?}; sweeps {:?}",
        ra.iter().map(|r| r.contacts).collect::<Vec<_>>(),
        ra.iter().map(|r| r.iterations).collect::<Vec<_>>(),
    );
    assert_eq!((hubs, hubs_b), (1, 1), "the slab is the one hub");
    assert!(kept >= 5 && checked > kept, "kept {kept} of {checked}");
    for other in [&rb, &rc] {
        assert_eq!(ra.len(), other.len());
        for (x, y) in ra.iter().zip(other.iter()) {
            assert_eq!(
                (x.contacts, x.iterations, x.residual.to_bits()),
                (y.contacts, y.iterations, y.residual.to_bits()),
                "step {}: the statistics differ",
                x.step
            );
        }
    }
    assert_same_bodies(&a, &b);
    assert_same_bodies(&a, &c);
}

/// Gauss–Seidel with the slab correction (`coarse_slab`) against its twin
/// (`Multilevel::gpu_slabs`) on a lattice column 30 grains deep loaded from rest (the cold
/// step the correction shortens most): the same sweeps and corrections, the same
/// convergence, γ within f32 rounding grown over the sweeps; and fewer sweeps than
/// Gauss–Seidel alone, or the correction did nothing.
#[test]
fn gauss_seidel_slab_correction_matches_the_twin() {
    use bristlecone::reference::depth::{diameter, Column, Packing};
    use bristlecone::reference::multilevel::{self, Multilevel};
    let ctx = shared_context();
    let column = Column::new(Packing::Lattice, 30, 3, 1);
    let (state, free) = column.free_problem();
    let pb = Problem {
        state,
        contacts: column.contacts.clone(),
    };
    // Slabs whose boundaries stay ≥ 0.05 d from every layer of contacts (z = k d): a contact
    // on a boundary would fall in either slab with f32 or f64 rounding.
    let height = 1.7071 * diameter();
    let st = SolverSettings {
        omega: 1.0,
        coarse_slab: height as f32,
        ..settings(SolverKind::GaussSeidel, 200, 1e-5)
    };
    let bodies = bristlecone::bodies::GpuBodies::upload(&ctx, &pb.state).unwrap();
    let mut solve = Solve::new(&ctx, &bodies, pb.contacts.len() as u32, &st, DT).unwrap();
    solve.set_gravity(&ctx, [0.0, 0.0, -9.81]);
    let inputs = Inputs::upload(&ctx, &pb);
    let run = || {
        bodies.write(&ctx, &pb.state);
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        solve.record(&ctx, &mut enc, inputs.get());
        ctx.queue.submit([enc.finish()]);
        let gamma = solve.read_impulses(&ctx, pb.contacts.len() as u32).unwrap();
        (gamma, bodies.download_kinematics(&ctx).unwrap().vel)
    };
    let (gamma, vel) = run();
    let scalars = solve.read_scalars(&ctx).unwrap();
    let (tried, kept) = solve.slab_corrections(&ctx).unwrap().expect("slabs on");
    // The coarse sums are integers and every float sum has a fixed order: the same bits.
    let (again, vel_again) = run();
    let bits = |v: &[[f32; 4]]| v.iter().flatten().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&gamma), bits(&again), "impulses of a rerun");
    assert_eq!(bits(&vel), bits(&vel_again), "velocities of a rerun");
    let ml = Multilevel::gpu_slabs(height, DVec3::new(0.0, 0.0, -9.81));
    let c = multilevel::solve(&free, &pb.contacts, &st, &ml, DT as f64, None);
    eprintln!(
        "slabs: GPU {} iterations ({tried} corrections, {kept} kept, converged {}), twin {} \
         (converged {}), {} contacts",
        scalars.iterations,
        scalars.converged,
        c.iterations,
        c.converged,
        pb.contacts.len()
    );
    // A correction's record has its cost (1 sweep) where a sweep's has β < 1.
    let corrections = c.history.iter().filter(|h| h[2] == 1.0);
    let twin_kept = corrections.clone().filter(|h| h[3] != 0.0).count() as u32;
    let twin_tried = corrections.count() as u32;
    assert_eq!(scalars.iterations, c.iterations, "sweeps + corrections");
    assert_eq!(
        (tried, kept),
        (twin_tried, twin_kept),
        "corrections tried, kept"
    );
    assert_eq!(scalars.converged != 0, c.converged);
    assert!(kept > 0, "no correction kept");
    let scale = max_abs(&c.gamma);
    for (i, (g, t)) in gamma.iter().zip(&c.gamma).enumerate() {
        for k in 0..3 {
            let err = (g[k] as f64 - t[k]).abs();
            assert!(err <= 2e-3 * scale, "γ[{i}][{k}] {} vs {}", g[k], t[k]);
        }
    }
    let plain = SolverSettings {
        coarse_slab: 0.0,
        ..st
    };
    let alone = cpu::solve(&free, &pb.contacts, &plain, DT as f64, None);
    eprintln!("Gauss–Seidel alone: {} sweeps", alone.iterations);
    assert!(
        c.iterations < alone.iterations,
        "{} iterations with slabs, {} without",
        c.iterations,
        alone.iterations
    );
}
