//! Every id the Rust stages and their WGSL both name (shapes, motions, joint bits, contact
//! projection kinds, patch features, workgroup and colour counts) has one value: the
//! constants naga reads from each shader (`crate::gpu::layout::wgsl_constants`) against the
//! Rust ones. The check reads the ids of every stage, so it lives with the step, the one
//! module above all of them (in `gpu` it would make the plumbing depend on the stages that
//! use it).

#[test]
fn ids_have_one_value() {
    use crate::bodies::*;
    use crate::collide::{scan::SCAN_BLOCK, OVERFLOW_CONTACTS};
    use crate::joints::{JOINT_ANGULAR, JOINT_BIT, PROJ_BOX, PROJ_LOWER, WORLD};
    use crate::model::rows::projection::{PROJECTION_BOX, PROJECTION_CONE, PROJECTION_DISK};
    use crate::model::solver::GS_MOMENTUM_RISE;
    use crate::patch::couple::{PATCH_FEATURE, PATCH_FEATURE_DIST};
    use crate::shapes::Routine;
    use crate::solve::gauss::{
        GS_COLOURS, GS_GRAPH_DIFFERS, GS_HUBS, GS_STEPS_CHECKED, GS_STEPS_KEPT,
    };
    let shared: &[(&str, u32)] = &[
        ("SHAPE_SPHERE", SHAPE_SPHERE),
        ("SHAPE_BOX", SHAPE_BOX),
        ("SHAPE_PLANE", SHAPE_PLANE),
        ("SHAPE_BOX_CONTAINER", SHAPE_BOX_CONTAINER),
        ("SHAPE_CYLINDER_CONTAINER", SHAPE_CYLINDER_CONTAINER),
        ("SHAPE_SOLID_BOX", SHAPE_SOLID_BOX),
        ("SHAPE_MESH", SHAPE_MESH),
        ("SHAPE_CAPSULE", SHAPE_CAPSULE),
        ("SHAPE_CYLINDER", SHAPE_CYLINDER),
        ("SHAPE_SOLID_CYLINDER", SHAPE_SOLID_CYLINDER),
        ("SHAPE_CONVEX", SHAPE_CONVEX),
        ("SHAPE_CLUMP", SHAPE_CLUMP),
        ("MOTION_DYNAMIC", MOTION_DYNAMIC),
        ("MOTION_FIXED", MOTION_FIXED),
        ("MOTION_KINEMATIC", MOTION_KINEMATIC),
        ("MOTION_PARKED", MOTION_PARKED),
        ("JOINT_BIT", JOINT_BIT),
        ("JOINT_ANGULAR", JOINT_ANGULAR),
        ("JOINT_PROJ_LOWER", PROJ_LOWER),
        ("JOINT_PROJ_BOX", PROJ_BOX),
        ("WORLD", WORLD),
        ("PROJECTION_CONE", PROJECTION_CONE),
        ("PROJECTION_DISK", PROJECTION_DISK),
        ("PROJECTION_BOX", PROJECTION_BOX),
        ("PATCH_FEATURE", PATCH_FEATURE),
        ("PATCH_FEATURE_DIST", PATCH_FEATURE_DIST),
        ("OVERFLOW_CONTACTS", OVERFLOW_CONTACTS),
        ("GS_COLOURS", GS_COLOURS),
        ("GS_MOMENTUM_RISE", GS_MOMENTUM_RISE),
        ("GS_GRAPH_DIFFERS", GS_GRAPH_DIFFERS),
        ("GS_STEPS_CHECKED", GS_STEPS_CHECKED),
        ("GS_STEPS_KEPT", GS_STEPS_KEPT),
        ("GS_HUBS", GS_HUBS),
        (
            "GS_HUB_CONSTRAINTS",
            crate::model::solver::GS_HUB_CONSTRAINTS,
        ),
        ("SCAN_BLOCK", SCAN_BLOCK),
        ("ROUTINE_SPHERE", Routine::Sphere as u32),
        ("ROUTINE_BOX", Routine::Box as u32),
        ("ROUTINE_CAPSULE", Routine::Capsule as u32),
        ("ROUTINE_CONVEX", Routine::Convex as u32),
        ("ROUTINE_CYLINDER", Routine::Cylinder as u32),
        ("ROUTINE_CLUMP", Routine::Clump as u32),
    ];
    let mut seen = vec![0; shared.len()];
    for source in crate::gpu::kernel::SHADERS {
        for (name, value) in crate::gpu::layout::wgsl_constants(source) {
            if let Some(k) = shared.iter().position(|(n, _)| *n == name) {
                let stage = source.name;
                assert_eq!(
                    value, shared[k].1,
                    "{name} in {stage}.wgsl is {value}, Rust says {}",
                    shared[k].1
                );
                seen[k] += 1;
            }
        }
    }
    for ((name, _), n) in shared.iter().zip(seen) {
        assert!(n > 0, "no stage declares {name}");
    }
}

/// The pair stage's routine table (`grain_routine` in collide_pairs.wgsl: a `case` per grain
/// shape) gives every family of `shapes::FAMILIES` its routine, and nothing else.
#[test]
fn pair_routines_are_the_families() {
    use crate::shapes::FAMILIES;
    let source = crate::gpu::kernel::ShaderSource::by_name("collide_pairs").unwrap();
    let value: std::collections::HashMap<String, u32> = crate::gpu::layout::wgsl_constants(&source)
        .into_iter()
        .collect();
    let body = source.body;
    let table = &body[body.find("fn grain_routine(").expect("grain_routine")..];
    let table = &table[..table.find("\n}\n").unwrap()];
    let mut cases: Vec<(u32, u32)> = table
        .lines()
        .filter_map(|l| {
            let l = l.trim().strip_prefix("case ")?;
            let (shape, rest) = l.split_once(':')?;
            let routine = rest.split("return ").nth(1)?.split(';').next()?;
            Some((value[shape.trim()], value[routine.trim()]))
        })
        .collect();
    cases.sort();
    let mut families: Vec<(u32, u32)> = FAMILIES
        .iter()
        .filter(|f| f.routine() != crate::shapes::Routine::Sphere)
        .map(|f| (f.id(), f.routine() as u32))
        .collect();
    families.sort();
    assert_eq!(cases, families);
    assert!(table.contains("default: { return ROUTINE_SPHERE; }"));
}
