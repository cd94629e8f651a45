//! Convex hull bodies (`shape = "convex"`): the hull of a point list (computed by the
//! `chull` crate with exact big-integer predicates, then checked here), its triangles
//! merged into polygonal faces, exact mass properties of the polyhedron, the body frame
//! (centre of mass, principal axes, as clumps) and the GPU shape record.
//!
//! Mass properties: every face is fanned into triangles and each triangle closes a
//! tetrahedron with a reference point (the vertex mean); the volume, first moments and
//! second moments (covariance) of the tetrahedra are summed in closed form (the
//! divergence theorem in discrete form), exact up to rounding.
//!
//! Caps (the GPU narrow phase loops over every vertex and face of a hull per contact
//! pair, in private memory): at most [`MAX_VERTICES`] vertices, [`MAX_FACES`] faces and
//! [`MAX_FACE_VERTICES`] vertices per face; feature ids carry the vertex index in 6 bits.

use glam::{DMat3, DQuat, DVec3};

/// Most hull vertices a body may have (vertex feature ids are 6 bits; the deepest-4
/// selection against a plane is quadratic in this count).
pub const MAX_VERTICES: usize = 64;
/// Most hull faces (the sphere test visits every face).
pub const MAX_FACES: usize = 64;
/// Most vertices of one face polygon.
pub const MAX_FACE_VERTICES: usize = 16;
/// Relative tolerance (× the points' extent) for coplanar faces and flatness.
const PLANE_TOL: f64 = 1e-9;
/// A hull thinner than this (× its extent) is refused as flat.
const FLAT_TOL: f64 = 1e-6;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HullError {
    #[error("a convex hull needs at least 4 points (got {0})")]
    TooFew(usize),
    #[error("point {0} is not finite")]
    NonFinite(usize),
    #[error("the points are {0}: their hull has no volume")]
    Degenerate(&'static str),
    #[error("the hull has {n} {what} (at most {max}: the GPU narrow phase loops over every {what_one} per pair)")]
    TooMany {
        what: &'static str,
        what_one: &'static str,
        n: usize,
        max: usize,
    },
    #[error("hull computation failed: {0}")]
    Hull(String),
}

/// One planar face: outward unit normal, offset (n · x = d on the face), vertex loop
/// (indices into the hull's vertices, counter-clockwise seen from outside).
#[derive(Debug, Clone, PartialEq)]
pub struct Face {
    pub normal: DVec3,
    pub offset: f64,
    pub verts: Vec<u32>,
}

/// A convex polyhedron with its mass properties at unit density; vertices and faces in
/// the body frame (centre of mass, principal axes).
#[derive(Debug, Clone, PartialEq)]
pub struct ConvexHull {
    pub volume: f64,
    /// Centre of mass in the input frame.
    pub com: DVec3,
    /// Principal moments (unit density) about the body axes.
    pub principal: [f64; 3],
    /// Rotation body (principal) frame → input frame.
    pub axes: DQuat,
    pub vertices: Vec<DVec3>,
    pub faces: Vec<Face>,
}

impl ConvexHull {
    /// The hull of `points` (input frame), validated and capped.
    pub fn new(points: &[[f64; 3]]) -> Result<Self, HullError> {
        let p: Vec<DVec3> = points.iter().map(|&x| DVec3::from(x)).collect();
        if let Some(k) = p.iter().position(|v| !v.is_finite()) {
            return Err(HullError::NonFinite(k));
        }
        if p.len() < 4 {
            return Err(HullError::TooFew(p.len()));
        }
        let ext = extent(&p);
        check_volume(&p, ext)?;
        let (verts, tris) = chull_triangles(&p)?;
        let faces = merge_faces(&verts, &tris, ext * PLANE_TOL)?;
        let (verts, faces) = canonical(compact(&verts, faces));
        check_contains(&p, &faces, &verts, ext)?;
        cap("vertices", "vertex", verts.len(), MAX_VERTICES)?;
        cap("faces", "face", faces.len(), MAX_FACES)?;
        let most = faces.iter().map(|f| f.verts.len()).max().unwrap_or(0);
        cap(
            "vertices on one face",
            "face vertex",
            most,
            MAX_FACE_VERTICES,
        )?;
        Ok(Self::with_frame(verts, faces))
    }

    /// Mass properties and the body frame of a valid hull (input-frame geometry).
    fn with_frame(verts: Vec<DVec3>, faces: Vec<Face>) -> Self {
        let (volume, com, tensor) = moments(&verts, &faces);
        let (principal, axes) = super::clump::principal_axes(&tensor);
        let inv = axes.inverse();
        let vertices: Vec<DVec3> = verts.iter().map(|&v| inv * (v - com)).collect();
        let faces = faces
            .into_iter()
            .map(|f| {
                let normal = (inv * f.normal).normalize();
                let offset = normal.dot(vertices[f.verts[0] as usize]);
                Face {
                    normal,
                    offset,
                    ..f
                }
            })
            .collect();
        ConvexHull {
            volume,
            com,
            principal,
            axes,
            vertices,
            faces,
        }
    }

    /// Mass and principal moments at `density`.
    pub fn mass_properties(&self, density: f64) -> (f64, [f64; 3]) {
        (density * self.volume, self.principal.map(|i| i * density))
    }

    /// The same hull scaled by `s` about its centre of mass (same body frame).
    pub fn scaled(&self, s: f64) -> ConvexHull {
        let s5 = s.powi(5);
        ConvexHull {
            volume: self.volume * s * s * s,
            com: self.com * s,
            principal: self.principal.map(|i| i * s5),
            axes: self.axes,
            vertices: self.vertices.iter().map(|&v| v * s).collect(),
            faces: self
                .faces
                .iter()
                .map(|f| Face {
                    offset: f.offset * s,
                    ..f.clone()
                })
                .collect(),
        }
    }

    /// Radius of the smallest sphere about the centre of mass holding the hull.
    pub fn bounding_radius(&self) -> f64 {
        self.vertices.iter().map(|v| v.length()).fold(0.0, f64::max)
    }

    /// The body pose for a hull whose input frame is placed at `position` with
    /// `orientation` (x, y, z, w): centre of mass and principal frame in world.
    pub fn frame(&self, position: [f64; 3], orientation: [f64; 4]) -> ([f64; 3], [f64; 4]) {
        let q = DQuat::from_array(orientation).normalize();
        let p = DVec3::from_array(position) + q * self.com;
        (p.to_array(), (q * self.axes).normalize().to_array())
    }
}

fn cap(what: &'static str, what_one: &'static str, n: usize, max: usize) -> Result<(), HullError> {
    if n > max {
        return Err(HullError::TooMany {
            what,
            what_one,
            n,
            max,
        });
    }
    Ok(())
}

/// Diagonal of the points' bounding box.
fn extent(p: &[DVec3]) -> f64 {
    let lo = p.iter().fold(DVec3::INFINITY, |a, &v| a.min(v));
    let hi = p.iter().fold(DVec3::NEG_INFINITY, |a, &v| a.max(v));
    (hi - lo).length()
}

/// Refuses coincident, collinear and coplanar point sets before the hull is computed.
fn check_volume(p: &[DVec3], ext: f64) -> Result<(), HullError> {
    let far = |f: &dyn Fn(DVec3) -> f64| p.iter().map(|&v| f(v)).fold(0.0f64, f64::max);
    if ext <= 0.0 {
        return Err(HullError::Degenerate("coincident"));
    }
    let a = p[0];
    let b = *p
        .iter()
        .max_by(|x, y| (**x - a).length().total_cmp(&(**y - a).length()))
        .unwrap();
    let u = (b - a).normalize();
    let off_line = |v: DVec3| (v - a).reject_from_normalized(u).length();
    if far(&off_line) <= FLAT_TOL * ext {
        return Err(HullError::Degenerate("collinear"));
    }
    let c = *p
        .iter()
        .max_by(|x, y| off_line(**x).total_cmp(&off_line(**y)))
        .unwrap();
    let n = u.cross(c - a).normalize();
    if far(&|v: DVec3| (v - a).dot(n).abs()) <= FLAT_TOL * ext {
        return Err(HullError::Degenerate("coplanar (a flat hull)"));
    }
    Ok(())
}

/// The hull's vertices and triangles from `chull` (exact predicates on integers).
fn chull_triangles(p: &[DVec3]) -> Result<(Vec<DVec3>, Vec<[usize; 3]>), HullError> {
    let pts: Vec<Vec<f64>> = p.iter().map(|v| vec![v.x, v.y, v.z]).collect();
    // Third-party code: a panic inside it becomes an error, never a crash.
    let hull = std::panic::catch_unwind(|| chull::ConvexHullWrapper::try_new(&pts, None))
        .map_err(|_| HullError::Hull("the hull library panicked".into()))?
        .map_err(|e| HullError::Hull(e.to_string()))?;
    let (v, idx) = hull.vertices_indices();
    let verts: Vec<DVec3> = v.iter().map(|x| DVec3::new(x[0], x[1], x[2])).collect();
    if idx.len() % 3 != 0 || idx.iter().any(|&i| i >= verts.len()) {
        return Err(HullError::Hull("malformed triangle list".into()));
    }
    let tris = idx.chunks(3).map(|t| [t[0], t[1], t[2]]).collect();
    Ok((verts, tris))
}

/// Groups the triangles by plane into faces (outward normals, counter-clockwise loops).
fn merge_faces(v: &[DVec3], tris: &[[usize; 3]], tol: f64) -> Result<Vec<Face>, HullError> {
    let inner = tris.iter().flatten().map(|&i| v[i]).sum::<DVec3>() / (3 * tris.len()) as f64;
    let mut faces: Vec<(DVec3, f64, Vec<u32>)> = Vec::new();
    for t in tris {
        let c = (v[t[1]] - v[t[0]]).cross(v[t[2]] - v[t[0]]);
        if c.length() <= tol * tol {
            continue;
        }
        let mut n = c.normalize();
        if n.dot(v[t[0]] - inner) < 0.0 {
            n = -n;
        }
        let d = n.dot(v[t[0]]);
        let same = faces
            .iter()
            .position(|(m, e, _)| m.dot(n) > 1.0 - 1e-9 && (d - e).abs() <= tol);
        let k = same.unwrap_or_else(|| {
            faces.push((n, d, Vec::new()));
            faces.len() - 1
        });
        for &i in t {
            if !faces[k].2.contains(&(i as u32)) {
                faces[k].2.push(i as u32);
            }
        }
    }
    if faces.len() < 4 {
        return Err(HullError::Hull(format!("{} faces", faces.len())));
    }
    Ok(faces
        .into_iter()
        .map(|(n, d, ids)| Face {
            normal: n,
            offset: d,
            verts: ordered_loop(v, n, ids, tol),
        })
        .collect())
}

/// The face's polygon: the 2-D convex hull (monotone chain) of its triangles' vertices in
/// the face plane, counter-clockwise about the normal; points inside the face or on the
/// straight part of an edge are dropped.
fn ordered_loop(v: &[DVec3], n: DVec3, mut ids: Vec<u32>, tol: f64) -> Vec<u32> {
    let (u, w) = n.any_orthonormal_pair();
    let xy = |i: u32| (v[i as usize].dot(u), v[i as usize].dot(w));
    ids.sort_by(|&a, &b| {
        let (pa, pb) = (xy(a), xy(b));
        pa.0.total_cmp(&pb.0)
            .then(pa.1.total_cmp(&pb.1))
            .then(a.cmp(&b))
    });
    // Left turn o → a → b by more than tol (× the length of o → b).
    let left = |o: u32, a: u32, b: u32| {
        let (po, pa, pb) = (xy(o), xy(a), xy(b));
        let cr = (pa.0 - po.0) * (pb.1 - po.1) - (pa.1 - po.1) * (pb.0 - po.0);
        cr > tol * ((pb.0 - po.0).hypot(pb.1 - po.1))
    };
    let mut hull: Vec<u32> = Vec::new();
    for pass in 0..2 {
        let start = hull.len();
        let seq: Vec<u32> = if pass == 0 {
            ids.clone()
        } else {
            ids.iter().rev().copied().collect()
        };
        for i in seq {
            while hull.len() >= start + 2 && !left(hull[hull.len() - 2], hull[hull.len() - 1], i) {
                hull.pop();
            }
            hull.push(i);
        }
        hull.pop();
    }
    // u × w = n, so counter-clockwise in (u, w) is counter-clockwise about n. Start the
    // loop at its lowest vertex index (a deterministic feature order).
    let s = (0..hull.len()).min_by_key(|&j| hull[j]).unwrap_or(0);
    hull[s..].iter().chain(&hull[..s]).copied().collect()
}

/// Keeps the vertices some face uses, renumbered in their original order.
fn compact(v: &[DVec3], faces: Vec<Face>) -> (Vec<DVec3>, Vec<Face>) {
    let mut used = vec![false; v.len()];
    faces
        .iter()
        .flat_map(|f| &f.verts)
        .for_each(|&i| used[i as usize] = true);
    let mut map = vec![u32::MAX; v.len()];
    let mut out = Vec::new();
    for (i, &u) in used.iter().enumerate() {
        if u {
            map[i] = out.len() as u32;
            out.push(v[i]);
        }
    }
    let faces = faces
        .into_iter()
        .map(|f| Face {
            verts: f.verts.iter().map(|&i| map[i as usize]).collect(),
            ..f
        })
        .collect();
    (out, faces)
}

/// The hull in a canonical order, whatever order the hull library returned (it varies
/// from process to process: its hash maps are randomly seeded): vertices sorted by their
/// coordinates, each loop starting at its lowest vertex, faces sorted by loop, normals by
/// Newell's formula over the loop. Vertex and
/// face indices are feature ids and the GPU's iteration order, so a scene's results must
/// not depend on them.
fn canonical((v, faces): (Vec<DVec3>, Vec<Face>)) -> (Vec<DVec3>, Vec<Face>) {
    let mut order: Vec<usize> = (0..v.len()).collect();
    let key = |i: &usize| v[*i].to_array();
    order.sort_by(|a, b| {
        let (ka, kb) = (key(a), key(b));
        (0..3)
            .map(|k| ka[k].total_cmp(&kb[k]))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let mut map = vec![0u32; v.len()];
    for (new, &old) in order.iter().enumerate() {
        map[old] = new as u32;
    }
    let mut faces: Vec<Face> = faces
        .into_iter()
        .map(|f| {
            let mut l: Vec<u32> = f.verts.iter().map(|&i| map[i as usize]).collect();
            let first = (0..l.len()).min_by_key(|&k| l[k]).unwrap_or(0);
            l.rotate_left(first);
            // Newell's normal of the canonical loop (the library's triangle order would
            // leave the last bit to chance).
            let at = |k: usize| v[order[l[k % l.len()] as usize]];
            let normal = (0..l.len())
                .map(|k| at(k).cross(at(k + 1)))
                .fold(DVec3::ZERO, |a, b| a + b)
                .normalize();
            let offset = normal.dot(at(0));
            Face {
                verts: l,
                normal,
                offset,
            }
        })
        .collect();
    faces.sort_by(|a, b| a.verts.cmp(&b.verts));
    (order.iter().map(|&i| v[i]).collect(), faces)
}

/// Every input point inside every face plane, every face with ≥ 3 vertices: a check on
/// the library's result, not only on the input.
fn check_contains(p: &[DVec3], faces: &[Face], v: &[DVec3], ext: f64) -> Result<(), HullError> {
    let tol = 1e-7 * ext;
    for (k, f) in faces.iter().enumerate() {
        if f.verts.len() < 3 {
            return Err(HullError::Hull(format!(
                "face {k} has {} vertices",
                f.verts.len()
            )));
        }
        if let Some(i) = p.iter().position(|x| f.normal.dot(*x) - f.offset > tol) {
            return Err(HullError::Hull(format!("point {i} lies outside face {k}")));
        }
        if f.verts
            .iter()
            .any(|&i| (f.normal.dot(v[i as usize]) - f.offset).abs() > tol)
        {
            return Err(HullError::Hull(format!("face {k} is not planar")));
        }
    }
    Ok(())
}

/// Volume, centre of mass and inertia tensor about it (unit density), input frame: the
/// sum over the tetrahedra (reference point, face-fan triangle).
pub fn moments(v: &[DVec3], faces: &[Face]) -> (f64, DVec3, DMat3) {
    let o = v.iter().sum::<DVec3>() / v.len() as f64;
    let (mut vol, mut first, mut cov) = (0.0, DVec3::ZERO, DMat3::ZERO);
    for f in faces {
        let a = v[f.verts[0] as usize] - o;
        for w in f.verts[1..].windows(2) {
            let (b, c) = (v[w[0] as usize] - o, v[w[1] as usize] - o);
            let det = a.dot(b.cross(c));
            let s = a + b + c;
            vol += det / 6.0;
            first += det / 24.0 * s;
            // ∫ x xᵀ over the tetrahedron (0, a, b, c) = det/120 (Σ x_k x_kᵀ + s sᵀ).
            let outer = |x: DVec3| DMat3::from_cols(x * x.x, x * x.y, x * x.z);
            cov += (outer(a) + outer(b) + outer(c) + outer(s)) * (det / 120.0);
        }
    }
    let cm = first / vol;
    let outer = |x: DVec3| DMat3::from_cols(x * x.x, x * x.y, x * x.z);
    let c = cov - outer(cm) * vol;
    let tr = c.x_axis.x + c.y_axis.y + c.z_axis.z;
    (vol, o + cm, DMat3::from_diagonal(DVec3::splat(tr)) - c)
}

/// A polytope's edges from its face loops (counter-clockwise seen from outside): each
/// edge once, as `[u, w, f, g]` with u < w, f the face whose loop runs u → w and g the face
/// whose loop runs w → u; in order of first appearance (face, then loop position). The
/// GPU's hull–hull edge query walks this list (`src/collide/mod.rs`, `convex_record`).
pub fn hull_edges(loops: &[Vec<u32>]) -> Vec<[u32; 4]> {
    let runs = |f: usize, a: u32, b: u32| {
        let l = &loops[f];
        (0..l.len()).any(|k| l[k] == a && l[(k + 1) % l.len()] == b)
    };
    let mut edges = Vec::new();
    for (f, l) in loops.iter().enumerate() {
        for k in 0..l.len() {
            let (a, b) = (l[k], l[(k + 1) % l.len()]);
            let (u, w) = (a.min(b), a.max(b));
            if edges.iter().any(|e: &[u32; 4]| e[0] == u && e[1] == w) {
                continue;
            }
            let g = (0..loops.len()).find(|&g| g != f && runs(g, b, a));
            let g = g.expect("a closed polytope: every edge borders two faces") as u32;
            let (fu, gw) = if a == u { (f as u32, g) } else { (g, f as u32) };
            edges.push([u, w, fu, gw]);
        }
    }
    edges
}

/// A polytope in the f32 layout of a hull grain: vertices, face planes (n, d), loops.
pub type PolytopeData = (Vec<[f32; 3]>, Vec<[f32; 4]>, Vec<Vec<u32>>);

/// The polytope data of a box (half extents h) in the layout of a convex hull grain:
/// vertex k has bit 0/1/2 set on the + side of x/y/z (the order of the box narrow phase's
/// corners); faces −x, +x, −y, +y, −z, +z with loops counter-clockwise from outside. Boxes
/// meet hulls through it (the hull–hull narrow phase, `crate::reference::convex`).
pub fn box_polytope(h: [f32; 3]) -> PolytopeData {
    let vertices = (0..8)
        .map(|k| [0, 1, 2].map(|b| if (k >> b) & 1 == 1 { h[b] } else { -h[b] }))
        .collect();
    let planes = (0..6)
        .map(|f| {
            let mut p = [0.0f32; 4];
            p[f / 2] = if f % 2 == 1 { 1.0 } else { -1.0 };
            p[3] = h[f / 2];
            p
        })
        .collect();
    let loops = super::cuboid::BOX_CORNER_FACES
        .iter()
        .map(|l| l.map(u32::from).to_vec())
        .collect();
    (vertices, planes, loops)
}

/// The vertex of `verts` farthest along `l` (the first of equals, as the kernels scan).
pub fn vertex_support<'v>(verts: impl IntoIterator<Item = &'v DVec3>, l: DVec3) -> DVec3 {
    let mut best = (f64::NEG_INFINITY, DVec3::ZERO);
    for v in verts {
        if v.dot(l) > best.0 {
            best = (v.dot(l), *v);
        }
    }
    best.1
}

impl super::Solid for ConvexHull {
    fn support(&self, d: DVec3) -> DVec3 {
        vertex_support(&self.vertices, d)
    }
    fn bounding_radius(&self) -> f64 {
        ConvexHull::bounding_radius(self)
    }
    fn mass_properties(&self, density: f64) -> (f64, [f64; 3]) {
        ConvexHull::mass_properties(self, density)
    }
    /// Its faces, each a polygon of its vertex loop.
    fn surface(&self) -> Option<super::Surface> {
        Some(super::Surface {
            points: self
                .vertices
                .iter()
                .map(|v| v.as_vec3().to_array())
                .collect(),
            polygons: self.faces.iter().map(|f| f.verts.clone()).collect(),
        })
    }
}

pub struct ConvexFamily;

impl super::ShapeFamily for ConvexFamily {
    fn name(&self) -> &'static str {
        "convex"
    }
    fn id(&self) -> u32 {
        super::SHAPE_CONVEX
    }
    fn routine(&self) -> super::Routine {
        super::Routine::Convex
    }
    fn keys(&self) -> &'static [&'static str] {
        &["file", "points"]
    }
    /// Given by data (its `points` or the mesh `file`), which the scene loader reads.
    fn parse(
        &self,
        _: &dyn super::ShapeKeys,
    ) -> Option<Result<super::BodyShape, crate::model::keys::KeyError>> {
        None
    }
}

impl ConvexHull {
    /// The GPU shape: vertices, face planes (n, d) and vertex loops, in f32.
    pub fn grain_shape(&self) -> crate::model::contact::BoundaryShape {
        let f = |v: glam::DVec3| [v.x as f32, v.y as f32, v.z as f32];
        crate::model::contact::BoundaryShape::GrainConvex {
            vertices: self.vertices.iter().map(|&v| f(v)).collect(),
            planes: self
                .faces
                .iter()
                .map(|fc| {
                    let n = f(fc.normal);
                    [n[0], n[1], n[2], fc.offset as f32]
                })
                .collect(),
            loops: self.faces.iter().map(|fc| fc.verts.clone()).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same points give the same hull, vertex for vertex and face for face (the hull
    /// library's own order changes with its hash seeds: feature ids and GPU iteration order
    /// would change between runs).
    #[test]
    fn hull_order_is_canonical() {
        let pts: Vec<[f64; 3]> = (0..14)
            .map(|k| {
                let t = k as f64 * 2.399_963;
                let z = 1.0 - 2.0 * (k as f64 + 0.5) / 14.0;
                let r = (1.0 - z * z).sqrt();
                [1.3 * r * t.cos(), r * t.sin(), 0.7 * z]
            })
            .collect();
        let first = ConvexHull::new(&pts).unwrap();
        for _ in 0..20 {
            assert_eq!(ConvexHull::new(&pts).unwrap(), first);
        }
    }

    /// The box polytope's loops run counter-clockwise around their planes' normals, and
    /// its 12 edges each border the two faces that contain both ends.
    #[test]
    fn box_polytope_is_consistent() {
        let (v, p, l) = box_polytope([0.3, 0.2, 0.1]);
        let x = |k: u32| DVec3::from(v[k as usize].map(|c| c as f64));
        for (f, lp) in l.iter().enumerate() {
            let n = DVec3::new(p[f][0] as f64, p[f][1] as f64, p[f][2] as f64);
            let turn = (x(lp[1]) - x(lp[0])).cross(x(lp[2]) - x(lp[1]));
            assert!(turn.normalize().dot(n) > 0.999, "face {f}");
            for &k in lp {
                assert!(
                    (n.dot(x(k)) - p[f][3] as f64).abs() < 1e-7,
                    "face {f} vertex {k}"
                );
            }
        }
        let e = hull_edges(&l);
        assert_eq!(e.len(), 12);
        for [u, w, f, g] in e {
            assert!(u < w && f != g);
            for face in [f, g] {
                assert!(l[face as usize].contains(&u) && l[face as usize].contains(&w));
            }
        }
    }
}
