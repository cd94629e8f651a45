//! Planar LuGre patches (Arslan Waltersson & Karayiannidis): GPU stages against their f64 twins, the distributed
//! model against analytic limit surfaces, the drift experiment, reduced ≈ distributed.

use bristlecone::gpu::shared_context;
use bristlecone::patch::cpu::{self, Patch, ReducedPatch};
use bristlecone::patch::limit::{build_many, LimitSurface};
use bristlecone::patch::{
    DistributedCpu, DistributedGpu, Integrator, LugreParams, Outline, PatchShape, Pressure,
    ReducedCpu, ReducedGpu, Twist, Wrench,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn shape(p: Pressure, n: usize) -> PatchShape {
    PatchShape::new(&p, n, n, None, 1.0).unwrap()
}

fn patch(p: Pressure, n: usize, f_n: f64) -> Patch {
    Patch {
        shape: shape(p, n),
        f_n,
    }
}

/// Unit friction (μ = 1, no Stribeck, no viscous term): the limit surface.
fn unit() -> LugreParams {
    LugreParams {
        mu_c: 1.0,
        mu_s: 1.0,
        sigma2: 0.0,
        ..Default::default()
    }
}

fn cpu_limit(shapes: &[PatchShape], n_ls: usize) -> Vec<LimitSurface> {
    let patches: Vec<Patch> = shapes
        .iter()
        .map(|s| Patch {
            shape: s.clone(),
            f_n: 1.0,
        })
        .collect();
    build_many(shapes, n_ls, |jobs| {
        jobs.iter()
            .map(|(k, t)| cpu::steady(&unit(), &patches[*k], *t))
            .collect()
    })
}

/// The limit surface's radius: maximum spin torque about the CoP per unit μ f_N.
fn radius(s: &PatchShape) -> f64 {
    cpu_limit(std::slice::from_ref(s), 2)[0].r
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs()
}

#[test]
fn analytic_limit_surface_radii_converge() {
    let (rr, a, l) = (0.02, 0.03, 0.05);
    let square_r = a * (2f64.sqrt() + (1.0 + 2f64.sqrt()).ln()) / 6.0;
    let cases: [(&str, Pressure, f64); 3] = [
        (
            "disc",
            Pressure::Uniform(Outline::Circle { radius: rr }),
            2.0 * rr / 3.0,
        ),
        (
            "square",
            Pressure::Uniform(Outline::Rectangle { a, b: a }),
            square_r,
        ),
        (
            "line",
            Pressure::Uniform(Outline::Line { length: l }),
            l / 4.0,
        ),
    ];
    for (name, p, exact) in cases {
        let errs: Vec<f64> = [11, 21, 41]
            .iter()
            .map(|&n| rel(radius(&shape(p.clone(), n)), exact))
            .collect();
        println!("{name}: relative radius error at 11, 21, 41 cells: {errs:?}");
        assert!(errs[1] < 5e-3, "{name} at 21x21: {errs:?}");
        assert!(
            errs[2] < errs[0] && errs[2] < 5e-3,
            "{name} does not converge: {errs:?}"
        );
    }
    assert!((0.3826 - square_r / a).abs() < 1e-4);
}

#[test]
fn steady_translation_rotation_and_max_dissipation() {
    let rr = 0.02;
    let pa = patch(Pressure::Uniform(Outline::Circle { radius: rr }), 21, 3.0);
    let p = LugreParams {
        sigma2: 0.0,
        ..Default::default()
    };
    // Pure translation far above v_s: |f| = μ_c f_N, opposite to the motion.
    let w = cpu::steady(&p, &pa, Twist::new(0.3, -0.4, 0.0));
    assert!(
        rel(w.fx.hypot(w.fy), 3.0) < 1e-9 && w.fx < 0.0 && w.fy > 0.0,
        "{w:?}"
    );
    // Pure rotation: τ = (2/3) R μ f_N.
    let w = cpu::steady(&p, &pa, Twist::new(0.0, 0.0, 20.0));
    assert!(rel(-w.tau, 2.0 / 3.0 * rr * 3.0) < 5e-3, "{w:?}");
    // Combined: the wrench lies on the limit surface and the twist is its normal (maximum
    // dissipation): no other wrench of the surface dissipates more for this twist.
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let twists: Vec<Twist> = (0..200)
        .map(|_| {
            Twist::new(
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0) / rr,
            )
        })
        .collect();
    let ws: Vec<Wrench> = twists
        .iter()
        .map(|t| cpu::steady(&unit(), &pa, *t))
        .collect();
    let power = |w: &Wrench, t: &Twist| w.fx * t.vx + w.fy * t.vy + w.tau * t.omega;
    for (t, w) in twists.iter().zip(&ws) {
        let own = power(w, t);
        let scale = 3.0 * (t.vx.hypot(t.vy) + rr * t.omega.abs());
        let best = ws.iter().map(|o| power(o, t)).fold(f64::INFINITY, f64::min);
        assert!(own <= best + 2e-3 * scale, "twist {t:?}: {own} vs {best}");
    }
}

fn random_patches(rng: &mut ChaCha8Rng, n: usize) -> Vec<Patch> {
    (0..n)
        .map(|k| {
            let s = rng.random_range(0.01..0.04);
            let p = match k % 6 {
                0 => Pressure::Uniform(Outline::Circle { radius: s }),
                1 => Pressure::Uniform(Outline::Rectangle { a: s, b: 0.6 * s }),
                2 => Pressure::Gradient {
                    outline: Outline::Line { length: s },
                    g: [-1.5 / s, 0.0],
                },
                3 => Pressure::Uniform(Outline::Polygon {
                    vertices: vec![[-s, -s], [s, -0.5 * s], [0.2 * s, s]],
                }),
                4 => Pressure::XydasKao {
                    c: s,
                    gamma: 0.2,
                    k: 2.0,
                },
                _ => Pressure::Gradient {
                    outline: Outline::Circle { radius: s },
                    g: [10.0, -20.0],
                },
            };
            let n = [21, 9, 17][k % 3];
            Patch {
                shape: PatchShape::new(&p, n, n + k % 2, None, 2.0).unwrap(),
                f_n: rng.random_range(0.5..5.0),
            }
        })
        .collect()
}

fn close(a: &Wrench, b: &Wrench, f_scale: f64, t_scale: f64, tol: f64) -> bool {
    (a.fx - b.fx).abs() <= tol * f_scale
        && (a.fy - b.fy).abs() <= tol * f_scale
        && (a.tau - b.tau).abs() <= tol * t_scale
        && (a.tau_cop - b.tau_cop).abs() <= tol * t_scale
}

#[test]
fn distributed_gpu_matches_twin() {
    let ctx = shared_context();
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let patches = random_patches(&mut rng, 24);
    for (int, dt, ep) in [
        (Integrator::Explicit, 1e-5, true),
        (Integrator::Implicit, 1e-3, true),
        (Integrator::Implicit, 1e-3, false),
    ] {
        let params = LugreParams {
            elasto_plastic: ep,
            ..Default::default()
        };
        let mut cpu = DistributedCpu::new(params, patches.clone());
        let gpu = DistributedGpu::new(&ctx, params, &patches).unwrap();
        for step in 0..6 {
            let twists: Vec<Twist> = (0..patches.len())
                .map(|_| {
                    Twist::new(
                        rng.random_range(-2e-3..2e-3),
                        rng.random_range(-2e-3..2e-3),
                        rng.random_range(-0.1..0.1),
                    )
                })
                .collect();
            let affine: Vec<_> = (0..patches.len())
                .map(|k| cpu.affine(k, twists[k], dt))
                .collect();
            let want = cpu.step(&twists, dt, int);
            let (got, got_aff) = gpu.step_affine(&ctx, &twists, dt, int).unwrap();
            for k in 0..patches.len() {
                let fs = 2.0 * patches[k].f_n;
                let ts = fs * patches[k].shape.h * patches[k].shape.nx as f64;
                assert!(
                    close(&got[k], &want[k], fs, ts, 2e-4),
                    "{int:?} step {step} patch {k}: {:?} vs {:?}",
                    got[k],
                    want[k]
                );
                // The affine form reproduces the step's wrench, on the GPU as on the CPU.
                if int == Integrator::Implicit {
                    for (a, label) in [(&affine[k], "cpu"), (&got_aff[k], "gpu")] {
                        let e = a.eval(twists[k]);
                        let w = &want[k];
                        let ok = (e[0] - w.fx).abs() <= 2e-4 * fs
                            && (e[1] - w.fy).abs() <= 2e-4 * fs
                            && (e[2] - w.tau).abs() <= 2e-4 * ts;
                        assert!(ok, "{label} affine of patch {k}: {e:?} vs {w:?}");
                    }
                }
            }
        }
    }
}

#[test]
fn steady_and_limit_surface_gpu_match_twin() {
    let ctx = shared_context();
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    let patches = random_patches(&mut rng, 12);
    let params = LugreParams::default();
    let gpu = DistributedGpu::new(&ctx, params, &patches).unwrap();
    let jobs: Vec<(usize, Twist)> = (0..60)
        .map(|j| {
            let k = j % patches.len();
            let s = patches[k].shape.h * patches[k].shape.nx as f64;
            // Centres of rotation both inside and outside the patch.
            (
                k,
                Twist::new(
                    rng.random_range(-0.01..0.01),
                    rng.random_range(-0.01..0.01),
                    rng.random_range(-0.02..0.02) / s,
                ),
            )
        })
        .collect();
    let got = gpu.steady(&ctx, &jobs, false).unwrap();
    for ((k, t), g) in jobs.iter().zip(&got) {
        let want = cpu::steady(&params, &patches[*k], *t);
        let fs = 1.5 * patches[*k].f_n;
        let ts = fs * patches[*k].shape.h * patches[*k].shape.nx as f64;
        assert!(
            close(g, &want, fs, ts, 2e-4),
            "patch {k} twist {t:?}: {g:?} vs {want:?}"
        );
    }
    let shapes: Vec<PatchShape> = patches.iter().map(|p| p.shape.clone()).collect();
    let lg = gpu.limit_surfaces(&ctx, 8).unwrap();
    let lc = cpu_limit(&shapes, 8);
    for (k, (g, c)) in lg.iter().zip(&lc).enumerate() {
        assert!(
            rel(g.r, c.r) < 1e-4 && rel(g.visc, c.visc) < 1e-4,
            "patch {k}: r {} vs {}",
            g.r,
            c.r
        );
        for (a, b) in g.points.iter().zip(&c.points) {
            for d in 0..3 {
                assert!((a[d] - b[d]).abs() < 5e-4, "patch {k} table {a:?} vs {b:?}");
            }
        }
    }
}

#[test]
fn reduced_gpu_matches_twin() {
    let ctx = shared_context();
    let mut rng = ChaCha8Rng::seed_from_u64(13);
    let patches = random_patches(&mut rng, 12);
    let shapes: Vec<PatchShape> = patches.iter().map(|p| p.shape.clone()).collect();
    let ls = cpu_limit(&shapes, 10);
    let rps: Vec<ReducedPatch> = ls
        .into_iter()
        .zip(&patches)
        .enumerate()
        .map(|(k, (ls, p))| ReducedPatch {
            ls,
            f_n: p.f_n,
            ellipsoid: k % 4 == 3,
        })
        .collect();
    for (int, dt) in [(Integrator::Explicit, 1e-5), (Integrator::Implicit, 1e-3)] {
        let params = LugreParams::default();
        let mut cpu = ReducedCpu::new(params, rps.clone());
        let gpu = ReducedGpu::new(&ctx, params, &rps).unwrap();
        for step in 0..8 {
            let twists: Vec<Twist> = (0..rps.len())
                .map(|_| {
                    Twist::new(
                        rng.random_range(-2e-3..2e-3),
                        rng.random_range(-2e-3..2e-3),
                        rng.random_range(-0.1..0.1),
                    )
                })
                .collect();
            let want = if step == 7 {
                cpu.steady(&twists)
            } else {
                cpu.step(&twists, dt, int)
            };
            let got = if step == 7 {
                gpu.steady(&ctx, &twists).unwrap()
            } else {
                gpu.step(&ctx, &twists, dt, int).unwrap()
            };
            for k in 0..rps.len() {
                let fs = 2.0 * rps[k].f_n;
                let ts = fs * rps[k].ls.r;
                assert!(
                    close(&got[k], &want[k], fs, ts, 1e-3),
                    "{int:?} step {step} patch {k}: {:?} vs {:?}",
                    got[k],
                    want[k]
                );
            }
        }
    }
}

/// A 1 kg disc (R = 5 cm, f_N = 9.81 N) on its patch under a tangential load
/// `F_x = μ_c f_N (0.1 + a sin 2π f t)` that never reaches break-away; the body and the
/// bristles are stepped together implicitly through the patch's affine wrench.
/// Returns the disc's x at 0.2 s and at the end.
fn drift_run(ep: bool, seconds: f64, torque: bool) -> (f64, f64) {
    let (m, rr, f_n) = (1.0, 0.05, 9.81);
    let inertia = 0.5 * m * rr * rr;
    let params = LugreParams {
        elasto_plastic: ep,
        ..Default::default()
    };
    let pa = patch(Pressure::Uniform(Outline::Circle { radius: rr }), 15, f_n);
    let mut model = DistributedCpu::new(params, vec![pa]);
    let dt = 2e-4;
    let mut v = Twist::default();
    let (mut x, mut x0) = (0.0, 0.0);
    let steps = (seconds / dt).round() as usize;
    for s in 0..steps {
        let t = (s + 1) as f64 * dt;
        let load = [
            f_n * (0.1 + 0.35 * (2.0 * std::f64::consts::PI * 5.0 * t).sin()),
            0.0,
            if torque {
                0.2 * (2.0 / 3.0) * rr * f_n * (2.0 * std::f64::consts::PI * 3.0 * t).sin()
            } else {
                0.0
            },
        ];
        let a = model.affine(0, v, dt);
        let mass = [m / dt, m / dt, inertia / dt];
        let mut mat = nalgebra::Matrix3::from_fn(|r, c| a.k[r][c]);
        for d in 0..3 {
            mat[(d, d)] += mass[d];
        }
        let vv = [v.vx, v.vy, v.omega];
        let rhs = nalgebra::Vector3::from_fn(|r, _| mass[r] * vv[r] + load[r] - a.k0[r]);
        let sol = mat
            .lu()
            .solve(&rhs)
            .expect("mass + compliance block is positive definite");
        let new = Twist::new(sol[0], sol[1], sol[2]);
        let w = model.step_linearised(&[new], &[v], dt)[0];
        let e = a.eval(new);
        assert!(
            (e[0] - w.fx).abs() < 1e-9 * f_n && (e[2] - w.tau).abs() < 1e-9 * f_n,
            "affine form {e:?} vs step {w:?}"
        );
        v = new;
        x += dt * v.vx;
        if s + 1 == (0.2 / dt) as usize {
            x0 = x;
        }
    }
    (x0, x)
}

#[test]
fn elasto_plastic_stops_the_drift() {
    let (a0, a1) = drift_run(false, 1.2, true);
    let (b0, b1) = drift_run(true, 1.2, true);
    let (plain, ep) = (a1 - a0, b1 - b0);
    println!("drift over 1 s: plain LuGre {plain:.3e} m, elasto-plastic {ep:.3e} m (deflections {a0:.2e}, {b0:.2e})");
    // The load never reaches break-away: its peak elastic deflection is 0.45 μ_c/σ0 =
    // 4.5e-7 m. Plain LuGre creeps past it within a second; elasto-plastic stays put.
    assert!(plain > 4.5e-7, "plain LuGre should drift: {plain:e}");
    assert!(
        ep.abs() < 1e-3 * plain,
        "elasto-plastic drifts: {ep:e} vs {plain:e}"
    );
}

fn reduced_vs_distributed_cases() -> Vec<(&'static str, Patch)> {
    let l = 0.04;
    vec![
        (
            "circle",
            patch(
                Pressure::Uniform(Outline::Circle { radius: l / 2.0 }),
                21,
                2.0,
            ),
        ),
        (
            "square",
            patch(
                Pressure::Uniform(Outline::Rectangle { a: l, b: l }),
                21,
                2.0,
            ),
        ),
        (
            "line",
            patch(Pressure::Uniform(Outline::Line { length: l }), 21, 2.0),
        ),
        (
            "line gradient",
            patch(
                Pressure::Gradient {
                    outline: Outline::Line { length: l },
                    g: [-1.9 / l, 0.0],
                },
                21,
                2.0,
            ),
        ),
    ]
}

fn reduced_of(p: &Patch) -> ReducedPatch {
    let ls = cpu_limit(std::slice::from_ref(&p.shape), 20).remove(0);
    ReducedPatch {
        ls,
        f_n: p.f_n,
        ellipsoid: false,
    }
}

/// Largest wrench difference over a history, forces per f_N, torques per f_N r.
fn wrench_err(a: &[Wrench], b: &[Wrench], f_n: f64, r: f64) -> f64 {
    a.iter()
        .zip(b)
        .map(|(a, b)| {
            let f = (a.fx - b.fx).hypot(a.fy - b.fy) / f_n;
            f.max((a.tau_cop - b.tau_cop).abs() / (f_n * r))
        })
        .fold(0.0, f64::max)
}

#[test]
fn reduced_matches_distributed_at_steady_state() {
    let params = LugreParams::default();
    for (name, p) in reduced_vs_distributed_cases() {
        let rp = reduced_of(&p);
        let r = rp.ls.r;
        let red = ReducedCpu::new(params, vec![rp]);
        let mut twists = Vec::new();
        for it in 0..12 {
            for ip in 0..=8 {
                let (th, ph) = (
                    it as f64 * 0.52 + 0.1,
                    ip as f64 * std::f64::consts::FRAC_PI_2 / 8.0,
                );
                let speed = 0.05;
                twists.push(
                    Twist::new(
                        speed * th.cos() * ph.sin(),
                        speed * th.sin() * ph.sin(),
                        speed / r * ph.cos(),
                    )
                    .at([-p.shape.cop[0], -p.shape.cop[1]]),
                );
            }
        }
        let dist: Vec<Wrench> = twists
            .iter()
            .map(|t| cpu::steady(&params, &p, *t))
            .collect();
        let rw: Vec<Wrench> = twists.iter().map(|t| red.steady(&[*t])[0]).collect();
        let e = wrench_err(&dist, &rw, p.f_n, r);
        println!(
            "{name}: steady reduced vs distributed, max error {:.2} %",
            100.0 * e
        );
        assert!(e < 0.02, "{name}: {e}");
    }
}

#[test]
fn reduced_matches_distributed_dynamically() {
    let params = LugreParams::default();
    let dt = 1e-4;
    for (name, p) in reduced_vs_distributed_cases() {
        let rp = reduced_of(&p);
        let r = rp.ls.r;
        let mut red = ReducedCpu::new(params, vec![rp]);
        let mut dist = DistributedCpu::new(params, vec![p.clone()]);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let mut worst_crossing = 0.0f64;
        for s in 0..1500 {
            let t = s as f64 * dt;
            let w = 2.0 * std::f64::consts::PI;
            let tw = Twist::new(
                0.02 * (w * 5.0 * t).sin(),
                0.01 * (w * 3.0 * t).cos(),
                1.5 * (w * 4.0 * t).sin(),
            );
            let wd = dist.step(&[tw], dt, Integrator::Implicit)[0];
            let wr = red.step(&[tw], dt, Integrator::Implicit)[0];
            // On a line the centre of rotation crossing the one-cell-wide contact flips the
            // forces within a step or two; both models resolve that instant differently.
            let cor_y = if tw.omega != 0.0 {
                tw.vx / tw.omega
            } else {
                f64::INFINITY
            };
            let crossing = name.starts_with("line") && cor_y.abs() < 2.0 * p.shape.h;
            if crossing {
                let e = wrench_err(&[wd], &[wr], p.f_n, r);
                worst_crossing = worst_crossing.max(e);
            }
            if t >= 1e-3 && !crossing {
                a.push(wd);
                b.push(wr);
            }
        }
        let e = wrench_err(&a, &b, p.f_n, r);
        println!(
            "{name}: dynamic reduced vs distributed after 1 ms, max error {:.2} % ({} samples; {:.2} % while the CoR crosses the line)",
            100.0 * e,
            a.len(),
            100.0 * worst_crossing
        );
        assert!(e < 0.05, "{name}: {e}");
    }
}

#[test]
fn implicit_is_stable_at_a_millisecond() {
    // σ0 = 1e6: explicit Euler needs dt ≲ 2e-5 s; the implicit step settles at dt = 1e-3.
    let pa = patch(
        Pressure::Uniform(Outline::Rectangle { a: 0.03, b: 0.02 }),
        21,
        1.0,
    );
    let tw = Twist::new(0.01, -0.02, 0.5);
    for (int, stability) in [(Integrator::Implicit, false), (Integrator::Explicit, false)] {
        let params = LugreParams {
            stability,
            ..Default::default()
        };
        let mut m = DistributedCpu::new(params, vec![pa.clone()]);
        let want = cpu::steady(&params, &pa, tw);
        let mut last = Wrench::default();
        for _ in 0..200 {
            last = m.step(&[tw], 1e-3, int)[0];
        }
        let err = (last.fx - want.fx).hypot(last.fy - want.fy);
        match int {
            Integrator::Implicit => assert!(
                err < 1e-3 * pa.f_n,
                "implicit did not settle: {last:?} vs {want:?}"
            ),
            Integrator::Explicit => assert!(
                err.is_nan() || err >= 0.1 * pa.f_n,
                "explicit Euler at 1e-3 should fail, got {last:?}"
            ),
        }
    }
}

const GOOD: &str = r#"
[patch]
grid = [9, 9]
normal_force = 2.0
[patch.pressure]
shape = "rectangle"
a = 0.02
b = 0.01
[lugre]
sigma2 = 0.0
[run]
model = "reduced"
dt = 1e-4
duration = 0.01
n_ls = 6
device = "cpu"
[[twist]]
t = 0.0
v = [0.0, 0.0, 0.0]
[[twist]]
t = 0.005
v = [0.01, 0.0, 0.5]
"#;

#[test]
fn patch_files_run_and_bad_ones_name_line_and_field() {
    use bristlecone::patch::file::parse_str;
    let path = std::path::Path::new("p.toml");
    let pf = parse_str(GOOD, path).unwrap();
    let hist = pf.run(None).unwrap();
    assert_eq!(hist.len(), 100);
    let mid = pf.twist_at(0.0025);
    assert!((mid.vx - 0.005).abs() < 1e-12 && (mid.omega - 0.25).abs() < 1e-12);
    let dir = tempfile::tempdir().unwrap();
    let files =
        bristlecone::patch::file::write_outputs(dir.path(), &hist, pf.patch.shape.cop).unwrap();
    assert_eq!(files.len(), 2);
    let csv = std::fs::read_to_string(&files[0]).unwrap();
    assert_eq!(csv.lines().count(), 102);

    let cases = [
        ("a = 0.02", "a = -0.02", "p.toml:7:", "patch.pressure.a"),
        (
            "shape = \"rectangle\"",
            "shape = \"blob\"",
            "p.toml:6:",
            "patch.pressure.shape",
        ),
        (
            "sigma2 = 0.0",
            "sigma2 = -1.0",
            "p.toml:10:",
            "lugre.sigma2",
        ),
        ("sigma2 = 0.0", "sigma_2 = 0.0", "p.toml:10:", "sigma_2"),
        ("n_ls = 6", "n_ls = 1", "p.toml:15:", "run.n_ls"),
        (
            "model = \"reduced\"",
            "model = \"distributed\"",
            "p.toml:15:",
            "run.n_ls",
        ),
        (
            "b = 0.01",
            "b = 0.01\nradius = 0.1",
            "p.toml:9:",
            "patch.pressure.radius",
        ),
        ("t = 0.005", "t = 0.0", "p.toml:21:", "twist[1].t"),
        (
            "duration = 0.01",
            "duration = nan",
            "p.toml:14:",
            "run.duration",
        ),
    ];
    for (from, to, loc, field) in cases {
        let text = GOOD.replacen(from, to, 1);
        let e = parse_str(&text, path).expect_err(to).to_string();
        assert!(e.starts_with(loc) && e.contains(field), "{to}: {e}");
    }
}

#[test]
fn gpu_patches_are_bitwise_deterministic() {
    let ctx = shared_context();
    let mut rng = ChaCha8Rng::seed_from_u64(14);
    let patches = random_patches(&mut rng, 6);
    let twists: Vec<Twist> = (0..6)
        .map(|k| Twist::new(1e-3 * k as f64, -2e-3, 0.05))
        .collect();
    let run = || {
        let g = DistributedGpu::new(&ctx, LugreParams::default(), &patches).unwrap();
        let mut out = Vec::new();
        for _ in 0..3 {
            out.extend(g.step(&ctx, &twists, 1e-3, Integrator::Implicit).unwrap());
        }
        out.iter()
            .map(|w| [w.fx.to_bits(), w.fy.to_bits(), w.tau.to_bits()])
            .collect::<Vec<_>>()
    };
    assert_eq!(run(), run());
}

/// Batches over the binding limit are split into chunks (book: Contact patches): chunks of at
/// most 1000 cells give 10 patches of 81–441 cells several chunks, and every output —
/// wrenches, affine blocks, deflections, steady states — equals the one-chunk run bit for bit.
#[test]
fn chunked_distributed_batch_matches_one_chunk() {
    let ctx = shared_context();
    let mut rng = ChaCha8Rng::seed_from_u64(15);
    let patches = random_patches(&mut rng, 10);
    let params = LugreParams::default();
    let one = DistributedGpu::with_chunk_cells(&ctx, params, &patches, usize::MAX).unwrap();
    let split = DistributedGpu::with_chunk_cells(&ctx, params, &patches, 1000).unwrap();
    assert_eq!(one.chunks(), 1);
    assert!(split.chunks() >= 4, "{} chunks", split.chunks());
    let bits = |w: &[Wrench]| -> Vec<[u64; 4]> {
        w.iter()
            .map(|w| [w.fx, w.fy, w.tau, w.tau_cop].map(f64::to_bits))
            .collect()
    };
    for (int, dt) in [(Integrator::Explicit, 1e-5), (Integrator::Implicit, 1e-3)] {
        for _ in 0..3 {
            let twists: Vec<Twist> = (0..patches.len())
                .map(|_| {
                    Twist::new(
                        rng.random_range(-2e-3..2e-3),
                        rng.random_range(-2e-3..2e-3),
                        rng.random_range(-0.1..0.1),
                    )
                })
                .collect();
            let (wa, aa) = one.step_affine(&ctx, &twists, dt, int).unwrap();
            let (wb, ab) = split.step_affine(&ctx, &twists, dt, int).unwrap();
            assert_eq!(bits(&wa), bits(&wb), "{int:?} wrenches");
            assert_eq!(
                format!("{aa:?}"),
                format!("{ab:?}"),
                "{int:?} affine blocks"
            );
        }
    }
    let (za, zb) = (
        one.deflections(&ctx).unwrap(),
        split.deflections(&ctx).unwrap(),
    );
    assert_eq!(za.len(), zb.len());
    assert!(za
        .iter()
        .zip(&zb)
        .all(|(a, b)| a.map(f32::to_bits) == b.map(f32::to_bits)));
    assert!(za.iter().any(|z| z[0] != 0.0), "cells deflected");
    let jobs: Vec<(usize, Twist)> = (0..30)
        .map(|j| {
            (
                7 * j % patches.len(),
                Twist::new(1e-3, -2e-3, 0.1 * j as f64 - 1.0),
            )
        })
        .collect();
    let (sa, sb) = (
        one.steady(&ctx, &jobs, false).unwrap(),
        split.steady(&ctx, &jobs, false).unwrap(),
    );
    assert_eq!(bits(&sa), bits(&sb), "steady states");
}

/// The lugre_patch loop's two GPU calls (book: Contact patches): the affine block before the solve
/// with the rate factors frozen at the lagged twist (cells kept), and the cells' step after
/// it under the solved twist with those same rate factors, against the f64 twin
/// (`DistributedCpu::{affine, step_linearised}`) over 5 steps of random twists, elasto-
/// plastic on; the block at the lagged twist reproduces the step's wrench at the solved one.
#[test]
fn linearised_distributed_gpu_matches_twin() {
    let ctx = shared_context();
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    let patches = random_patches(&mut rng, 12);
    let params = LugreParams::default();
    let dt = 1e-3;
    let mut cpu = DistributedCpu::new(params, patches.clone());
    let gpu = DistributedGpu::new(&ctx, params, &patches).unwrap();
    let mut random_twists = || -> Vec<Twist> {
        (0..patches.len())
            .map(|_| {
                Twist::new(
                    rng.random_range(-2e-3..2e-3),
                    rng.random_range(-2e-3..2e-3),
                    rng.random_range(-0.1..0.1),
                )
            })
            .collect()
    };
    let mut lin = random_twists();
    for step in 0..5 {
        let solved = random_twists();
        let z_before = gpu.deflections(&ctx).unwrap();
        let got_aff = gpu.affine_at(&ctx, &lin, dt).unwrap();
        assert_eq!(
            z_before,
            gpu.deflections(&ctx).unwrap(),
            "affine_at keeps the cells"
        );
        let want = cpu.step_linearised(&solved, &lin, dt);
        let got = gpu.step_linearised(&ctx, &solved, &lin, dt).unwrap();
        for k in 0..patches.len() {
            let fs = 2.0 * patches[k].f_n;
            let ts = fs * patches[k].shape.h * patches[k].shape.nx as f64;
            assert!(
                close(&got[k], &want[k], fs, ts, 2e-4),
                "step {step} patch {k}: {:?} vs {:?}",
                got[k],
                want[k]
            );
            let e = got_aff[k].eval(solved[k]);
            let w = &want[k];
            let ok = (e[0] - w.fx).abs() <= 2e-4 * fs
                && (e[1] - w.fy).abs() <= 2e-4 * fs
                && (e[2] - w.tau).abs() <= 2e-4 * ts;
            assert!(ok, "step {step} patch {k}: block at lin {e:?} vs {w:?}");
        }
        lin = solved;
    }
    let z = gpu.deflections(&ctx).unwrap();
    let zmax = cpu
        .z
        .iter()
        .flatten()
        .flatten()
        .fold(0.0f64, |m, x| m.max(x.abs()));
    assert!(zmax > 0.0, "cells deflected");
    for (g, c) in z.iter().zip(cpu.z.iter().flatten()) {
        for d in 0..2 {
            assert!((g[d] as f64 - c[d]).abs() <= 1e-4 * zmax, "{g:?} vs {c:?}");
        }
    }
}

/// Cells carried by patch key (book: Contact patches): 300 previous patches, 260 new ones of which
/// about two thirds carry over (keys sorted as the contact list, 441 cells each); the GPU
/// remap equals the twin bit for bit, carried patches keep their cells, new ones are at rest.
#[test]
fn patch_cells_are_remapped_by_key() {
    use bristlecone::patch::cells::{remap_cells, CellRemapGpu, PatchKey};
    let ctx = shared_context();
    let mut rng = ChaCha8Rng::seed_from_u64(22);
    let cells = 441;
    let mut all: Vec<PatchKey> = (0..600)
        .map(|_| {
            let a = rng.random_range(0..200u32);
            [
                a,
                a + rng.random_range(1..50u32),
                u32::MAX - rng.random_range(0..2u32),
            ]
        })
        .collect();
    all.sort();
    all.dedup();
    let mut prev: Vec<PatchKey> = all
        .iter()
        .copied()
        .filter(|_| rng.random_bool(0.5))
        .collect();
    prev.truncate(300);
    let mut keys: Vec<PatchKey> = all
        .iter()
        .copied()
        .filter(|k| {
            rng.random_bool(if prev.binary_search(k).is_ok() {
                0.6
            } else {
                0.2
            })
        })
        .collect();
    keys.truncate(260);
    let prev_z: Vec<[f32; 2]> = (0..prev.len() * cells)
        .map(|_| [rng.random_range(-1e-5..1e-5), rng.random_range(-1e-5..1e-5)])
        .collect();
    let want = remap_cells(&prev, &prev_z, &keys, cells);
    let got = CellRemapGpu::new(&ctx)
        .unwrap()
        .remap_host(&ctx, &prev, &prev_z, &keys, cells)
        .unwrap();
    let bits =
        |z: &[[f32; 2]]| -> Vec<[u32; 2]> { z.iter().map(|v| v.map(f32::to_bits)).collect() };
    assert_eq!(bits(&got), bits(&want));
    let mut carried = 0;
    for (k, key) in keys.iter().enumerate() {
        let mine = &got[k * cells..(k + 1) * cells];
        match prev.iter().position(|p| p == key) {
            Some(j) => {
                carried += 1;
                assert_eq!(bits(mine), bits(&prev_z[j * cells..(j + 1) * cells]));
            }
            None => assert!(mine.iter().all(|z| *z == [0.0; 2]), "new patch {key:?}"),
        }
    }
    assert!(
        carried > 50 && carried < keys.len() - 20,
        "{carried} of {}",
        keys.len()
    );
}

/// The f64 rows of a lugre_patch block (book: Contact patches): on random patches with deflected
/// cells, random positive-definite Delassus blocks N, free twists and normal impulses, the
/// row (N + E) γ + v* + offset = 0 solved exactly gives the impulse γ_n⁻ × the twin's
/// linearised-step wrench at v⁺ = v* + N γ (lanes spin, u, w = τ, f_x, f_y), and
/// diag(3/η) − (N + E) is positive semi-definite (the solver's step bound).
#[test]
fn distributed_rows_reproduce_the_cells_step() {
    use bristlecone::patch::couple::distributed_rows;
    use glam::{DMat3, DVec3};
    let mut rng = ChaCha8Rng::seed_from_u64(23);
    let mut patches = random_patches(&mut rng, 12);
    patches.iter_mut().for_each(|p| p.f_n = 1.0);
    let dt = 1e-3;
    let mut cpu = DistributedCpu::new(LugreParams::default(), patches.clone());
    let tw = |rng: &mut ChaCha8Rng, s: f64| {
        Twist::new(
            rng.random_range(-s..s),
            rng.random_range(-s..s),
            rng.random_range(-30.0 * s..30.0 * s),
        )
    };
    let warmup: Vec<Twist> = (0..12).map(|_| tw(&mut rng, 2e-3)).collect();
    cpu.step(&warmup, dt, Integrator::Implicit);
    for (k, patch) in patches.iter().enumerate() {
        let lin = tw(&mut rng, 5e-3);
        let aff = cpu.affine(k, lin, dt);
        let d: [[f64; 6]; 3] =
            std::array::from_fn(|_| std::array::from_fn(|_| rng.random_range(-1.0..1.0)));
        let minv: [f64; 6] = std::array::from_fn(|_| rng.random_range(0.5..20.0));
        let n = DMat3::from_cols_array_2d(&std::array::from_fn(|i| {
            std::array::from_fn(|j| (0..6).map(|c| d[i][c] * minv[c] * d[j][c]).sum())
        }));
        let nd = [n.x_axis.x, n.y_axis.y, n.z_axis.z];
        let vstar = [
            rng.random_range(-0.1..0.1),
            rng.random_range(-5e-3..5e-3),
            rng.random_range(-5e-3..5e-3),
        ];
        let gn = rng.random_range(1e-3..1e-1);
        let rows = distributed_rows(&aff, gn, vstar, nd).expect("live block");
        let e = DMat3::from_cols_array_2d(&rows.e);
        let g = (n + e).inverse() * -(DVec3::from(vstar) + DVec3::from(rows.offset));
        let vp = DVec3::from(vstar) + n * g;
        let mut one = cpu.clone();
        one.patches = vec![patch.clone()];
        one.z = vec![cpu.z[k].clone()];
        let w = one.step_linearised(&[Twist::new(vp.y, vp.z, vp.x)], &[lin], dt)[0];
        let want = DVec3::new(w.tau, w.fx, w.fy) * gn;
        let scale = gn * (1.0 + 0.05);
        assert!(
            (g - want).abs().max_element() <= 1e-9 * scale,
            "patch {k}: {g} vs {want}"
        );
        let bound = DMat3::from_diagonal(DVec3::from(rows.eta.map(|x| 3.0 / x))) - (n + e);
        for _ in 0..200 {
            let x = DVec3::new(
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
            );
            let q = x.dot(bound * x);
            assert!(
                q >= -1e-12
                    * x.dot(DMat3::from_diagonal(DVec3::from(rows.eta.map(|x| 3.0 / x))) * x),
                "patch {k}: {q}"
            );
        }
    }
}

/// Per-step cell weights of lugre_patch contacts (book: Contact patches): uniform pressure over
/// random patch polygons (rotated rectangles as box faces give, triangles, hexagons) on
/// 21 × 21 and 9 × 9 grids, GPU against `PatchShape::new` (f64): the cell size to 1e-6, the
/// centre of pressure to 1e-3 h, each weight within two of its cell's 64 sub-samples (f32
/// may classify a sample on an edge the other way), Σ|Δw| ≤ 1 %.
#[test]
fn patch_polygon_weights_gpu_match_twin() {
    use bristlecone::patch::cells::PolygonWeightsGpu;
    let ctx = shared_context();
    let mut rng = ChaCha8Rng::seed_from_u64(24);
    let polys: Vec<Vec<[f64; 2]>> = (0..30)
        .map(|k| {
            let (a, b) = (rng.random_range(0.01..0.1), rng.random_range(0.01..0.1));
            let th: f64 = rng.random_range(0.0..std::f64::consts::PI);
            let sides = [4, 3, 6][k % 3];
            (0..sides)
                .map(|i| {
                    let t = th + std::f64::consts::TAU * (i as f64 + 0.5) / sides as f64;
                    let (x, y) = if sides == 4 {
                        let (sx, sy) = ([1.0, -1.0, -1.0, 1.0][i], [1.0, 1.0, -1.0, -1.0][i]);
                        (sx * a, sy * b)
                    } else {
                        (a * t.cos(), b * t.sin())
                    };
                    let (c, s) = (th.cos(), th.sin());
                    if sides == 4 {
                        [c * x - s * y, s * x + c * y]
                    } else {
                        [x, y]
                    }
                })
                .collect()
        })
        .collect();
    let gpu = PolygonWeightsGpu::new(&ctx).unwrap();
    for n in [21, 9] {
        let got = gpu.grids(&ctx, &polys, n).unwrap();
        for (k, (p, g)) in polys.iter().zip(&got).enumerate() {
            let pressure = Pressure::Uniform(Outline::Polygon {
                vertices: p.clone(),
            });
            let want = PatchShape::new(&pressure, n, n, None, 1.0).unwrap();
            assert!(
                ((g.h as f64) - want.h).abs() <= 1e-6 * want.h,
                "patch {k} h"
            );
            for d in 0..2 {
                assert!(
                    (g.cop[d] as f64 - want.cop[d]).abs() <= 1e-3 * want.h,
                    "patch {k} cop {:?} vs {:?}",
                    g.cop,
                    want.cop
                );
            }
            let full = want.weights.iter().fold(0.0f64, |m, w| m.max(*w));
            let mut total = 0.0;
            for (a, b) in g.weights.iter().zip(&want.weights) {
                let e = (*a as f64 - b).abs();
                assert!(
                    e <= 2.0 / 64.0 * full + 1e-6 * full,
                    "patch {k}: {a} vs {b}"
                );
                total += e;
            }
            assert!(total <= 1e-2, "patch {k}: Σ|Δw| = {total}");
        }
    }
    assert!(
        gpu.grids(&ctx, &[vec![[0.0, 0.0]; 9]], 21).is_err(),
        "9 vertices refused"
    );
}

/// An f64 model of the lugre_patch loop (book: Contact patches, before the wiring into the
/// simulation): a planar 10 cm cube (lanes spin, u, w; N = diag(1/I, 1/m, 1/m)) on a
/// 21 × 21 uniform patch, each step the block from the cells at the last twist
/// (`DistributedCpu::affine`), the rows of `distributed_rows` solved exactly, the cells
/// stepped under the solved twist. Spun from 20 rad/s it decelerates at μ m g r / I (r the
/// grid's own Σ w |ρ|) within 1 % over 20–80 ms, slid from 1 m/s at μ g within 1 %, with and
/// without the elasto-plastic factor, and neither motion leaks into the other lanes. (The
/// rate factors lag one step: the relative bias grows like α dt / |v| as the body slows,
/// about +2.5 % / −1.4 % (EP on / off) on the spin at 5 rad/s.)
#[test]
fn distributed_rows_in_a_loop_give_the_analytic_deceleration() {
    use bristlecone::patch::couple::distributed_rows;
    use glam::{DMat3, DVec3};
    let (a, m, g, mu, dt) = (0.1, 1.0, 9.81, 0.5, 1e-3);
    let inertia = m * a * a / 6.0;
    let params = LugreParams {
        mu_c: mu,
        mu_s: mu,
        sigma0: 1e5,
        sigma1: 250.0,
        sigma2: 0.0,
        ..Default::default()
    };
    let p = patch(Pressure::Uniform(Outline::Rectangle { a, b: a }), 21, 1.0);
    let r: f64 = (0..p.shape.weights.len())
        .map(|i| p.shape.weights[i] * p.shape.cell(i).iter().map(|x| x * x).sum::<f64>().sqrt())
        .sum();
    let nd = [1.0 / inertia, 1.0 / m, 1.0 / m];
    let n = DMat3::from_diagonal(DVec3::from(nd));
    let run = |params: LugreParams, v0: [f64; 3], t0: f64, t1: f64| -> (f64, f64) {
        let mut cpu = DistributedCpu::new(params, vec![p.clone()]);
        let mut v = DVec3::from(v0);
        let (mut at0, mut leak) = (v, 0.0f64);
        for step in 1..=(t1 / dt).round() as usize {
            let lin = Twist::new(v.y, v.z, v.x);
            let rows = distributed_rows(&cpu.affine(0, lin, dt), m * g * dt, v.to_array(), nd)
                .expect("live block");
            let e = DMat3::from_cols_array_2d(&rows.e);
            let gam = (n + e).inverse() * -(v + DVec3::from(rows.offset));
            v += n * gam;
            cpu.step_linearised(&[Twist::new(v.y, v.z, v.x)], &[lin], dt);
            if step == (t0 / dt).round() as usize {
                at0 = v;
            }
            let other = if v0[0] != 0.0 {
                v.y.abs().max(v.z.abs())
            } else {
                v.x.abs().max(v.z.abs())
            };
            leak = leak.max(other);
        }
        let lane = if v0[0] != 0.0 { 0 } else { 1 };
        ((at0[lane] - v[lane]) / (t1 - t0), leak)
    };
    for ep in [true, false] {
        let params = LugreParams {
            elasto_plastic: ep,
            ..params
        };
        let (spin, leak) = run(params, [20.0, 0.0, 0.0], 0.02, 0.08);
        let want = mu * m * g * r / inertia;
        assert!(
            (spin / want - 1.0).abs() <= 1e-2,
            "ep {ep}: spin {spin} vs {want} rad/s²"
        );
        assert!(leak <= 1e-6, "ep {ep}: spin leaks into sliding: {leak} m/s");
        let (slide, leak) = run(params, [0.0, 1.0, 0.0], 0.02, 0.08);
        assert!(
            (slide / (mu * g) - 1.0).abs() <= 1e-2,
            "ep {ep}: slide {slide} vs {} m/s²",
            mu * g
        );
        assert!(leak <= 1e-6, "ep {ep}: slide leaks into spin: {leak} rad/s");
        eprintln!(
            "ep {ep}: spin {spin} vs {want} rad/s², slide {slide} vs {} m/s²",
            mu * g
        );
    }
}

/// A weight grid is the distribution as given: `shape = "grid"` with the middle column of
/// a 3 × 3 grid pressed (any scale) is the same patch as a rectangle one cell wide and
/// three tall, so the two files' wrench histories agree bit for bit; an uneven row puts
/// the centre of pressure at the weighted mean of the cell centres.
#[test]
fn grid_pressure_patch_file_equals_the_same_pressure_as_an_outline() {
    use bristlecone::patch::file::parse_str;
    let with_pressure = |pressure: &str| {
        format!(
            "[patch]\ngrid = [3, 3]\ncell = 0.004\nnormal_force = 2.0\n[patch.pressure]\n{pressure}\n\
             [run]\nmodel = \"distributed\"\ndt = 1e-4\nduration = 0.002\ndevice = \"cpu\"\n\
             [[twist]]\nt = 0.0\nv = [0.01, 0.0, 0.5]\n"
        )
    };
    let path = std::path::Path::new("p.toml");
    let outline = with_pressure("shape = \"rectangle\"\na = 0.004\nb = 0.012");
    let grid = with_pressure(
        "shape = \"grid\"\nweights = [[0.0, 2.0, 0.0], [0.0, 2.0, 0.0], [0.0, 2.0, 0.0]]",
    );
    let outline = parse_str(&outline, path).unwrap();
    let grid = parse_str(&grid, path).unwrap();
    assert_eq!(grid.patch.shape, outline.patch.shape);
    let third = 1.0 / 3.0;
    assert_eq!(grid.patch.shape.weights, [0.0, third, 0.0].repeat(3));
    let history = |pf: &bristlecone::patch::file::PatchFile| {
        pf.run(None)
            .unwrap()
            .iter()
            .map(|(_, _, w)| [w.fx.to_bits(), w.fy.to_bits(), w.tau.to_bits()])
            .collect::<Vec<_>>()
    };
    let grid_history = history(&grid);
    assert_eq!(grid_history.len(), 20);
    assert_eq!(grid_history, history(&outline));

    let uneven = with_pressure(
        "shape = \"grid\"\nweights = [[0.0, 0.0, 0.0], [0.0, 1.0, 3.0], [0.0, 0.0, 0.0]]",
    );
    let uneven = parse_str(&uneven, path).unwrap();
    let cop = uneven.patch.shape.cop;
    assert!(
        (cop[0] - 0.75 * 0.004).abs() < 1e-15 && cop[1].abs() < 1e-15,
        "{cop:?}"
    );
}
