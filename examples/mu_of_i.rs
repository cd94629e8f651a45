//! The μ(I) rheology of frictional spheres in a Lees–Edwards shear cell
//! (`assets/scenes/shear_cell.toml`: μ_p = 0.5, d = 2 mm ± 10 %, no gravity, constant volume).
//! At constant volume the solid fraction φ sets the inertial number I = γ̇ d / √(P/ρ) (the
//! pressure grows as γ̇², so I does not depend on the rate), so the cell is run at three φ and
//! the effective friction μ = τ/P is printed against the law of GDR MiDi (2004) and Jop,
//! Forterre & Pouliquen (2006) for glass beads, μ(I) = μ_s + (μ₂ − μ_s)/(I₀/I + 1) with
//! μ_s = 0.38, μ₂ = 0.64, I₀ = 0.28.
//!
//! The stress is the cell's (`measure::region_stress`: the contact part plus the kinetic part
//! about the shear profile), averaged over samples in the second half of the run; τ = σ_xz
//! and P = σ_zz, the stresses on the shear plane, as on an inclined plane. The grains start
//! on the profile.
//!
//! Writes `assets/images/mu_of_i.png` (the three points over the law) and prints the table.
//! `cargo run --release --example mu_of_i [-- STRAIN]` (STRAIN: total shear strain per
//! point, default 3; minutes per point on lavapipe).

use bristlecone::gpu::shared_context;
use bristlecone::measure::{region_stress, Region};
use bristlecone::plot::{plot_points_on_lines, LinePanel};
use bristlecone::scene::parse_str;
use bristlecone::setup;
use bristlecone::step::Simulation;
use glam::DMat3;
use std::path::Path;
use std::time::Instant;

const SCENE: &str = include_str!("../assets/scenes/shear_cell.toml");
const MU_S: f64 = 0.38;
const MU_2: f64 = 0.64;
const I_0: f64 = 0.28;

fn mu_law(i: f64) -> f64 {
    MU_S + (MU_2 - MU_S) / (I_0 / i + 1.0)
}

struct Point {
    phi: f64,
    inertial: f64,
    mu: f64,
    pressure: f64,
    grains: usize,
    seconds: f64,
}

/// Shears the cell filled to solid fraction `phi` to `strain`; the mean stress over the
/// samples of the second half.
fn run(phi: f64, strain: f64) -> Point {
    let text = SCENE.replace(
        "volume_fraction = 0.55",
        &format!("volume_fraction = {phi}"),
    );
    let scene = parse_str(&text, Path::new("shear_cell.toml")).expect("scene");
    let cell = scene.periodic.expect("the scene is periodic");
    let shear = cell.shear.expect("the scene is sheared");
    let (g, f) = (shear.gradient, shear.flow);
    let nb = setup::boundary_count(&scene);
    let mut state = setup::build_bodies(&scene);
    let profile = |p: [f32; 4]| shear.rate * (p[g] as f64 - cell.origin[g]);
    for b in nb..state.len() {
        state.vel[b][f] = profile(state.pos[b]) as f32;
    }
    let settings = setup::step_settings(&scene);
    let dt = settings.dt;
    let mut sim = Simulation::new(shared_context(), &state, settings).expect("simulation");
    sim.set_periodic(&cell).expect("periodic cell");
    let region = Region {
        min: cell.origin,
        max: [0, 1, 2].map(|k| cell.origin[k] + cell.length[k]),
    };
    let every = 50u32;
    let samples = (strain / (shear.rate * dt) / every as f64).round() as u32;
    let t0 = Instant::now();
    let (mut sum, mut n) = (DMat3::ZERO, 0);
    for k in 0..samples {
        sim.advance(every, 0).expect("steps");
        if k < samples / 2 {
            continue;
        }
        let st = sim.read_state().expect("state");
        let (contacts, impulses) = sim.read_contacts().expect("contacts");
        let s = region_stress(&st, nb, &contacts, &impulses, dt, &region, Some(&shear));
        sum += s.total();
        n += 1;
    }
    let sigma = sum * (1.0 / n as f64);
    let (tau, pressure) = (sigma.col(f)[g], sigma.col(g)[g]);
    let rho = scene.materials[0].density;
    let d = 2.0
        * (nb..state.len())
            .map(|b| state.pos[b][3] as f64)
            .sum::<f64>()
        / (state.len() - nb) as f64;
    Point {
        phi,
        inertial: shear.rate * d / (pressure / rho).sqrt(),
        mu: tau.abs() / pressure,
        pressure,
        grains: state.len() - nb,
        seconds: t0.elapsed().as_secs_f64(),
    }
}

fn main() {
    let strain: f64 = std::env::args()
        .nth(1)
        .map_or(3.0, |s| s.parse().expect("STRAIN: a number"));
    println!("Lees–Edwards shear cell, μ_p = 0.5, strain {strain} per point");
    println!("   φ  grains      P (Pa)       I      μ   μ(I) law   μ − law   wall (s)");
    let mut measured = Vec::new();
    for phi in [0.50, 0.53, 0.55] {
        let p = run(phi, strain);
        let law = mu_law(p.inertial);
        println!(
            "{:.2} {:>7} {:>11.2} {:>7.3} {:>6.3} {:>10.3} {:>9.3} {:>10.1}",
            p.phi,
            p.grains,
            p.pressure,
            p.inertial,
            p.mu,
            law,
            p.mu - law,
            p.seconds
        );
        measured.push((p.inertial, p.mu));
    }
    plot(&measured);
}

/// The measured (I, μ) over the law and its ±0.05 band (the band the book states for the
/// scatter of published DEM data about the law).
fn plot(measured: &[(f64, f64)]) {
    let right = measured.iter().fold(0.7f64, |r, p| r.max(1.1 * p.0));
    let curve = |offset: f64| -> Vec<(f64, f64)> {
        (1..=100)
            .map(|k| k as f64 * 0.01 * right)
            .map(|i| (i, mu_law(i) + offset))
            .collect()
    };
    let lines = LinePanel {
        title: "Lees–Edwards shear cell, spheres with contact friction 0.5".into(),
        x_label: "inertial number I = γ̇ d / √(P/ρ) [1]".into(),
        y_label: "effective friction μ = τ/P [1]".into(),
        series: vec![
            ("μ(I) law, glass beads (Jop et al. 2006)".into(), curve(0.0)),
            ("law + 0.05".into(), curve(0.05)),
            ("law − 0.05".into(), curve(-0.05)),
        ],
    };
    let points = vec![(
        "this engine, three solid fractions".into(),
        measured.to_vec(),
    )];
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/images/mu_of_i.png");
    match plot_points_on_lines(&path, lines, points) {
        Ok(true) => println!("wrote {}", path.display()),
        Ok(false) => eprintln!("nothing to plot"),
        Err(e) => eprintln!("{}: {e}", path.display()),
    }
}
