//! Cohesion (`[[material]] cohesion`, `src/model/rows::with_cohesion`): a constant pull-off
//! force per contact, the normal cone shifted to γ_n ≥ −F_c dt.

use bristlecone::bodies::{BodyInit, BodyState, SHAPE_PLANE};
use bristlecone::collide::{BoundaryShape, CollideSettings};
use bristlecone::gpu::shared_context;
use bristlecone::model::rows::{material_row, with_cohesion};
use bristlecone::scene::FrictionModel;
use bristlecone::solve::{SolverKind, SolverSettings};
use bristlecone::step::{ContactSetup, Simulation, StepSettings};

/// A sphere (m = 1 kg, radius `r`) resting against a plane at zero gap with gravity pulling
/// it away from the plane (a sphere under a ceiling), both materials with pull-off force
/// `cohesion` (N) and work of adhesion `energy` (J/m²). Returns the sphere's distance from
/// its start and its speed after 0.2 s.
fn sphere_under_plane(cohesion: f64, energy: f64, r: f32) -> (f64, f64) {
    let (m, dt) = (1.0f32, 1e-3);
    let plane = BodyInit::fixed(SHAPE_PLANE, 0, [0.0; 3], 1.0);
    let i = 0.4 * m * r * r;
    let ball = BodyInit {
        inv_mass: 1.0 / m,
        inv_inertia: [1.0 / i; 3],
        ..BodyInit::sphere([0.0, 0.0, r], r, 1.0)
    };
    let row = with_cohesion(material_row(&FrictionModel::Coulomb), cohesion, energy);
    let settings = StepSettings {
        dt,
        gravity: [0.0, 0.0, 9.81],
        contact: Some(ContactSetup {
            shapes: vec![BoundaryShape::Plane],
            collide: CollideSettings {
                envelope: 0.1 * r,
                friction: vec![0.5],
            },
            solver: SolverSettings {
                kind: SolverKind::Apgd,
                max_iterations: 50,
                tolerance: 1e-7,
                warm_start: true,
                ..SolverSettings::default()
            },
            models: vec![row],
            patch_cells: 0,
        }),
    };
    let state = BodyState::from_inits(&[plane, ball]);
    let mut sim = Simulation::new(shared_context(), &state, settings).unwrap();
    sim.advance(200, 1).unwrap();
    let s = sim.read_state().unwrap();
    ((s.pos[1][2] - r) as f64, s.vel[1][2] as f64)
}

/// m g = 9.81 N: a pull-off of 12 N holds the sphere at the plane, one of 8 N lets it fall.
/// The pull acts on every contact collision finds, up to the envelope e = 5 mm apart (as
/// Chrono's NSC cohesion), so the sphere leaves at a = g − F_c/m until the gap reaches e,
/// t₁ = √(2e/a), and falls freely after: v(0.2 s) = a t₁ + g (0.2 s − t₁).
#[test]
fn a_sphere_hangs_under_a_plane_when_the_pull_off_exceeds_its_weight() {
    let (moved, speed) = sphere_under_plane(12.0, 0.0, 0.05);
    assert!(
        moved.abs() < 1e-4 && speed.abs() < 1e-3,
        "held: moved {moved} m at {speed} m/s"
    );
    let (moved, speed) = sphere_under_plane(8.0, 0.0, 0.05);
    let (g, e) = (9.81f64, 0.005f64);
    let a = g - 8.0;
    let t1 = (2.0 * e / a).sqrt();
    let expected = a * t1 + g * (0.2 - t1);
    assert!(moved > 0.05, "falls: moved {moved} m");
    assert!(
        (speed - expected).abs() < 0.02 * expected,
        "falls at {speed} m/s, expected {expected}"
    );
    let (moved, speed) = sphere_under_plane(0.0, 0.0, 0.05);
    assert!(
        moved > 0.15 && (speed - g * 0.2).abs() < 0.02 * g * 0.2,
        "free: {moved} m, {speed} m/s"
    );
}

/// The JKR pull-off 3/2 π W R of a sphere on a plane (W = 50 J/m²): 11.8 N > m g holds a
/// sphere of R = 5 cm; 5.9 N < m g lets one of R = 2.5 cm (same mass) leave at g − F_c/m over
/// its 2.5 mm envelope, then fall freely.
#[test]
fn the_jkr_pull_off_grows_with_the_radius() {
    let (moved, speed) = sphere_under_plane(0.0, 50.0, 0.05);
    assert!(
        moved.abs() < 1e-4 && speed.abs() < 1e-3,
        "held: moved {moved} m at {speed} m/s"
    );
    let (moved, speed) = sphere_under_plane(0.0, 50.0, 0.025);
    let (g, e) = (9.81f64, 0.0025f64);
    let a = g - 1.5 * std::f64::consts::PI * 50.0 * 0.025;
    let t1 = (2.0 * e / a).sqrt();
    let expected = a * t1 + g * (0.2 - t1);
    assert!(moved > 0.05, "falls: moved {moved} m");
    assert!(
        (speed - expected).abs() < 0.02 * expected,
        "falls at {speed} m/s, expected {expected}"
    );
}

fn parse(material: &str, solver: &str) -> Result<bristlecone::scene::Scene, String> {
    let text = format!(
        "[simulation]\ndt = 1e-3\nsteps = 10\n{solver}\n[[material]]\nname = \"m\"\n\
         density = 2500.0\nfriction = 0.5\n{material}\n[[body]]\nradius = 0.01\n\
         position = [0.0, 0.0, 0.1]\n"
    );
    bristlecone::scene::parse_str(&text, std::path::Path::new("t.toml")).map_err(|e| e.to_string())
}

/// `cohesion` reaches the material and its table row; a negative one, one on a model without
/// the shifted cone and one with the Lemke solver are refused at the key.
#[test]
fn cohesion_is_validated_at_its_key() {
    let s = parse("cohesion = 0.5", "").unwrap();
    assert_eq!(s.materials[0].cohesion, 0.5);
    let row = with_cohesion(
        material_row(&s.materials[0].model),
        s.materials[0].cohesion,
        0.0,
    );
    assert_eq!(row[3], 0.5);
    let e = parse("cohesion = -1.0", "").unwrap_err();
    assert!(
        e.starts_with("t.toml:9:") && e.contains("material[0].cohesion"),
        "{e}"
    );
    let tanh = "model = { kind = \"tanh\", slip_velocity = 1e-3 }\ncohesion = 1.0";
    let e = parse(tanh, "").unwrap_err();
    assert!(
        e.contains("t.toml:10:") && e.contains("material[0].cohesion"),
        "{e}"
    );
    assert!(e.contains("coulomb and compliant"), "{e}");
    let s = parse("adhesion_energy = 0.05", "").unwrap();
    assert_eq!(s.materials[0].adhesion_energy, 0.05);
    let e = parse("adhesion_energy = -1.0", "").unwrap_err();
    assert!(e.contains("material[0].adhesion_energy"), "{e}");
    let e = parse("cohesion = 1.0", "[solver]\nkind = \"lemke\"").unwrap_err();
    assert!(
        e.contains("material[0].cohesion") && e.contains("lemke"),
        "{e}"
    );
}
