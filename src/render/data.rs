//! What a run directory holds, read back for drawing: the frame indexes (`particles.pvd`,
//! `contacts.pvd`), the frames themselves (`frames/*.vtp`) and the scene (`scene.toml`).
//! Every failure names the file.

use std::path::{Path, PathBuf};

use vtkio::model::{Attribute, DataSet, IOBuffer, Piece};
use vtkio::Vtk;

use super::RenderError;
use crate::io::Collection;

/// One frame listed in a `.pvd` index.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameRef {
    pub time: f64,
    /// Absolute (or run-dir-joined) path of the `.vtp` file.
    pub path: PathBuf,
}

impl FrameRef {
    /// File stem, e.g. `particles_00000100`: names the rendered image.
    pub fn stem(&self) -> String {
        self.path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "frame".into())
    }
}

/// The spheres of one frame.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Particles {
    pub positions: Vec<[f32; 3]>,
    pub radii: Vec<f32>,
    pub velocities: Vec<[f32; 3]>,
    /// Body ids (boundaries come first in the engine's numbering).
    pub ids: Vec<u32>,
}

impl Particles {
    pub fn speeds(&self) -> Vec<f32> {
        self.velocities
            .iter()
            .map(|v| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt())
            .collect()
    }
}

/// The contacts of one frame: the two bodies and the force magnitude.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Contacts {
    pub body_a: Vec<u32>,
    pub body_b: Vec<u32>,
    pub force: Vec<f32>,
}

/// Frames listed in `dir/name` (a `.pvd`), with paths joined onto the run directory.
pub fn frame_index(dir: &Path, name: &str) -> Result<Vec<FrameRef>, RenderError> {
    let path = dir.join(name);
    if !path.exists() {
        return Err(RenderError::Run {
            path,
            message: "missing (is this a run directory written by `bristlecone run`?)".into(),
        });
    }
    let c = Collection::read(&path)?;
    Ok(c.entries()
        .iter()
        .map(|(time, file)| FrameRef {
            time: *time,
            path: dir.join(file),
        })
        .collect())
}

pub(super) fn frame_err(path: &Path, message: impl Into<String>) -> RenderError {
    RenderError::Frame {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

/// The poly-data piece of a `.vtp` file, with its point data arrays.
fn read_piece(path: &Path) -> Result<(Vec<f32>, Vec<Attribute>), RenderError> {
    read_poly(path).map(|(points, point, _)| (points, point))
}

/// The poly-data piece of a `.vtp` file, with its point and its cell data arrays.
#[allow(clippy::type_complexity)]
pub(super) fn read_poly(
    path: &Path,
) -> Result<(Vec<f32>, Vec<Attribute>, Vec<Attribute>), RenderError> {
    if !path.exists() {
        return Err(frame_err(path, "missing (listed in the .pvd index)"));
    }
    let vtk =
        Vtk::import(path).map_err(|e| frame_err(path, format!("not a readable VTK file: {e}")))?;
    let DataSet::PolyData { mut pieces, .. } = vtk.data else {
        return Err(frame_err(path, "not VTK PolyData"));
    };
    if pieces.len() != 1 {
        return Err(frame_err(
            path,
            format!("{} pieces, expected 1", pieces.len()),
        ));
    }
    let Piece::Inline(piece) = pieces.remove(0) else {
        return Err(frame_err(path, "piece is not stored inline"));
    };
    let points = piece
        .points
        .cast_into::<f32>()
        .ok_or_else(|| frame_err(path, "points are not numbers"))?;
    Ok((points, piece.data.point, piece.data.cell))
}

/// A PolyData frame's points (finite, as f64 world points), its polygons (each a list of
/// point indices, checked in range) and its cell data.
pub(super) fn read_polygons(path: &Path) -> Result<Polygons, RenderError> {
    let vtk =
        Vtk::import(path).map_err(|e| frame_err(path, format!("not a readable VTK file: {e}")))?;
    let DataSet::PolyData { mut pieces, .. } = vtk.data else {
        return Err(frame_err(path, "not VTK PolyData"));
    };
    let Some(Piece::Inline(piece)) = (pieces.len() == 1).then(|| pieces.remove(0)) else {
        return Err(frame_err(path, "expected one inline piece"));
    };
    let points = piece
        .points
        .cast_into::<f32>()
        .ok_or_else(|| frame_err(path, "points are not numbers"))?;
    if let Some(i) = points.iter().position(|x| !x.is_finite()) {
        return Err(frame_err(path, format!("point {} is not finite", i / 3)));
    }
    let n = points.len() / 3;
    let (connectivity, offsets) = piece.polys.map(|v| v.into_xml()).unwrap_or_default();
    let mut polys = Vec::with_capacity(offsets.len());
    let mut start = 0usize;
    for (k, &end) in offsets.iter().enumerate() {
        let end = end as usize;
        let cell = connectivity.get(start..end).filter(|c| c.len() >= 3);
        let Some(cell) = cell.filter(|c| c.iter().all(|&i| (i as usize) < n)) else {
            return Err(frame_err(
                path,
                format!("polygon {k} is not a polygon of its points"),
            ));
        };
        polys.push(cell.iter().map(|&i| i as u32).collect());
        start = end;
    }
    let points = points
        .chunks_exact(3)
        .map(|p| glam::DVec3::new(p[0] as f64, p[1] as f64, p[2] as f64))
        .collect();
    Ok((points, polys, piece.data.cell))
}

/// Points, polygons (point indices) and cell attributes of a PolyData frame.
pub(super) type Polygons = (Vec<glam::DVec3>, Vec<Vec<u32>>, Vec<Attribute>);

/// A point-data array cast to `T`, with `n × comps` entries.
pub(super) fn array<T: vtkio::model::Scalar>(
    path: &Path,
    attrs: &[Attribute],
    name: &str,
    n: usize,
    comps: usize,
) -> Result<Vec<T>, RenderError> {
    let v = array_any(path, attrs, name)?;
    if v.len() != n * comps {
        return Err(frame_err(
            path,
            format!(
                "array `{name}` has {} values, expected {}",
                v.len(),
                n * comps
            ),
        ));
    }
    Ok(v)
}

/// A data array cast to `T`, of any length.
pub(super) fn array_any<T: vtkio::model::Scalar>(
    path: &Path,
    attrs: &[Attribute],
    name: &str,
) -> Result<Vec<T>, RenderError> {
    let data: IOBuffer = attrs
        .iter()
        .find_map(|a| match a {
            Attribute::DataArray(d) if d.name == name => Some(d.data.clone()),
            _ => None,
        })
        .ok_or_else(|| frame_err(path, format!("no data array `{name}`")))?;
    let v = data
        .cast_into::<T>()
        .ok_or_else(|| frame_err(path, format!("array `{name}` is not numeric")))?;
    Ok(v)
}

fn triples(path: &Path, name: &str, v: Vec<f32>) -> Result<Vec<[f32; 3]>, RenderError> {
    if let Some(i) = v.iter().position(|x| !x.is_finite()) {
        return Err(frame_err(
            path,
            format!("array `{name}` has a non-finite value at entry {}", i / 3),
        ));
    }
    Ok(v.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect())
}

/// Reads a particle frame written by [`crate::io::write_particles`].
pub fn read_particles(path: &Path) -> Result<Particles, RenderError> {
    let (points, attrs) = read_piece(path)?;
    if points.len() % 3 != 0 {
        return Err(frame_err(path, "point coordinates are not triples"));
    }
    let n = points.len() / 3;
    let positions = triples(path, "points", points)?;
    let radii: Vec<f32> = array(path, &attrs, "radius", n, 1)?;
    if let Some(i) = radii.iter().position(|r| !(r.is_finite() && *r > 0.0)) {
        return Err(frame_err(
            path,
            format!("radius of particle {i} is {} (must be positive)", radii[i]),
        ));
    }
    let velocities = triples(path, "velocity", array(path, &attrs, "velocity", n, 3)?)?;
    let ids: Vec<u32> = array(path, &attrs, "id", n, 1)?;
    Ok(Particles {
        positions,
        radii,
        velocities,
        ids,
    })
}

/// Reads a contact frame written by [`crate::io::write_contacts`] (it must have forces).
pub fn read_contacts(path: &Path) -> Result<Contacts, RenderError> {
    let (points, attrs) = read_piece(path)?;
    let n = points.len() / 3;
    let body_a: Vec<u32> = array(path, &attrs, "body_a", n, 1)?;
    let body_b: Vec<u32> = array(path, &attrs, "body_b", n, 1)?;
    let force: Vec<f32> = array(path, &attrs, "force_magnitude", n, 1)?;
    if let Some(i) = force.iter().position(|f| !f.is_finite()) {
        return Err(frame_err(
            path,
            format!("force_magnitude of contact {i} is not finite"),
        ));
    }
    Ok(Contacts {
        body_a,
        body_b,
        force,
    })
}
