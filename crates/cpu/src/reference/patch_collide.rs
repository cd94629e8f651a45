//! The f64 twin of collision with patch materials: the point contacts of
//! [`super::collide::detect`] plus the patch records of `crate::patch::couple` (the reduced
//! planar LuGre model's rows), as `shaders/common/collide.wgsl` writes them. It lives with
//! the CPU implementations, not in `crate::patch`, because it runs the CPU collision; the
//! patch geometry it shares with the GPU stage ([`patch_geom`], [`PatchGeom`]) stays there.

use crate::patch::couple::{patch_feature, patch_geom, PatchGeom, PATCH_FEATURE};
use glam::DVec3;

/// The f64 twin of collision with patch materials (`patch[m]`: material m's patch kind,
/// 0 none, 1 reduced, 2 distributed): [`super::collide::detect`]'s contacts, where in every pair with a box
/// grain and a patch material the first run of points sharing a normal (a manifold: one wall
/// of a container, the plane, the box–box face) whose polygon is a patch gets μ = 0 and the
/// pair's patch record after its last contact; likewise a cylinder grain against a wall
/// with a `lugre_reduced` material and a whole end disc in one run (`disc_centre`; the
/// disc's patch: r = 2R/3, visc = 9/8). Records as the GPU writes them.
pub fn detect_with_patches(
    state: &crate::model::body::BodyState,
    shapes: &[crate::model::contact::BoundaryShape],
    settings: &crate::model::contact::CollideSettings,
    patch: &[u8],
) -> Vec<crate::model::contact::ContactRecord> {
    use crate::model::body::{
        SHAPE_BOX, SHAPE_BOX_CONTAINER, SHAPE_CYLINDER, SHAPE_CYLINDER_CONTAINER, SHAPE_PLANE,
    };
    use crate::model::contact::ContactRecord;
    let contacts = super::collide::detect(state, shapes, settings);
    let kind = |m: u32| patch.get(m as usize).copied().unwrap_or(0);
    let is_patch_mat = |m: u32| kind(m) > 0;
    let mut out = Vec::with_capacity(contacts.len());
    let mut i = 0;
    while i < contacts.len() {
        let (a, b) = (contacts[i].a, contacts[i].b);
        let mut end = i;
        while end < contacts.len() && contacts[end].a == a && contacts[end].b == b {
            end += 1;
        }
        let pair = &contacts[i..end];
        let first = out.len();
        out.extend(pair.iter().map(ContactRecord::from));
        let (ka, kb) = (state.info[a as usize][2], state.info[b as usize][2]);
        let mats = pair[0].materials;
        let feature = patch_feature(kind(mats >> 16), kind(mats & 0xffff));
        let patch_mat = is_patch_mat(mats >> 16) || is_patch_mat(mats & 0xffff);
        let eligible = (ka == SHAPE_BOX || kb == SHAPE_BOX) && ka != SHAPE_CYLINDER_CONTAINER;
        // Disc patches: a cylinder against a plane or a container's wall, floor or lid.
        let wall = [SHAPE_PLANE, SHAPE_BOX_CONTAINER, SHAPE_CYLINDER_CONTAINER].contains(&ka);
        let disc = wall && kb == SHAPE_CYLINDER && feature == PATCH_FEATURE;
        let xa = v3(state.pos[a as usize]);
        // The patch of one run of points sharing a normal (one wall, the plane, the box–box
        // face), if it is one.
        type Geom<'a> = Box<dyn Fn(&[super::collide::Contact64]) -> Option<PatchGeom> + 'a>;
        let geom: Option<Geom> = if patch_mat && disc {
            let radius = match shapes[state.info[b as usize][3] as usize] {
                crate::model::contact::BoundaryShape::GrainCylinder { radius, .. } => radius as f64,
                _ => unreachable!("a cylinder body's shape is a GrainCylinder"),
            };
            Some(Box::new(move |run| {
                disc_centre(run, xa).map(|centre| PatchGeom {
                    centre,
                    r: 2.0 / 3.0 * radius,
                    visc: 9.0 / 8.0,
                    area: std::f64::consts::PI * radius * radius,
                })
            }))
        } else if patch_mat && eligible {
            Some(Box::new(move |run| {
                let pts: Vec<DVec3> = run.iter().map(|c| c.ra + xa).collect();
                patch_geom(run[0].normal, &pts)
            }))
        } else {
            None
        };
        if let Some(geom) = geom {
            let mut s = 0;
            while s < pair.len() {
                let e = s + pair[s..]
                    .iter()
                    .take_while(|c| c.normal == pair[s].normal)
                    .count();
                if let Some(g) = geom(&pair[s..e]) {
                    for r in &mut out[first + s..first + e] {
                        r.ra[3] = 0.0;
                    }
                    // As `patch_record` in shaders/common/collide.wgsl writes it.
                    let xb = v3(state.pos[b as usize]);
                    let f = |v: DVec3, w: f64| [v.x as f32, v.y as f32, v.z as f32, w as f32];
                    out.push(ContactRecord {
                        n_gap: f(pair[s].normal, g.visc),
                        ra: f(g.centre - xa, pair[s].mu),
                        rb: f(g.centre - xb, g.r),
                        ids: [a, b, feature, mats],
                    });
                    break;
                }
                s = e;
            }
        }
        i = end;
    }
    out
}

/// A cylinder's whole end disc among one wall's points (`cylinder_plane`: a flat disc e
/// gives features offset + 4e + k, k < 4; offsets are multiples of 10): the centre of its 4
/// midway rim points, disc 0 first (as `cyl_disc_patch` in `shaders/collide_walls.wgsl`).
fn disc_centre(pts: &[super::collide::Contact64], xa: DVec3) -> Option<DVec3> {
    let offset = pts.first()?.feature / 10 * 10;
    (0..2).find_map(|e| {
        let disc: Vec<_> = (0..4)
            .map(|k| pts.iter().find(|c| c.feature == offset + 4 * e + k))
            .collect::<Option<_>>()?;
        Some(disc.iter().map(|c| c.ra + xa).sum::<DVec3>() / 4.0)
    })
}

fn v3(p: [f32; 4]) -> DVec3 {
    DVec3::new(p[0] as f64, p[1] as f64, p[2] as f64)
}
