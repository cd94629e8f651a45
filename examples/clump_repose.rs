//! Angle of repose of a clump heap against a sphere heap with the same friction (μ = 0.5,
//! no rolling resistance): `assets/scenes/clump_pile.toml` (a column of triangular
//! three-sphere clumps collapsing on a floor) and the same column with spheres of the
//! clumps' bounding radius (the scene's `spheres` line removed). The heap slope is
//! `measure::repose_angle` over the member spheres. Prints both angles and draws
//! `assets/images/clump_repose.png` (side views of the two heaps).
//!
//! `cargo run --example clump_repose [-- SECONDS]` (minutes on lavapipe).

use bristlecone::bodies::BodyState;
use bristlecone::gpu::shared_context;
use bristlecone::measure::{repose_angle, HeapAxis, Repose};
use bristlecone::scene::{parse_str, BodyShape, Scene};
use bristlecone::setup;
use bristlecone::step::Simulation;
use glam::{Quat, Vec3};
use plotters::prelude::*;
use std::path::Path;

/// A sphere in world: centre, radius, body.
type Sphere = ([f32; 3], f32, usize);

/// Every grain's spheres in world (a clump's members; a sphere itself): (centre, radius, body).
fn spheres(scene: &Scene, s: &BodyState, nb: usize) -> Vec<Sphere> {
    let mut out = Vec::new();
    for (k, b) in scene.bodies.iter().enumerate() {
        let i = nb + k;
        let (x, q) = (
            Vec3::new(s.pos[i][0], s.pos[i][1], s.pos[i][2]),
            Quat::from_array(s.rot[i]),
        );
        match &b.shape {
            BodyShape::Clump(c) => {
                for m in &c.members {
                    let p = x + q * Vec3::new(m[0] as f32, m[1] as f32, m[2] as f32);
                    out.push((p.to_array(), m[3] as f32, k));
                }
            }
            _ => out.push((x.to_array(), s.pos[i][3], k)),
        }
    }
    out
}

fn heap(text: &str, seconds: f64) -> (Repose, Vec<Sphere>, usize) {
    let scene = parse_str(text, Path::new("clump_pile.toml")).expect("scene");
    let nb = setup::boundary_count(&scene);
    let state = setup::build_bodies(&scene);
    let mut sim =
        Simulation::new(shared_context(), &state, setup::step_settings(&scene)).expect("sim");
    let steps = (seconds / scene.sim.dt).round() as u32;
    for _ in 0..steps / 100 {
        sim.advance(100, 0).expect("steps");
    }
    let s = sim.read_state().expect("state");
    let sph = spheres(&scene, &s, nb);
    // The heap as member spheres: a BodyState of the spheres alone.
    let mut m = BodyState::default();
    for (c, r, _) in &sph {
        m.push(&bristlecone::bodies::BodyInit::sphere(*c, *r, 1.0));
    }
    (
        repose_angle(&m, 0, HeapAxis::Radial, Some([0.0, 0.0]), None),
        sph,
        scene.bodies.len(),
    )
}

fn draw(path: &Path, panels: &[(&str, &[Sphere])]) {
    let root = BitMapBackend::new(path, (1000, 380)).into_drawing_area();
    root.fill(&WHITE).unwrap();
    let _ = bristlecone::plot::ensure_font();
    let areas = root.split_evenly((1, panels.len()));
    for (area, (title, sph)) in areas.iter().zip(panels) {
        let mut chart = ChartBuilder::on(area)
            .caption(*title, ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(45)
            .build_cartesian_2d(-0.08f32..0.08f32, 0.0f32..0.06f32)
            .unwrap();
        chart
            .configure_mesh()
            .x_desc("x (m)")
            .y_desc("z (m)")
            .draw()
            .unwrap();
        let px = area.dim_in_pixel().0 as f32 / 0.16 * 0.8;
        // Back to front (y ascending), a slice |y| < 1 cm so the profile shows.
        let mut v: Vec<_> = sph.iter().filter(|s| s.0[1].abs() < 0.01).collect();
        v.sort_by(|a, b| b.0[1].total_cmp(&a.0[1]));
        chart
            .draw_series(v.iter().map(|(c, r, k)| {
                let hue = (*k as f64 * 0.618) % 1.0;
                Circle::new(
                    (c[0], c[2]),
                    (r * px) as i32,
                    HSLColor(hue, 0.6, 0.55).filled(),
                )
            }))
            .unwrap();
    }
    root.present().unwrap();
}

fn main() {
    let seconds: f64 = std::env::args().nth(1).map_or(1.2, |a| a.parse().unwrap());
    let text = std::fs::read_to_string("assets/scenes/clump_pile.toml").expect("scene file");
    let sphere_text: String = text
        .lines()
        .filter(|l| !l.starts_with("spheres ="))
        .collect::<Vec<_>>()
        .join("\n");
    let (c, cs, nc) = heap(&text, seconds);
    println!(
        "clumps:  {nc} bodies, angle {:.1}° (slope {:.3}, {} bins)",
        c.angle_deg, c.slope, c.bins
    );
    let (s, ss, ns) = heap(&sphere_text, seconds);
    println!(
        "spheres: {ns} bodies, angle {:.1}° (slope {:.3}, {} bins)",
        s.angle_deg, s.slope, s.bins
    );
    draw(
        Path::new("assets/images/clump_repose.png"),
        &[
            (&format!("{nc} clumps: {:.1}°", c.angle_deg), &cs),
            (&format!("{ns} spheres: {:.1}°", s.angle_deg), &ss),
        ],
    );
}
