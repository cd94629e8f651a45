//! Time to draw one frame of 10⁴ and 10⁵ spheres (a random pile in a box container on a
//! plane), 800×600 with 2× supersampling and shadows: GPU draw, read-back, reduction,
//! colour bar and caption; no file I/O. Reported per frame and as the 10⁵/10⁴ ratio.

use std::path::Path;

use bristlecone::gpu::shared_context;
use bristlecone::io::{write_particles, Collection, ParticleFrame};
use bristlecone::render::gpu::Renderer;
use bristlecone::render::{self, FrameSelect, RenderOptions};
use criterion::{criterion_group, criterion_main, Criterion};
use rand::{Rng, SeedableRng};
use std::time::Duration;

/// A run directory with one frame of `n` spheres (r = 1 cm, jittered lattice).
fn write_run(dir: &Path, n: usize) {
    std::fs::create_dir_all(dir.join("frames")).unwrap();
    let side = (n as f64 / 2.0).sqrt().ceil() as usize;
    let h = 0.011 * side as f64;
    std::fs::write(
        dir.join("scene.toml"),
        format!(
            "[simulation]\ndt = 1e-3\nsteps = 1\n[[material]]\nname = \"glass\"\ndensity = 2500.0\nfriction = 0.4\n\
             [[boundary]]\nkind = \"plane\"\nmaterial = \"glass\"\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\n\
             [[boundary]]\nkind = \"box_container\"\nmaterial = \"glass\"\nposition = [0.0, 0.0, {h}]\n\
             half_extents = [{h}, {h}, {h}]\nopen_top = true\n[[body]]\nradius = 0.01\nposition = [0.0, 0.0, 0.01]\n"
        ),
    )
    .unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let pos: Vec<[f32; 3]> = (0..n)
        .map(|i| {
            let (x, y, z) = (i % side, (i / side) % side, i / (side * side));
            let j = |r: &mut rand_chacha::ChaCha8Rng| r.random_range(-0.0005..0.0005f32);
            [
                -h as f32 + 0.01 + 0.022 * x as f32 + j(&mut rng),
                -h as f32 + 0.01 + 0.022 * y as f32 + j(&mut rng),
                0.01 + 0.022 * z as f32,
            ]
        })
        .collect();
    let vel: Vec<[f32; 3]> = (0..n)
        .map(|_| [0.0, 0.0, rng.random_range(0.0..1.0f32)])
        .collect();
    let rad = vec![0.01f32; n];
    let ang = vec![[0.0f32; 3]; n];
    let ids: Vec<u32> = (2..n as u32 + 2).collect();
    let name = "frames/particles_00000000.vtp";
    let frame = ParticleFrame {
        step: 0,
        time: 0.0,
        positions: &pos,
        radii: &rad,
        velocities: &vel,
        angular_velocities: &ang,
        ids: &ids,
        scalars: Vec::new(),
        vectors: Vec::new(),
    };
    write_particles(&dir.join(name), &frame).unwrap();
    let mut pvd = Collection::new(dir.join("particles.pvd"));
    pvd.add(0.0, name).unwrap();
}

fn bench(c: &mut Criterion) {
    let ctx = shared_context();
    eprintln!("adapter: {}", ctx.describe());
    let renderer = Renderer::new(ctx.clone()).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mut per_frame = Vec::new();
    for n in [10_000usize, 100_000] {
        let dir = tmp.path().join(format!("run{n}"));
        write_run(&dir, n);
        let opts = RenderOptions {
            frames: FrameSelect::Last,
            ..Default::default()
        };
        let pr = render::prepare(&dir, &opts).unwrap();
        let mut g = c.benchmark_group(format!("render_{n}"));
        g.sample_size(10)
            .measurement_time(Duration::from_secs(5))
            .warm_up_time(Duration::from_millis(500));
        let mut total = Duration::ZERO;
        let mut count = 0u32;
        g.bench_function("frame", |b| {
            b.iter_custom(|iters| {
                let t = std::time::Instant::now();
                for _ in 0..iters {
                    render::draw_frames(&renderer, &pr).unwrap();
                }
                let e = t.elapsed();
                total += e;
                count += iters as u32;
                e
            })
        });
        g.finish();
        per_frame.push((n, total.as_secs_f64() / count.max(1) as f64));
    }
    for (n, s) in &per_frame {
        eprintln!(
            "render {n} spheres, 800x600, supersample 2, shadows: {:.3} s per frame",
            s
        );
    }
    eprintln!("ratio 1e5 / 1e4: {:.2}", per_frame[1].1 / per_frame[0].1);
}

criterion_group!(benches, bench);
criterion_main!(benches);
