//! Triangle meshes for mesh boundaries: Wavefront OBJ (via `tobj`, all models merged and
//! triangulated) and STL, ASCII or binary (via `stl_io`).

use std::path::Path;

pub(crate) type MeshData = (Vec<[f64; 3]>, Vec<[u32; 3]>);

/// Loads and checks a mesh, scaling vertices by `scale`. Errors are plain messages; the
/// caller adds the scene location.
pub(crate) fn load_mesh(path: &Path, scale: f64) -> Result<MeshData, String> {
    if !path.exists() {
        return Err(format!("mesh file `{}` not found", path.display()));
    }
    crate::input::check_size(path, crate::input::MESH_CAP, "mesh file")
        .map_err(|e| e.to_string())?;
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase())
        .unwrap_or_default();
    // The parsers are third-party code: never let a malformed file take the process down.
    let result = std::panic::catch_unwind(|| match ext.as_str() {
        "obj" => load_obj(path),
        "stl" => load_stl(path),
        _ => Err("unsupported mesh format (expected a .obj or .stl file)".to_string()),
    })
    .unwrap_or_else(|_| Err("the mesh parser panicked".to_string()));
    let (mut vertices, triangles) =
        result.map_err(|e| format!("cannot load mesh file `{}`: {e}", path.display()))?;
    if triangles.is_empty() {
        return Err(format!(
            "mesh file `{}` contains no triangles",
            path.display()
        ));
    }
    let has_area = |t: &[u32; 3]| {
        let [a, b, c] = t.map(|i| glam::DVec3::from_array(vertices[i as usize]));
        (b - a).cross(c - a).length_squared() > 0.0
    };
    let in_range = |t: &&[u32; 3]| t.iter().all(|&i| (i as usize) < vertices.len());
    if let Some(t) = triangles
        .iter()
        .find(|t| t.iter().any(|&i| i as usize >= vertices.len()))
    {
        return Err(format!(
            "mesh file `{}`: triangle {t:?} refers to a vertex that does not exist ({} vertices)",
            path.display(),
            vertices.len()
        ));
    }
    if vertices.iter().flatten().any(|x| !x.is_finite()) {
        return Err(format!(
            "mesh file `{}` has non-finite vertex coordinates",
            path.display()
        ));
    }
    // A mesh whose every triangle is a point or a segment has no surface to collide with.
    if !triangles.iter().filter(in_range).any(has_area) {
        return Err(format!(
            "mesh file `{}`: none of its {} triangles has an area (every one is degenerate: \
             repeated or collinear vertices)",
            path.display(),
            triangles.len()
        ));
    }
    for v in vertices.iter_mut() {
        for x in v.iter_mut() {
            *x *= scale;
        }
    }
    Ok((vertices, triangles))
}

/// A face of fewer than 3 vertices, which the OBJ parser would pass over silently: its line.
fn short_obj_face(path: &Path) -> Result<Option<(usize, usize)>, String> {
    let text = std::fs::read(path).map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&text);
    Ok(text.lines().enumerate().find_map(|(i, line)| {
        let mut words = line.split('#').next().unwrap_or("").split_whitespace();
        (words.next() == Some("f"))
            .then(|| words.count())
            .filter(|&n| n < 3)
            .map(|n| (i + 1, n))
    }))
}

fn load_obj(path: &Path) -> Result<MeshData, String> {
    if let Some((line, n)) = short_obj_face(path)? {
        return Err(format!(
            "line {line}: a face needs at least 3 vertices (this one has {n})"
        ));
    }
    let opts = tobj::LoadOptions {
        triangulate: true,
        single_index: true,
        ..Default::default()
    };
    let (models, _materials) = tobj::load_obj(path, &opts).map_err(|e| e.to_string())?;
    let mut vertices = Vec::new();
    let mut triangles = Vec::new();
    for m in &models {
        let base = vertices.len() as u32;
        vertices.extend(
            m.mesh
                .positions
                .chunks_exact(3)
                .map(|p| [p[0] as f64, p[1] as f64, p[2] as f64]),
        );
        triangles.extend(
            m.mesh
                .indices
                .chunks_exact(3)
                .map(|t| [base + t[0], base + t[1], base + t[2]]),
        );
    }
    Ok((vertices, triangles))
}

/// Bytes of a binary STL before its first triangle: an 80-byte header and a 4-byte count.
const STL_HEADER_BYTES: u64 = 84;

fn load_stl(path: &Path) -> Result<MeshData, String> {
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let len = file.metadata().map_err(|e| e.to_string())?.len();
    if len == 0 {
        return Err("the file is empty (0 bytes)".into());
    }
    let mut start = [0u8; 5];
    let ascii = std::io::Read::read_exact(&mut &file, &mut start).is_ok() && &start == b"solid";
    if !ascii && len < STL_HEADER_BYTES {
        return Err(format!(
            "{len} bytes is too short for a binary STL (its header and triangle count alone \
             take {STL_HEADER_BYTES}), and it does not start with `solid` (ASCII STL)"
        ));
    }
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut reader = std::io::BufReader::new(file);
    let mesh = stl_io::read_stl(&mut reader).map_err(|e| e.to_string())?;
    let vertices = mesh
        .vertices
        .iter()
        .map(|v| [v.0[0] as f64, v.0[1] as f64, v.0[2] as f64])
        .collect();
    let mut triangles = Vec::with_capacity(mesh.faces.len());
    for f in &mesh.faces {
        let [a, b, c] = f.vertices;
        let conv = |i: usize| u32::try_from(i).map_err(|_| "vertex index too large".to_string());
        triangles.push([conv(a)?, conv(b)?, conv(c)?]);
    }
    Ok((vertices, triangles))
}
