//! The shape registry (`shapes`): a convex shape given by its support function alone is
//! added through the registry's public API (book: Architecture, "Extending the engine"),
//! gets its bounding radius, mass properties and surface from the hull of its support, and
//! enters a scene by its own keys and runs on the GPU as that hull.

use crate::common::{assert_body_slides, incline_header};
use bristlecone::gpu::shared_context;
use bristlecone::model::keys::{KeyError, Problem};
use bristlecone::shapes::{
    self, cuboid::Cuboid, support_hull, BodyShape, Routine, ShapeFamily, ShapeKeys, Solid,
    FAMILIES, SHAPE_CONVEX,
};
use glam::{DQuat, DVec3};
use std::path::Path;

/// A test shape: the regular octahedron |x| + |y| + |z| ≤ a.
struct Octahedron {
    a: f64,
}

impl Solid for Octahedron {
    /// The vertex on the axis where `d` is largest in magnitude.
    fn support(&self, d: DVec3) -> DVec3 {
        let k = (0..3).fold(0, |k, i| if d[i].abs() > d[k].abs() { i } else { k });
        let mut p = DVec3::ZERO;
        p[k] = self.a * d[k].signum();
        p
    }
}

struct OctahedronFamily;

impl ShapeFamily for OctahedronFamily {
    fn name(&self) -> &'static str {
        "octahedron"
    }
    /// No GPU routine of its own: a hull there.
    fn id(&self) -> u32 {
        SHAPE_CONVEX
    }
    fn routine(&self) -> Routine {
        Routine::Convex
    }
    /// Its size: `radius`, the distance from its centre to a vertex.
    fn keys(&self) -> &'static [&'static str] {
        &["radius"]
    }
    fn parse(&self, keys: &dyn ShapeKeys) -> Option<Result<BodyShape, KeyError>> {
        let solid = shapes::positive(keys, "radius").map(|a| Octahedron { a });
        Some(solid.and_then(|o| shapes::hull_shape(&o, "radius")))
    }
}

#[test]
fn a_convex_shape_from_its_support_needs_only_the_registry() {
    let families: Vec<&dyn ShapeFamily> = FAMILIES
        .iter()
        .copied()
        .chain([&OctahedronFamily as _])
        .collect();
    assert!(shapes::find(FAMILIES, "octahedron").is_none());
    let family = shapes::find(&families, "octahedron").expect("registered");
    // It pairs with a capsule by the hull routines, with a cylinder by the cylinder's GJK.
    let routine = |name| shapes::find(&families, name).unwrap().routine();
    assert_eq!(
        Routine::of_pair(family.routine(), routine("capsule")),
        Routine::Convex
    );
    assert_eq!(
        Routine::of_pair(family.routine(), routine("cylinder")),
        Routine::Cylinder
    );

    let (a, rho) = (0.03, 2500.0);
    let o = Octahedron { a };
    assert!((o.bounding_radius() - a).abs() < 1e-15);
    // V = 4a³/3, I = m a²/5 about every axis (∫x² dV = 2a⁵/15).
    let (m, i) = o.mass_properties(rho);
    let m_exact = rho * 4.0 / 3.0 * a * a * a;
    assert!((m / m_exact - 1.0).abs() < 1e-12, "mass {m} vs {m_exact}");
    for ik in i {
        assert!(
            (ik / (0.2 * m_exact * a * a) - 1.0).abs() < 1e-12,
            "inertia {i:?}"
        );
    }
    // Its surface: the 6 vertices and 8 triangles, each facing out along a (±1, ±1, ±1).
    let s = o.surface().expect("a surface");
    assert_eq!((s.points.len(), s.polygons.len()), (6, 8));
    for p in &s.points {
        let p = DVec3::from(p.map(f64::from));
        assert!((p.abs().max_element() - a).abs() < 1e-7 && p.abs().min_element() < 1e-7);
    }
    for f in &s.polygons {
        assert_eq!(f.len(), 3);
        let v = f
            .iter()
            .map(|&k| DVec3::from(s.points[k as usize].map(f64::from)));
        let v: Vec<DVec3> = v.collect();
        let n = (v[1] - v[0]).cross(v[2] - v[0]).normalize();
        let centre = (v[0] + v[1] + v[2]) / 3.0;
        assert!(
            n.dot(centre) > 0.0,
            "face {f:?} not counter-clockwise from outside"
        );
        assert!((n.abs() - DVec3::splat(1.0 / 3f64.sqrt())).length() < 1e-6);
    }
}

/// The defaults a support function gets agree with a family's analytic ones: a box known
/// only by its support has the box's bounding radius and mass properties.
#[test]
fn the_support_hull_of_a_box_is_the_box() {
    struct SupportOnly(Cuboid);
    impl Solid for SupportOnly {
        fn support(&self, d: DVec3) -> DVec3 {
            self.0.support(d)
        }
    }
    let b = Cuboid {
        half_extents: [0.1, 0.2, 0.3],
    };
    let by_support = SupportOnly(b);
    assert!((by_support.bounding_radius() - b.bounding_radius()).abs() < 1e-14);
    let ((m, i), (ma, ia)) = (
        by_support.mass_properties(1000.0),
        b.mass_properties(1000.0),
    );
    assert!((m / ma - 1.0).abs() < 1e-12);
    let (mut i, mut ia) = (i, ia);
    i.sort_by(f64::total_cmp);
    ia.sort_by(f64::total_cmp);
    for (x, y) in i.iter().zip(ia) {
        assert!((x / y - 1.0).abs() < 1e-12, "{i:?} vs {ia:?}");
    }
    assert_eq!(support_hull(&b).unwrap().vertices.len(), 8);
}

/// The registry names each grain family once, by a distinct id, and holds every grain.
#[test]
fn families_have_distinct_names_and_ids() {
    for (k, f) in FAMILIES.iter().enumerate() {
        for g in &FAMILIES[..k] {
            assert!(
                f.name() != g.name() && f.id() != g.id(),
                "{} and {}",
                f.name(),
                g.name()
            );
        }
        assert!(bristlecone::bodies::is_grain_shape(f.id()));
    }
    assert!(!bristlecone::bodies::is_grain_shape(
        bristlecone::bodies::SHAPE_PLANE
    ));
}

/// The scene reference's `shape` rows list every family, in the registry's order.
#[test]
fn the_scene_reference_lists_every_family() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/src/scene-reference.md");
    let text = std::fs::read_to_string(path).unwrap();
    let names: Vec<String> = FAMILIES
        .iter()
        .map(|f| format!("`\"{}\"`", f.name()))
        .collect();
    let list = names.join(", ");
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("| `shape` | string"))
        .collect();
    assert!(!rows.is_empty());
    for row in rows {
        assert!(row.contains(&list), "{row}\nshould list {list}");
    }
}

/// The registry extended by the octahedron.
fn with_octahedron() -> Vec<&'static dyn ShapeFamily> {
    FAMILIES
        .iter()
        .copied()
        .chain([&OctahedronFamily as _])
        .collect()
}

/// An octahedron of `radius` a face down on a plane tilted by θ (the incline's frame), μ = 0.3.
fn octahedron_scene(theta: f64, seconds: f64, a: f64) -> String {
    // The rotation that turns the face towards (−1, −1, −1) down; its plane is a/√3 from the
    // centre.
    let q = DQuat::from_rotation_arc(DVec3::splat(-1.0).normalize(), DVec3::NEG_Z);
    format!(
        "{header}\n[[material]]\nname = \"m\"\ndensity = 2500.0\nfriction = 0.3\n\
         [[body]]\nshape = \"octahedron\"\nradius = {a}\nposition = [0.0, 0.0, {z}]\n\
         orientation = [{}, {}, {}, {}]\nmaterial = \"m\"\n\
         [[boundary]]\nkind = \"plane\"\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 0.0, 1.0]\n\
         material = \"m\"\n",
        q.x,
        q.y,
        q.z,
        q.w,
        header = incline_header(theta, seconds),
        z = a / 3f64.sqrt(),
    )
}

/// A scene names the octahedron by its family and gives its own key; the loader refuses the
/// keys it does not take and reports its rule at the key; the GPU runs it as its hull: it
/// slides down an incline steeper than the friction angle at g(sinθ − μcosθ) within 1 %,
/// face down, without tipping. Budget: 100 steps of one hull.
#[test]
fn a_registered_convex_shape_enters_a_scene_and_slides_on_the_gpu() {
    use bristlecone::{setup, step::Simulation};
    let families = with_octahedron();
    let registries = bristlecone::scene::Registries {
        shapes: &families,
        ..Default::default()
    };
    let (a, mu, t) = (0.03, 0.3f64, 0.1);
    let theta = mu.atan() + 0.15;
    let text = octahedron_scene(theta, t, a);
    let file = Path::new("octahedron.toml");
    let unknown = bristlecone::scene::parse_str(&text, file).unwrap_err();
    assert!(
        unknown.message.contains("unknown shape kind `octahedron`"),
        "{unknown}"
    );
    let scene = bristlecone::scene::parse_str_with(&text, file, registries).unwrap();
    let BodyShape::Convex(hull) = &scene.bodies[0].shape else {
        panic!("a hull: {:?}", scene.bodies[0].shape);
    };
    assert_eq!((hull.vertices.len(), hull.faces.len()), (6, 8));
    let m = 2500.0 * 4.0 / 3.0 * a * a * a;
    assert!(
        (scene.bodies[0].mass / m - 1.0).abs() < 1e-12,
        "mass {}",
        scene.bodies[0].mass
    );

    let wrong = text.replace("radius = 0.03", "half_length = 0.03");
    let e = bristlecone::scene::parse_str_with(&wrong, file, registries).unwrap_err();
    assert!(
        e.field == "body[0].half_length" && e.message.contains("its keys: `radius`"),
        "{e}"
    );
    let flat = text.replace("radius = 0.03", "radius = -0.03");
    let e = bristlecone::scene::parse_str_with(&flat, file, registries).unwrap_err();
    assert_eq!(e.field, "body[0].radius", "{e}");
    assert!(e.message.contains("must be positive (got -0.03)"), "{e}");
    assert!(e.line.is_some(), "{e}");

    let state = setup::build_bodies(&scene);
    let mut sim = Simulation::new(shared_context(), &state, setup::step_settings(&scene)).unwrap();
    sim.advance(scene.sim.steps as u32, 0).unwrap();
    let st = sim.read_state().unwrap();
    let q0 = DQuat::from_array(scene.bodies[0].orientation);
    assert_body_slides("octahedron", &st, 1, q0, theta, mu, t);
}

/// A family's own rule is reported at its key with the file's line.
#[test]
fn a_family_key_error_names_the_key() {
    struct Given(f64);
    impl ShapeKeys for Given {
        fn number(&self, key: &str) -> Option<f64> {
            (key == "radius").then_some(self.0)
        }
        fn vector(&self, _: &str) -> Option<[f64; 3]> {
            None
        }
    }
    let e = OctahedronFamily.parse(&Given(0.0)).unwrap().unwrap_err();
    assert_eq!((e.key, e.problem), ("radius", Problem::NotPositive(0.0)));
    assert!(OctahedronFamily.parse(&Given(0.01)).unwrap().is_ok());
}
