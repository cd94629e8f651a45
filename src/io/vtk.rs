//! Per-frame ParaView output: spheres, contacts and joints as VTK XML PolyData (`.vtp`).
//!
//! Arrays are base64 "binary" encoded, little-endian, uncompressed: exact f32 round trip,
//! and the bytes depend only on the input (no timestamps, no compression-library variance).
//!
//! Step and time are not stored inside the `.vtp` (vtkio 0.6 cannot write PolyData
//! FieldData); ParaView takes them from the [`Collection`] (`.pvd`) index.

use std::path::Path;

use vtkio::model::{
    Attribute, Attributes, ByteOrder, DataSet, IOBuffer, PolyDataPiece, Version, VertexNumbers, Vtk,
};

pub use super::pvd::Collection;
use super::{write_atomic, IoError};
use crate::shapes::{capsule, cuboid, Surface};

/// One output frame of spheres. All slices are indexed by particle.
#[derive(Clone, Debug)]
pub struct ParticleFrame<'a> {
    pub step: u64,
    pub time: f64,
    pub positions: &'a [[f32; 3]],
    pub radii: &'a [f32],
    pub velocities: &'a [[f32; 3]],
    pub angular_velocities: &'a [[f32; 3]],
    pub ids: &'a [u32],
    /// Extra per-particle scalar arrays, written under the given names.
    pub scalars: Vec<(&'a str, &'a [f32])>,
    /// Extra per-particle vector arrays, written under the given names.
    pub vectors: Vec<(&'a str, &'a [[f32; 3]])>,
}

/// Contact points of one frame, for force-chain views. Indexed by contact.
#[derive(Clone, Debug)]
pub struct ContactFrame<'a> {
    pub points: &'a [[f32; 3]],
    pub normals: &'a [[f32; 3]],
    pub gaps: &'a [f32],
    /// Contact forces, when the solver has them for this frame.
    pub forces: Option<&'a [[f32; 3]]>,
    pub body_a: &'a [u32],
    pub body_b: &'a [u32],
    /// Feature id of each point within its pair's manifold (the warm-start key's third
    /// part: 0 for sphere pairs; a box face's corner `4·face + corner`, a hull vertex, a
    /// clump member pair …; see src/collide), so the up to 4 points of one face-on-face
    /// contact are told apart.
    pub features: &'a [u32],
}

/// Joints of one frame, indexed by joint: world anchors on A and B (equal when the joint
/// holds; the world's anchor for a joint to the world), their axes (each body's joint
/// frame z: hinge or slide axis) and the reaction on B over the last step.
#[derive(Clone, Debug)]
pub struct JointFrame<'a> {
    pub anchor_a: &'a [[f32; 3]],
    pub anchor_b: &'a [[f32; 3]],
    pub axis_a: &'a [[f32; 3]],
    pub axis_b: &'a [[f32; 3]],
    /// Body ids of A (−1: the world) and B.
    pub body_a: &'a [i32],
    pub body_b: &'a [i32],
    pub force: &'a [[f32; 3]],
    pub torque: &'a [[f32; 3]],
    pub motor: &'a [f32],
}

/// Writes joint k as points 2k (anchor on A) and 2k+1 (anchor on B) joined by line cell k.
/// Point data: `axis` (that body's joint axis, for arrow glyphs), `body` (−1: the world),
/// `joint`; cell data: `joint`, `force`, `torque` (on B), `motor`. Atomic; refuses
/// mismatched lengths and NaN/inf.
pub fn write_joints(path: &Path, frame: &JointFrame) -> Result<(), IoError> {
    let n = frame.anchor_a.len();
    let v3 = [
        ("anchor_b", frame.anchor_b),
        ("axis_a", frame.axis_a),
        ("axis_b", frame.axis_b),
        ("force", frame.force),
        ("torque", frame.torque),
    ];
    for (name, data) in v3 {
        check_len(path, name, n, data.len())?;
    }
    check_len(path, "body_a", n, frame.body_a.len())?;
    check_len(path, "body_b", n, frame.body_b.len())?;
    check_len(path, "motor", n, frame.motor.len())?;
    check_finite3(path, "anchor_a", frame.anchor_a)?;
    for (name, data) in v3 {
        check_finite3(path, name, data)?;
    }
    check_finite(path, "motor", frame.motor)?;
    let pairs = |a: &[[f32; 3]], b: &[[f32; 3]]| -> Vec<f32> {
        a.iter()
            .zip(b)
            .flat_map(|(x, y)| x.iter().chain(y).copied())
            .collect()
    };
    let ids: Vec<u32> = (0..n as u32).collect();
    let point = vec![
        Attribute::vectors("axis").with_data(pairs(frame.axis_a, frame.axis_b)),
        Attribute::generic("body", 1).with_data(
            frame
                .body_a
                .iter()
                .zip(frame.body_b)
                .flat_map(|(a, b)| [*a, *b])
                .collect::<Vec<i32>>(),
        ),
        Attribute::generic("joint", 1)
            .with_data(ids.iter().flat_map(|k| [*k, *k]).collect::<Vec<u32>>()),
    ];
    let cell = vec![
        Attribute::generic("joint", 1).with_data(ids.clone()),
        Attribute::vectors("force").with_data(flatten(frame.force)),
        Attribute::vectors("torque").with_data(flatten(frame.torque)),
        Attribute::generic("motor", 1).with_data(frame.motor.to_vec()),
    ];
    let n = n as u64;
    let piece = PolyDataPiece {
        points: IOBuffer::F32(pairs(frame.anchor_a, frame.anchor_b)),
        verts: None,
        lines: Some(VertexNumbers::XML {
            connectivity: (0..2 * n).collect(),
            offsets: (1..=n).map(|k| 2 * k).collect(),
        }),
        polys: None,
        strips: None,
        data: Attributes { point, cell },
    };
    write_piece(path, piece)
}

const PARTICLE_ARRAYS: [&str; 4] = ["radius", "velocity", "angular_velocity", "id"];

/// Writes the particles as points with one vertex cell each, plus point data `radius`
/// (the active scalars, for ParaView's sphere glyphs), `velocity`, `angular_velocity`, `id`
/// and the frame's extra arrays. Atomic; refuses mismatched lengths and NaN/inf.
pub fn write_particles(path: &Path, frame: &ParticleFrame) -> Result<(), IoError> {
    write_particles_with_tensors(path, frame, &[])
}

/// [`write_particles`] with extra per-particle 3×3 arrays (row-major, 9 components each;
/// ParaView shows them as tensors), such as the grains' average stress.
pub fn write_particles_with_tensors(
    path: &Path,
    frame: &ParticleFrame,
    tensors: &[(&str, &[[f32; 9]])],
) -> Result<(), IoError> {
    let n = frame.positions.len();
    check_len(path, "radius", n, frame.radii.len())?;
    check_len(path, "velocity", n, frame.velocities.len())?;
    check_len(path, "angular_velocity", n, frame.angular_velocities.len())?;
    check_len(path, "id", n, frame.ids.len())?;
    let extra_names = frame
        .scalars
        .iter()
        .map(|(name, _)| *name)
        .chain(frame.vectors.iter().map(|(name, _)| *name))
        .chain(tensors.iter().map(|(name, _)| *name));
    check_names(path, &PARTICLE_ARRAYS, extra_names)?;
    for (name, data) in &frame.scalars {
        check_len(path, name, n, data.len())?;
    }
    for (name, data) in &frame.vectors {
        check_len(path, name, n, data.len())?;
    }
    for (name, data) in tensors {
        check_len(path, name, n, data.len())?;
        check_finite(path, name, bytemuck::cast_slice::<[f32; 9], f32>(data))?;
    }

    check_finite3(path, "position", frame.positions)?;
    check_finite(path, "radius", frame.radii)?;
    check_finite3(path, "velocity", frame.velocities)?;
    check_finite3(path, "angular_velocity", frame.angular_velocities)?;
    for (name, data) in &frame.scalars {
        check_finite(path, name, data)?;
    }
    for (name, data) in &frame.vectors {
        check_finite3(path, name, data)?;
    }

    let mut point = vec![
        Attribute::scalars("radius", 1).with_data(frame.radii.to_vec()),
        Attribute::vectors("velocity").with_data(flatten(frame.velocities)),
        Attribute::vectors("angular_velocity").with_data(flatten(frame.angular_velocities)),
        Attribute::generic("id", 1).with_data(frame.ids.to_vec()),
    ];
    for (name, data) in &frame.scalars {
        point.push(Attribute::generic(*name, 1).with_data(data.to_vec()));
    }
    for (name, data) in &frame.vectors {
        point.push(Attribute::generic(*name, 3).with_data(flatten(data)));
    }
    for (name, data) in tensors {
        let flat = bytemuck::cast_slice::<[f32; 9], f32>(data).to_vec();
        point.push(Attribute::generic(*name, 9).with_data(flat));
    }
    write_points(path, frame.positions, point)
}

/// Writes contacts as points with one vertex cell each, plus point data `normal`, `gap`,
/// `body_a`, `body_b` and, when forces are given, `force` and `force_magnitude` (the
/// latter for colouring/scaling force chains without a calculator filter).
pub fn write_contacts(path: &Path, frame: &ContactFrame) -> Result<(), IoError> {
    let n = frame.points.len();
    check_len(path, "normal", n, frame.normals.len())?;
    check_len(path, "gap", n, frame.gaps.len())?;
    check_len(path, "body_a", n, frame.body_a.len())?;
    check_len(path, "body_b", n, frame.body_b.len())?;
    check_len(path, "feature", n, frame.features.len())?;
    if let Some(forces) = frame.forces {
        check_len(path, "force", n, forces.len())?;
    }

    check_finite3(path, "point", frame.points)?;
    check_finite3(path, "normal", frame.normals)?;
    check_finite(path, "gap", frame.gaps)?;
    if let Some(forces) = frame.forces {
        check_finite3(path, "force", forces)?;
    }

    let mut point = vec![
        Attribute::vectors("normal").with_data(flatten(frame.normals)),
        Attribute::scalars("gap", 1).with_data(frame.gaps.to_vec()),
        Attribute::generic("body_a", 1).with_data(frame.body_a.to_vec()),
        Attribute::generic("body_b", 1).with_data(frame.body_b.to_vec()),
        Attribute::generic("feature", 1).with_data(frame.features.to_vec()),
    ];
    if let Some(forces) = frame.forces {
        let magnitude: Vec<f32> = forces
            .iter()
            .map(|f| (f[0] * f[0] + f[1] * f[1] + f[2] * f[2]).sqrt())
            .collect();
        // Finite inputs can still overflow when squared.
        check_finite(path, "force_magnitude", &magnitude)?;
        point.push(Attribute::vectors("force").with_data(flatten(forces)));
        point.push(Attribute::generic("force_magnitude", 1).with_data(magnitude));
    }
    write_points(path, frame.points, point)
}

/// Encodes a point cloud with vertex cells and the given point data, then writes it
/// atomically. Encoding happens fully in memory first so a vtkio error never leaves a
/// partial file.
fn write_points(path: &Path, points: &[[f32; 3]], point: Vec<Attribute>) -> Result<(), IoError> {
    let n = points.len() as u64;
    let piece = PolyDataPiece {
        points: IOBuffer::F32(flatten(points)),
        verts: Some(VertexNumbers::XML {
            connectivity: (0..n).collect(),
            offsets: (1..=n).collect(),
        }),
        lines: None,
        polys: None,
        strips: None,
        data: Attributes {
            point,
            cell: Vec::new(),
        },
    };
    write_piece(path, piece)
}

fn write_piece(path: &Path, piece: PolyDataPiece) -> Result<(), IoError> {
    let vtk = Vtk {
        version: Version::new((1, 0)),
        byte_order: ByteOrder::LittleEndian,
        title: String::new(),
        file_path: None,
        data: DataSet::inline(piece),
    };
    let mut bytes = Vec::new();
    vtk.write_xml(&mut bytes).map_err(|e| IoError::Vtk {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    write_atomic(path, |w| w.write_all(&bytes)).map_err(|e| IoError::os(path, e))
}

fn flatten(v: &[[f32; 3]]) -> Vec<f32> {
    bytemuck::cast_slice::<[f32; 3], f32>(v).to_vec()
}

pub(crate) fn check_len(
    path: &Path,
    array: &str,
    expected: usize,
    actual: usize,
) -> Result<(), IoError> {
    if expected == actual {
        Ok(())
    } else {
        Err(IoError::LengthMismatch {
            path: path.to_path_buf(),
            array: array.to_string(),
            expected,
            actual,
        })
    }
}

pub(crate) fn check_finite(path: &Path, array: &str, data: &[f32]) -> Result<(), IoError> {
    match data.iter().position(|x| !x.is_finite()) {
        None => Ok(()),
        Some(index) => Err(IoError::NonFinite {
            path: path.to_path_buf(),
            array: array.to_string(),
            index,
            component: None,
            value: data[index] as f64,
        }),
    }
}

pub(crate) fn check_finite3(path: &Path, array: &str, data: &[[f32; 3]]) -> Result<(), IoError> {
    for (index, v) in data.iter().enumerate() {
        if let Some(component) = v.iter().position(|x| !x.is_finite()) {
            return Err(IoError::NonFinite {
                path: path.to_path_buf(),
                array: array.to_string(),
                index,
                component: Some(component),
                value: v[component] as f64,
            });
        }
    }
    Ok(())
}

/// Extra array names must be non-empty, unique, distinct from the built-in arrays, and
/// free of characters that would need XML escaping (ParaView shows them verbatim).
fn check_names<'n>(
    path: &Path,
    builtin: &[&str],
    extra: impl Iterator<Item = &'n str>,
) -> Result<(), IoError> {
    let mut seen: Vec<&str> = builtin.to_vec();
    for name in extra {
        let bad = |why: &str| {
            Err(IoError::InvalidInput {
                path: path.to_path_buf(),
                message: format!("array name {name:?} {why}"),
            })
        };
        if name.trim().is_empty() {
            return bad("is empty");
        }
        if name
            .chars()
            .any(|c| c.is_control() || matches!(c, '<' | '>' | '&' | '"' | '\''))
        {
            return bad("contains a control or XML-special character");
        }
        if seen.contains(&name) {
            return bad("is used twice in this frame");
        }
        seen.push(name);
    }
    Ok(())
}

/// Box bodies of one frame, indexed by box: centre, orientation (unit quaternion
/// `[x, y, z, w]`, body → world), half extents, body id.
#[derive(Clone, Debug)]
pub struct BoxFrame<'a> {
    pub centers: &'a [[f32; 3]],
    pub rotations: &'a [[f32; 4]],
    pub half_extents: &'a [[f32; 3]],
    pub ids: &'a [u32],
}

/// Writes every box's surface as 6 quads (8 points per box, outward-ordered faces), with
/// cell data `id` (the body). ParaView shows the real shapes with no glyph set-up: open
/// `boxes.pvd`. Atomic; refuses mismatched lengths and NaN/inf.
pub fn write_boxes(path: &Path, frame: &BoxFrame) -> Result<(), IoError> {
    let n = frame.centers.len();
    check_len(path, "rotation", n, frame.rotations.len())?;
    check_len(path, "half_extents", n, frame.half_extents.len())?;
    check_len(path, "id", n, frame.ids.len())?;
    check_finite3(path, "center", frame.centers)?;
    check_finite3(path, "half_extents", frame.half_extents)?;
    let surfaces: Vec<Surface> = frame
        .half_extents
        .iter()
        .map(|&h| cuboid::surface(h))
        .collect();
    let posed = pose_surfaces(&surfaces, frame.centers, frame.rotations, frame.ids);
    check_finite3(path, "vertex", &posed.points)?;
    write_polygons(
        path,
        &posed.points,
        posed.connectivity,
        posed.offsets,
        vec![Attribute::generic("id", 1).with_data(posed.ids)],
    )
}

/// Surfaces at their poses, as one polygon set: the points of each body in turn, its
/// polygons' connectivity and end offsets, and per polygon the body id and the polygon's
/// index in its surface.
pub(crate) struct PosedSurfaces {
    pub points: Vec<[f32; 3]>,
    pub connectivity: Vec<u64>,
    pub offsets: Vec<u64>,
    pub ids: Vec<u32>,
    pub polygon: Vec<u32>,
}

/// Places body k's `surfaces[k]` at `centers[k]`, `rotations[k]` (lengths checked by the
/// caller).
pub(crate) fn pose_surfaces(
    surfaces: &[Surface],
    centers: &[[f32; 3]],
    rotations: &[[f32; 4]],
    ids: &[u32],
) -> PosedSurfaces {
    let mut out = PosedSurfaces {
        points: Vec::new(),
        connectivity: Vec::new(),
        offsets: Vec::new(),
        ids: Vec::new(),
        polygon: Vec::new(),
    };
    for (k, s) in surfaces.iter().enumerate() {
        let base = out.points.len() as u64;
        out.points.extend(s.posed(centers[k], rotations[k]));
        for (f, poly) in s.polygons.iter().enumerate() {
            out.connectivity
                .extend(poly.iter().map(|&v| base + v as u64));
            out.offsets.push(out.connectivity.len() as u64);
            out.ids.push(ids[k]);
            out.polygon.push(f as u32);
        }
    }
    out
}

/// Capsule bodies of one frame, indexed by capsule: centre, orientation (unit quaternion
/// `[x, y, z, w]`, body → world; the axis is body z), radius, half length of the axis
/// segment, body id.
#[derive(Clone, Debug)]
pub struct CapsuleFrame<'a> {
    pub centers: &'a [[f32; 3]],
    pub rotations: &'a [[f32; 4]],
    pub radii: &'a [f32],
    pub half_lengths: &'a [f32],
    pub ids: &'a [u32],
}

/// Writes every capsule's surface (`shapes::capsule::surface`: 74 points, 60 quads and 24
/// triangles per capsule), with cell data `id` (the body); open `capsules.pvd` in ParaView. Atomic;
/// refuses mismatched lengths and NaN/inf.
pub fn write_capsules(path: &Path, frame: &CapsuleFrame) -> Result<(), IoError> {
    let n = frame.centers.len();
    check_len(path, "rotation", n, frame.rotations.len())?;
    check_len(path, "radius", n, frame.radii.len())?;
    check_len(path, "half_length", n, frame.half_lengths.len())?;
    check_len(path, "id", n, frame.ids.len())?;
    check_finite3(path, "center", frame.centers)?;
    let surfaces: Vec<Surface> = (frame.radii.iter().zip(frame.half_lengths))
        .map(|(&r, &hl)| capsule::surface(r, hl))
        .collect();
    let posed = pose_surfaces(&surfaces, frame.centers, frame.rotations, frame.ids);
    check_finite3(path, "vertex", &posed.points)?;
    write_polygons(
        path,
        &posed.points,
        posed.connectivity,
        posed.offsets,
        vec![Attribute::generic("id", 1).with_data(posed.ids)],
    )
}

/// Writes a polygon surface (`.vtp`): points, polygons as connectivity + end offsets, and
/// per-polygon cell arrays (the box, capsule, cylinder and hull frames share it).
pub(crate) fn write_polygons(
    path: &Path,
    points: &[[f32; 3]],
    connectivity: Vec<u64>,
    offsets: Vec<u64>,
    cell: Vec<Attribute>,
) -> Result<(), IoError> {
    let vtk = Vtk {
        version: Version::new((1, 0)),
        byte_order: ByteOrder::LittleEndian,
        title: String::new(),
        file_path: None,
        data: DataSet::inline(PolyDataPiece {
            points: IOBuffer::F32(points.iter().flatten().copied().collect()),
            verts: None,
            lines: None,
            polys: Some(VertexNumbers::XML {
                connectivity,
                offsets,
            }),
            strips: None,
            data: Attributes {
                point: Vec::new(),
                cell,
            },
        }),
    };
    let mut bytes = Vec::new();
    vtk.write_xml(&mut bytes).map_err(|e| IoError::Vtk {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    write_atomic(path, |w| w.write_all(&bytes)).map_err(|e| IoError::os(path, e))
}
