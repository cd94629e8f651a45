//! Measurements against analytic answers.

use bristlecone::bodies::{BodyInit, BodyState, SHAPE_PLANE};
use bristlecone::measure::{
    bed_height, boundary_wrench, coordination_number, kinetic_energy_by_group, steady_rate,
    surface_profile, ContactForce, MassFlow, MeasurementWriter, STEADY_TOLERANCE,
};
use rand::{Rng, SeedableRng};

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()).max(1e-300)
}

/// A fixed boundary body (a plane) at `z`.
fn wall(z: f32) -> BodyInit {
    BodyInit::fixed(SHAPE_PLANE, 0, [0.0, 0.0, z], 1.0)
}

/// One wall, then an `n × n × layers` simple cubic lattice of spheres (spacing `a`,
/// radius `a/2`) with bottom layer centred at `z0` and columns centred on the z axis.
fn lattice(n: usize, layers: usize, a: f32, z0: f32, density: f32) -> BodyState {
    let mut s = BodyState::from_inits(&[wall(100.0)]);
    for k in 0..layers {
        for j in 0..n {
            for i in 0..n {
                let c = |i: usize| (i as f32 - (n as f32 - 1.0) / 2.0) * a;
                s.push(&BodyInit::sphere(
                    [c(i), c(j), z0 + k as f32 * a],
                    a / 2.0,
                    density,
                ));
            }
        }
    }
    s
}

fn shift_z(s: &BodyState, first_grain: usize, dz: f32) -> BodyState {
    let mut t = s.clone();
    for p in &mut t.pos[first_grain..] {
        p[2] += dz;
    }
    t
}

fn grain_mass(s: &BodyState, i: usize) -> f64 {
    1.0 / s.mass_props[i][3] as f64
}

#[test]
fn lattice_crossing_a_plane_gives_the_exact_mass_flux() {
    // 4 × 4 columns, 12 layers of spacing 0.25 below z = 0 (top layer centre at -0.125),
    // moving up at v = 2: one layer (16 grains) crosses z = 0 every a / v = 0.125 s.
    let (n, layers, a, v) = (4, 12, 0.25f32, 2.0f64);
    let start = lattice(n, layers, a, -0.125 - (layers - 1) as f32 * a, 2500.0);
    let m = grain_mass(&start, 1);
    let mut flow = MassFlow::new([0.0, 0.0, 0.0], [0.0, 0.0, 5.0], &start, 1, 0.0);
    assert_eq!(flow.normal(), [0.0, 0.0, 1.0]);

    let layer_mass = (n * n) as f64 * m;
    let exact_rate = layer_mass * v / a as f64;
    let (mut times, mut cumulative) = (vec![0.0], vec![0.0]);
    // Frames every 0.05 s, offset so that no centre lies exactly on the plane at a frame.
    for f in 1..=24 {
        let t = 0.05 * f as f64 + 0.01;
        let s = shift_z(&start, 1, (v * t) as f32);
        let sample = flow.update(&s, t);
        // Layers crossed by time t: those whose centre -0.125 - k a has reached 0.
        let crossed = (((v * t - 0.125) / a as f64).floor() + 1.0).clamp(0.0, layers as f64);
        assert!(
            close(sample.net_mass, crossed * layer_mass, 1e-12),
            "t = {t}: {} vs {}",
            sample.net_mass,
            crossed * layer_mass
        );
        assert_eq!(sample.mass_positive, sample.net_mass);
        assert_eq!(sample.mass_negative, 0.0);
        times.push(t);
        cumulative.push(sample.net_mass);
    }

    // Over exactly one layer period the frame rate is the exact flux.
    let mut flow = MassFlow::new([0.0, 0.0, 0.0], [0.0, 0.0, 1.0], &start, 1, 0.0);
    let t1 = 0.3;
    flow.update(&shift_z(&start, 1, (v * t1) as f32), t1);
    let t2 = t1 + a as f64 / v;
    let sample = flow.update(&shift_z(&start, 1, (v * t2) as f32), t2);
    assert!(
        close(sample.rate, exact_rate, 1e-9),
        "{} vs {exact_rate}",
        sample.rate
    );

    // The least-squares rate of the staircase while the lattice streams through.
    let (rate, se, _) = steady_rate(&times, &cumulative, (0.2, 1.2));
    assert!(close(rate, exact_rate, 0.05), "{rate} vs {exact_rate}");
    assert!(se < 0.05 * exact_rate, "{se}");

    // Reversing the flow: net goes back down, the once-per-direction totals do not double.
    let back = flow.update(&shift_z(&start, 1, 0.0), t2 + 1.0);
    assert!(
        back.net_mass.abs() < 1e-12 * layer_mass,
        "{}",
        back.net_mass
    );
    assert!(close(back.mass_negative, back.mass_positive, 1e-12));
    let again = flow.update(&shift_z(&start, 1, (v * t2) as f32), t2 + 2.0);
    assert!(close(again.net_mass, sample.net_mass, 1e-12));
    assert_eq!(again.mass_positive, sample.mass_positive);
}

#[test]
fn jittering_grain_counts_once_per_direction() {
    let mut s = BodyState::from_inits(&[wall(0.0)]);
    s.push(&BodyInit::sphere([0.0, 0.0, -0.01], 0.005, 1000.0));
    let m = grain_mass(&s, 1);
    let mut flow = MassFlow::new([0.0; 3], [0.0, 0.0, 1.0], &s, 1, 0.0);
    let mut last = None;
    for (k, z) in [0.001f32, -0.001, 0.002, -0.002, 0.003].iter().enumerate() {
        s.pos[1][2] = *z;
        last = Some(flow.update(&s, 0.1 * (k + 1) as f64));
    }
    let last = last.unwrap();
    assert!(close(last.net_mass, m, 1e-12));
    assert!(close(last.mass_positive, m, 1e-12));
    assert!(close(last.mass_negative, m, 1e-12));
    // Same time twice: no rate.
    assert!(flow.update(&s, 0.5).rate.is_nan());
}

#[test]
fn orifice_radius_limits_the_counted_columns() {
    // 6 × 6 columns with spacing 1 centred on the axis; a disk of radius 1.6 around the
    // axis contains the columns at (±0.5, ±0.5), (±1.5, ±0.5), (±0.5, ±1.5): 12 of 36.
    let start = lattice(6, 1, 1.0, -0.5, 1.0);
    let m = grain_mass(&start, 1);
    let mut flow = MassFlow::new([0.0; 3], [0.0, 0.0, 1.0], &start, 1, 0.0).with_radius(1.6);
    let s = flow.update(&shift_z(&start, 1, 1.0), 1.0);
    assert!(close(s.net_mass, 12.0 * m, 1e-12), "{}", s.net_mass / m);
}

#[test]
fn bed_height_of_a_cubic_packing() {
    // 10 layers of 4 × 4 spheres of radius 0.5: tops at 1, 2, …, 10, 16 grains each.
    let s = lattice(4, 10, 1.0, 0.5, 1.0);
    assert_eq!(bed_height(&s, 1, 1.0), 10.0);
    assert_eq!(bed_height(&s, 1, 0.0), 1.0);
    // 160 values; q = 0.95 → h = 151.05 → both neighbours are in the top layer.
    assert_eq!(bed_height(&s, 1, 0.95), 10.0);
    // q = 0.5 → h = 79.5, between value 79 (layer 5) and value 80 (layer 6).
    assert_eq!(bed_height(&s, 1, 0.5), 5.5);
    // The wall at z = 100 (body 0) is not a grain...
    assert_eq!(bed_height(&s, 0, 1.0), 101.0);
    // ...and a bed without grains has no height.
    assert!(bed_height(&s, s.len(), 0.95).is_nan());
    assert!(bed_height(&s, 1, f64::NAN).is_nan());
}

#[test]
fn surface_profile_of_a_heap() {
    // Columns at x = 0.5, 1.5, …, 7.5 (y = 0) of height i + 1 spheres of radius 0.5: the
    // tops are 1, 2, …, 8. Bins of width 2 over (0, 10): the fifth bin is empty.
    let mut s = BodyState::from_inits(&[wall(50.0)]);
    for i in 0..8 {
        for k in 0..=i {
            s.push(&BodyInit::sphere(
                [i as f32 + 0.5, 0.0, k as f32 + 0.5],
                0.5,
                1.0,
            ));
        }
    }
    let p = surface_profile(&s, 1, 0, 5, (0.0, 10.0));
    let centres: Vec<f64> = p.iter().map(|c| c.0).collect();
    assert_eq!(centres, [1.0, 3.0, 5.0, 7.0, 9.0]);
    assert_eq!(
        &p[..4].iter().map(|c| c.1).collect::<Vec<_>>(),
        &[2.0, 4.0, 6.0, 8.0]
    );
    assert!(p[4].1.is_nan());
    // Along y everything is in one bin.
    let p = surface_profile(&s, 1, 1, 1, (-1.0, 1.0));
    assert_eq!(p, [(0.0, 8.0)]);
    assert!(surface_profile(&s, 1, 0, 0, (0.0, 1.0)).is_empty());
}

#[test]
fn coordination_number_of_a_cubic_lattice() {
    // n³ grains after 6 walls (bodies 0..6: -x, +x, -y, +y, -z, +z), face-neighbour
    // contacts. Inside grains have 6; the free lattice has mean 6 (n - 1) / n; with the
    // walls touching the surface grains every grain has exactly 6.
    let n = 5usize;
    let walls = 6usize;
    let id = |i: usize, j: usize, k: usize| (walls + i + n * (j + n * k)) as u32;
    let mut grain_pairs = Vec::new();
    let mut wall_pairs = Vec::new();
    for k in 0..n {
        for j in 0..n {
            for i in 0..n {
                let me = id(i, j, k);
                if i + 1 < n {
                    grain_pairs.push((me, id(i + 1, j, k)));
                }
                if j + 1 < n {
                    grain_pairs.push((id(i, j + 1, k), me)); // either order
                }
                if k + 1 < n {
                    grain_pairs.push((me, id(i, j, k + 1)));
                }
                for (axis, c) in [i, j, k].into_iter().enumerate() {
                    if c == 0 {
                        wall_pairs.push((me, 2 * axis as u32));
                    }
                    if c == n - 1 {
                        wall_pairs.push((2 * axis as u32 + 1, me));
                    }
                }
            }
        }
    }
    let n_bodies = walls + n * n * n;
    let free = coordination_number(&grain_pairs, n_bodies, walls);
    assert!(
        close(free, 6.0 * (n - 1) as f64 / n as f64, 1e-12),
        "{free}"
    );

    let mut all = grain_pairs.clone();
    all.extend(&wall_pairs);
    // Duplicates (several contact points per pair, either order), self pairs and
    // wall–wall contacts change nothing.
    all.extend(grain_pairs.iter().map(|&(a, b)| (b, a)));
    all.push((0, 1));
    all.push((7, 7));
    assert_eq!(coordination_number(&all, n_bodies, walls), 6.0);

    // The innermost grain alone: 6 neighbours.
    let centre = id(2, 2, 2);
    let inner: Vec<_> = grain_pairs
        .iter()
        .copied()
        .filter(|&(a, b)| a == centre || b == centre)
        .collect();
    assert_eq!(inner.len(), 6);
    // Mean over all grains counts the 6 neighbours once each and the centre 6 times.
    let z = coordination_number(&inner, n_bodies, walls);
    assert!(close(z, 12.0 / (n * n * n) as f64, 1e-12));

    assert!(coordination_number(&[], walls, walls).is_nan());
}

#[test]
fn wrench_of_a_symmetric_load() {
    // A 5 × 5 grid of grains (bodies 1..) on the floor (body 0), centred at c, each
    // pressing down with w. Half the contacts list the floor as A, half as B.
    let c = [2.0, -1.0, 0.0];
    let w = 3.5;
    let mut contacts = Vec::new();
    for j in 0..5 {
        for i in 0..5 {
            let point = [c[0] + i as f64 - 2.0, c[1] + j as f64 - 2.0, 0.0];
            let g = 1 + (i + 5 * j) as u32;
            contacts.push(if (i + j) % 2 == 0 {
                ContactForce {
                    body_a: g,
                    body_b: 0,
                    point,
                    force_on_b: [0.0, 0.0, -w],
                }
            } else {
                ContactForce {
                    body_a: 0,
                    body_b: g,
                    point,
                    force_on_b: [0.0, 0.0, w],
                }
            });
        }
    }
    // A contact between two grains does not act on the floor.
    contacts.push(ContactForce {
        body_a: 1,
        body_b: 2,
        point: [9.0, 9.0, 9.0],
        force_on_b: [1.0, 2.0, 3.0],
    });
    let (f, t) = boundary_wrench(&contacts, 0, c);
    assert_eq!(f, [0.0, 0.0, -25.0 * w]);
    assert!(t.iter().all(|x| x.abs() < 1e-12), "{t:?}");
    // About the origin the torque is c × F.
    let (_, t0) = boundary_wrench(&contacts, 0, [0.0; 3]);
    let expect = [c[1] * f[2], -c[0] * f[2], 0.0];
    for k in 0..3 {
        assert!((t0[k] - expect[k]).abs() < 1e-9, "{t0:?} vs {expect:?}");
    }

    // Four tangential forces around a ring of radius r: zero force, pure torque 4 r s.
    let (r, s) = (0.5, 2.0);
    let ring: Vec<_> = [[r, 0.0], [0.0, r], [-r, 0.0], [0.0, -r]]
        .iter()
        .enumerate()
        .map(|(k, p)| ContactForce {
            body_a: 10 + k as u32,
            body_b: 3,
            point: [p[0], p[1], 1.0],
            force_on_b: [-p[1] / r * s, p[0] / r * s, 0.0],
        })
        .collect();
    let (f, t) = boundary_wrench(&ring, 3, [0.0, 0.0, 1.0]);
    assert!(f.iter().all(|x| x.abs() < 1e-12));
    assert!(t[0].abs() < 1e-12 && t[1].abs() < 1e-12);
    assert!(close(t[2], 4.0 * r * s, 1e-12));
    assert_eq!(boundary_wrench(&ring, 99, [0.0; 3]), ([0.0; 3], [0.0; 3]));
}

#[test]
fn kinetic_energy_by_group_adds_rotation_in_the_body_frame() {
    let mut s = BodyState::from_inits(&[wall(0.0)]);
    // Group 1: a body with inertia diag(1, 2, 3), turned 90° about z, spinning about world
    // x (= body -y): E = ½ · 2 · ω² plus ½ m v².
    let mut b = BodyInit::sphere([0.0; 3], 1.0, 1.0);
    b.inv_mass = 0.25;
    b.inv_inertia = [1.0, 0.5, 1.0 / 3.0];
    let h = std::f32::consts::FRAC_1_SQRT_2;
    b.orientation = [0.0, 0.0, h, h];
    b.angular_velocity = [3.0, 0.0, 0.0];
    b.velocity = [1.0, 2.0, 0.0];
    s.push(&b);
    // Group 2: two unit-mass spheres moving at speed 1 and 2 without spin.
    for v in [1.0f32, 2.0] {
        let mut g = BodyInit::sphere([5.0, 0.0, 0.0], 1.0, 1.0);
        g.inv_mass = 1.0;
        g.velocity = [0.0, 0.0, v];
        s.push(&g);
    }
    // The wall moves but has no mass: nothing.
    s.vel[0] = [7.0, 0.0, 0.0, 0.0];
    let e = kinetic_energy_by_group(&s, &[0, 1, 2, 2]);
    assert_eq!(e.len(), 3);
    assert_eq!(e[0], 0.0);
    let expect = 0.5 * 4.0 * 5.0 + 0.5 * 2.0 * 9.0;
    assert!(close(e[1], expect, 1e-6), "{} vs {expect}", e[1]);
    assert!(close(e[2], 0.5 * (1.0 + 4.0), 1e-12));
    assert!(kinetic_energy_by_group(&BodyState::default(), &[]).is_empty());
}

#[test]
fn steady_rate_of_a_noisy_linear_signal() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let (rate, noise) = (2.5, 0.01);
    let times: Vec<f64> = (0..=400).map(|i| i as f64 * 0.01).collect();
    let mass: Vec<f64> = times
        .iter()
        .map(|t| 0.3 + rate * t + noise * (rng.random::<f64>() * 2.0 - 1.0))
        .collect();
    let (slope, se, dev) = steady_rate(&times, &mass, (1.0, 3.0));
    // Uniform noise of half-width 0.01 has σ = 0.0058; 201 samples over 2 s give
    // σ_slope = σ / sqrt(Σ(t - t̄)²) ≈ 0.0058 / 8.2 ≈ 7e-4.
    assert!(se > 2e-4 && se < 2e-3, "se {se}");
    assert!((slope - rate).abs() < 4.0 * se, "slope {slope} ± {se}");
    assert!(dev <= STEADY_TOLERANCE, "deviation {dev}");
}

#[test]
fn steady_rate_rejects_unsteady_flow() {
    let times: Vec<f64> = (0..=400).map(|i| i as f64 * 0.01).collect();
    // Accelerating discharge m = t²: quarter slopes 2.5, 3.5, 4.5, 5.5 against 4.
    let accel: Vec<f64> = times.iter().map(|t| t * t).collect();
    let (slope, _, dev) = steady_rate(&times, &accel, (1.0, 3.0));
    assert!(close(slope, 4.0, 1e-9));
    assert!(close(dev, 0.375, 1e-2), "{dev}");
    assert!(dev > STEADY_TOLERANCE);
    // A clog: steady at 2 kg/s, then nothing after t = 2.5.
    let clog: Vec<f64> = times.iter().map(|t| 2.0 * t.min(2.5)).collect();
    let (_, _, dev) = steady_rate(&times, &clog, (1.0, 3.0));
    assert!(dev > STEADY_TOLERANCE, "{dev}");
    // Too few samples in a quarter: NaN, which fails the criterion.
    let (s, _, dev) = steady_rate(&[0.0, 1.0, 2.0], &[0.0, 1.0, 2.0], (0.0, 2.0));
    assert_eq!(s, 1.0);
    assert!(dev.is_nan());
    assert!(!matches!(
        dev.partial_cmp(&STEADY_TOLERANCE),
        Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal)
    ));
    let (s, se, dev) = steady_rate(&[0.0], &[1.0], (0.0, 1.0));
    assert!(s.is_nan() && se.is_nan() && dev.is_nan());
}

#[test]
fn measurement_writer_round_trip_and_resume() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = MeasurementWriter::new(dir.path()).unwrap();
    let flow = w
        .create("hopper_flow", &["rate", "cumulative_mass"])
        .unwrap();
    let bed = w.create("bed", &["height"]).unwrap();
    assert_eq!(
        w.path(flow),
        dir.path().join("measurements/hopper_flow.csv")
    );
    for i in 0..5 {
        let t = i as f64 * 0.1;
        w.append(flow, t, &[1.5, 1.5 * t]).unwrap();
        w.append(bed, t, &[if i == 2 { f64::NAN } else { i as f64 / 1e7 }])
            .unwrap();
    }
    // Queued, not yet written.
    let text = std::fs::read_to_string(w.path(flow)).unwrap();
    assert_eq!(text, "time,rate,cumulative_mass\n");
    w.flush().unwrap();
    let text = std::fs::read_to_string(w.path(flow)).unwrap();
    assert_eq!(text.lines().count(), 6);
    assert_eq!(text.lines().nth(2).unwrap(), "0.1,1.5,0.15000000000000002");
    let bed_text = std::fs::read_to_string(w.path(bed)).unwrap();
    assert_eq!(
        bed_text,
        "time,height\n0,0\n0.1,1e-7\n0.2,NaN\n0.30000000000000004,3e-7\n0.4,4e-7\n"
    );

    // Refusals.
    assert!(w.append(flow, 1.0, &[1.0]).is_err());
    assert!(w.create("hopper_flow", &["x"]).is_err());
    assert!(w.create("bad name", &["x"]).is_err());
    assert!(w.create("../escape", &["x"]).is_err());
    assert!(w.create("cols", &["a,b"]).is_err());
    assert!(w.create("cols", &["time"]).is_err());
    assert!(w.create("cols", &["a", "a"]).is_err());
    w.finish().unwrap();

    // Restart after t = 0.2: later rows dropped, a torn line discarded, appends continue.
    let path = dir.path().join("measurements/hopper_flow.csv");
    let mut torn = std::fs::read_to_string(&path).unwrap();
    torn.push_str("0.5,1.5,0.7");
    std::fs::write(&path, torn).unwrap();
    let mut w = MeasurementWriter::new(dir.path()).unwrap();
    let flow = w
        .resume("hopper_flow", &["rate", "cumulative_mass"], 0.2)
        .unwrap();
    w.append(flow, 0.3, &[2.0, 0.5]).unwrap();
    w.finish().unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "time,rate,cumulative_mass\n0,1.5,0\n0.1,1.5,0.15000000000000002\n0.2,1.5,0.30000000000000004\n0.3,2,0.5\n"
    );
    // A changed measurement is not silently appended to.
    let mut w = MeasurementWriter::new(dir.path()).unwrap();
    let e = w.resume("hopper_flow", &["rate"], 0.2).unwrap_err();
    assert!(e.to_string().contains("hopper_flow.csv:1:"), "{e}");
    // A missing file is simply created.
    let id = w.resume("new_one", &["x"], 0.2).unwrap();
    assert_eq!(std::fs::read_to_string(w.path(id)).unwrap(), "time,x\n");
    drop(w);

    // The plots read what the writer writes.
    bristlecone::io::StatsWriter::create(dir.path().join("stats.csv"))
        .unwrap()
        .finish()
        .unwrap();
    let plots = bristlecone::plot::plot_run(dir.path()).unwrap();
    let names: Vec<_> = plots
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        ["measurement_bed.png", "measurement_hopper_flow.png"]
    );
}

/// A heap of spheres (radius `r`) on a square lattice of spacing 2r, every lattice site
/// whose top lies under the surface z = h − tan(θ) ρ (ρ from (cx, cy) for a cone, |x − cx|
/// for a planar heap of width `w` along y).
fn heap(theta_deg: f64, h: f64, r: f64, planar: bool, centre: [f64; 2]) -> BodyState {
    let mut s = BodyState::from_inits(&[wall(-1.0)]);
    let s_ = theta_deg.to_radians().tan();
    let reach = h / s_;
    let n = (reach / (2.0 * r)).ceil() as i64 + 1;
    let ny = if planar { 3 } else { n };
    for k in 0.. {
        let z = r + 2.0 * r * k as f64;
        if z + r > h {
            break;
        }
        for j in -ny..=ny {
            for i in -n..=n {
                let (x, y) = (2.0 * r * i as f64, 2.0 * r * j as f64);
                let rho = if planar { x.abs() } else { x.hypot(y) };
                if z + r <= h - s_ * rho {
                    s.push(&BodyInit::sphere(
                        [(centre[0] + x) as f32, (centre[1] + y) as f32, z as f32],
                        r as f32,
                        1.0,
                    ));
                }
            }
        }
    }
    s
}

#[test]
fn repose_angle_of_lattice_heaps() {
    use bristlecone::measure::{repose_angle, HeapAxis};
    for theta in [20.0, 30.0, 40.0] {
        // A conical heap about (0.3, -0.2) (found from the grains' mean, no centre given) and a
        // planar one about x = 0.1: the fitted angle is within 1° (the lattice steps the
        // surface by one grain).
        let s = heap(theta, 0.08, 0.004, false, [0.3, -0.2]);
        let a = repose_angle(&s, 1, HeapAxis::Radial, None, None);
        println!("cone {theta}°: {a:?} ({} grains)", s.len() - 1);
        assert!((a.angle_deg - theta).abs() < 1.0, "cone {theta}: {a:?}");
        assert!(a.bins >= 5);
        // The lattice's steps are the only departure from the line: under a grain radius.
        assert!(a.flank_rms < 0.004, "cone {theta}: {a:?}");
        let s = heap(theta, 0.1, 0.002, true, [0.1, 0.0]);
        let a = repose_angle(&s, 1, HeapAxis::X, Some([0.1, 0.0]), None);
        println!("planar {theta}°: {a:?}");
        assert!((a.angle_deg - theta).abs() < 1.0, "planar {theta}: {a:?}");
        assert!(a.flank_rms < 0.002, "planar {theta}: {a:?}");
    }
    // A few grains that rolled far from a 30° heap move neither the default flank (the reach
    // is a 0.98 quantile) nor the fit; an explicit flank band gives the same slope.
    let mut s = heap(30.0, 0.08, 0.004, false, [0.0, 0.0]);
    let n = s.len() - 1;
    for k in 0..n / 100 {
        let a = k as f32 * 0.7;
        s.push(&BodyInit::sphere(
            [2.0 * a.cos(), 2.0 * a.sin(), 0.004],
            0.004,
            1.0,
        ));
    }
    let a = repose_angle(&s, 1, HeapAxis::Radial, Some([0.0, 0.0]), None);
    assert!((a.angle_deg - 30.0).abs() < 1.0, "{a:?}");
    let b = repose_angle(
        &s,
        1,
        HeapAxis::Radial,
        Some([0.0, 0.0]),
        Some([0.03, 0.11]),
    );
    assert!((b.angle_deg - 30.0).abs() < 1.0, "{b:?}");
    // A standing block (a 0.1 m high wall of grains to |x| = 0.05, one layer beyond to 0.1)
    // has its edge inside the flank band: the line through that step misses the tops by
    // about a quarter of the step, which `flank_rms` shows where the angle alone does not.
    let mut step = BodyState::default();
    step.push(&BodyInit::fixed(SHAPE_PLANE, 0, [0.0; 3], 0.2));
    for i in -25..=25 {
        let x = 0.004 * i as f32;
        let top = if x.abs() < 0.05 { 0.1 } else { 0.004 };
        step.push(&BodyInit::sphere([x, 0.0, top - 0.002], 0.002, 1.0));
    }
    let a = repose_angle(&step, 1, HeapAxis::X, Some([0.0, 0.0]), None);
    assert!(a.flank_rms > 0.015, "{a:?}");
    // No grains, or a flank with fewer than 3 occupied bins: NaN, not a number made up.
    let none = repose_angle(&s, s.len(), HeapAxis::Radial, None, None);
    assert!(none.angle_deg.is_nan() && none.bins == 0);
    let thin = repose_angle(
        &s,
        1,
        HeapAxis::Radial,
        Some([0.0, 0.0]),
        Some([0.1, 0.1 + 1e-3]),
    );
    assert!(thin.angle_deg.is_nan());
}
