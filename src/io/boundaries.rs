//! Boundary frames: `frames/boundaries_STEP.vtp` (index `boundaries.pvd`), every boundary of
//! the scene (planes, box and cylinder containers, solid boxes and cylinders, triangle
//! meshes) as one polygon surface at the frame's pose, with cell data `boundary` (the
//! boundary's index in the scene file, which is also its body id).
//!
//! One `.vtp` per frame holding every boundary, rather than a multiblock (`.vtm`) per frame:
//! ParaView opens a `.pvd` of `.vtp` files as one time-series source with no reader choice,
//! exactly like `particles.pvd`, and a Threshold on `boundary` picks one out. When every
//! boundary is fixed, the surface is written once (`frames/boundaries_static.vtp`) and every
//! frame of `boundaries.pvd` refers to it.
//!
//! A plane is the half-space below its local z = 0; it is drawn as a finite square patch in
//! that plane, centred under the scene's bodies and boundaries (their initial bounding
//! spheres) and 1.2 times their bounding box's half diagonal in half size, so it frames the
//! scene without hiding it.

use std::path::Path;

use glam::{DQuat, DVec3, Quat, Vec3};
use vtkio::model::Attribute;

use super::vtk::check_finite3;
use super::{Collection, IoError};
use crate::bodies::BodyState;
use crate::scene::{BoundaryShape, Motion, Scene};

/// Points around a cylinder's circle.
const CYLINDER_SEGMENTS: u32 = 32;

/// Name of the single surface file of a scene whose boundaries never move.
pub const STATIC_FRAME: &str = "frames/boundaries_static.vtp";

/// One boundary's surface in its local frame: vertices and polygons (vertex loops).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LocalSurface {
    pub vertices: Vec<[f64; 3]>,
    pub polygons: Vec<Vec<u32>>,
}

/// Writes the scene's boundaries each frame (see the module doc).
pub struct BoundaryFrames {
    /// (body index, surface in the body frame), in scene order.
    surfaces: Vec<(usize, LocalSurface)>,
    /// Every boundary is fixed: one file for every frame.
    all_fixed: bool,
    /// The static file was written by this process.
    static_written: bool,
    pvd: Collection,
}

impl BoundaryFrames {
    /// `None` when the scene has no boundaries. `resume_at`: continue `boundaries.pvd` up
    /// to that time (after `--resume`).
    pub fn new(scene: &Scene, dir: &Path, resume_at: Option<f64>) -> Result<Option<Self>, IoError> {
        if scene.boundaries.is_empty() {
            return Ok(None);
        }
        let patch = plane_patch_extent(scene);
        let surfaces = scene
            .boundaries
            .iter()
            .enumerate()
            .map(|(k, b)| {
                let surface = match b.shape {
                    BoundaryShape::Plane => {
                        let (centre, half) = patch;
                        let q = DQuat::from_array(b.orientation);
                        let local = q.inverse() * (centre - DVec3::from_array(b.position));
                        plane_patch([local.x, local.y], half)
                    }
                    _ => local_surface(&b.shape),
                };
                (k, surface)
            })
            .collect();
        let all_fixed = scene.boundaries.iter().all(|b| b.motion == Motion::Fixed);
        let pvd = Collection::open(dir.join("boundaries.pvd"), resume_at)?;
        Ok(Some(BoundaryFrames {
            surfaces,
            all_fixed,
            static_written: false,
            pvd,
        }))
    }

    pub fn write(
        &mut self,
        dir: &Path,
        step: u64,
        time: f64,
        s: &BodyState,
    ) -> Result<(), IoError> {
        let name = if self.all_fixed {
            STATIC_FRAME.to_string()
        } else {
            format!("frames/boundaries_{step:08}.vtp")
        };
        if !(self.all_fixed && self.static_written) {
            let poses: Vec<([f32; 3], [f32; 4])> = self
                .surfaces
                .iter()
                .map(|(b, _)| ([s.pos[*b][0], s.pos[*b][1], s.pos[*b][2]], s.rot[*b]))
                .collect();
            let surfaces: Vec<(u32, &LocalSurface)> =
                self.surfaces.iter().map(|(b, m)| (*b as u32, m)).collect();
            write_boundaries(&dir.join(&name), &surfaces, &poses)?;
            self.static_written = true;
        }
        self.pvd.add(time, name)?;
        Ok(())
    }
}

/// Centre (world) and half size of the plane patches: the bounding box of the bodies'
/// and the non-plane boundaries' bounding spheres at their initial positions; 1 m around
/// the origin for a scene of planes only.
fn plane_patch_extent(scene: &Scene) -> (DVec3, f64) {
    let mut lo = DVec3::splat(f64::INFINITY);
    let mut hi = DVec3::splat(f64::NEG_INFINITY);
    let mut grow = |p: [f64; 3], r: f64| {
        let p = DVec3::from_array(p);
        lo = lo.min(p - DVec3::splat(r));
        hi = hi.max(p + DVec3::splat(r));
    };
    for b in &scene.bodies {
        grow(b.position, b.shape.bounding_radius());
    }
    for b in &scene.boundaries {
        if b.shape != BoundaryShape::Plane {
            grow(b.position, boundary_bounding_radius(&b.shape));
        }
    }
    if !(lo.is_finite() && hi.is_finite()) {
        return (DVec3::ZERO, 1.0);
    }
    let half = 1.2 * 0.5 * (hi - lo).length();
    (0.5 * (lo + hi), if half > 0.0 { half } else { 1.0 })
}

/// Radius of a sphere about the boundary's origin that holds its surface.
fn boundary_bounding_radius(shape: &BoundaryShape) -> f64 {
    match shape {
        BoundaryShape::Plane => 0.0,
        BoundaryShape::BoxContainer { half_extents, .. }
        | BoundaryShape::SolidBox { half_extents } => DVec3::from_array(*half_extents).length(),
        BoundaryShape::CylinderContainer { radius, height, .. }
        | BoundaryShape::SolidCylinder { radius, height } => radius.hypot(*height),
        BoundaryShape::Mesh { vertices, .. } => vertices
            .iter()
            .map(|v| DVec3::from_array(*v).length())
            .fold(0.0, f64::max),
    }
}

/// A square in the local plane z = 0, centred at `centre` (local x, y), facing +z.
pub fn plane_patch(centre: [f64; 2], half: f64) -> LocalSurface {
    let [x, y] = centre;
    LocalSurface {
        vertices: vec![
            [x - half, y - half, 0.0],
            [x + half, y - half, 0.0],
            [x + half, y + half, 0.0],
            [x - half, y + half, 0.0],
        ],
        polygons: vec![vec![0, 1, 2, 3]],
    }
}

/// The surface of a non-plane boundary in its local frame (a plane's patch depends on the
/// scene: [`plane_patch`]). Faces are counter-clockwise seen from outside the solid.
pub fn local_surface(shape: &BoundaryShape) -> LocalSurface {
    match shape {
        BoundaryShape::Plane => plane_patch([0.0, 0.0], 1.0),
        BoundaryShape::BoxContainer {
            half_extents,
            open_top,
        } => box_surface(*half_extents, !open_top),
        BoundaryShape::SolidBox { half_extents } => box_surface(*half_extents, true),
        BoundaryShape::CylinderContainer {
            radius,
            height,
            open_top,
        } => cylinder_surface(*radius, *height, !open_top),
        BoundaryShape::SolidCylinder { radius, height } => cylinder_surface(*radius, *height, true),
        BoundaryShape::Mesh {
            vertices,
            triangles,
            ..
        } => LocalSurface {
            vertices: vertices.clone(),
            polygons: triangles.iter().map(|t| t.to_vec()).collect(),
        },
    }
}

/// A box centred on the origin with walls at ±`h`; the +z face only when `top`.
fn box_surface(h: [f64; 3], top: bool) -> LocalSurface {
    let vertices = (0..8)
        .map(|v: u32| {
            let s = |b: u32| if (v >> b) & 1 == 1 { 1.0 } else { -1.0 };
            [s(0) * h[0], s(1) * h[1], s(2) * h[2]]
        })
        .collect();
    let faces = &crate::bodies::BOX_CORNER_FACES;
    let faces = if top { &faces[..] } else { &faces[..5] };
    LocalSurface {
        vertices,
        polygons: faces
            .iter()
            .map(|f| f.iter().map(|&v| v as u32).collect())
            .collect(),
    }
}

/// A cylinder about local +z from z = 0 to `height`: side quads, the base disc, and the
/// top disc when `top`.
fn cylinder_surface(radius: f64, height: f64, top: bool) -> LocalSurface {
    let n = CYLINDER_SEGMENTS;
    let mut vertices = Vec::with_capacity(2 * n as usize);
    for z in [0.0, height] {
        for s in 0..n {
            let phi = std::f64::consts::TAU * s as f64 / n as f64;
            vertices.push([radius * phi.cos(), radius * phi.sin(), z]);
        }
    }
    let mut polygons: Vec<Vec<u32>> = (0..n)
        .map(|s| vec![s, (s + 1) % n, n + (s + 1) % n, n + s])
        .collect();
    polygons.push((0..n).rev().collect());
    if top {
        polygons.push((n..2 * n).collect());
    }
    LocalSurface { vertices, polygons }
}

/// Writes the boundaries (body id, local surface) at their poses (position, quaternion
/// `[x, y, z, w]` body → world) as polygons with cell data `boundary`. Atomic; refuses
/// NaN/inf.
pub fn write_boundaries(
    path: &Path,
    surfaces: &[(u32, &LocalSurface)],
    poses: &[([f32; 3], [f32; 4])],
) -> Result<(), IoError> {
    super::vtk::check_len(path, "pose", surfaces.len(), poses.len())?;
    let (mut points, mut connectivity, mut offsets) = (Vec::new(), Vec::new(), Vec::new());
    let mut ids = Vec::new();
    for (&(id, m), &(c, q)) in surfaces.iter().zip(poses) {
        let base = points.len() as u64;
        let (c, q) = (Vec3::from_array(c), Quat::from_array(q));
        for v in &m.vertices {
            let local = Vec3::new(v[0] as f32, v[1] as f32, v[2] as f32);
            points.push((c + q * local).to_array());
        }
        for p in &m.polygons {
            connectivity.extend(p.iter().map(|&i| base + i as u64));
            offsets.push(connectivity.len() as u64);
            ids.push(id);
        }
    }
    check_finite3(path, "vertex", &points)?;
    super::vtk::write_polygons(
        path,
        &points,
        connectivity,
        offsets,
        vec![Attribute::generic("boundary", 1).with_data(ids)],
    )
}
