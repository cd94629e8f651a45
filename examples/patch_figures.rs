//! Draws the Book figures of the planar LuGre patches into assets/images/:
//! `patch_limit_surface.png` (normalised limit-surface slices of four pressure
//! distributions, computed by the distributed model at steady state, with the ellipsoid),
//! `patch_wrench_history.png` (distributed vs reduced under a twist history, GPU) and
//! `patch_drift.png` (the drift experiment, plain LuGre vs elasto-plastic).
//!
//! `cargo run --release --example patch_figures`

use bristlecone::gpu::shared_context;
use bristlecone::patch::cpu::{self, Patch, ReducedPatch};
use bristlecone::patch::limit::build_many;
use bristlecone::patch::*;
use bristlecone::plot::{plot_lines, LinePanel};
use std::f64::consts::PI;
use std::path::Path;

fn patch(p: Pressure, f_n: f64) -> Patch {
    Patch {
        shape: PatchShape::new(&p, 21, 21, None, f_n).unwrap(),
        f_n,
    }
}

fn unit() -> LugreParams {
    LugreParams {
        mu_c: 1.0,
        mu_s: 1.0,
        sigma2: 0.0,
        ..Default::default()
    }
}

fn limit_surface(out: &Path) {
    let l = 0.04;
    let cases = [
        (
            "circle",
            Pressure::Uniform(Outline::Circle { radius: l / 2.0 }),
        ),
        (
            "square",
            Pressure::Uniform(Outline::Rectangle { a: l, b: l }),
        ),
        ("line", Pressure::Uniform(Outline::Line { length: l })),
        (
            "line, gradient",
            Pressure::Gradient {
                outline: Outline::Line { length: l },
                g: [-1.9 / l, 0.0],
            },
        ),
    ];
    let mut series = Vec::new();
    for (name, pr) in cases {
        let p = patch(pr, 1.0);
        let cop = p.shape.cop;
        let ls = build_many(std::slice::from_ref(&p.shape), 2, |j| {
            j.iter()
                .map(|(_, t)| cpu::steady(&unit(), &p, *t))
                .collect()
        })
        .remove(0);
        // Twists (v_y, ω) about the CoP on a half circle: the (f_y, τ) slice of the surface.
        let pts = (0..=180)
            .map(|i| {
                let a = PI * i as f64 / 180.0 - PI / 2.0;
                let t = Twist::new(0.0, ls.r * a.sin(), a.cos()).at([-cop[0], -cop[1]]);
                let w = cpu::steady(&unit(), &p, t);
                (-w.fy, -w.tau_cop / ls.r)
            })
            .collect();
        series.push((format!("{name} (r = {:.2} L)", ls.r / l), pts));
    }
    let ell = (0..=180).map(|i| {
        let a = PI * i as f64 / 180.0 - PI / 2.0;
        (a.sin(), a.cos())
    });
    series.push(("ellipsoid".into(), ell.collect()));
    let panel = LinePanel {
        title: "limit surface slice (f_y, τ) of the distributed model, 21 x 21 cells".into(),
        x_label: "f_y / (μ f_N)".into(),
        y_label: "τ / (μ f_N r)".into(),
        series,
    };
    plot_lines(&out.join("patch_limit_surface.png"), vec![panel]).unwrap();
}

fn wrench_history(out: &Path) {
    let ctx = shared_context();
    let params = LugreParams::default();
    // The paper's running example: a disc of 10 mm radius under 1 N.
    let p = patch(Pressure::Uniform(Outline::Circle { radius: 0.01 }), 1.0);
    let dist = DistributedGpu::new(&ctx, params, std::slice::from_ref(&p)).unwrap();
    let ls = dist.limit_surfaces(&ctx, 20).unwrap().remove(0);
    let red = ReducedGpu::new(
        &ctx,
        params,
        &[ReducedPatch {
            ls,
            f_n: 1.0,
            ellipsoid: false,
        }],
    )
    .unwrap();
    let dt = 1e-4;
    let (mut fd, mut fr, mut td, mut tr) = (
        vec![Vec::new(); 2],
        vec![Vec::new(); 2],
        Vec::new(),
        Vec::new(),
    );
    for s in 0..5000 {
        let t = s as f64 * dt;
        let tw = Twist::new(
            0.01 * (2.0 * PI * t).sin(),
            0.005 * (2.0 * PI * 1.5 * t).sin(),
            1.2 * (2.0 * PI * 0.8 * t).sin(),
        );
        let a = dist.step(&ctx, &[tw], dt, Integrator::Implicit).unwrap()[0];
        let b = red.step(&ctx, &[tw], dt, Integrator::Implicit).unwrap()[0];
        if s % 10 == 0 {
            fd[0].push((t, a.fx));
            fd[1].push((t, a.fy));
            fr[0].push((t, b.fx));
            fr[1].push((t, b.fy));
            td.push((t, a.tau_cop));
            tr.push((t, b.tau_cop));
        }
    }
    let panels = vec![
        LinePanel {
            title: "friction force, disc R = 10 mm, f_N = 1 N (GPU, implicit, dt = 1e-4)".into(),
            x_label: "time [s]".into(),
            y_label: "force [N]".into(),
            series: vec![
                ("f_x distributed".into(), fd[0].clone()),
                ("f_x reduced".into(), fr[0].clone()),
                ("f_y distributed".into(), fd[1].clone()),
                ("f_y reduced".into(), fr[1].clone()),
            ],
        },
        LinePanel {
            title: "friction torque about the CoP".into(),
            x_label: "time [s]".into(),
            y_label: "torque [N m]".into(),
            series: vec![("distributed".into(), td), ("reduced".into(), tr)],
        },
    ];
    plot_lines(&out.join("patch_wrench_history.png"), panels).unwrap();
}

/// The drift experiment of tests/patch.rs, recorded.
fn drift(out: &Path) {
    let mut series = Vec::new();
    for ep in [false, true] {
        let (m, rr, f_n) = (1.0, 0.05, 9.81);
        let inertia = 0.5 * m * rr * rr;
        let params = LugreParams {
            elasto_plastic: ep,
            ..Default::default()
        };
        let p = Patch {
            shape: PatchShape::new(
                &Pressure::Uniform(Outline::Circle { radius: rr }),
                15,
                15,
                None,
                f_n,
            )
            .unwrap(),
            f_n,
        };
        let mut model = DistributedCpu::new(params, vec![p]);
        let dt = 2e-4;
        let mut v = Twist::default();
        let mut x = 0.0;
        let mut pts = Vec::new();
        for s in 0..15000 {
            let t = (s + 1) as f64 * dt;
            let load = [
                f_n * (0.1 + 0.35 * (2.0 * PI * 5.0 * t).sin()),
                0.0,
                0.2 * (2.0 / 3.0) * rr * f_n * (2.0 * PI * 3.0 * t).sin(),
            ];
            let a = model.affine(0, v, dt);
            let mass = [m / dt, m / dt, inertia / dt];
            let mut mat = nalgebra::Matrix3::from_fn(|r, c| a.k[r][c]);
            for d in 0..3 {
                mat[(d, d)] += mass[d];
            }
            let vv = [v.vx, v.vy, v.omega];
            let rhs = nalgebra::Vector3::from_fn(|r, _| mass[r] * vv[r] + load[r] - a.k0[r]);
            let sol = mat.lu().solve(&rhs).unwrap();
            let new = Twist::new(sol[0], sol[1], sol[2]);
            model.step_linearised(&[new], &[v], dt);
            v = new;
            x += dt * v.vx;
            if s % 10 == 0 {
                pts.push((t, x * 1e6));
            }
        }
        series.push((if ep { "elasto-plastic" } else { "LuGre" }.to_string(), pts));
    }
    let panel = LinePanel {
        title: "drift under F_x = f_N (0.1 + 0.35 sin 10πt), 1 kg disc, R = 5 cm".into(),
        x_label: "time [s]".into(),
        y_label: "x [µm]".into(),
        series,
    };
    plot_lines(&out.join("patch_drift.png"), vec![panel]).unwrap();
}

fn main() {
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/images");
    limit_surface(&out);
    wrench_history(&out);
    drift(&out);
    println!("wrote assets/images/patch_{{limit_surface,wrench_history,drift}}.png");
}
