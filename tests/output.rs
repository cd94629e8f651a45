//! What a run writes for ParaView and for analysis beyond the grains: the boundaries' surfaces
//! at their scheduled poses, the contact-force CSV and its threshold, the grains' contact
//! force and average stress, and the plots' axis labels and tick labels.

use bristlecone::gpu::shared_context;
use bristlecone::io::contact_forces::{grain_loads, read_contact_forces};
use bristlecone::measure::ContactForce;
use bristlecone::plot::{measurement_axes, TickFormat};
use bristlecone::run::{run_scene, RunOptions, Silent};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use vtkio::model::{Attribute, DataSet, IOBuffer, Piece, PolyDataPiece};

fn run(scene_text: &str, dir: &Path) -> std::path::PathBuf {
    let scene = dir.join("scene.toml");
    std::fs::write(&scene, scene_text).unwrap();
    let out = dir.join("out");
    let opts = RunOptions {
        out_dir: Some(out.clone()),
        ..Default::default()
    };
    run_scene(
        shared_context(),
        &scene,
        &opts,
        &AtomicBool::new(false),
        &mut Silent,
    )
    .unwrap();
    out
}

fn piece(path: &Path) -> PolyDataPiece {
    let vtk = vtkio::Vtk::import(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let DataSet::PolyData { mut pieces, .. } = vtk.data else {
        panic!("not polydata")
    };
    let Piece::Inline(p) = pieces.remove(0) else {
        panic!("not inline")
    };
    *p
}

fn array(attrs: &[Attribute], name: &str) -> IOBuffer {
    attrs
        .iter()
        .find_map(|a| match a {
            Attribute::DataArray(d) if d.name == name => Some(d.data.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no array {name}"))
}

const MATERIAL: &str = "[[material]]\nname = \"m\"\ndensity = 1000.0\nfriction = 0.5\n";

/// A kinematic solid box pushed along x by its schedule (1 m/s from t = 5 ms to 15 ms):
/// at every frame its 8 vertices are where the schedule puts them at the frame's time, and
/// the plane beside it is drawn as a square in z = 0 around the scene.
#[test]
fn boundary_surfaces_follow_their_schedule() {
    let dir = tempfile::tempdir().unwrap();
    let (x0, h) = (0.5, 0.05);
    let text = format!(
        "[simulation]\ndt = 1e-3\nsteps = 20\n{MATERIAL}\
         [[boundary]]\nkind = \"plane\"\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\n\
         [[boundary]]\nkind = \"box\"\nmotion = \"kinematic\"\nposition = [{x0}, 0.0, 0.2]\n\
         half_extents = [{h}, {h}, {h}]\n\
         schedule = [{{ t = 0.005, velocity = [1.0, 0.0, 0.0] }}, {{ t = 0.015, velocity = [0.0, 0.0, 0.0] }}]\n\
         [[body]]\nshape = \"sphere\"\nradius = 0.01\nposition = [0.0, 0.0, 0.01]\n\
         [output]\nframe_every = 10\n"
    );
    let out = run(&text, dir.path());
    let pvd = std::fs::read_to_string(out.join("boundaries.pvd")).unwrap();
    for (step, time) in [(0u64, 0.0f64), (10, 0.01), (20, 0.02)] {
        let name = format!("frames/boundaries_{step:08}.vtp");
        assert!(pvd.contains(&name), "{name} not in boundaries.pvd:\n{pvd}");
        let p = piece(&out.join(&name));
        let pts: Vec<f32> = p.points.cast_into().unwrap();
        assert_eq!(pts.len(), 3 * (4 + 8), "plane patch + box corners");
        let IOBuffer::U32(ids) = array(&p.data.cell, "boundary") else {
            panic!("boundary is not u32")
        };
        assert_eq!(ids, vec![0, 1, 1, 1, 1, 1, 1], "one patch, six box faces");
        for q in pts[..12].chunks_exact(3) {
            assert_eq!(q[2], 0.0, "plane patch vertex {q:?} off z = 0");
        }
        let shift = (time.min(0.015) - 0.005).max(0.0);
        let cx = x0 + shift;
        for q in pts[12..].chunks_exact(3) {
            let expect = [cx, 0.0, 0.2];
            for k in 0..3 {
                let d = (q[k] as f64 - expect[k]).abs();
                assert!(
                    (d - h).abs() < 2e-5,
                    "step {step}: vertex {q:?} is not a corner of the box at x = {cx}"
                );
            }
        }
    }
}

/// A 1 cm steel-like sphere resting on a fixed plane: the contact-force CSV's one contact
/// carries N = m g (the solve's tolerance is far below 1 %), no friction; the grain frame's
/// `contact_force` is m g up and its `stress` σ_zz = −R m g / V; the boundaries are written
/// once and referenced by every frame; a threshold above m g leaves the CSV empty.
#[test]
fn a_resting_sphere_carries_its_weight_in_the_contact_csv() {
    let (r, rho, g) = (0.01f64, 1000.0f64, 9.81f64);
    let volume = 4.0 / 3.0 * std::f64::consts::PI * r.powi(3);
    let weight = rho * volume * g;
    let scene = |min: &str| {
        format!(
            "[simulation]\ndt = 1e-3\nsteps = 20\ngravity = [0.0, 0.0, -{g}]\n{MATERIAL}\
             [[boundary]]\nkind = \"plane\"\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\n\
             [[body]]\nshape = \"sphere\"\nradius = {r}\nposition = [0.0, 0.0, {r}]\n\
             [output]\nframe_every = 10\ncontacts = true\n{min}"
        )
    };
    let dir = tempfile::tempdir().unwrap();
    let out = run(&scene(""), dir.path());
    let rows = read_contact_forces(&out.join("frames/contacts_00000020.csv")).unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    let c = &rows[0];
    assert_eq!((c.body_a, c.body_b), (0, 1));
    assert!(
        (c.normal_force() / weight - 1.0).abs() < 0.01,
        "N = {} vs m g = {weight}",
        c.normal_force()
    );
    assert!(c.tangential_force() < 1e-3 * weight, "{c:?}");

    let p = piece(&out.join("frames/particles_00000020.vtp"));
    let f: Vec<f32> = array(&p.data.point, "contact_force").cast_into().unwrap();
    assert!(
        (f[2] as f64 / weight - 1.0).abs() < 0.01,
        "contact_force {f:?}"
    );
    let s: Vec<f32> = array(&p.data.point, "stress").cast_into().unwrap();
    assert_eq!(s.len(), 9);
    let szz = -r * weight / volume;
    assert!(
        (s[8] as f64 / szz - 1.0).abs() < 0.01,
        "σ_zz {} vs {szz}",
        s[8]
    );
    let p0 = piece(&out.join("frames/particles_00000000.vtp"));
    let s0: Vec<f32> = array(&p0.data.point, "stress").cast_into().unwrap();
    assert_eq!(s0, vec![0.0; 9], "no step taken at frame 0");

    let pvd = std::fs::read_to_string(out.join("boundaries.pvd")).unwrap();
    assert_eq!(
        pvd.matches("frames/boundaries_static.vtp").count(),
        3,
        "{pvd}"
    );
    assert!(!out.join("frames/boundaries_00000010.vtp").exists());

    let strict = tempfile::tempdir().unwrap();
    let min = format!("contact_force_min = {}\n", 2.0 * weight);
    let out = run(&scene(&min), strict.path());
    let rows = read_contact_forces(&out.join("frames/contacts_00000020.csv")).unwrap();
    assert!(rows.is_empty(), "{rows:?}");
    let p = piece(&out.join("frames/contacts_00000020.vtp"));
    let pts: Vec<f32> = p.points.cast_into().unwrap();
    assert!(
        pts.is_empty(),
        "the threshold applies to the VTK contacts too"
    );
}

#[test]
fn a_contact_force_threshold_without_contact_output_is_refused() {
    let text = format!(
        "[simulation]\ndt = 1e-3\nsteps = 2\n{MATERIAL}\
         [[body]]\nshape = \"sphere\"\nradius = 0.01\nposition = [0.0, 0.0, 0.5]\n\
         [output]\ncontact_force_min = 1.0\n"
    );
    let err = bristlecone::scene::parse_str(&text, Path::new("t.toml"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("t.toml:") && err.contains("output.contact_force_min"),
        "{err}"
    );
    let negative = text
        .replace("1.0\n", "-1.0\n")
        .replace("[output]\n", "[output]\ncontacts = true\n");
    let err = bristlecone::scene::parse_str(&negative, Path::new("t.toml"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("non-negative"), "{err}");
}

/// Grain 2 (centre (1, 0, 0), volume 0.5 m³) squeezed along z by two contacts and sheared
/// by a third; grain 3 touches it. σ = Σ r ⊗ f / V by hand.
#[test]
fn grain_stress_is_the_average_of_the_contact_dyads() {
    let contact = |a: u32, b: u32, point: [f64; 3], force_on_b: [f64; 3]| ContactForce {
        body_a: a,
        body_b: b,
        point,
        force_on_b,
    };
    let contacts = [
        // A boundary (body 0) below pushes grain 2 up with 4 N at its bottom (r = (0, 0, −0.1)).
        contact(0, 2, [1.0, 0.0, -0.1], [0.0, 0.0, 4.0]),
        // Grain 2 is A: the force on it is the negative, 4 N down at its top (r = (0, 0, 0.1)).
        contact(2, 3, [1.0, 0.0, 0.1], [0.0, 0.0, 4.0]),
        // A side contact with a tangential part: on grain 2, (−2, 3, 0) at r = (0.1, 0, 0).
        contact(1, 2, [1.1, 0.0, 0.0], [-2.0, 3.0, 0.0]),
    ];
    let centres = [[1.0, 0.0, 0.0], [1.0, 0.0, 0.2]];
    let volumes = [0.5, 2.0];
    let loads = grain_loads(&contacts, &centres, &volumes, 2);
    // Σ r ⊗ f for grain 2: zz: (−0.1)(4) + (0.1)(−4) = −0.8; xx: 0.1·(−2) = −0.2;
    // xy: 0.1·3 = 0.3; all over V = 0.5.
    let mut expect = [0.0; 9];
    expect[8] = -0.8 / 0.5;
    expect[0] = -0.2 / 0.5;
    expect[1] = 0.3 / 0.5;
    for (k, (got, want)) in loads.stress[0].iter().zip(expect).enumerate() {
        assert!((got - want).abs() < 1e-12, "σ[{k}] = {got} vs {want}");
    }
    assert_eq!(loads.force[0], [-2.0, 3.0, 0.0]);
    // Grain 3 (centre (1, 0, 0.2)): 4 N up at r = (0, 0, −0.1): σ_zz = −0.4 / 2.
    assert_eq!(loads.force[1], [0.0, 0.0, 4.0]);
    assert!(
        (loads.stress[1][8] + 0.2).abs() < 1e-12,
        "{:?}",
        loads.stress[1]
    );
}

fn columns(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

#[test]
fn measurement_plots_put_one_quantity_with_its_unit_on_each_axis() {
    let wrench = measurement_axes(&columns(&["time", "fx", "fy", "fz", "tx", "ty", "tz"]));
    let labels: Vec<&str> = wrench.iter().map(|a| a.label.as_str()).collect();
    assert_eq!(labels, ["force [N]", "torque [N·m]"]);
    assert_eq!(wrench[0].columns, [1, 2, 3]);
    let flow = measurement_axes(&columns(&[
        "time",
        "net_mass",
        "mass_positive",
        "mass_negative",
        "rate",
    ]));
    let labels: Vec<&str> = flow.iter().map(|a| a.label.as_str()).collect();
    assert_eq!(labels, ["mass [kg]", "mass flow rate [kg/s]"]);
    let energy = measurement_axes(&columns(&["time", "glass", "steel", "total"]));
    assert_eq!(energy.len(), 1);
    assert_eq!(energy[0].label, "kinetic energy [J]");
    let joints = measurement_axes(&columns(&["time", "j0_fx", "j0_tz", "j0_motor", "j1_fx"]));
    let labels: Vec<&str> = joints.iter().map(|a| a.label.as_str()).collect();
    assert_eq!(labels[..2], ["force [N]", "torque [N·m]"]);
    assert_eq!(joints[0].columns, [1, 4]);
    for axes in [&wrench, &flow, &energy, &joints] {
        for a in axes.iter() {
            assert!(!a.label.contains("value"), "{a:?}");
        }
    }
}

#[test]
fn tick_labels_stay_distinct_on_a_narrow_range() {
    let (lo, hi) = (0.00110, 0.00112);
    let format = TickFormat::for_range(lo, hi);
    let labels: Vec<String> = (0..=10)
        .map(|k| format.label(lo + (hi - lo) * k as f64 / 10.0))
        .collect();
    let mut distinct = labels.clone();
    distinct.dedup();
    assert_eq!(distinct.len(), labels.len(), "{labels:?}");
    assert_eq!(labels[0], "0.001100");
    // Large and small magnitudes go scientific, still distinct; a tick at -0 reads 0.
    let big = TickFormat::for_range(2.0e6, 2.001e6);
    assert_ne!(big.label(2.0e6), big.label(2.0001e6));
    let around_zero = TickFormat::for_range(-1.0, 1.0);
    assert_eq!(around_zero.label(-1e-17), "0.0");
}

/// Solid boundaries are closed, consistently oriented surfaces (every directed edge appears
/// once and its reverse once); an open-top container lacks exactly its lid's edges.
#[test]
fn solid_boundary_surfaces_are_closed_and_containers_open_at_the_top() {
    use bristlecone::io::boundaries::local_surface;
    use bristlecone::scene::BoundaryShape;
    use std::collections::HashMap;
    let unmatched = |shape: BoundaryShape| {
        let s = local_surface(&shape);
        let mut edges: HashMap<(u32, u32), i32> = HashMap::new();
        for p in &s.polygons {
            for k in 0..p.len() {
                let (a, b) = (p[k], p[(k + 1) % p.len()]);
                *edges.entry((a, b)).or_default() += 1;
            }
        }
        let repeated = edges.values().filter(|&&n| n != 1).count();
        assert_eq!(repeated, 0, "{shape:?}: an edge twice in one direction");
        edges
            .keys()
            .filter(|&&(a, b)| !edges.contains_key(&(b, a)))
            .count()
    };
    let h = [0.1, 0.2, 0.3];
    assert_eq!(unmatched(BoundaryShape::SolidBox { half_extents: h }), 0);
    let (radius, height) = (0.05, 0.2);
    assert_eq!(
        unmatched(BoundaryShape::SolidCylinder { radius, height }),
        0
    );
    let open_box = BoundaryShape::BoxContainer {
        half_extents: h,
        open_top: true,
    };
    assert_eq!(unmatched(open_box), 4, "the rim of the missing lid");
    let open_cylinder = BoundaryShape::CylinderContainer {
        radius,
        height,
        open_top: true,
    };
    let rim = unmatched(open_cylinder.clone());
    assert!(rim > 0, "an open cylinder has a free rim");
    let s = local_surface(&open_cylinder);
    let top = s.vertices.iter().filter(|v| v[2] == height).count();
    assert_eq!(rim, top, "the rim is the top ring");
}
