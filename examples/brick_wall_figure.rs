//! Draws `assets/images/brick_wall.png` for the book's Shapes page: the brick_wall scene
//! (box bodies in running bond, knocked by a steel ball) at four times, each an oblique view
//! of the boxes' faces (painter's order, shaded by the face normal) and the ball, from the
//! run's final checkpoint after 0, 100, 200 and 400 steps (four runs from the start).
//!
//! `cargo run --release --example brick_wall_figure` (about a minute on lavapipe)

use bristlecone::bodies::BodyState;
use bristlecone::gpu::shared_context;
use bristlecone::io::read_checkpoint;
use bristlecone::run::{run_scene_scaled, RunOptions, Silent};
use bristlecone::scene::{self, BodyShape};
use glam::{DQuat, DVec3};
use plotters::prelude::*;
use std::path::Path;
use std::sync::atomic::AtomicBool;

const STEPS: [u64; 4] = [0, 100, 200, 400];
const PANEL: (u32, u32) = (480, 360);

/// The view: camera looking along −`dir` (from the ball's side, above), screen axes (right, up).
fn view() -> (DVec3, DVec3, DVec3) {
    let dir = DVec3::new(0.55, -1.0, 0.6).normalize();
    let right = DVec3::Z.cross(dir).normalize();
    let up = dir.cross(right);
    (dir, right, up)
}

/// The world states of the scene's bodies after `steps` steps.
fn state_after(path: &Path, steps: u64) -> BodyState {
    let dir = tempfile_dir(steps);
    let opts = RunOptions {
        out_dir: Some(dir.clone()),
        steps: Some(steps),
        resume: None,
        from: None,
        overwrite: true,
    };
    let stop = AtomicBool::new(false);
    let report = run_scene_scaled(shared_context(), path, &opts, None, &stop, &mut Silent)
        .expect("brick_wall run");
    let ck = read_checkpoint(&report.checkpoint).expect("checkpoint");
    let state = BodyState::from_bytes(ck.section("bodies").expect("bodies")).expect("state");
    let _ = std::fs::remove_dir_all(&dir);
    state
}

fn tempfile_dir(steps: u64) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("brick_wall_figure_{}_{steps}", std::process::id()))
}

/// One face: its screen polygon, depth along the view and brightness.
struct Face {
    pts: Vec<(f64, f64)>,
    depth: f64,
    shade: f64,
    ball: bool,
}

fn box_faces(c: DVec3, q: DQuat, h: DVec3, out: &mut Vec<Face>) {
    let (dir, right, up) = view();
    let corner = |sx: f64, sy: f64, sz: f64| c + q * DVec3::new(sx * h.x, sy * h.y, sz * h.z);
    for axis in 0..3 {
        for s in [-1.0, 1.0] {
            let mut n = DVec3::ZERO;
            n[axis] = s;
            let nw = q * n;
            if nw.dot(dir) <= 0.0 {
                continue; // faces away from the camera
            }
            let (a, b) = ((axis + 1) % 3, (axis + 2) % 3);
            let quad = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)].map(|(u, v)| {
                let mut p = [0.0; 3];
                p[axis] = s;
                p[a] = u;
                p[b] = v;
                corner(p[0], p[1], p[2])
            });
            let centre = quad.iter().copied().sum::<DVec3>() / 4.0;
            out.push(Face {
                pts: quad.iter().map(|p| (p.dot(right), p.dot(up))).collect(),
                depth: centre.dot(dir),
                shade: 0.45 + 0.55 * nw.dot(DVec3::new(0.3, -0.5, 0.8).normalize()).max(0.0),
                ball: false,
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
    let (dir, right, up) = view();
    let mut faces = Vec::new();
    for (k, b) in scene.bodies.iter().enumerate() {
        let i = first + k;
        let c = DVec3::new(s.pos[i][0] as f64, s.pos[i][1] as f64, s.pos[i][2] as f64);
        let r = s.rot[i];
        let q = DQuat::from_xyzw(r[0] as f64, r[1] as f64, r[2] as f64, r[3] as f64);
        match b.shape {
            BodyShape::Clump(_) | BodyShape::Convex(_) => {}
            BodyShape::Box { half_extents: h } => box_faces(c, q, DVec3::from(h), &mut faces),
            BodyShape::Capsule { .. } | BodyShape::Cylinder { .. } => {} // none in this scene
            BodyShape::Sphere { radius } => {
                let n = 32;
                let pts = (0..n)
                    .map(|j| {
                        let a = j as f64 / n as f64 * std::f64::consts::TAU;
                        let p = c + radius * (a.cos() * right + a.sin() * up);
                        (p.dot(right), p.dot(up))
                    })
                    .collect();
                faces.push(Face {
                    pts,
                    depth: c.dot(dir) + radius,
                    shade: 0.8,
                    ball: true,
                });
            }
        }
    }
    faces.sort_by(|a, b| a.depth.total_cmp(&b.depth));
    let (x0, x1, y0, y1) = (-0.72, 0.68, -0.40, 0.65);
    let (w, h) = area.dim_in_pixel();
    let to_px = |(x, y): (f64, f64)| {
        (
            ((x - x0) / (x1 - x0) * w as f64) as i32,
            ((y1 - y) / (y1 - y0) * h as f64) as i32,
        )
    };
    area.fill(&WHITE)?;
    // The floor: a grid of lines on z = 0.
    for k in -6..=6 {
        let g = k as f64 * 0.1;
        for (a, b) in [
            (DVec3::new(g, -0.8, 0.0), DVec3::new(g, 0.6, 0.0)),
            (DVec3::new(-0.6, g, 0.0), DVec3::new(0.6, g, 0.0)),
        ] {
            let p = [a, b].map(|p| to_px((p.dot(right), p.dot(up))));
            area.draw(&PathElement::new(p.to_vec(), RGBColor(215, 215, 215)))?;
        }
    }
    for f in &faces {
        let px: Vec<(i32, i32)> = f.pts.iter().map(|&p| to_px(p)).collect();
        let base = if f.ball {
            (120.0, 130.0, 150.0)
        } else {
            (190.0, 85.0, 60.0)
        };
        let c = RGBColor(
            (base.0 * f.shade) as u8,
            (base.1 * f.shade) as u8,
            (base.2 * f.shade) as u8,
        );
        area.draw(&Polygon::new(px.clone(), c.filled()))?;
        let mut closed = px;
        closed.push(closed[0]);
        area.draw(&PathElement::new(closed, RGBColor(40, 25, 20)))?;
    }
    area.draw_text(
        &format!("t = {t:.2} s"),
        &("sans-serif", 22).into_font().color(&BLACK),
        (10, 8),
    )?;
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes/brick_wall.toml");
    bristlecone::plot::ensure_font()?;
    let scene = scene::load(&path)?;
    let first = bristlecone::setup::boundary_count(&scene);
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/images/brick_wall.png");
    let root = BitMapBackend::new(&out, (PANEL.0 * 2, PANEL.1 * 2)).into_drawing_area();
    let panels = root.split_evenly((2, 2));
    for (area, &steps) in panels.iter().zip(STEPS.iter()) {
        let s = state_after(&path, steps);
        draw_panel(area, &scene, &s, first, steps as f64 * scene.sim.dt)?;
    }
    root.present()?;
    println!("wrote {}", out.display());
    Ok(())
}
