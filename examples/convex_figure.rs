//! Draws `assets/images/convex_drop.png` for the book's Shapes page (convex hull bodies): the
//! convex_drop scene (a 12-point hull dropped tumbling into a bin, spheres poured onto it)
//! at four times, an oblique view from the run's final checkpoint after 0, 200, 400 and
//! 800 steps (four runs from the start). The hull is drawn by its visible faces (flat
//! shaded), spheres as discs, in painter's order.
//!
//! `cargo run --example convex_figure` (a few minutes on lavapipe)

use bristlecone::bodies::BodyState;
use bristlecone::gpu::shared_context;
use bristlecone::io::read_checkpoint;
use bristlecone::run::{run_scene_scaled, RunOptions, Silent};
use bristlecone::scene::{self, BodyShape};
use glam::{DQuat, DVec3};
use plotters::prelude::*;
use std::path::Path;
use std::sync::atomic::AtomicBool;

const STEPS: [u64; 4] = [0, 200, 400, 800];
const PANEL: (u32, u32) = (360, 420);

/// The view: camera looking along −`dir`, screen axes (right, up).
fn view() -> (DVec3, DVec3, DVec3) {
    let dir = DVec3::new(0.5, -1.0, 0.6).normalize();
    let right = DVec3::Z.cross(dir).normalize();
    (dir, right, dir.cross(right))
}

fn project(p: DVec3) -> (f64, f64) {
    let (_, right, up) = view();
    (p.dot(right), p.dot(up))
}

fn state_after(path: &Path, steps: u64) -> BodyState {
    let dir = std::env::temp_dir().join(format!("convex_figure_{}_{steps}", std::process::id()));
    let opts = RunOptions {
        out_dir: Some(dir.clone()),
        steps: Some(steps),
        resume: None,
        from: None,
        overwrite: true,
    };
    let stop = AtomicBool::new(false);
    let report = run_scene_scaled(shared_context(), path, &opts, None, &stop, &mut Silent)
        .expect("convex_drop run");
    let ck = read_checkpoint(&report.checkpoint).expect("checkpoint");
    let state = BodyState::from_bytes(ck.section("bodies").expect("bodies")).expect("state");
    let _ = std::fs::remove_dir_all(&dir);
    state
}

/// A filled polygon on screen with its depth along the view.
struct Poly {
    pts: Vec<(f64, f64)>,
    depth: f64,
    colour: RGBColor,
}

fn draw_panel(
    area: &DrawingArea<BitMapBackend, plotters::coord::Shift>,
    scene: &scene::Scene,
    s: &BodyState,
    first: usize,
    t: f64,
) -> Result<(), Box<dyn std::error::Error>> {
    let (dir, ..) = view();
    let mut polys = Vec::new();
    for (k, b) in scene.bodies.iter().enumerate() {
        let i = first + k;
        let c = DVec3::new(s.pos[i][0] as f64, s.pos[i][1] as f64, s.pos[i][2] as f64);
        let r = s.rot[i];
        let q = DQuat::from_xyzw(r[0] as f64, r[1] as f64, r[2] as f64, r[3] as f64);
        match &b.shape {
            BodyShape::Convex(h) => {
                for f in &h.faces {
                    let n = q * f.normal;
                    if n.dot(dir) <= 0.0 {
                        continue;
                    }
                    let pts: Vec<DVec3> = f
                        .verts
                        .iter()
                        .map(|&v| c + q * h.vertices[v as usize])
                        .collect();
                    let centre = pts.iter().copied().sum::<DVec3>() / pts.len() as f64;
                    let l = 0.45 + 0.55 * n.dot(DVec3::new(0.3, -0.5, 0.8).normalize()).max(0.0);
                    polys.push(Poly {
                        pts: pts.iter().map(|&p| project(p)).collect(),
                        depth: centre.dot(dir) + 0.05,
                        colour: RGBColor((210.0 * l) as u8, (120.0 * l) as u8, (60.0 * l) as u8),
                    });
                }
            }
            BodyShape::Sphere { radius } => {
                let p = project(c);
                let pts = (0..32)
                    .map(|j| {
                        let a = j as f64 / 32.0 * std::f64::consts::TAU;
                        (p.0 + radius * a.cos(), p.1 + radius * a.sin())
                    })
                    .collect();
                polys.push(Poly {
                    pts,
                    depth: c.dot(dir),
                    colour: RGBColor(120, 150, 190),
                });
            }
            _ => {} // none in this scene
        }
    }
    polys.sort_by(|a, b| a.depth.total_cmp(&b.depth));
    let (x0, x1, y0, y1) = (-0.3, 0.3, -0.2, 0.5);
    let (w, h) = area.dim_in_pixel();
    let to_px = |(x, y): (f64, f64)| {
        (
            ((x - x0) / (x1 - x0) * w as f64) as i32,
            ((y1 - y) / (y1 - y0) * h as f64) as i32,
        )
    };
    area.fill(&WHITE)?;
    // The bin: its floor outline and vertical edges (half extents 0.15, 0.6 high).
    let grey = RGBColor(170, 170, 170);
    let corners = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)]
        .map(|(u, v)| DVec3::new(0.15 * u, 0.15 * v, 0.0));
    for k in 0..4 {
        let (a, b) = (corners[k], corners[(k + 1) % 4]);
        area.draw(&PathElement::new(
            [a, b].map(|p| to_px(project(p))).to_vec(),
            grey,
        ))?;
        let up = [a, a + DVec3::Z * 0.6].map(|p| to_px(project(p)));
        area.draw(&PathElement::new(up.to_vec(), grey))?;
    }
    for f in &polys {
        let px: Vec<(i32, i32)> = f.pts.iter().map(|&p| to_px(p)).collect();
        area.draw(&Polygon::new(px.clone(), f.colour.filled()))?;
        let mut closed = px;
        closed.push(closed[0]);
        area.draw(&PathElement::new(closed, RGBColor(30, 30, 40)))?;
    }
    area.draw_text(
        &format!("t = {t:.2} s"),
        &("sans-serif", 22).into_font().color(&BLACK),
        (10, 8),
    )?;
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes/convex_drop.toml");
    bristlecone::plot::ensure_font()?;
    let scene = scene::load(&path)?;
    let first = bristlecone::setup::boundary_count(&scene);
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/images/convex_drop.png");
    let root = BitMapBackend::new(&out, (PANEL.0 * 4, PANEL.1)).into_drawing_area();
    for (area, &steps) in root.split_evenly((1, 4)).iter().zip(STEPS.iter()) {
        let s = state_after(&path, steps);
        draw_panel(area, &scene, &s, first, steps as f64 * scene.sim.dt)?;
    }
    root.present()?;
    println!("wrote {}", out.display());
    Ok(())
}
