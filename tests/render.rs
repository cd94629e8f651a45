//! `bristlecone render` against analytic expectations: a tiny run directory (three
//! spheres on a plane, written directly, no simulation) is drawn and every pixel is
//! checked against ray casting done here in f64; determinism; bad run directories.

use std::path::{Path, PathBuf};

use bristlecone::gpu::shared_context;
use bristlecone::io::{write_particles, Collection, ParticleFrame};
use bristlecone::render::gpu::{validate_shaders, AMBIENT, DIFFUSE, SHININESS, SPECULAR};
use bristlecone::render::image::{legend_width, viridis};
use bristlecone::render::{self, FrameSelect, RenderError, RenderOptions, ViewLayer};
use glam::DVec3;

/// (centre, radius, speed); speeds are along x.
const SPHERES: [([f64; 3], f64, f64); 3] = [
    ([0.0, 0.0, 0.1], 0.1, 0.0),
    ([0.35, 0.15, 0.1], 0.1, 0.5),
    ([-0.32, 0.2, 0.15], 0.15, 1.0),
];
const EYE: [f64; 3] = [0.25, -1.6, 0.9];
const TARGET: [f64; 3] = [0.0, 0.05, 0.1];
const FOV: f64 = 30.0;
const W: u32 = 330;
const H: u32 = 240;
const FLOOR: [f64; 3] = [215.0, 215.0, 210.0];

fn scene_text(render: &str) -> String {
    let mut s = String::from(
        "[simulation]\ndt = 1e-3\nsteps = 10\n\n[[material]]\nname = \"glass\"\ndensity = 2500.0\nfriction = 0.4\n\n\
         [[boundary]]\nkind = \"plane\"\nmaterial = \"glass\"\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\n\n",
    );
    for (c, r, _) in SPHERES {
        s += &format!("[[body]]\nradius = {r}\nposition = {c:?}\nmaterial = \"glass\"\n\n");
    }
    s + render
}

/// Writes a run directory with `frames` frames (the spheres rise by 1 mm per frame).
fn write_run(dir: &Path, render: &str, frames: usize) {
    std::fs::create_dir_all(dir.join("frames")).unwrap();
    std::fs::write(dir.join("scene.toml"), scene_text(render)).unwrap();
    let mut pvd = Collection::new(dir.join("particles.pvd"));
    for k in 0..frames {
        let pos: Vec<[f32; 3]> = SPHERES
            .iter()
            .map(|(c, _, _)| [c[0] as f32, c[1] as f32, (c[2] + 1e-3 * k as f64) as f32])
            .collect();
        let rad: Vec<f32> = SPHERES.iter().map(|s| s.1 as f32).collect();
        let vel: Vec<[f32; 3]> = SPHERES.iter().map(|s| [s.2 as f32, 0.0, 0.0]).collect();
        let ang = vec![[0.0f32; 3]; SPHERES.len()];
        let ids: Vec<u32> = (1..=SPHERES.len() as u32).collect();
        let name = format!("frames/particles_{:08}.vtp", 5 * k);
        let frame = ParticleFrame {
            step: 5 * k as u64,
            time: 5e-3 * k as f64,
            positions: &pos,
            radii: &rad,
            velocities: &vel,
            angular_velocities: &ang,
            ids: &ids,
            scalars: Vec::new(),
            vectors: Vec::new(),
        };
        write_particles(&dir.join(&name), &frame).unwrap();
        pvd.add(5e-3 * k as f64, name).unwrap();
    }
}

const EXPLICIT_VIEW: &str =
    "[render]\neye = [0.25, -1.6, 0.9]\ntarget = [0.0, 0.05, 0.1]\nfov = 30.0\n\
    width = 330\nheight = 240\nrange = [0.0, 1.0]\nsupersample = 1\nshadows = false\n";

fn read_png(path: &Path) -> (Vec<u8>, u32, u32) {
    let dec = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut r = dec.read_info().unwrap();
    let mut buf = vec![0; r.output_buffer_size()];
    let info = r.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgb);
    buf.truncate(info.buffer_size());
    (buf, info.width, info.height)
}

fn render(
    dir: &Path,
    out: &Path,
    frames: FrameSelect,
    flags: ViewLayer,
) -> Result<Vec<PathBuf>, RenderError> {
    let opts = RenderOptions {
        frames,
        out: Some(out.to_path_buf()),
        flags,
        ..Default::default()
    };
    render::render_run(shared_context(), dir, &opts).map(|r| r.written)
}

/// The pinhole camera of EXPLICIT_VIEW, built here from its definition.
struct Pinhole {
    eye: DVec3,
    f: DVec3,
    right: DVec3,
    up: DVec3,
    tan: f64,
    aspect: f64,
    aw: u32,
}

impl Pinhole {
    fn new() -> Self {
        Self::looking(EYE, TARGET, [0.0, 0.0, 1.0])
    }
    fn looking(eye: [f64; 3], target: [f64; 3], up: [f64; 3]) -> Self {
        let eye = DVec3::from(eye);
        let f = (DVec3::from(target) - eye).normalize();
        let right = f.cross(DVec3::from(up)).normalize();
        let aw = W - legend_width(W);
        Pinhole {
            eye,
            f,
            right,
            up: right.cross(f),
            tan: (0.5 * FOV).to_radians().tan(),
            aspect: aw as f64 / H as f64,
            aw,
        }
    }
    /// Pixel (column, row) that world point `p` falls in.
    fn pixel_of(&self, p: DVec3) -> (u32, u32) {
        let v = p - self.eye;
        let x = (v.dot(self.right) / v.dot(self.f) / (self.tan * self.aspect) + 1.0)
            * 0.5
            * self.aw as f64;
        let y = (1.0 - v.dot(self.up) / v.dot(self.f) / self.tan) * 0.5 * H as f64;
        (x as u32, y as u32)
    }
    /// Whether the segment from `p` along unit `d` passes through a sphere.
    fn blocked(p: DVec3, d: DVec3) -> bool {
        SPHERES.iter().any(|(c, r, _)| {
            let oc = p - DVec3::from(*c);
            let b = oc.dot(d);
            b < 0.0 && (oc - b * d).length() < *r
        })
    }
    /// The ray through the centre of pixel (x, y).
    fn ray(&self, x: u32, y: u32) -> DVec3 {
        let nx = 2.0 * (x as f64 + 0.5) / self.aw as f64 - 1.0;
        let ny = 1.0 - 2.0 * (y as f64 + 0.5) / H as f64;
        (self.f + self.right * nx * self.tan * self.aspect + self.up * ny * self.tan).normalize()
    }
    /// World size of one pixel at distance `d` along the view.
    fn pixel(&self, d: f64) -> f64 {
        2.0 * d * self.tan / H as f64
    }
}

fn light() -> DVec3 {
    render::light_dir()
}

/// The shader's lighting formula, unshadowed, in bytes.
fn shade(base: [f64; 3], n: DVec3, v: DVec3) -> [f64; 3] {
    let l = light();
    let diffuse = n.dot(l).max(0.0);
    let h = (l + v).normalize();
    let spec = if diffuse > 0.0 {
        n.dot(h).max(0.0).powf(SHININESS as f64)
    } else {
        0.0
    };
    base.map(|b| {
        let c = b / 255.0 * (AMBIENT as f64 + DIFFUSE as f64 * diffuse) + SPECULAR as f64 * spec;
        255.0 * c.clamp(0.0, 1.0)
    })
}

/// How far from (0, 0.1) on the floor the ray hits it (sup norm; infinite if it misses).
fn floor_reach(eye: DVec3, d: DVec3) -> f64 {
    if d.z >= 0.0 {
        return f64::INFINITY;
    }
    let q = eye + d * (eye.z / -d.z);
    q.x.abs().max((q.y - 0.1).abs())
}

fn close(px: &[u8], want: [f64; 3], tol: f64) -> bool {
    (0..3).all(|c| (px[c] as f64 - want[c]).abs() <= tol)
}

#[test]
fn render_shaders_validate_with_naga() {
    validate_shaders().unwrap();
}

#[test]
fn silhouettes_colours_and_background_match_ray_casting() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    write_run(&run, EXPLICIT_VIEW, 1);
    let written = render(
        &run,
        &tmp.path().join("img"),
        FrameSelect::Last,
        ViewLayer::default(),
    )
    .unwrap();
    assert_eq!(written.len(), 1);
    let (img, w, h) = read_png(&written[0]);
    assert_eq!((w, h), (W, H));
    let cam = Pinhole::new();
    let (mut inside, mut floor, mut background) = (0, 0, 0);
    for y in 0..H {
        for x in 0..cam.aw {
            if y < 30 && x < 130 {
                continue; // the caption
            }
            let d = cam.ray(x, y);
            let px = &img[((y * W + x) * 3) as usize..][..3];
            // Nearest sphere hit, and how far (in pixels) the ray passes from each outline.
            let mut nearest: Option<(f64, usize)> = None;
            let mut near_edge = false;
            for (k, (c, r, _)) in SPHERES.iter().enumerate() {
                let oc = cam.eye - DVec3::from(*c);
                let b = oc.dot(d);
                let perp = (oc - b * d).length();
                let margin = cam.pixel(-b);
                if (perp - r).abs() <= margin {
                    near_edge = true;
                }
                if perp < *r {
                    let t = -b - (r * r - perp * perp).sqrt();
                    if nearest.is_none_or(|(tn, _)| t < tn) {
                        nearest = Some((t, k));
                    }
                }
            }
            if near_edge {
                continue; // within one pixel of a silhouette: either answer is right
            }
            match nearest {
                Some((t, k)) => {
                    let (c, r, speed) = SPHERES[k];
                    let n = (cam.eye + t * d - DVec3::from(c)) / r;
                    let base = viridis(speed).map(f64::from);
                    let want = shade(base, n, -d);
                    assert!(
                        close(px, want, 3.0),
                        "pixel ({x}, {y}) on sphere {k}: {px:?}, expected {want:?}"
                    );
                    inside += 1;
                }
                None if floor_reach(cam.eye, d) < 0.8 => {
                    let want = shade(FLOOR, DVec3::Z, -d);
                    assert!(
                        close(px, want, 3.0),
                        "floor pixel ({x}, {y}): {px:?}, expected {want:?}"
                    );
                    floor += 1;
                }
                // The floor square spans ±2 bounds radii (≈ 1.06 here) around the bounds' centre.
                None if floor_reach(cam.eye, d) > 1.4 => {
                    assert_eq!(px, [255, 255, 255], "background pixel ({x}, {y})");
                    background += 1;
                }
                None => {}
            }
        }
    }
    // Every class is well represented (the test would pass vacuously otherwise).
    assert!(
        inside > 3000 && floor > 5000 && background > 3000,
        "{inside} {floor} {background}"
    );
}

#[test]
fn spheres_cast_shadows_on_the_floor() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    write_run(&run, EXPLICIT_VIEW, 1);
    // Straight down, so the floor around the first sphere is in view.
    let (eye, target, up) = ([0.0, 0.0, 2.0], [0.0, 0.0, 0.0], [0.0, 1.0, 0.0]);
    let flags = ViewLayer {
        shadows: Some(true),
        eye: Some(eye),
        target: Some(target),
        up: Some(up),
        ..Default::default()
    };
    let written = render(&run, &tmp.path().join("img"), FrameSelect::Last, flags).unwrap();
    let (img, _, _) = read_png(&written[0]);
    let cam = Pinhole::looking(eye, target, up);
    // Floor points 0.14 from the first sphere's axis, away from and towards the light:
    // outside its footprint (r = 0.1), the first inside its shadow (which reaches 0.18).
    let c = DVec3::from(SPHERES[0].0);
    let away = DVec3::new(-light().x, -light().y, 0.0).normalize();
    for (sign, shadowed) in [(1.0, true), (-1.0, false)] {
        let p = DVec3::new(c.x, c.y, 0.0) + sign * 0.14 * away;
        assert_eq!(
            Pinhole::blocked(p, light()),
            shadowed,
            "geometry of the test"
        );
        assert!(
            !Pinhole::blocked(p, (cam.eye - p).normalize()),
            "{p} is hidden"
        );
        let (x, y) = cam.pixel_of(p);
        let px = &img[((y * W + x) * 3) as usize..][..3];
        let v = (cam.eye - p).normalize();
        let want = if shadowed {
            FLOOR.map(|b| b * AMBIENT as f64)
        } else {
            shade(FLOOR, DVec3::Z, v)
        };
        assert!(
            close(px, want, 3.0),
            "floor at {p} ({x}, {y}): {px:?}, expected {want:?}"
        );
    }
}

#[test]
fn same_run_twice_gives_identical_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    write_run(&run, "[render]\nwidth = 200\nheight = 150\n", 2);
    let a = render(
        &run,
        &tmp.path().join("a"),
        FrameSelect::All,
        ViewLayer::default(),
    )
    .unwrap();
    let b = render(
        &run,
        &tmp.path().join("b"),
        FrameSelect::All,
        ViewLayer::default(),
    )
    .unwrap();
    let names = |v: &[PathBuf]| {
        v.iter()
            .map(|p| p.file_name().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&a), names(&b));
    assert!(names(&a).iter().any(|n| n == "animation.png"));
    assert!(names(&a).iter().any(|n| n == "contact_sheet.png"));
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(
            std::fs::read(x).unwrap(),
            std::fs::read(y).unwrap(),
            "{}",
            x.display()
        );
    }
    // The animation holds both frames.
    let apng = a.iter().find(|p| p.ends_with("animation.png")).unwrap();
    let dec = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(apng).unwrap()));
    let info = dec.read_info().unwrap();
    assert_eq!(info.info().animation_control.map(|c| c.num_frames), Some(2));
    // The two frames differ (the spheres moved), so the bytes are not trivially equal.
    assert_ne!(std::fs::read(&a[0]).unwrap(), std::fs::read(&a[1]).unwrap());
}

fn assert_fails_naming(run: &Path, out: &Path, file: &Path) {
    let e = render(run, out, FrameSelect::All, ViewLayer::default()).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains(&file.display().to_string()), "{msg}");
    assert!(!out.exists(), "{} was created", out.display());
}

#[test]
fn missing_or_corrupt_frames_are_named_and_nothing_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    write_run(&run, "[render]\nwidth = 120\nheight = 90\n", 3);
    let second = run.join("frames/particles_00000005.vtp");
    let out = tmp.path().join("out");

    let good = std::fs::read(&second).unwrap();
    std::fs::write(&second, &good[..good.len() / 2]).unwrap();
    assert_fails_naming(&run, &out, &second);

    std::fs::remove_file(&second).unwrap();
    assert_fails_naming(&run, &out, &second);

    std::fs::write(&second, &good).unwrap();
    std::fs::remove_file(run.join("particles.pvd")).unwrap();
    assert_fails_naming(&run, &out, &run.join("particles.pvd"));
}

#[test]
fn render_table_errors_name_file_line_and_field() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    write_run(&run, "[render]\ncamera = \"side\"\n", 1);
    let scene = run.join("scene.toml");
    // The scene loader accepts the table; the renderer checks it.
    bristlecone::scene::load(&scene).unwrap();
    let e = render(
        &run,
        &tmp.path().join("o"),
        FrameSelect::Last,
        ViewLayer::default(),
    )
    .unwrap_err();
    let line = scene_text("").lines().count() + 2;
    let msg = e.to_string();
    assert!(
        msg.contains(&format!("scene.toml:{line}:")) && msg.contains("render.camera"),
        "{msg}"
    );
    std::fs::write(&scene, scene_text("[render]\nzoom = 2.0\n")).unwrap();
    let msg = render(
        &run,
        &tmp.path().join("o"),
        FrameSelect::Last,
        ViewLayer::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(msg.contains("zoom"), "{msg}");
}

#[test]
fn kinematic_boundaries_are_drawn_where_their_schedule_put_them() {
    use bristlecone::render::geometry::pose_at;
    use bristlecone::scene::{Boundary, BoundaryShape, Motion, ScheduleEntry};
    let entry = |step: u64, v: [f64; 3], w: [f64; 3]| ScheduleEntry {
        t: step as f64 * 1e-3,
        step,
        velocity: v,
        angular_velocity: w,
        release: false,
    };
    // At rest until 0.1 s, 2 m/s along x until 0.3 s, then turning about z at 1 rad/s.
    let b = Boundary {
        name: "gate".into(),
        shape: BoundaryShape::SolidBox {
            half_extents: [0.1; 3],
        },
        position: [1.0, 0.0, 0.0],
        orientation: [0.0, 0.0, 0.0, 1.0],
        material: 0,
        motion: Motion::Kinematic,
        velocity: [0.0; 3],
        angular_velocity: [0.0; 3],
        schedule: vec![
            entry(100, [2.0, 0.0, 0.0], [0.0; 3]),
            entry(300, [0.0; 3], [0.0, 0.0, 1.0]),
        ],
        mass: None,
    };
    let (p, _) = pose_at(&b, 0.05, 1e-3);
    assert!((p.x - 1.0).abs() < 1e-12);
    let (p, _) = pose_at(&b, 0.2, 1e-3);
    assert!((p.x - 1.2).abs() < 1e-12, "{p}");
    let (p, q) = pose_at(&b, 0.8, 1e-3);
    assert!((p.x - 1.4).abs() < 1e-12, "{p}");
    let (axis, angle) = q.to_axis_angle();
    assert!(
        (angle - 0.5).abs() < 1e-12 && (axis.z - 1.0).abs() < 1e-12,
        "{axis} {angle}"
    );
}

// ---- bodies drawn as their shapes -----------------------------------------------------

/// Body 1 (sphere 0's place) is a box, body 2 a capsule, body 3 a clump of three spheres,
/// each inside its bounding sphere of SPHERES.
const BOX_HALF: [f64; 3] = [0.07, 0.05, 0.04];
const CAPSULE: (f64, f64) = (0.035, 0.055);
const MEMBERS: [([f64; 3], f64); 3] = [
    ([-0.07, 0.0, 0.0], 0.07),
    ([0.08, 0.02, -0.01], 0.06),
    ([0.0, -0.03, 0.07], 0.05),
];

fn box_rot() -> glam::DQuat {
    glam::DQuat::from_axis_angle(DVec3::new(0.3, 0.5, 1.0).normalize(), 0.7)
}

fn capsule_rot() -> glam::DQuat {
    glam::DQuat::from_axis_angle(DVec3::new(1.0, -0.4, 0.2).normalize(), 1.1)
}

/// The shape frames of the bodies (one frame, at t = 0, like `write_run(_, _, 1)`).
fn write_shapes(dir: &Path) {
    use bristlecone::io::{write_boxes, write_capsules, BoxFrame, CapsuleFrame};
    let f3 = |v: DVec3| v.as_vec3().to_array();
    let q4 = |q: glam::DQuat| q.as_quat().to_array();
    let c = |k: usize| DVec3::from(SPHERES[k].0);
    let name = "frames/boxes_00000000.vtp";
    let boxes = BoxFrame {
        centers: &[f3(c(0))],
        rotations: &[q4(box_rot())],
        half_extents: &[BOX_HALF.map(|x| x as f32)],
        ids: &[1],
    };
    write_boxes(&dir.join(name), &boxes).unwrap();
    let mut pvd = Collection::new(dir.join("boxes.pvd"));
    pvd.add(0.0, name).unwrap();
    let name = "frames/capsules_00000000.vtp";
    let caps = CapsuleFrame {
        centers: &[f3(c(1))],
        rotations: &[q4(capsule_rot())],
        radii: &[CAPSULE.0 as f32],
        half_lengths: &[CAPSULE.1 as f32],
        ids: &[2],
    };
    write_capsules(&dir.join(name), &caps).unwrap();
    let mut pvd = Collection::new(dir.join("capsules.pvd"));
    pvd.add(0.0, name).unwrap();
    let name = "frames/clumps_00000000.vtp";
    let pos: Vec<[f32; 3]> = MEMBERS
        .iter()
        .map(|(o, _)| f3(c(2) + DVec3::from(*o)))
        .collect();
    let rad: Vec<f32> = MEMBERS.iter().map(|m| m.1 as f32).collect();
    let zero = vec![[0.0f32; 3]; 3];
    let frame = ParticleFrame {
        step: 0,
        time: 0.0,
        positions: &pos,
        radii: &rad,
        velocities: &zero,
        angular_velocities: &zero,
        ids: &[3, 3, 3],
        scalars: Vec::new(),
        vectors: Vec::new(),
    };
    write_particles(&dir.join(name), &frame).unwrap();
    let mut pvd = Collection::new(dir.join("clumps.pvd"));
    pvd.add(0.0, name).unwrap();
}

/// What the ray from `eye` along `d` hits first among the shapes, in f64: (distance,
/// class, unit normal); class 1..=6 a box face, 10 the capsule, 20 + m clump member m.
fn hit_shapes(eye: DVec3, d: DVec3) -> Option<(f64, u32, DVec3)> {
    let mut best: Option<(f64, u32, DVec3)> = None;
    let mut take = |t: f64, class: u32, n: DVec3| {
        if t > 0.0 && best.is_none_or(|b| t < b.0) {
            best = Some((t, class, n));
        }
    };
    // The box: slabs in its frame.
    let q = box_rot();
    let (o, dl) = (
        q.inverse() * (eye - DVec3::from(SPHERES[0].0)),
        q.inverse() * d,
    );
    let (mut t0, mut t1, mut face) = (f64::NEG_INFINITY, f64::INFINITY, 0);
    for i in 0..3 {
        let (a, b) = ((-BOX_HALF[i] - o[i]) / dl[i], (BOX_HALF[i] - o[i]) / dl[i]);
        if a.min(b) > t0 {
            (t0, face) = (a.min(b), i);
        }
        t1 = t1.min(a.max(b));
    }
    if t0 <= t1 {
        let mut n = DVec3::ZERO;
        n[face] = -dl[face].signum();
        take(t0, 1 + 2 * face as u32 + (n[face] > 0.0) as u32, q * n);
    }
    // The capsule: the ray passes within the radius of the axis segment.
    let (r, hl) = CAPSULE;
    let axis = capsule_rot() * DVec3::Z;
    let a = DVec3::from(SPHERES[1].0) - hl * axis;
    let perp = |p: DVec3| (p - eye) - (p - eye).dot(d) * d;
    let (w0, w1) = (perp(a), perp(a + 2.0 * hl * axis) - perp(a));
    let s = (-w0.dot(w1) / w1.length_squared()).clamp(0.0, 1.0);
    let p = a + s * 2.0 * hl * axis;
    if (w0 + s * w1).length() < r {
        take((p - eye).dot(d), 10, DVec3::ZERO);
    }
    // The clump members.
    for (m, (off, r)) in MEMBERS.iter().enumerate() {
        let c = DVec3::from(SPHERES[2].0) + DVec3::from(*off);
        let oc = eye - c;
        let b = oc.dot(d);
        let h = (oc - b * d).length();
        if h < *r {
            let t = -b - (r * r - h * h).sqrt();
            take(t, 20 + m as u32, (eye + t * d - c) / r);
        }
    }
    best
}

#[test]
fn boxes_capsules_and_clumps_are_drawn_as_their_shapes() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    write_run(&run, EXPLICIT_VIEW, 1);
    write_shapes(&run);
    let written = render(
        &run,
        &tmp.path().join("img"),
        FrameSelect::Last,
        ViewLayer::default(),
    )
    .unwrap();
    let (img, _, _) = read_png(&written[0]);
    let cam = Pinhole::new();
    let mut count = [0usize; 4]; // box, capsule, clump, floor
    for y in 1..H - 1 {
        for x in 1..cam.aw - 1 {
            if y < 30 && x < 130 {
                continue; // the caption
            }
            let d = cam.ray(x, y);
            let hit = hit_shapes(cam.eye, d);
            let class = hit.map(|h| h.1);
            // Within one pixel of an outline (or a box edge): either answer is right.
            let edge = (0..9).any(|k| {
                let (nx, ny) = (x + k % 3 - 1, y + k / 3 - 1);
                hit_shapes(cam.eye, cam.ray(nx, ny)).map(|h| h.1) != class
            });
            if edge {
                continue;
            }
            let px = &img[((y * W + x) * 3) as usize..][..3];
            let floor = shade(FLOOR, DVec3::Z, -d);
            match hit {
                Some((_, c @ 1..=6, n)) | Some((_, c @ 20.., n)) => {
                    let speed = SPHERES[if c < 20 { 0 } else { 2 }].2;
                    let want = shade(viridis(speed).map(f64::from), n, -d);
                    assert!(
                        close(px, want, 3.0),
                        "pixel ({x}, {y}) of class {c}: {px:?}, expected {want:?}"
                    );
                    count[if c < 20 { 0 } else { 2 }] += 1;
                }
                Some(_) => {
                    // The capsule (tessellated): anything but the floor or the background.
                    assert!(
                        !close(px, floor, 20.0) && !close(px, [255.0; 3], 20.0),
                        "capsule pixel ({x}, {y}): {px:?}"
                    );
                    count[1] += 1;
                }
                None if floor_reach(cam.eye, d) < 0.8 => {
                    assert!(
                        close(px, floor, 3.0),
                        "floor pixel ({x}, {y}): {px:?}, expected {floor:?}"
                    );
                    count[3] += 1;
                }
                None => {}
            }
        }
    }
    assert!(count.iter().all(|&c| c > 150), "{count:?}");
    // Same run → same bytes, shapes included.
    let again = render(
        &run,
        &tmp.path().join("again"),
        FrameSelect::Last,
        ViewLayer::default(),
    )
    .unwrap();
    let bytes = |p: &PathBuf| std::fs::read(p).unwrap();
    assert_eq!(bytes(&written[0]), bytes(&again[0]));
}

#[test]
fn boxes_cast_shadows_on_the_floor() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    write_run(&run, EXPLICIT_VIEW, 1);
    write_shapes(&run);
    let (eye, target, up) = ([0.0, 0.0, 2.0], [0.0, 0.0, 0.0], [0.0, 1.0, 0.0]);
    let flags = ViewLayer {
        shadows: Some(true),
        eye: Some(eye),
        target: Some(target),
        up: Some(up),
        ..Default::default()
    };
    let written = render(&run, &tmp.path().join("img"), FrameSelect::Last, flags).unwrap();
    let (img, _, _) = read_png(&written[0]);
    let cam = Pinhole::looking(eye, target, up);
    // Floor points 0.1 from the box's centre line, away from and towards the light.
    let c = DVec3::from(SPHERES[0].0);
    let away = DVec3::new(-light().x, -light().y, 0.0).normalize();
    for (sign, shadowed) in [(1.0, true), (-1.0, false)] {
        let p = DVec3::new(c.x, c.y, 0.0) + sign * 0.1 * away;
        assert_eq!(
            hit_shapes(p, light()).is_some(),
            shadowed,
            "geometry of the test"
        );
        assert!(
            hit_shapes(p, (cam.eye - p).normalize()).is_none(),
            "{p} is hidden"
        );
        let (x, y) = cam.pixel_of(p);
        let px = &img[((y * W + x) * 3) as usize..][..3];
        let want = if shadowed {
            FLOOR.map(|b| b * AMBIENT as f64)
        } else {
            shade(FLOOR, DVec3::Z, (cam.eye - p).normalize())
        };
        assert!(
            close(px, want, 3.0),
            "floor at {p} ({x}, {y}): {px:?}, expected {want:?}"
        );
    }
}

#[test]
fn bad_shape_frames_are_named_and_nothing_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    write_run(&run, "[render]\nwidth = 120\nheight = 90\n", 1);
    write_shapes(&run);
    let out = tmp.path().join("out");
    let caps = run.join("frames/capsules_00000000.vtp");
    let good = std::fs::read(&caps).unwrap();
    std::fs::write(&caps, &good[..good.len() / 2]).unwrap();
    assert_fails_naming(&run, &out, &caps);
    // A box frame with the capsule layout: the point and cell counts do not fit boxes.
    std::fs::write(&caps, &good).unwrap();
    let boxes = run.join("frames/boxes_00000000.vtp");
    std::fs::copy(&caps, &boxes).unwrap();
    assert_fails_naming(&run, &out, &boxes);
    // An index without the particle frame's time.
    std::fs::write(
        run.join("clumps.pvd"),
        std::fs::read_to_string(run.join("clumps.pvd"))
            .unwrap()
            .replace("timestep=\"0\"", "timestep=\"0.5\""),
    )
    .unwrap();
    std::fs::remove_file(&boxes).unwrap();
    std::fs::remove_file(run.join("boxes.pvd")).unwrap();
    assert_fails_naming(&run, &out, &run.join("clumps.pvd"));
}

// ---- cylinders and hulls: drawn as the faces their frames carry ------------------------

/// Body 1 (sphere 0's place) is a convex hull (an irregular octahedron), body 2 a
/// cylinder; both flat-shaded polyhedra (the cylinder as its frame's 16-sided prism).
const CYL: (f64, f64) = (0.06, 0.05);

fn hull() -> bristlecone::convex::ConvexHull {
    let p = [
        [0.09, 0.0, 0.0],
        [-0.07, 0.0, 0.0],
        [0.0, 0.08, 0.0],
        [0.0, -0.06, 0.0],
        [0.0, 0.0, 0.085],
        [0.01, 0.0, -0.07],
    ];
    bristlecone::convex::ConvexHull::new(&p).unwrap()
}

/// World face planes (outward n, offset d: n·x = d) of the two bodies, by body.
fn polyhedra() -> [Vec<(DVec3, f64)>; 2] {
    let h = hull();
    let (c0, q0) = (DVec3::from(SPHERES[0].0), box_rot());
    let hull_planes = h
        .faces
        .iter()
        .map(|f| (q0 * f.normal, f.offset + (q0 * f.normal).dot(c0)))
        .collect();
    let (c1, q1) = (DVec3::from(SPHERES[1].0), capsule_rot());
    let (r, hl) = CYL;
    let step = std::f64::consts::TAU / 16.0;
    let mut cyl: Vec<(DVec3, f64)> = (0..16)
        .map(|s| {
            let phi = step * (s as f64 + 0.5);
            (
                DVec3::new(phi.cos(), phi.sin(), 0.0),
                r * (0.5 * step).cos(),
            )
        })
        .collect();
    cyl.extend([(DVec3::Z, hl), (-DVec3::Z, hl)]);
    let cyl = cyl
        .into_iter()
        .map(|(n, d)| (q1 * n, d + (q1 * n).dot(c1)))
        .collect();
    [hull_planes, cyl]
}

/// The first polyhedron face the ray from `eye` along `d` enters: (distance, body 0/1,
/// face, outward normal).
fn hit_polyhedra(
    eye: DVec3,
    d: DVec3,
    polys: &[Vec<(DVec3, f64)>; 2],
) -> Option<(f64, u32, usize, DVec3)> {
    let mut best: Option<(f64, u32, usize, DVec3)> = None;
    for (b, planes) in polys.iter().enumerate() {
        let (mut t0, mut t1, mut face) = (f64::NEG_INFINITY, f64::INFINITY, 0);
        for (k, &(n, off)) in planes.iter().enumerate() {
            let (den, dist) = (n.dot(d), off - n.dot(eye));
            if den < 0.0 && dist / den > t0 {
                (t0, face) = (dist / den, k);
            } else if den > 0.0 {
                t1 = t1.min(dist / den);
            } else if den == 0.0 && dist < 0.0 {
                t1 = f64::NEG_INFINITY;
            }
        }
        if t0 <= t1 && t0 > 0.0 && best.is_none_or(|h| t0 < h.0) {
            best = Some((t0, b as u32, face, planes[face].0));
        }
    }
    best
}

#[test]
fn cylinders_and_hulls_are_drawn_as_their_faces() {
    use bristlecone::io::cylinders::{write_cylinders, CylinderFrame};
    use bristlecone::io::hulls::write_hulls;
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    write_run(&run, EXPLICIT_VIEW, 1);
    let f3 = |v: DVec3| v.as_vec3().to_array();
    let q4 = |q: glam::DQuat| q.as_quat().to_array();
    let h = hull();
    let name = "frames/hulls_00000000.vtp";
    let pose = [(f3(DVec3::from(SPHERES[0].0)), q4(box_rot()))];
    write_hulls(&run.join(name), &[(1, &h)], &pose).unwrap();
    let mut pvd = Collection::new(run.join("hulls.pvd"));
    pvd.add(0.0, name).unwrap();
    let name = "frames/cylinders_00000000.vtp";
    let cyl = CylinderFrame {
        centers: &[f3(DVec3::from(SPHERES[1].0))],
        rotations: &[q4(capsule_rot())],
        radii: &[CYL.0 as f32],
        half_lengths: &[CYL.1 as f32],
        ids: &[2],
    };
    write_cylinders(&run.join(name), &cyl).unwrap();
    let mut pvd = Collection::new(run.join("cylinders.pvd"));
    pvd.add(0.0, name).unwrap();
    let img_dir = tmp.path().join("img");
    let written = render(&run, &img_dir, FrameSelect::Last, ViewLayer::default()).unwrap();
    let (img, _, _) = read_png(&written[0]);
    let (cam, polys) = (Pinhole::new(), polyhedra());
    let id = |x: u32, y: u32| hit_polyhedra(cam.eye, cam.ray(x, y), &polys).map(|h| (h.1, h.2));
    let mut count = [0usize; 3]; // hull, cylinder, floor
    for y in 1..H - 1 {
        for x in 1..cam.aw - 1 {
            if y < 30 && x < 130 {
                continue; // the caption
            }
            // Within one pixel of an outline or a face edge: either answer is right.
            let here = id(x, y);
            if (0..9).any(|k| id(x + k % 3 - 1, y + k / 3 - 1) != here) {
                continue;
            }
            let d = cam.ray(x, y);
            // Body 3 is still a sphere (SPHERES[2]): pixels near its disc are not checked.
            let oc = cam.eye - DVec3::from(SPHERES[2].0);
            if (oc - oc.dot(d) * d).length() < 1.05 * SPHERES[2].1 {
                continue;
            }
            let px = &img[((y * W + x) * 3) as usize..][..3];
            match hit_polyhedra(cam.eye, d, &polys) {
                Some((_, b, _, n)) => {
                    let want = shade(viridis(SPHERES[b as usize].2).map(f64::from), n, -d);
                    assert!(
                        close(px, want, 3.0),
                        "pixel ({x}, {y}) of body {b}: {px:?}, expected {want:?}"
                    );
                    count[b as usize] += 1;
                }
                None if floor_reach(cam.eye, d) < 0.8 => {
                    let floor = shade(FLOOR, DVec3::Z, -d);
                    assert!(close(px, floor, 3.0), "floor pixel ({x}, {y}): {px:?}");
                    count[2] += 1;
                }
                None => {}
            }
        }
    }
    assert!(count.iter().all(|&c| c > 150), "{count:?}");
}
