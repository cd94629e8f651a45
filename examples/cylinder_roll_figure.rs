//! Draws `assets/images/cylinder_roll.png` for the book's Shapes page (cylinder bodies): the
//! cylinder_roll scene (a steel cylinder rolling into a bed of glass beads in an open bin)
//! at four times, an oblique view. The cylinder is drawn as its surface polygons (16 side
//! quads, two end discs), the beads as discs, in painter's order.
//!
//! `cargo run --release --example cylinder_roll_figure` (one run of the scene, 0.45 s)

use bristlecone::bodies::BodyState;
use bristlecone::gpu::shared_context;
use bristlecone::scene::{self, BodyShape};
use bristlecone::setup;
use bristlecone::step::Simulation;
use glam::{DQuat, DVec3};
use plotters::prelude::*;
use std::path::Path;

const STEPS: [u32; 4] = [0, 150, 300, 450];
const PANEL: (u32, u32) = (480, 360);

/// The view: camera looking along −`dir`, screen axes (right, up).
fn view() -> (DVec3, DVec3, DVec3) {
    let dir = DVec3::new(0.35, -1.0, 0.8).normalize();
    let right = DVec3::Z.cross(dir).normalize();
    (dir, right, dir.cross(right))
}

fn project(p: DVec3) -> (f64, f64) {
    let (_, right, up) = view();
    (p.dot(right), p.dot(up))
}

/// A filled polygon: screen points, depth along the view, colour.
struct Shape2 {
    pts: Vec<(f64, f64)>,
    depth: f64,
    colour: RGBColor,
}

fn lit(n: DVec3) -> RGBColor {
    let s = 0.45 + 0.55 * n.dot(DVec3::new(0.3, -0.5, 0.8).normalize()).max(0.0);
    RGBColor((90.0 * s) as u8, (130.0 * s) as u8, (200.0 * s) as u8)
}

/// The cylinder's faces that look at the camera: side quads and end discs.
fn cylinder_faces(c: DVec3, q: DQuat, r: f64, hl: f64, out: &mut Vec<Shape2>) {
    let (dir, ..) = view();
    let ring = |z: f64, k: usize| {
        let phi = std::f64::consts::TAU * k as f64 / 16.0;
        c + q * DVec3::new(r * phi.cos(), r * phi.sin(), z)
    };
    for k in 0..16 {
        let quad = [ring(-hl, k), ring(-hl, k + 1), ring(hl, k + 1), ring(hl, k)];
        let mid = quad.iter().copied().sum::<DVec3>() / 4.0;
        let n = (mid - c - q * DVec3::Z * (q * DVec3::Z).dot(mid - c)).normalize();
        if n.dot(dir) > 0.0 {
            out.push(Shape2 {
                pts: quad.iter().map(|&p| project(p)).collect(),
                depth: mid.dot(dir),
                colour: lit(n),
            });
        }
    }
    for (z, s) in [(-hl, -1.0), (hl, 1.0)] {
        let n = q * DVec3::Z * s;
        if n.dot(dir) > 0.0 {
            out.push(Shape2 {
                pts: (0..16).map(|k| project(ring(z, k))).collect(),
                depth: (c + n * hl).dot(dir),
                colour: lit(n),
            });
        }
    }
}

fn draw_panel(
    area: &DrawingArea<BitMapBackend, plotters::coord::Shift>,
    scene: &scene::Scene,
    s: &BodyState,
    first: usize,
    t: f64,
) -> Result<(), Box<dyn std::error::Error>> {
    let (dir, ..) = view();
    let mut shapes = Vec::new();
    for (k, b) in scene.bodies.iter().enumerate() {
        let i = first + k;
        let c = DVec3::new(s.pos[i][0] as f64, s.pos[i][1] as f64, s.pos[i][2] as f64);
        let r = s.rot[i];
        let q = DQuat::from_xyzw(r[0] as f64, r[1] as f64, r[2] as f64, r[3] as f64);
        match b.shape {
            BodyShape::Cylinder {
                radius,
                half_length,
            } => cylinder_faces(c, q, radius, half_length, &mut shapes),
            _ => {
                let (p, rad) = (project(c), s.pos[i][3] as f64);
                let pts = (0..24)
                    .map(|j| {
                        let a = j as f64 / 24.0 * std::f64::consts::TAU;
                        (p.0 + rad * a.cos(), p.1 + rad * a.sin())
                    })
                    .collect();
                let depth = c.dot(dir);
                let colour = RGBColor(175, 175, 165);
                shapes.push(Shape2 { pts, depth, colour });
            }
        }
    }
    shapes.sort_by(|a, b| a.depth.total_cmp(&b.depth));
    let (x0, x1, y0, y1) = (-0.36, 0.36, -0.2, 0.34);
    let (w, h) = area.dim_in_pixel();
    let to_px = |(x, y): (f64, f64)| {
        (
            ((x - x0) / (x1 - x0) * w as f64) as i32,
            ((y1 - y) / (y1 - y0) * h as f64) as i32,
        )
    };
    area.fill(&WHITE)?;
    // The bin's floor outline (half extents 0.3 × 0.12).
    let corners = [
        (-1.0, -1.0),
        (1.0, -1.0),
        (1.0, 1.0),
        (-1.0, 1.0),
        (-1.0, -1.0),
    ]
    .map(|(u, v)| to_px(project(DVec3::new(0.3 * u, 0.12 * v, 0.0))));
    area.draw(&PathElement::new(corners.to_vec(), RGBColor(150, 150, 150)))?;
    for f in &shapes {
        let px: Vec<(i32, i32)> = f.pts.iter().map(|&p| to_px(p)).collect();
        area.draw(&Polygon::new(px.clone(), f.colour.filled()))?;
        let mut closed = px;
        closed.push(closed[0]);
        area.draw(&PathElement::new(closed, RGBColor(40, 40, 50)))?;
    }
    let font = ("sans-serif", 22).into_font().color(&BLACK);
    area.draw_text(&format!("t = {t:.2} s"), &font, (10, 8))?;
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = root_dir.join("assets/scenes/cylinder_roll.toml");
    bristlecone::plot::ensure_font()?;
    let scene = scene::load(&path)?;
    let first = setup::boundary_count(&scene);
    let state = setup::build_bodies(&scene);
    let mut sim = Simulation::new(shared_context(), &state, setup::step_settings(&scene))?;
    let out = root_dir.join("assets/images/cylinder_roll.png");
    let root = BitMapBackend::new(&out, (PANEL.0 * 2, PANEL.1 * 2)).into_drawing_area();
    let panels = root.split_evenly((2, 2));
    let mut done = 0;
    for (area, &steps) in panels.iter().zip(STEPS.iter()) {
        sim.advance(steps - done, 0)?;
        done = steps;
        let s = sim.read_state()?;
        draw_panel(area, &scene, &s, first, steps as f64 * scene.sim.dt)?;
    }
    root.present()?;
    println!("wrote {}", out.display());
    Ok(())
}
