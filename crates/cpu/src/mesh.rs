//! Triangle-mesh preparation on the CPU, once at setup: normals, edge/vertex ownership and
//! adjacency (so that each edge and vertex contact is reported by exactly one triangle), and
//! a uniform bin grid of the triangles in the mesh's local frame for the GPU.
//!
//! Ownership: an edge or vertex belongs to the lowest-index triangle that contains it.
//! Validity: the owner reports an edge contact only when the sphere centre is outside every
//! triangle sharing the edge (across that edge), and a vertex contact only when the centre is
//! beyond the vertex along every incident edge: these are the Voronoi regions of the feature,
//! which are disjoint from the faces' (interior) regions. Non-manifold edges (more than two
//! triangles) keep only the first neighbour: a documented limitation.

use glam::DVec3;
use std::collections::HashMap;

pub const NONE: u32 = u32::MAX;
/// Flag bits per triangle: 0..2 owns edge k, 3..5 owns vertex k, 6..8 negate edge side k,
/// 9 degenerate (zero area, skipped).
pub const FLAG_DEGENERATE: u32 = 1 << 9;

/// Topology and per-triangle data shared by the GPU upload and the f64 reference.
#[derive(Clone, Debug)]
pub struct MeshTopology {
    /// Unit normal (v1 − v0) × (v2 − v0), zero for degenerate triangles.
    pub normals: Vec<DVec3>,
    pub flags: Vec<u32>,
    /// Neighbour across edge k: triangle * 4 + its edge index, or [`NONE`].
    pub nbr: Vec<[u32; 3]>,
    /// Vertices joined to each vertex by an edge, ascending.
    pub vadj: Vec<Vec<u32>>,
}

pub fn vertex(v: &[[f32; 3]], i: u32) -> DVec3 {
    let p = v[i as usize];
    DVec3::new(p[0] as f64, p[1] as f64, p[2] as f64)
}

impl MeshTopology {
    pub fn new(vertices: &[[f32; 3]], triangles: &[[u32; 3]]) -> Self {
        let nt = triangles.len();
        let mut normals = Vec::with_capacity(nt);
        let mut flags = vec![0u32; nt];
        let mut nbr = vec![[NONE; 3]; nt];
        let mut vadj: Vec<Vec<u32>> = vec![Vec::new(); vertices.len()];
        let mut edges: HashMap<(u32, u32), Vec<(u32, u32)>> = HashMap::new();
        let mut vowner = vec![false; vertices.len()];
        for (t, tri) in triangles.iter().enumerate() {
            let p: Vec<DVec3> = tri.iter().map(|&i| vertex(vertices, i)).collect();
            let c = (p[1] - p[0]).cross(p[2] - p[0]);
            let scale = (p[1] - p[0])
                .length_squared()
                .max((p[2] - p[0]).length_squared());
            let n = if c.length() > 1e-12 * scale && scale > 0.0 {
                c.normalize()
            } else {
                flags[t] |= FLAG_DEGENERATE;
                DVec3::ZERO
            };
            normals.push(n);
            if flags[t] & FLAG_DEGENERATE != 0 {
                continue;
            }
            for k in 0..3 {
                let (va, vb) = (tri[k], tri[(k + 1) % 3]);
                let (a, b) = (va.min(vb), va.max(vb));
                let (pa, pb) = (vertex(vertices, a), vertex(vertices, b));
                let third = p[(k + 2) % 3];
                if (third - pa).dot((pb - pa).cross(n)) > 0.0 {
                    flags[t] |= 1 << (6 + k);
                }
                edges.entry((a, b)).or_default().push((t as u32, k as u32));
                vadj[va as usize].push(vb);
                vadj[vb as usize].push(va);
                if !vowner[tri[k] as usize] {
                    vowner[tri[k] as usize] = true;
                    flags[t] |= 1 << (3 + k);
                }
            }
        }
        for list in edges.values() {
            let (t0, k0) = list[0];
            flags[t0 as usize] |= 1 << k0;
            if list.len() >= 2 {
                let (t1, k1) = list[1];
                nbr[t0 as usize][k0 as usize] = t1 * 4 + k1;
                nbr[t1 as usize][k1 as usize] = t0 * 4 + k0;
            }
        }
        for a in &mut vadj {
            a.sort_unstable();
            a.dedup();
        }
        MeshTopology {
            normals,
            flags,
            nbr,
            vadj,
        }
    }
}

/// The most bins a mesh's grid may have (4 B of offsets each).
pub const MAX_BINS: usize = 1 << 20;

/// Uniform bins over the mesh's local bounding box grown by `reach` (largest grain radius
/// plus the envelope): a sphere centre in a bin finds every triangle within `reach` in that
/// bin's list, ascending. Centres outside the grid have no mesh contact.
#[derive(Clone, Debug)]
pub struct MeshBins {
    pub origin: [f32; 3],
    pub cell: f32,
    pub dims: [u32; 3],
    /// Offsets into `list` (bins + 1 entries).
    pub offsets: Vec<u32>,
    pub list: Vec<u32>,
}

impl MeshBins {
    pub fn new(vertices: &[[f32; 3]], triangles: &[[u32; 3]], reach: f32) -> Self {
        let mut lo = [f32::MAX; 3];
        let mut hi = [f32::MIN; 3];
        for v in vertices {
            for a in 0..3 {
                lo[a] = lo[a].min(v[a]);
                hi[a] = hi[a].max(v[a]);
            }
        }
        if vertices.is_empty() {
            lo = [0.0; 3];
            hi = [0.0; 3];
        }
        // Margin beyond reach so that rounding at the grid's edge cannot lose a triangle.
        let reach = reach * 1.001 + 1e-6;
        let origin = lo.map(|x| x - reach);
        let extent: Vec<f32> = (0..3).map(|a| hi[a] - lo[a] + 2.0 * reach).collect();
        // Cells of the reach (a grain in a bin meets the triangles within about 3 reaches
        // across), coarser only to keep at most MAX_BINS bins: each triangle in a shaped
        // grain's bin costs a GJK (the shapes bench's mesh part).
        let volume: f64 = extent.iter().map(|&e| e.max(reach) as f64).product();
        let emax = extent.iter().cloned().fold(0.0f32, f32::max);
        let cell = reach
            .max((volume / MAX_BINS as f64).cbrt() as f32)
            .max(emax / 1023.5)
            .max(1e-6);
        let dims = [0, 1, 2].map(|a| ((extent[a] / cell).ceil() as u32).clamp(1, 1024));
        let nbins = (dims[0] * dims[1] * dims[2]) as usize;
        let mut bins: Vec<Vec<u32>> = vec![Vec::new(); nbins];
        let index = |x: f32, a: usize| -> u32 {
            (((x - origin[a]) / cell).floor().max(0.0) as u32).min(dims[a] - 1)
        };
        for (t, tri) in triangles.iter().enumerate() {
            let mut tlo = [f32::MAX; 3];
            let mut thi = [f32::MIN; 3];
            for &i in tri {
                for a in 0..3 {
                    tlo[a] = tlo[a].min(vertices[i as usize][a]);
                    thi[a] = thi[a].max(vertices[i as usize][a]);
                }
            }
            let r0 = [0, 1, 2].map(|a| index(tlo[a] - reach, a));
            let r1 = [0, 1, 2].map(|a| index(thi[a] + reach, a));
            for z in r0[2]..=r1[2] {
                for y in r0[1]..=r1[1] {
                    for x in r0[0]..=r1[0] {
                        bins[(x + dims[0] * (y + dims[1] * z)) as usize].push(t as u32);
                    }
                }
            }
        }
        let mut offsets = Vec::with_capacity(nbins + 1);
        let mut list = Vec::new();
        for b in &bins {
            offsets.push(list.len() as u32);
            list.extend_from_slice(b);
        }
        offsets.push(list.len() as u32);
        MeshBins {
            origin,
            cell,
            dims,
            offsets,
            list,
        }
    }
}
