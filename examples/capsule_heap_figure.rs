//! Draws `assets/images/capsule_heap.png` for the book's Shapes page (capsule bodies): the capsule_heap
//! scene (capsules, boxes and spheres dropped at random orientations into an open bin) at
//! four times, an oblique view from the run's final checkpoint after 0, 150, 300 and 1000
//! steps (four runs from the start). Capsules are drawn as their outlines (the projected
//! axis segment widened by the radius), boxes as their visible faces, spheres as discs, in
//! painter's order.
//!
//! `cargo run --release --example capsule_heap_figure` (about a minute on lavapipe)

use bristlecone::bodies::BodyState;
use bristlecone::gpu::shared_context;
use bristlecone::io::read_checkpoint;
use bristlecone::run::{run_scene_scaled, RunOptions, Silent};
use bristlecone::scene::{self, BodyShape};
use glam::{DQuat, DVec3};
use plotters::prelude::*;
use std::path::Path;
use std::sync::atomic::AtomicBool;

const STEPS: [u64; 4] = [0, 150, 300, 1000];
const PANEL: (u32, u32) = (420, 420);

/// The view: camera looking along −`dir`, screen axes (right, up).
fn view() -> (DVec3, DVec3, DVec3) {
    let dir = DVec3::new(0.6, -1.0, 0.75).normalize();
    let right = DVec3::Z.cross(dir).normalize();
    let up = dir.cross(right);
    (dir, right, up)
}

fn state_after(path: &Path, steps: u64) -> BodyState {
    let dir = std::env::temp_dir().join(format!(
        "capsule_heap_figure_{}_{steps}",
        std::process::id()
    ));
    let opts = RunOptions {
        out_dir: Some(dir.clone()),
        steps: Some(steps),
        resume: None,
        from: None,
        overwrite: true,
    };
    let stop = AtomicBool::new(false);
    let report = run_scene_scaled(shared_context(), path, &opts, None, &stop, &mut Silent)
        .expect("capsule_heap run");
    let ck = read_checkpoint(&report.checkpoint).expect("checkpoint");
    let state = BodyState::from_bytes(ck.section("bodies").expect("bodies")).expect("state");
    let _ = std::fs::remove_dir_all(&dir);
    state
}

/// A filled outline: screen polygon, depth along the view, colour.
struct Shape2 {
    pts: Vec<(f64, f64)>,
    depth: f64,
    colour: RGBColor,
}

fn shaded(base: (f64, f64, f64), s: f64) -> RGBColor {
    RGBColor((base.0 * s) as u8, (base.1 * s) as u8, (base.2 * s) as u8)
}

fn light(n: DVec3) -> f64 {
    0.45 + 0.55 * n.dot(DVec3::new(0.3, -0.5, 0.8).normalize()).max(0.0)
}

fn project(p: DVec3) -> (f64, f64) {
    let (_, right, up) = view();
    (p.dot(right), p.dot(up))
}

/// A capsule's outline: half circles around the projected ends joined by tangents.
fn capsule_outline(c: DVec3, a: DVec3, hl: f64, r: f64, out: &mut Vec<Shape2>) {
    let (dir, ..) = view();
    let (p0, p1) = (project(c - a * hl), project(c + a * hl));
    let (dx, dy) = (p1.0 - p0.0, p1.1 - p0.1);
    let l = (dx * dx + dy * dy).sqrt();
    let th = if l > 1e-12 { dy.atan2(dx) } else { 0.0 };
    let half = std::f64::consts::FRAC_PI_2;
    let mut pts = Vec::new();
    for (e, base) in [(p1, th - half), (p0, th + half)] {
        for k in 0..=16 {
            let ang = base + std::f64::consts::PI * k as f64 / 16.0;
            pts.push((e.0 + r * ang.cos(), e.1 + r * ang.sin()));
        }
    }
    // Brighter when the axis lies across the view (more of the side lit).
    let side = (1.0 - a.dot(dir).powi(2)).sqrt();
    out.push(Shape2 {
        pts,
        depth: c.dot(dir),
        colour: shaded((70.0, 140.0, 200.0), 0.6 + 0.4 * side),
    });
}

fn box_faces(c: DVec3, q: DQuat, h: DVec3, out: &mut Vec<Shape2>) {
    let (dir, ..) = view();
    for axis in 0..3 {
        for s in [-1.0, 1.0] {
            let mut n = DVec3::ZERO;
            n[axis] = s;
            let nw = q * n;
            if nw.dot(dir) <= 0.0 {
                continue;
            }
            let (i, j) = ((axis + 1) % 3, (axis + 2) % 3);
            let quad = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)].map(|(u, v)| {
                let mut p = DVec3::ZERO;
                p[axis] = s * h[axis];
                p[i] = u * h[i];
                p[j] = v * h[j];
                c + q * p
            });
            let centre = quad.iter().copied().sum::<DVec3>() / 4.0;
            out.push(Shape2 {
                pts: quad.iter().map(|&p| project(p)).collect(),
                depth: centre.dot(dir),
                colour: shaded((200.0, 120.0, 60.0), light(nw)),
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
            BodyShape::Box { half_extents: h } => box_faces(c, q, DVec3::from(h), &mut shapes),
            BodyShape::Capsule {
                radius,
                half_length,
            } => capsule_outline(c, q * DVec3::Z, half_length, radius, &mut shapes),
            // The capsule heap has no clumps (scenes may not mix them with capsules).
            BodyShape::Clump(_) | BodyShape::Cylinder { .. } | BodyShape::Convex(_) => {}
            BodyShape::Sphere { radius } => {
                let p = project(c);
                let pts = (0..32)
                    .map(|j| {
                        let a = j as f64 / 32.0 * std::f64::consts::TAU;
                        (p.0 + radius * a.cos(), p.1 + radius * a.sin())
                    })
                    .collect();
                shapes.push(Shape2 {
                    pts,
                    depth: c.dot(dir),
                    colour: RGBColor(150, 150, 160),
                });
            }
        }
    }
    shapes.sort_by(|a, b| a.depth.total_cmp(&b.depth));
    let (x0, x1, y0, y1) = (-0.5, 0.55, -0.3, 0.75);
    let (w, h) = area.dim_in_pixel();
    let to_px = |(x, y): (f64, f64)| {
        (
            ((x - x0) / (x1 - x0) * w as f64) as i32,
            ((y1 - y) / (y1 - y0) * h as f64) as i32,
        )
    };
    area.fill(&WHITE)?;
    // The bin: its floor and vertical edges (half extents 0.25, 0.8 high).
    let grey = RGBColor(170, 170, 170);
    let corners = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)]
        .map(|(u, v)| DVec3::new(0.25 * u, 0.25 * v, 0.0));
    for k in 0..4 {
        let (a, b) = (corners[k], corners[(k + 1) % 4]);
        let line = [a, b].map(|p| to_px(project(p)));
        area.draw(&PathElement::new(line.to_vec(), grey))?;
        let up = [a, a + DVec3::Z * 0.8].map(|p| to_px(project(p)));
        area.draw(&PathElement::new(up.to_vec(), grey))?;
    }
    for f in &shapes {
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
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes/capsule_heap.toml");
    bristlecone::plot::ensure_font()?;
    let scene = scene::load(&path)?;
    let first = bristlecone::setup::boundary_count(&scene);
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/images/capsule_heap.png");
    let root = BitMapBackend::new(&out, (PANEL.0 * 4, PANEL.1)).into_drawing_area();
    let panels = root.split_evenly((1, 4));
    for (area, &steps) in panels.iter().zip(STEPS.iter()) {
        let s = state_after(&path, steps);
        draw_panel(area, &scene, &s, first, steps as f64 * scene.sim.dt)?;
    }
    root.present()?;
    println!("wrote {}", out.display());
    Ok(())
}
