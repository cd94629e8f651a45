//! Cost of the non-sphere shapes, in one run on one adapter:
//!
//! 1. Narrow phase per pair type: a simple-cubic lattice of N grains (default 8000), all of
//!    bounding radius R = 1 cm at spacing 1.9 R, coloured like a checkerboard so that every
//!    face neighbour of an A grain is a B grain (for A = B, all grains alike). Each grain
//!    has a seeded random orientation, so every face-neighbour pair (3 per grain) is a
//!    candidate; whether it touches depends on the shapes. Reported: ms per detection
//!    (broad + narrow phase, count and write passes), candidate pairs/s, and the narrow
//!    phase's pairs/s after subtracting the sphere–sphere lattice's time (whose narrow
//!    phase is a distance test: its time is the broad phase's and the list's).
//!    Shapes: sphere (r = R), box (a cube, half extent R/√3), capsule (r = 0.4 R,
//!    half length 0.6 R), clump (three spheres of 0.5 R at 0.5 R from the centre), hull
//!    (a stone: the hull of 14 seeded points on a 1.3 × 1 × 0.7 ellipsoid).
//! 2. A dense block of 10⁴ three-sphere clumps on a floor beside the same block of 10⁴
//!    spheres (lattice generator, radius 4 mm, spacing 2r: bounding spheres touching, the
//!    bottom layer on the floor; clumps at random orientations, so they touch less): ms per
//!    step over steps 21–60 (dt 5e-4, APGD ≤ 100 iterations), alternating batches of 10.
//! 3. GPU memory per body and per contact (`Simulation::memory_bytes`; plus the shape table:
//!    64 B per shape record and 16 B per clump member).
//! 4. Grains against a mesh (part `mesh`): a square layer of N grains (spacing 2.2 R,
//!    random orientations, centres 0.8 R above the floor) on a flat mesh floor of
//!    triangles of leg R (each triangle in a grain's bin is a candidate: the bins are at
//!    most 64 per axis, so a large floor puts tens in each), per grain kind: ms per
//!    detection, and the mesh narrow phase's (grain, triangle) candidates/s after
//!    subtracting the same layer over a plane (one test per grain).
//!
//! `cargo bench --bench shapes` (`BRISTLECONE_SHAPES_N` sets N; `BRISTLECONE_SHAPES_PARTS`
//! = any of `narrow`, `pile`, `mesh`, the default `narrow,pile,mesh`; `BRISTLECONE_SHAPES_PAIRS` = the
//! pair types to run, e.g. `Box-Sphere,Box-Box`, default all; sphere–sphere always runs).

use bristlecone::bodies::*;
use bristlecone::collide::{BoundaryShape, Collide, CollideSettings};
use bristlecone::gpu::{shared_context, GpuContext};
use bristlecone::scene::parse_str;
use bristlecone::setup;
use bristlecone::step::Simulation;
use glam::DQuat;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

const R: f32 = 0.01;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    Sphere,
    Box,
    Capsule,
    Clump,
    Hull,
    Cylinder,
}

/// The hull grain: 14 seeded points on a stretched sphere (a stone), its bounding radius R.
fn stone() -> &'static BoundaryShape {
    static S: std::sync::OnceLock<BoundaryShape> = std::sync::OnceLock::new();
    S.get_or_init(|| {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let pts: Vec<[f64; 3]> = (0..14)
            .map(|_| {
                let mut u = || rng.random_range(-1.0..1.0);
                let v = glam::DVec3::new(u(), u(), u()).normalize();
                (v * glam::DVec3::new(1.3, 1.0, 0.7)).to_array()
            })
            .collect();
        let h = bristlecone::convex::ConvexHull::new(&pts).expect("stone hull");
        h.scaled(R as f64 / h.bounding_radius()).grain_shape()
    })
}

/// Pushes a grain of `kind` at `p` (bounding radius R, random orientation).
fn push(
    s: &mut BodyState,
    shapes: &mut Vec<BoundaryShape>,
    kind: Kind,
    p: [f32; 3],
    rng: &mut ChaCha8Rng,
) {
    let q = DQuat::from_xyzw(
        rng.random_range(-1.0..1.0),
        rng.random_range(-1.0..1.0),
        rng.random_range(-1.0..1.0),
        rng.random_range(-1.0..1.0),
    )
    .normalize()
    .as_quat()
    .to_array();
    let (shape, code) = match kind {
        Kind::Sphere => return s.push(&BodyInit::sphere(p, R, 2500.0)),
        Kind::Box => (
            BoundaryShape::GrainBox {
                half_extents: [R / 3f32.sqrt(); 3],
            },
            SHAPE_BOX,
        ),
        Kind::Capsule => (
            BoundaryShape::GrainCapsule {
                radius: 0.4 * R,
                half_length: 0.6 * R,
            },
            SHAPE_CAPSULE,
        ),
        Kind::Hull => (stone().clone(), SHAPE_CONVEX),
        Kind::Cylinder => (
            BoundaryShape::GrainCylinder {
                radius: 0.6 * R,
                half_length: 0.8 * R,
            },
            SHAPE_CYLINDER,
        ),
        Kind::Clump => {
            let m = |a: f32| [0.5 * R * a.cos(), 0.5 * R * a.sin(), 0.0, 0.5 * R];
            let t = 2.0 * std::f32::consts::PI / 3.0;
            (
                BoundaryShape::GrainClump {
                    members: vec![m(0.0), m(t), m(2.0 * t)],
                },
                SHAPE_CLUMP,
            )
        }
    };
    shapes.push(shape);
    s.push(&BodyInit {
        orientation: q,
        shape: code,
        shape_index: shapes.len() as u32 - 1,
        radius: R,
        ..BodyInit::sphere(p, 1.0, 2500.0)
    });
}

/// Checkerboard lattice of `n` grains: kind `a` where i + j + k is even, else `b`.
fn lattice(n: usize, a: Kind, b: Kind) -> (BodyState, Vec<BoundaryShape>) {
    let side = (n as f64).cbrt().ceil() as usize;
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let (mut s, mut shapes) = (BodyState::default(), Vec::new());
    for k in 0..n {
        let (i, j, l) = (k % side, (k / side) % side, k / (side * side));
        let p = [i, j, l].map(|x| x as f32 * 1.9 * R);
        let kind = if (i + j + l) % 2 == 0 { a } else { b };
        push(&mut s, &mut shapes, kind, p, &mut rng);
    }
    (s, shapes)
}

/// Median seconds of 7 detections (after one warm-up); (seconds, contacts, touching pairs,
/// hash of the contact list).
fn detect_time(
    ctx: &GpuContext,
    state: &BodyState,
    shapes: &[BoundaryShape],
) -> (f64, u32, usize, u64) {
    let settings = CollideSettings {
        envelope: 0.05 * R,
        friction: vec![0.5],
    };
    let bodies = GpuBodies::upload(ctx, state).expect("bodies");
    let mut c = Collide::new(ctx, &bodies, state, shapes, &settings).expect("collide");
    let counts = c.detect(ctx).expect("detect");
    assert_eq!(counts.overflow, 0, "contact list overflow");
    let list = c.read_contacts(ctx).expect("contacts");
    let mut pairs: Vec<_> = list.iter().map(|r| (r.ids[0], r.ids[1])).collect();
    pairs.dedup();
    // FNV-1a of the list's bytes: shader variants must give the identical contact set.
    let hash = bytemuck::cast_slice::<_, u8>(&list)
        .iter()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
            (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
        });
    let mut t: Vec<f64> = (0..7)
        .map(|_| {
            let t0 = Instant::now();
            let mut enc = ctx.device.create_command_encoder(&Default::default());
            c.record(&mut enc);
            ctx.queue.submit([enc.finish()]);
            ctx.wait();
            t0.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(f64::total_cmp);
    (t[3], counts.contacts, pairs.len(), hash)
}

fn narrow_phase(ctx: &GpuContext, n: usize) {
    use Kind::*;
    let types = [
        (Sphere, Sphere),
        (Box, Box),
        (Box, Sphere),
        (Capsule, Capsule),
        (Capsule, Box),
        (Capsule, Sphere),
        (Clump, Clump),
        (Clump, Sphere),
        (Clump, Box),
        (Clump, Capsule),
        (Hull, Hull),
        (Hull, Box),
        (Hull, Sphere),
        (Hull, Clump),
        (Cylinder, Cylinder),
        (Cylinder, Box),
        (Cylinder, Hull),
        (Cylinder, Capsule),
        (Cylinder, Sphere),
    ];
    println!("narrow phase: {n} grains, R = {R} m, lattice 1.9 R, 3 candidate pairs per grain");
    println!("| pair | contacts | touching pairs | ms / detection | candidate pairs/s | narrow-phase pairs/s | list hash |");
    println!("|---|---|---|---|---|---|---|");
    // `BRISTLECONE_SHAPES_PAIRS`: comma-separated pairs to run (e.g. `Box-Sphere`); default all.
    let only = std::env::var("BRISTLECONE_SHAPES_PAIRS").ok();
    let mut base = None;
    for (a, b) in types {
        let name = format!("{a:?}-{b:?}");
        if (a, b) != (Sphere, Sphere)
            && only
                .as_ref()
                .is_some_and(|o| !o.split(',').any(|x| x == name))
        {
            continue;
        }
        let (state, shapes) = lattice(n, a, b);
        let (t, contacts, touching, hash) = detect_time(ctx, &state, &shapes);
        let base_t = *base.get_or_insert(t);
        let cand = 3.0 * n as f64;
        let narrow = if t > base_t && (a, b) != (Sphere, Sphere) {
            format!("{:.2e}", cand / (t - base_t))
        } else {
            "—".to_string()
        };
        println!(
            "| {a:?}–{b:?} | {contacts} | {touching} | {:.2} | {:.2e} | {narrow} | {hash:016x} |",
            t * 1e3,
            cand / t
        );
    }
}

fn pile_text(clumps: bool) -> String {
    let spheres = if clumps {
        "spheres = [[-0.5, 0.0, 0.0, 0.5], [0.5, 0.0, 0.0, 0.5], [0.0, 0.866, 0.0, 0.5]]\n"
    } else {
        ""
    };
    format!(
        r#"
[simulation]
dt = 5e-4
steps = 1000
[solver]
max_iterations = 100
[[material]]
name = "grain"
density = 2500.0
friction = 0.5
[[boundary]]
kind = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
material = "grain"
[[generator]]
kind = "lattice"
material = "grain"
region = {{ kind = "box", min = [-0.1, -0.1, 0.0], max = [0.1, 0.1, 0.2] }}
radius = 0.004
spacing = 0.008
jitter = 0.0
seed = 3
max_count = 10000
{spheres}"#
    )
}

/// Shape-table bytes of a state: 64 B per shape record, 16 B per clump member.
fn shape_bytes(scene: &bristlecone::scene::Scene) -> u64 {
    use bristlecone::scene::BodyShape;
    scene
        .bodies
        .iter()
        .map(|b| match &b.shape {
            BodyShape::Sphere { .. } => 0,
            BodyShape::Clump(c) => 64 + 16 * c.members.len() as u64,
            _ => 64,
        })
        .sum()
}

fn pile(ctx: &Arc<GpuContext>) {
    let mut sims = Vec::new();
    for clumps in [false, true] {
        let scene = parse_str(&pile_text(clumps), Path::new("pile.toml")).expect("scene");
        let state = setup::build_bodies(&scene);
        let sim = Simulation::new(ctx.clone(), &state, setup::step_settings(&scene)).expect("sim");
        sims.push((clumps, scene, sim, 0.0f64));
    }
    for (_, _, sim, _) in sims.iter_mut() {
        sim.advance(20, 0).expect("steps");
    }
    for _ in 0..4 {
        for (_, _, sim, wall) in sims.iter_mut() {
            let t0 = Instant::now();
            sim.advance(10, 0).expect("steps");
            sim.read_state().expect("state");
            *wall += t0.elapsed().as_secs_f64();
        }
    }
    println!("\npile: dense block of 10⁴ grains on a floor, ms per step over steps 21–60");
    for (clumps, scene, sim, wall) in &sims {
        let m = sim.memory_bytes();
        let n = scene.bodies.len() as f64;
        let (_, contacts) = sim.read_contacts().expect("contacts");
        let per_body =
            (m.bodies + m.collide_fixed + m.solver_bodies + shape_bytes(scene)) as f64 / n;
        println!(
            "{}: {} bodies, {:.1} ms/step, {} contacts at step 60; memory {:.0} B/body, {:.0} B/contact (capacity {})",
            if *clumps { "clumps of 3" } else { "spheres" },
            scene.bodies.len(),
            wall / 40.0 * 1e3,
            contacts.len(),
            per_body,
            m.contacts as f64 / m.contact_capacity.max(1) as f64,
            m.contact_capacity
        );
    }
}

/// A layer of `n` grains of `kind` over a floor at z = 0: a flat mesh of triangles of leg R
/// (`mesh`), or a plane. Returns the state, shapes and the mesh's triangle count.
fn floor_layer(n: usize, kind: Kind, mesh: bool) -> (BodyState, Vec<BoundaryShape>, usize) {
    let side = (n as f64).sqrt().ceil() as usize;
    let (mut s, mut shapes) = (BodyState::default(), Vec::new());
    let extent = side as f32 * 2.2 * R;
    let mut tris = 0;
    if mesh {
        let m = (extent / R).ceil() as u32 + 2;
        let at = |i: u32, j: u32| j * (m + 1) + i;
        let vertices: Vec<[f32; 3]> = (0..=m)
            .flat_map(|j| (0..=m).map(move |i| [(i as f32 - 1.0) * R, (j as f32 - 1.0) * R, 0.0]))
            .collect();
        let triangles: Vec<[u32; 3]> = (0..m)
            .flat_map(|j| {
                (0..m).flat_map(move |i| {
                    let (a, b, c, d) = (at(i, j), at(i + 1, j), at(i + 1, j + 1), at(i, j + 1));
                    [[a, b, c], [a, c, d]]
                })
            })
            .collect();
        tris = triangles.len();
        shapes.push(BoundaryShape::Mesh {
            vertices,
            triangles,
        });
        s.push(&BodyInit::fixed(SHAPE_MESH, 0, [0.0; 3], extent));
    } else {
        shapes.push(BoundaryShape::Plane);
        s.push(&BodyInit::fixed(SHAPE_PLANE, 0, [0.0; 3], 0.0));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for k in 0..n {
        let (i, j) = (k % side, k / side);
        let p = [i as f32 * 2.2 * R, j as f32 * 2.2 * R, 0.8 * R];
        push(&mut s, &mut shapes, kind, p, &mut rng);
    }
    (s, shapes, tris)
}

fn mesh_floor(ctx: &GpuContext, n: usize) {
    use Kind::*;
    println!("
mesh floor: {n} grains in a layer (spacing 2.2 R, centres 0.8 R up) on a flat mesh of triangles of leg R, or a plane");
    println!("| grain | triangles | contacts (mesh) | ms / detection, plane | ms / detection, mesh | (grain, triangle) candidates | mesh narrow-phase candidates/s |");
    println!("|---|---|---|---|---|---|---|");
    for kind in [Sphere, Box, Capsule, Cylinder, Hull, Clump] {
        let (ps, pshapes, _) = floor_layer(n, kind, false);
        let (tp, _, _, _) = detect_time(ctx, &ps, &pshapes);
        let (ms, mshapes, tris) = floor_layer(n, kind, true);
        let (tm, contacts, _, _) = detect_time(ctx, &ms, &mshapes);
        let cand = mesh_candidates(&mshapes[0], &ms);
        println!(
            "| {kind:?} | {tris} | {contacts} | {:.2} | {:.2} | {cand} | {:.2e} |",
            tp * 1e3,
            tm * 1e3,
            cand as f64 / (tm - tp).max(1e-9)
        );
    }
}

/// The (grain, triangle) pairs the GPU's walls stage visits: the triangles in each grain
/// centre's bin (bins as `Collide::new` builds them).
fn mesh_candidates(mesh: &BoundaryShape, s: &BodyState) -> usize {
    let BoundaryShape::Mesh {
        vertices,
        triangles,
    } = mesh
    else {
        return 0;
    };
    let rmax = s.pos[1..].iter().map(|p| p[3]).fold(0.0f32, f32::max);
    let bins = bristlecone::collide::mesh::MeshBins::new(vertices, triangles, rmax + 0.05 * R);
    s.pos[1..]
        .iter()
        .map(|p| {
            let c = [0, 1, 2].map(|a| {
                (((p[a] - bins.origin[a]) / bins.cell).floor().max(0.0) as u32)
                    .min(bins.dims[a] - 1)
            });
            let b = (c[0] + bins.dims[0] * (c[1] + bins.dims[1] * c[2])) as usize;
            (bins.offsets[b + 1] - bins.offsets[b]) as usize
        })
        .sum()
}

fn main() {
    let ctx = shared_context();
    println!("adapter: {}", ctx.describe());
    let n: usize = std::env::var("BRISTLECONE_SHAPES_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8000);
    let parts = std::env::var("BRISTLECONE_SHAPES_PARTS").unwrap_or("narrow,pile,mesh".into());
    if parts.contains("narrow") {
        narrow_phase(&ctx, n);
    }
    if parts.contains("pile") {
        pile(&ctx);
    }
    if parts.contains("mesh") {
        mesh_floor(&ctx, n);
    }
}
