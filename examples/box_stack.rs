//! The stack test at full length: 10 cubes (10 cm, ρ = 1000, μ = 0.5, 1e-4 m apart, offset
//! by ±1 mm and turned by 0.01 rad per box)
//! on a plane for 5 s (5000 steps of 1 ms, APGD, 100 iterations, tolerance 1e-7, as
//! `tests/shapes.rs::stack_of_ten_boxes_stands`, which runs 0.2 s in CI). Prints the top
//! box's sideways drift and sink every second; fails (exit 1) if the drift reaches 1e-3 of
//! the box size. Run: `cargo run --release --example box_stack` (the GPU work dominates:
//! the numbers in the book (Shapes) were taken with `cargo run --example box_stack`).

use bristlecone::gpu::shared_context;
use bristlecone::scene::parse_str;
use bristlecone::setup;
use bristlecone::step::Simulation;
use glam::DVec3;
use std::path::Path;

const HEAD: &str = r#"
[simulation]
dt = 1e-3
duration = 5.0
[solver]
max_iterations = 100
tolerance = 1e-7
[[material]]
name = "m"
density = 1000.0
friction = 0.5
[[boundary]]
kind = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
material = "m"
"#;

fn main() {
    let n = 10;
    let mut text = HEAD.to_string();
    for k in 0..n {
        // As the test: offsets of ±1 mm and yaws of 0.01·k rad.
        let (x, y) = (((k % 3) as f64 - 1.0) * 1e-3, ((k % 2) as f64 - 0.5) * 2e-3);
        let z = 0.05 + 0.1 * k as f64 + 1e-4 * k as f64;
        let (s, c) = (0.005 * k as f64).sin_cos();
        text += &format!(
            "[[body]]\nshape = \"box\"\nhalf_extents = [0.05, 0.05, 0.05]\nposition = [{x}, {y}, {z}]\norientation = [0.0, 0.0, {s}, {c}]\nmaterial = \"m\"\n"
        );
    }
    let scene = parse_str(&text, Path::new("box_stack.toml")).expect("scene");
    let state = setup::build_bodies(&scene);
    let mut sim =
        Simulation::new(shared_context(), &state, setup::step_settings(&scene)).expect("sim");
    let top = |s: &bristlecone::bodies::BodyState| {
        let p = s.pos[n];
        DVec3::new(p[0] as f64, p[1] as f64, p[2] as f64)
    };
    let p0 = top(&sim.read_state().expect("state"));
    let mut worst = 0.0f64;
    let t0 = std::time::Instant::now();
    for second in 1..=5 {
        sim.advance(1000, 0).expect("steps");
        let d = top(&sim.read_state().expect("state")) - p0;
        worst = worst.max(d.truncate().length());
        println!(
            "t = {second} s: top drift {:.2e} m, sink {:.2e} m ({:.0} s wall)",
            d.truncate().length(),
            -d.z,
            t0.elapsed().as_secs_f64()
        );
    }
    println!("largest sideways drift of the top over 5 s: {worst:.2e} m (limit 1e-4 m)");
    if worst >= 1e-4 {
        std::process::exit(1);
    }
}
