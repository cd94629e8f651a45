//! CPU (f64) twin of the clump narrow phase (`collide_pairs::clump_pair`,
//! `collide_walls::wall_clump`): every member sphere of a clump is a sphere in the sphere
//! narrow phase, with the contact mapped to the clump body (lever arms from its centre of
//! mass). Feature ids: grain pair (member of A << 8) | member of B (a sphere is member 0; a
//! member against a box: the member index); boundary (member << 24) + the sphere's feature.

use super::boxes;
use super::capsule;
use super::collide::{wall_grain, Contact64, Ctx, MeshRef, Wall};
use super::convex;
use super::cylinder;
use crate::model::body::{SHAPE_BOX, SHAPE_CAPSULE, SHAPE_CLUMP, SHAPE_CONVEX, SHAPE_CYLINDER};
use crate::model::contact::BoundaryShape;
use glam::{DQuat, DVec3};

fn v3(p: [f32; 4]) -> DVec3 {
    DVec3::new(p[0] as f64, p[1] as f64, p[2] as f64)
}

/// Grain `g`'s spheres in world: a clump's members, or the sphere itself.
pub(super) fn members(cx: &Ctx, g: usize, shapes: &[BoundaryShape]) -> Vec<(DVec3, f64)> {
    let p = cx.state.pos[g];
    if cx.state.info[g][2] != SHAPE_CLUMP {
        return vec![(v3(p), p[3] as f64)];
    }
    let BoundaryShape::GrainClump { members } = &shapes[cx.state.info[g][3] as usize] else {
        panic!("body {g}: clump kind without a clump shape");
    };
    let r = cx.state.rot[g];
    let q = DQuat::from_xyzw(r[0] as f64, r[1] as f64, r[2] as f64, r[3] as f64);
    members
        .iter()
        .map(|m| (v3(p) + q * v3(*m), m[3] as f64))
        .collect()
}

/// Grains a < b, at least one a clump (the other any grain).
pub(super) fn clump_pair(cx: &mut Ctx, a: usize, b: usize, shapes: &[BoundaryShape]) {
    let (pa, pb) = (cx.state.pos[a], cx.state.pos[b]);
    let env = cx.settings.envelope as f64;
    // Bounding spheres first, as the GPU's broad phase does.
    if (v3(pb) - v3(pa)).length() - pa[3] as f64 - pb[3] as f64 > env {
        return;
    }
    let (xa, xb) = (v3(pa), v3(pb));
    let (mu, materials) = cx.mu_mat(a, b);
    let (ka, kb) = (cx.state.info[a][2], cx.state.info[b][2]);
    let other = [SHAPE_CAPSULE, SHAPE_CYLINDER, SHAPE_CONVEX];
    if other.contains(&ka) || other.contains(&kb) {
        return clump_other(cx, a, b, shapes);
    }
    if ka == SHAPE_BOX || kb == SHAPE_BOX {
        // Members against the box: the box narrow phase's sphere–box, normal A -> B.
        let (c, x, sign) = if ka == SHAPE_BOX {
            (b, a, 1.0)
        } else {
            (a, b, -1.0)
        };
        let obb = cx.obb(x, shapes);
        for (k, (s, r)) in members(cx, c, shapes).into_iter().enumerate() {
            if let Some((n, gap, p)) = boxes::sphere_box(s, r, &obb, env) {
                cx.out.push(Contact64 {
                    a: a as u32,
                    b: b as u32,
                    feature: k as u32,
                    materials,
                    normal: n * sign,
                    gap,
                    ra: p - xa,
                    rb: p - xb,
                    mu,
                });
            }
        }
        return;
    }
    let (ma, mb) = (members(cx, a, shapes), members(cx, b, shapes));
    for (i, &(sa, ra)) in ma.iter().enumerate() {
        for (j, &(sb, rb)) in mb.iter().enumerate() {
            let d = sb - sa;
            let dist = d.length();
            let gap = dist - ra - rb;
            if gap > env {
                continue;
            }
            let n = if dist > 0.0 { d / dist } else { DVec3::Z };
            let p = sa + n * (ra + 0.5 * gap);
            cx.out.push(Contact64 {
                a: a as u32,
                b: b as u32,
                feature: ((i as u32) << 8) | j as u32,
                materials,
                normal: n,
                gap,
                ra: p - xa,
                rb: p - xb,
                mu,
            });
        }
    }
}

/// Grains a < b, a clump and a capsule, hull or cylinder: each member against it as a
/// sphere (capsule–sphere, sphere–hull, cylinder–sphere), normal from the other grain to
/// the member, turned to run from A to B; feature = member.
fn clump_other(cx: &mut Ctx, a: usize, b: usize, shapes: &[BoundaryShape]) {
    let kind = |g: usize| cx.state.info[g][2];
    let (c, x, flip) = if kind(a) != SHAPE_CLUMP {
        (b, a, false)
    } else {
        (a, b, true)
    };
    let env = cx.settings.envelope as f64;
    let test: Box<dyn Fn(DVec3, f64) -> Vec<capsule::CPoint>> = match kind(x) {
        SHAPE_CAPSULE => {
            let cap = cx.capsule(x, shapes);
            Box::new(move |s, r| capsule::capsule_sphere(&cap, s, r, env))
        }
        SHAPE_CYLINDER => {
            let cy = cx.cylinder(x, shapes);
            Box::new(move |s, r| cylinder::cylinder_sphere(&cy, s, r, env))
        }
        _ => {
            let p = cx.state.pos[x];
            let r = cx.state.rot[x];
            let q = DQuat::from_xyzw(r[0] as f64, r[1] as f64, r[2] as f64, r[3] as f64);
            let hull = convex::Hull::new(v3(p), q, &shapes[cx.state.info[x][3] as usize]);
            Box::new(move |s, rs| {
                let hit = convex::sphere_hull(s, rs, &hull, env);
                hit.map(|(n, gap, p)| capsule::CPoint {
                    p,
                    n,
                    gap,
                    feature: 0,
                })
                .into_iter()
                .collect()
            })
        }
    };
    let mut pts = Vec::new();
    for (k, (s, r)) in members(cx, c, shapes).into_iter().enumerate() {
        for mut p in test(s, r) {
            p.feature = k as u32;
            pts.push(p);
        }
    }
    cx.push_points(a, b, &pts, flip);
}

/// Boundary `w` (shape `shape`, kind `kind`) against clump `g`: each member as a sphere.
pub(super) fn wall_clump(
    cx: &mut Ctx,
    w: usize,
    g: usize,
    shapes: &[BoundaryShape],
    shape: &BoundaryShape,
    kind: u32,
    mesh: Option<&MeshRef>,
) {
    let ms = members(cx, g, shapes);
    let (xa, xb) = (v3(cx.state.pos[w]), v3(cx.state.pos[g]));
    let r = cx.state.rot[w];
    let q = DQuat::from_xyzw(r[0] as f64, r[1] as f64, r[2] as f64, r[3] as f64);
    for (k, (s, rad)) in ms.into_iter().enumerate() {
        let mut wall = Wall {
            cx,
            w,
            g,
            xa,
            q,
            xb,
            xs: s,
            r: rad,
            fbase: (k as u32) << 24,
        };
        wall_grain(&mut wall, shape, kind, mesh);
    }
}
