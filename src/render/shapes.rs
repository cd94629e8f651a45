//! Bodies drawn as their shapes instead of their bounding spheres: boxes, capsules,
//! cylinders and convex hulls as opaque, shadow-casting triangles, clumps as their member
//! spheres. Read from the shape frames a run writes beside `particles.pvd` at the same
//! times (`boxes.pvd`, `capsules.pvd`, `clumps.pvd`, `cylinders.pvd`, `hulls.pvd`);
//! bodies with no shape frame stay bounding spheres.
//!
//! Adding a shape: a [`Shape`] variant, its reader in `KINDS`, an arm in [`draw`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use glam::DVec3;

use super::data::{self, array_any, frame_err, read_poly, FrameRef};
use super::geometry::SurfaceVertex;
use super::gpu::SphereInstance;
use super::RenderError;
use crate::shapes::capsule::{self, SURFACE_RINGS, SURFACE_SEGMENTS};

#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    /// World corners, vertex bits x = 1, y = 2, z = 4 (as `frames/boxes_*.vtp` has them).
    Box([DVec3; 8]),
    /// End points of the axis segment, and the radius.
    Capsule { a: DVec3, b: DVec3, radius: f64 },
    /// Member spheres: centre and radius.
    Clump(Vec<[f32; 4]>),
    /// Flat faces (world polygons, counter-clockwise seen from outside), as the run's
    /// cylinder (16-sided prism) and hull frames have them.
    Faces(Vec<Vec<DVec3>>),
}

/// The bodies of one frame that have a shape, by body id.
pub type Shapes = BTreeMap<u32, Shape>;

type Reader = fn(&Path) -> Result<Vec<(u32, Shape)>, RenderError>;

/// The shape indexes a run may hold, and the readers of their frames.
const KINDS: [(&str, Reader); 5] = [
    ("boxes.pvd", read_boxes),
    ("capsules.pvd", read_capsules),
    ("clumps.pvd", read_clumps),
    ("cylinders.pvd", read_faces),
    ("hulls.pvd", read_faces),
];

/// The shape indexes present in a run directory (a run writes one per shape it has).
#[derive(Default)]
pub struct ShapeIndexes(Vec<(PathBuf, Vec<FrameRef>, Reader)>);

impl ShapeIndexes {
    pub fn read(run_dir: &Path) -> Result<Self, RenderError> {
        let mut v = Vec::new();
        for (name, reader) in KINDS {
            if run_dir.join(name).exists() {
                v.push((
                    run_dir.join(name),
                    data::frame_index(run_dir, name)?,
                    reader,
                ));
            }
        }
        Ok(ShapeIndexes(v))
    }

    /// The shapes at the particle frame of time `time` (written at the same steps).
    pub fn at(&self, time: f64) -> Result<Shapes, RenderError> {
        let mut shapes = Shapes::new();
        for (pvd, index, reader) in &self.0 {
            let f = index
                .iter()
                .find(|f| f.time == time)
                .ok_or_else(|| RenderError::Run {
                    path: pvd.clone(),
                    message: format!("lists no frame at t = {time} (particles.pvd does)"),
                })?;
            for (id, s) in reader(&f.path)? {
                if shapes.insert(id, s).is_some() {
                    return Err(frame_err(&f.path, format!("body {id} has a second shape")));
                }
            }
        }
        Ok(shapes)
    }
}

/// World points of a shape frame, checked finite, `per` to a body; and the bodies' ids
/// from the cell array `id` (`cells` cells to a body, all with the same id).
fn bodies(path: &Path, per: usize, cells: usize) -> Result<(Vec<DVec3>, Vec<u32>), RenderError> {
    let (points, _, cell) = read_poly(path)?;
    let ids: Vec<u32> = array_any(path, &cell, "id")?;
    let n = ids.len() / cells;
    if !ids.len().is_multiple_of(cells) || points.len() != 3 * per * n {
        return Err(frame_err(
            path,
            format!(
                "{} cells and {} points do not make bodies of {cells} cells and {per} points",
                ids.len(),
                points.len() / 3
            ),
        ));
    }
    if let Some(i) = points.iter().position(|x| !x.is_finite()) {
        return Err(frame_err(path, format!("point {} is not finite", i / 3)));
    }
    let mut out = Vec::with_capacity(n);
    for (k, c) in ids.chunks_exact(cells).enumerate() {
        if c.iter().any(|&i| i != c[0]) {
            return Err(frame_err(
                path,
                format!("cells of body {k} carry different ids"),
            ));
        }
        out.push(c[0]);
    }
    let pts = points
        .chunks_exact(3)
        .map(|p| DVec3::new(p[0] as f64, p[1] as f64, p[2] as f64))
        .collect();
    Ok((pts, out))
}

/// `frames/boxes_*.vtp`: 8 corners and 6 quads per box.
fn read_boxes(path: &Path) -> Result<Vec<(u32, Shape)>, RenderError> {
    let (pts, ids) = bodies(path, 8, 6)?;
    Ok(ids
        .iter()
        .zip(pts.chunks_exact(8))
        .map(|(&id, c)| (id, Shape::Box(std::array::from_fn(|v| c[v]))))
        .collect())
}

/// `frames/capsules_*.vtp`: per capsule `SURFACE_RINGS` rings of `SURFACE_SEGMENTS`
/// points, then the two poles. The poles give the axis and its end caps; the first point
/// of the lower equator ring (ring 2), at distance `radius` from the axis, the radius.
fn read_capsules(path: &Path) -> Result<Vec<(u32, Shape)>, RenderError> {
    let (ns, nr) = (SURFACE_SEGMENTS as usize, SURFACE_RINGS as usize);
    let (pts, ids) = bodies(path, ns * nr + 2, ns * (nr + 1))?;
    let mut out = Vec::with_capacity(ids.len());
    for (k, (&id, p)) in ids.iter().zip(pts.chunks_exact(ns * nr + 2)).enumerate() {
        let (lo, hi, eq) = (p[ns * nr], p[ns * nr + 1], p[2 * ns]);
        let len = (hi - lo).length();
        let u = (hi - lo) / len;
        let d = eq - lo;
        let radius = (d - d.dot(u) * u).length();
        if !(radius > 0.0 && len >= 2.0 * radius * (1.0 - 1e-4)) {
            return Err(frame_err(
                path,
                format!("capsule {k} (body {id}) has radius {radius} and length {len}"),
            ));
        }
        // A sphere (half length 0) may come out a hair short in f32: clamp.
        let half = (0.5 * len - radius).max(0.0);
        let c = 0.5 * (lo + hi);
        out.push((
            id,
            Shape::Capsule {
                a: c - half * u,
                b: c + half * u,
                radius,
            },
        ));
    }
    Ok(out)
}

/// `frames/clumps_*.vtp`: one point per member sphere, `id` = the clump's body id.
fn read_clumps(path: &Path) -> Result<Vec<(u32, Shape)>, RenderError> {
    let p = data::read_particles(path)?;
    let mut by_id: BTreeMap<u32, Vec<[f32; 4]>> = BTreeMap::new();
    for ((x, r), id) in p.positions.iter().zip(&p.radii).zip(&p.ids) {
        by_id.entry(*id).or_default().push([x[0], x[1], x[2], *r]);
    }
    Ok(by_id
        .into_iter()
        .map(|(id, m)| (id, Shape::Clump(m)))
        .collect())
}

/// `frames/cylinders_*.vtp` and `frames/hulls_*.vtp`: polygons, cell array `id` = body.
fn read_faces(path: &Path) -> Result<Vec<(u32, Shape)>, RenderError> {
    let (points, polys, cell) = data::read_polygons(path)?;
    let ids: Vec<u32> = array_any(path, &cell, "id")?;
    if ids.len() != polys.len() {
        return Err(frame_err(
            path,
            format!("{} ids for {} polygons", ids.len(), polys.len()),
        ));
    }
    let mut by_id: BTreeMap<u32, Vec<Vec<DVec3>>> = BTreeMap::new();
    for (id, poly) in ids.iter().zip(&polys) {
        let face = poly.iter().map(|&i| points[i as usize]).collect();
        by_id.entry(*id).or_default().push(face);
    }
    Ok(by_id
        .into_iter()
        .map(|(id, f)| (id, Shape::Faces(f)))
        .collect())
}

/// Segments around a capsule's axis, and rings per hemisphere: the silhouette lies within
/// r·(1 − cos(π/32)) ≈ 0.5 % of the radius inside the true one.
const CAPSULE_AROUND: usize = 32;
const CAPSULE_LAT: usize = 8;

/// Appends a body's shape: triangles to `tris` or member spheres to `spheres`.
pub fn draw(
    shape: &Shape,
    color: [u8; 4],
    tris: &mut Vec<SurfaceVertex>,
    spheres: &mut Vec<SphereInstance>,
) {
    match shape {
        Shape::Box(c) => box_triangles(c, color, tris),
        Shape::Capsule { a, b, radius } => capsule_triangles(*a, *b, *radius, color, tris),
        Shape::Clump(members) => spheres.extend(members.iter().map(|&m| SphereInstance {
            center_radius: m,
            color,
        })),
        Shape::Faces(faces) => face_triangles(faces, color, tris),
    }
}

/// Flat-shaded convex polygons as triangle fans; the normal from the polygon's area vector
/// (Newell), so a face of many vertices is shaded as one plane.
fn face_triangles(faces: &[Vec<DVec3>], color: [u8; 4], out: &mut Vec<SurfaceVertex>) {
    for f in faces {
        let area = (0..f.len()).fold(DVec3::ZERO, |a, k| a + f[k].cross(f[(k + 1) % f.len()]));
        let n = area.normalize_or_zero();
        for k in 1..f.len() - 1 {
            out.extend([f[0], f[k], f[k + 1]].map(|p| vertex(p, n, color)));
        }
    }
}

fn vertex(p: DVec3, n: DVec3, color: [u8; 4]) -> SurfaceVertex {
    SurfaceVertex {
        pos: p.as_vec3().to_array(),
        normal: n.as_vec3().to_array(),
        color,
        alpha: [1.0, 1.0],
    }
}

/// Six flat-shaded faces (the corner order of `frames/boxes_*.vtp`).
fn box_triangles(c: &[DVec3; 8], color: [u8; 4], out: &mut Vec<SurfaceVertex>) {
    for f in crate::bodies::BOX_CORNER_FACES.map(|f| f.map(usize::from)) {
        let n = (c[f[2]] - c[f[0]])
            .cross(c[f[3]] - c[f[1]])
            .normalize_or_zero();
        for k in [0, 1, 2, 0, 2, 3] {
            out.push(vertex(c[f[k]], n, color));
        }
    }
}

/// A capsule as a smooth-shaded (vertex-normal) tessellation (`shapes::capsule::smooth_quads`).
fn capsule_triangles(a: DVec3, b: DVec3, r: f64, color: [u8; 4], out: &mut Vec<SurfaceVertex>) {
    for q in capsule::smooth_quads(a, b, r, CAPSULE_AROUND, CAPSULE_LAT) {
        let q = q.map(|(p, n)| vertex(p, n, color));
        out.extend([q[0], q[1], q[2], q[0], q[2], q[3]]);
    }
}
