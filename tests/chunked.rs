//! Chunked storage arrays (`gpu::chunked`): contact records and the solver's per-contact
//! arrays bound as several storage bindings. A context with 32 KiB chunks makes a 512-grain
//! box span every chunk of every array; the step must equal the unchunked one bit for bit,
//! whichever load of the gather's lever arm the adapter kind picks.
//! Also the solver layouts' memory per contact (Jacobi holds no y, best or Ny).

use bristlecone::bodies::{BodyInit, BodyState, SHAPE_BOX_CONTAINER};
use bristlecone::collide::{BoundaryShape, CollideSettings};
use bristlecone::gpu::{shared_context, BackendChoice, GpuContext, ShaderSource};
use bristlecone::solve::{SolverKind, SolverSettings};
use bristlecone::step::{BenchKnobs, ContactSetup, Simulation, StepSettings};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

/// 8 × 8 × 8 touching spheres (r = 5 mm) filling a closed box, with random velocities:
/// ~1700 contacts from the first step.
fn lattice(kind: SolverKind) -> (BodyState, StepSettings) {
    let r = 0.005f32;
    let h = 8.0 * r;
    let mut bodies = vec![BodyInit::fixed(
        SHAPE_BOX_CONTAINER,
        0,
        [0.0, 0.0, h],
        2.0 * h,
    )];
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for k in 0..512 {
        let (ix, iy, iz) = (k % 8, (k / 8) % 8, k / 64);
        let at = |i: usize| -h + r * (2 * i + 1) as f32;
        let mut b = BodyInit::sphere([at(ix), at(iy), at(iz) + h], r, 2500.0);
        b.velocity = [0; 3].map(|_| rng.random_range(-0.05..0.05));
        bodies.push(b);
    }
    let settings = StepSettings {
        dt: 1e-3,
        gravity: [0.0, 0.0, -9.81],
        contact: Some(ContactSetup {
            models: Vec::new(),
            patch_cells: 0,
            shapes: vec![BoundaryShape::BoxContainer {
                half_extents: [h; 3],
                open_top: false,
            }],
            collide: CollideSettings {
                envelope: 0.1 * r,
                friction: vec![0.5],
            },
            solver: SolverSettings {
                kind,
                max_iterations: 30,
                ..SolverSettings::default()
            },
        }),
    };
    (BodyState::from_inits(&bodies), settings)
}

/// Twelve steps of [`lattice`]; `arm_from_row` sets the gather's lever-arm load (None: the
/// adapter's default).
fn run(
    ctx: Arc<GpuContext>,
    kind: SolverKind,
    arm_from_row: Option<bool>,
) -> (BodyState, Vec<u32>) {
    let (state, settings) = lattice(kind);
    let mut sim = Simulation::new(ctx, &state, settings).unwrap();
    if let Some(on) = arm_from_row {
        sim.set_arm_from_row(on);
    }
    let contacts = sim
        .advance(12, 1)
        .unwrap()
        .iter()
        .map(|r| r.contacts)
        .collect();
    (sim.read_state().unwrap(), contacts)
}

#[test]
fn chunked_arrays_step_bit_for_bit_like_one_binding() {
    let mut small = GpuContext::new(BackendChoice::Auto).expect("adapter");
    small.set_chunk_log2(15);
    let small = Arc::new(small);
    // 32 KiB chunks: 512 records or 2048 vec4 each.
    let records = (32768 / 64) * ShaderSource::chunks_of("contacts") as usize;
    for kind in [SolverKind::Apgd, SolverKind::Jacobi] {
        let (a, ca) = run(shared_context(), kind, None);
        let n = *ca.iter().min().unwrap() as usize;
        // Records span 3 of the 4 chunks; γ, y, trial, best and aux span the gam chunks.
        assert!(n > 2 * 512 && n < records, "{kind:?}: {n} contacts");
        let bits = |s: &BodyState| {
            let f: Vec<f32> = s
                .pos
                .iter()
                .chain(&s.vel)
                .chain(&s.omega)
                .flatten()
                .copied()
                .collect();
            f.iter().map(|x| x.to_bits()).collect::<Vec<u32>>()
        };
        // The lever arm from its own chunked row (a CPU adapter's load) and from the chunked
        // record (a GPU's).
        for arm_from_row in [true, false] {
            let (b, cb) = run(small.clone(), kind, Some(arm_from_row));
            assert_eq!(
                ca, cb,
                "{kind:?}, arm from row {arm_from_row}: contact counts"
            );
            let (ba, bb) = (bits(&a), bits(&b));
            let first = ba.iter().zip(&bb).position(|(x, y)| x != y);
            assert_eq!(
                first, None,
                "{kind:?}, arm from row {arm_from_row}: first differing state word after 12 steps"
            );
        }
        let moved = a.pos.iter().zip(&lattice(kind).0.pos).any(|(p, q)| p != q);
        assert!(moved, "{kind:?}: nothing moved");
    }
}

#[test]
fn a_scene_past_the_chunks_is_a_named_error_not_a_panic() {
    // 16 KiB chunks: at most 1365 contacts (APGD's `nv`, 4 chunks of 3 slots), and the
    // lattice needs ~1700.
    let mut small = GpuContext::new(BackendChoice::Auto).expect("adapter");
    small.set_chunk_log2(14);
    let (state, settings) = lattice(SolverKind::Apgd);
    let mut sim = Simulation::new(Arc::new(small), &state, settings).unwrap();
    let err = sim.advance(2, 1).unwrap_err().to_string();
    assert!(err.contains("contacts"), "{err}");
}

#[test]
fn jacobi_allocates_no_apgd_segments() {
    // Per contact of capacity: record 64 + CSR 8, then γ (+ y, trial, best), Nγ (+ Ny,
    // N·trial; Nγ's segment holds the warm-start impulses between steps) and rhs, 16 B each,
    // and the warm-start key (B, feature), 8 B (A is a per-body row), which APGD keeps in
    // its free segment 1 of Nγ between steps: Jacobi steps in place, and plain Coulomb
    // contacts with the relaxed cone have no aux segment.
    for (kind, bytes) in [(SolverKind::Jacobi, 72 + 56), (SolverKind::Apgd, 72 + 128)] {
        let (state, settings) = lattice(kind);
        let mut sim = Simulation::new(shared_context(), &state, settings).unwrap();
        sim.advance(1, 1).unwrap();
        let m = sim.memory_bytes();
        assert_eq!(m.contacts / m.contact_capacity, bytes, "{kind:?}");
    }
}
