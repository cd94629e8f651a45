//! Stage: collision detection, entirely on the GPU (book: Architecture, "The step", stages 2–3).
//! CPU twin: [`crate::reference::collide`].
//!
//! Pipeline recorded by [`Collide::record`] (one compute pass, one dispatch per step):
//! 1. `collide_grid::keys` — each grain hashes its cell (cell size = largest grain
//!    diameter plus the envelope, so every contact is between neighbouring cells; a few
//!    grains far larger than the median go to one extra slot instead and are paired
//!    apart, see [`GridPlan`]) into a
//!    power-of-two table (at least 2 slots per grain; no bounding box, far-away grains only
//!    share slots) and takes a rank in its slot (u32 atomic). The hash is a wrapped grid
//!    (neighbouring cells → neighbouring slots, for memory locality) whose periods get
//!    pseudo-random offsets (so long or scattered domains do not pile up on few slots).
//! 2. `scan_exclusive` over the slot populations, `collide_grid::scatter`: a counting sort of
//!    the grains by slot (index and position copied into slot order).
//! 3. The count pass of `collide_pairs::detect` (grain pairs from the 27 neighbour cells,
//!    narrow phase fused: no candidate buffer; a manifold per shaped pair) and of
//!    `collide_walls::detect` (every grain against every boundary) write per-row contact
//!    counts into one array laid out as
//!    [boundary 0: grains…][boundary 1: grains…]…[grain–grain rows: grains…].
//! 4. `scan_exclusive` of that array gives each row its place: the list is sorted by
//!    (A, B, feature) by construction (boundaries are the lowest body ids; grain rows are
//!    insertion-sorted by B in `collide_pairs::detect`'s write pass).
//! 5. `collide_grid::finalize` writes `counts` (contract: `[0]` contacts, `[1]` overflow bits,
//!    `[2]` contacts needed, `[3]` candidate pairs needed = 0 as none are stored, `[4..7]` indirect
//!    args, [8..11] those of the walls' write pass), then the write passes (the same `detect`
//!    entry points, dispatched with z = 2: one pipeline per stage, so the narrow phase is
//!    compiled once) fill the records: the pairs' per grain, the walls' per boundary
//!    contact (indirect), so only rows that have contacts run the narrow phase again.
//! 6. `collide_csr::*` builds the per-body CSR lists (count, scan, fill, per-row sort).
//!
//! Box grains (`SHAPE_BOX`, half extents in the shape table; f64 twin
//! [`crate::reference::boxes`]). The broad phase is unchanged: a box is its bounding sphere
//! in the grid. The narrow phase, per pair kind, and why:
//! * **box–box**: separating axis test over the 15 axes (3 + 3 face normals, 9 edge
//!   cross products; near-parallel edge pairs skipped). SAT is exact for boxes, branch-light
//!   and needs no iteration (GJK/EPA would, and gives one point, not a manifold). Faces are
//!   preferred over edges, and A's faces over B's, unless the other beats them by 1e-3 × the
//!   larger half extent: a resting box keeps its reference face step after step. A face
//!   axis gives the incident face (the other box's face most anti-parallel to it), clipped
//!   against the reference face's side planes (Sutherland–Hodgman, ≤ 8 points); points
//!   above the envelope are dropped and at most 4 kept: per corner direction (±u ± v) of the
//!   reference face the most extreme point. Feature id `4·face + corner` is a function of
//!   the reference face and the corner only, so the warm start finds the same 4 points next
//!   step. An edge axis gives one point (closest points of the two supporting edges),
//!   feature `48 + 16·(3i + j) + edge signs`.
//! * **box–plane** (and each wall of a box container, cylinder container side/bottom/top
//!   per vertex): the box's vertices, the 4 deepest within the envelope (ties to the lower
//!   vertex), feature = vertex (+ 8 × wall or group), ascending.
//! * **sphere–box**: closest point of the box to the centre (clamp in box coordinates;
//!   inside: the nearest face), one point, feature 0.
//! * **solid box boundary–box**: box–box with the boundary as A.
//! * Solid cylinders and meshes against boxes (and capsules, cylinders, hulls): the
//!   support-mapped pairs of `common/collide_support.wgsl` (twin
//!   [`crate::reference::support`]), in the walls stage's `wall_support`.
//!
//! Convex hull grains (`SHAPE_CONVEX`, vertices, face planes and loops in the shape table;
//! f64 twin [`crate::reference::convex`], which explains the algorithms): vertex tests
//! (4 deepest) against planes and box container walls, closest point for sphere–hull;
//! polytope pairs with hulls and boxes; the support-mapped pairs with cylinders, solid
//! cylinders and meshes. Every shape meets every body kind.
//!
//! Contact points are midway between the surfaces (as for spheres), normals from A to B.
//!
//! Deterministic: the only atomics are u32 counters whose totals are order-free; every
//! order-dependent result (slot order, B-side CSR entries) is sorted afterwards.
//!
//! Memory: per contact 64 B (record) + 8 B (two CSR entries) = 72 B of capacity.
//! Per grain: rank 4 + sorted index 4 + sorted position 16 + hash slots (≤ 4 slots × 4 B)
//! + row counts 4 × (boundaries + 1) + CSR degree/offset 8 ≈ 48 + 4 × (nb + 1) bytes.

pub mod scan;

/// The contact record, the shape table, the settings and the tangent basis are the
/// vocabulary's (`crate::model::contact`), as is the periodic cell.
pub use crate::model::contact::{tangent_basis, BoundaryShape, CollideSettings, ContactRecord};
pub use crate::model::periodic::{self, LeesEdwards, PeriodicCell};
pub use crate::shapes::boundary_count;
/// The broad phase's plan, the boundary count and the mesh topology are CPU code the twins
/// share (`bristlecone_cpu`).
pub use bristlecone_cpu::grid::{GridPlan, LARGE_MAX, LARGE_RATIO};
pub use bristlecone_cpu::mesh;

use crate::bodies::{
    is_grain_shape, BodyState, GpuBodies, MOTION_PARKED, SHAPE_BOX, SHAPE_CAPSULE, SHAPE_CLUMP,
    SHAPE_CONVEX, SHAPE_CYLINDER, SHAPE_MESH, SHAPE_SOLID_BOX, SHAPE_SOLID_CYLINDER,
};
use crate::gpu::{buffers, GpuContext, GpuError, Kernel, ShaderSource};
use scan::Scan;

/// Bytes of one [`ContactRecord`] in the records buffer.
pub const RECORD_BYTES: u64 = std::mem::size_of::<ContactRecord>() as u64;

/// Indices into the `counts` buffer.
pub const COUNT_CONTACTS: usize = 0;
pub const COUNT_OVERFLOW: usize = 1;
pub const COUNT_NEEDED_CONTACTS: usize = 2;
pub const COUNT_NEEDED_PAIRS: usize = 3;
pub const COUNT_INDIRECT: usize = 4;
/// Index in `counts` of the indirect args of the walls' write pass (one thread per
/// boundary contact, z = 2).
pub const WALL_WRITE_INDIRECT: usize = 8;
/// Overflow bit: the contact buffer was too small.
pub const OVERFLOW_CONTACTS: u32 = 2;

/// Bytes of capacity per contact (record + two CSR entries).
pub const BYTES_PER_CONTACT: u64 = 64 + 8;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    /// The grid's cell size h ([`GridPlan`]) and 1/h.
    cell_size: f32,
    inv_cell_size: f32,
    envelope: f32,
    /// Grains with a larger bounding radius are scanned apart, not hashed ([`GridPlan`]).
    large_radius: f32,
    bodies: u32,
    /// The boundaries come first among the bodies.
    boundaries: u32,
    grains: u32,
    /// Hashed cell slots.
    table_size: u32,
    contact_capacity: u32,
    materials: u32,
    /// Entries of the row-offset array: (boundaries + 1) × grains + 1.
    row_offsets: u32,
    _pad: u32,
    /// The periodic cell ([`PeriodicCell::gpu`]; zero periods: none).
    cell: [[f32; 4]; 4],
}

impl Params {
    fn set_plan(&mut self, plan: &GridPlan) {
        self.cell_size = plan.cell;
        self.inv_cell_size = 1.0 / plan.cell;
        self.large_radius = plan.large_radius;
    }
}

/// Byte offset in the params uniform of the Lees–Edwards offset δ (the gradient axis's w),
/// which each step's commands copy in ([`Collide::params_buffer`]).
pub const SHEAR_OFFSET_BYTE: u64 = (std::mem::offset_of!(Params, cell) + 3 * 16 + 12) as u64;

struct Kernels {
    grid: Kernel,
    pairs: Kernel,
    walls: Kernel,
    csr: Kernel,
    scan: Kernel,
}

struct Binds {
    grid: wgpu::BindGroup,
    pairs: wgpu::BindGroup,
    /// One per block of boundaries (`wall_ranges`); the write pass uses the first.
    walls: Vec<wgpu::BindGroup>,
    csr: wgpu::BindGroup,
}

/// Boundaries per count dispatch of the walls stage on a CPU adapter. Each grain's
/// invocation tests every boundary of its dispatch, and every boundary costs it loop
/// iterations (the stage's narrow phases run their loops once even where no lane takes
/// them), against llvmpipe's 65 535 per invocation: a sphere and a box grain resting on the
/// last of 3000 solid boxes got no contact at all when one dispatch held every boundary.
pub const WALL_BLOCK_CPU: u32 = 128;

/// The boundaries one wall dispatch covers, [first, end) (`WallRange` in collide_walls.wgsl).
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct WallRange {
    first: u32,
    end: u32,
    _pad: [u32; 2],
}

/// The `wall_range` uniforms of the walls stage's count dispatches: every boundary in one on
/// a GPU, blocks of [`WALL_BLOCK_CPU`] on a CPU adapter.
fn wall_ranges(ctx: &GpuContext, nb: u32) -> Vec<wgpu::Buffer> {
    let block = if ctx.loop_limited() {
        WALL_BLOCK_CPU
    } else {
        nb.max(1)
    };
    (0..nb.max(1))
        .step_by(block as usize)
        .map(|w0| {
            let range = WallRange {
                first: w0,
                end: (w0 + block).min(nb),
                _pad: [0; 2],
            };
            buffers::uniform_from(ctx, "walls range", &range)
        })
        .collect()
}

/// The counts the GPU wrote at the last detection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CollideCounts {
    pub contacts: u32,
    pub overflow: u32,
    pub needed_contacts: u32,
    pub needed_pairs: u32,
    pub indirect: [u32; 3],
}

pub struct Collide {
    has: Contents,
    params: Params,
    params_buf: wgpu::Buffer,
    k: Kernels,
    pos: wgpu::Buffer,
    rot: wgpu::Buffer,
    info: wgpu::Buffer,
    hist: wgpu::Buffer,
    rank: wgpu::Buffer,
    sorted_idx: wgpu::Buffer,
    sorted_pos: wgpu::Buffer,
    offs: wgpu::Buffer,
    contacts: wgpu::Buffer,
    counts: wgpu::Buffer,
    deg: wgpu::Buffer,
    body_offsets: wgpu::Buffer,
    body_entries: wgpu::Buffer,
    materials: wgpu::Buffer,
    shapes: wgpu::Buffer,
    mesh_f: wgpu::Buffer,
    mesh_u: wgpu::Buffer,
    /// `wall_range` of each count dispatch of the walls stage ([`wall_ranges`]).
    wall_ranges: Vec<wgpu::Buffer>,
    scan_hist: Scan,
    scan_offs: Scan,
    scan_body: Scan,
    binds: Binds,
    n_bodies: u32,
    nb: u32,
    ng: u32,
    capacity: u32,
    /// Set by [`Collide::limit_capacity`] (u64::MAX: only this stage's own limits).
    capacity_limit: u64,
    fixed_bytes: u64,
    plan: GridPlan,
}

/// Grains of higher index a large grain's scan (collide_pairs `walk_next` in index order, one invocation,
/// one loop iteration per grain) may pass on a CPU adapter: llvmpipe silently ends every loop
/// of an invocation once it has run 65 535 iterations in all (common/collide_keys.wgsl), and
/// the scan's pairs (narrow phase, row sort) need loops of their own.
pub const LARGE_SCAN_MAX_CPU: usize = 49_152;

/// On a CPU adapter, refuses a large grain followed by more grains than its scan can pass:
/// its row would come out short, with no error, and the grains it misses would pass through
/// it. Rewriting the scan for lavapipe made the pair stage compile several times slower (book:
/// Shapes, "Mixed sizes in the broad phase"), so the scene is refused instead; large grains
/// placed after the small ones scan only each other.
fn large_scans_fit(ctx: &GpuContext, state: &BodyState, plan: &GridPlan) -> Result<(), GpuError> {
    if plan.large == 0 || !ctx.loop_limited() {
        return Ok(());
    }
    let n = state.len();
    let first = (boundary_count(state)..n).find(|&b| state.pos[b][3] > plan.large_radius);
    match first {
        Some(b) if n - 1 - b > LARGE_SCAN_MAX_CPU => Err(invalid(format!(
            "body {b} is a large grain (bounding radius {} m, more than {LARGE_RATIO}× the \
             median) followed by {} grains; on a CPU adapter ({}) a large grain's contact \
             scan passes at most {LARGE_SCAN_MAX_CPU} grains (shader loops stop after 65 535 \
             iterations) and would lose contacts. Place the large grains after the small ones \
             (in a scene file: a [[generator]] listed after the others, not a [[body]]), or \
             run on a GPU",
            state.pos[b][3],
            n - 1 - b,
            ctx.info.name
        ))),
        _ => Ok(()),
    }
}

/// Contacts of capacity for `needed`: 1.5 × (a pour keeps rising), but where that would
/// start another chunk of the records (`per_chunk` records each; `gpu::chunked`) that
/// 1/32 of headroom does not need, the chunks that headroom needs, filled. Every chunk in
/// use is one more arm of each record access on a CPU adapter (lavapipe runs them all), and
/// APGD's `gam` (64 B per contact too) ends on the same boundaries: a 10⁶ pile's 5.93·10⁶
/// contacts take 3 chunks (6.29·10⁶) instead of 4 (8.39·10⁶), and 25 % less memory.
pub fn grown_capacity(needed: u64, per_chunk: u64) -> u64 {
    let want = (needed * 3 / 2).max(1024);
    let chunks = |n: u64| n.div_ceil(per_chunk);
    let least = needed + needed / 32;
    if chunks(want) > chunks(least) {
        chunks(least) * per_chunk
    } else {
        want
    }
}

/// The contact records' buffer (64 B each), bound in chunks (`gpu::chunked`).
fn contact_records(ctx: &GpuContext, capacity: u32) -> Result<wgpu::Buffer, GpuError> {
    let chunks = ShaderSource::chunks_of("contacts");
    buffers::storage_chunked(ctx, "contacts", capacity as u64 * RECORD_BYTES, chunks)
}

/// Bodies or shapes the collision stage cannot take: an input error, not a shader's.
fn invalid(msg: String) -> GpuError {
    GpuError::Invalid(format!("collision: {msg}"))
}

/// Packs the boundary shapes: 4 vec4 per shape, plus the mesh float and u32 arrays.
/// Shape record: [0] = (hx, hy, hz, open) or (radius, height, open, 0); for meshes
/// [1] = bin grid origin xyz, cell; [2] = u32 (dims xyz, bin offsets base);
/// [3] = u32 (triangle records base, vertex base, normal base, vertex-adjacency base).
fn shape_records(shapes: &[BoundaryShape], reach: f32) -> (Vec<[f32; 4]>, Vec<[f32; 4]>, Vec<u32>) {
    let mut rec = Vec::new();
    let mut mf: Vec<[f32; 4]> = Vec::new();
    let mut mu: Vec<u32> = Vec::new();
    let b = |x: bool| if x { 1.0 } else { 0.0 };
    // Clump members follow the 4·len records: [0] = (count, first vec4 index) as u32 bits.
    let mut members: Vec<[f32; 4]> = Vec::new();
    let hulls = shapes
        .iter()
        .any(|s| matches!(s, BoundaryShape::GrainConvex { .. }));
    for s in shapes {
        let mut r = [[0.0f32; 4]; 4];
        match s {
            BoundaryShape::Plane => {}
            BoundaryShape::GrainClump { members: m } => {
                let first = (4 * shapes.len() + members.len()) as u32;
                r[0] = [
                    f32::from_bits(m.len() as u32),
                    f32::from_bits(first),
                    0.0,
                    0.0,
                ];
                members.extend_from_slice(m);
            }
            BoundaryShape::GrainConvex {
                vertices,
                planes,
                loops,
            } => {
                [r[0], r[1]] =
                    convex_record(vertices, planes, loops, 4 * shapes.len(), &mut members)
            }
            BoundaryShape::BoxContainer {
                half_extents: h,
                open_top,
            } => r[0] = [h[0], h[1], h[2], b(*open_top)],
            BoundaryShape::SolidBox { half_extents: h }
            | BoundaryShape::GrainBox { half_extents: h } => {
                r[0] = [h[0], h[1], h[2], 0.0];
                // Boxes (grains and solid boundaries) meet hulls as polytopes: [1], [2] =
                // the box's hull record.
                if hulls {
                    let (v, p, l) = crate::convex::box_polytope(*h);
                    [r[1], r[2]] = convex_record(&v, &p, &l, 4 * shapes.len(), &mut members);
                }
            }
            BoundaryShape::CylinderContainer {
                radius,
                height,
                open_top,
            } => r[0] = [*radius, *height, b(*open_top), 0.0],
            BoundaryShape::SolidCylinder { radius, height } => r[0] = [*radius, *height, 0.0, 0.0],
            BoundaryShape::GrainCapsule {
                radius,
                half_length,
            }
            | BoundaryShape::GrainCylinder {
                radius,
                half_length,
            } => r[0] = [*radius, *half_length, 0.0, 0.0],
            BoundaryShape::Mesh {
                vertices,
                triangles,
            } => {
                let topo = mesh::MeshTopology::new(vertices, triangles);
                let bins = mesh::MeshBins::new(vertices, triangles, reach);
                let vert = mf.len() as u32;
                mf.extend(vertices.iter().map(|v| [v[0], v[1], v[2], 0.0]));
                let norm = mf.len() as u32;
                mf.extend(
                    topo.normals
                        .iter()
                        .map(|n| [n.x as f32, n.y as f32, n.z as f32, 0.0]),
                );
                let tri = mu.len() as u32;
                for (t, v) in triangles.iter().enumerate() {
                    let nb = topo.nbr[t];
                    mu.extend_from_slice(&[
                        v[0],
                        v[1],
                        v[2],
                        topo.flags[t],
                        nb[0],
                        nb[1],
                        nb[2],
                        0,
                    ]);
                }
                let vadj = mu.len() as u32;
                let lists = vadj + vertices.len() as u32 + 1;
                let mut acc = lists;
                for a in &topo.vadj {
                    mu.push(acc);
                    acc += a.len() as u32;
                }
                mu.push(acc);
                for a in &topo.vadj {
                    mu.extend_from_slice(a);
                }
                let bin_off = mu.len() as u32;
                let list = bin_off + bins.offsets.len() as u32;
                mu.extend(bins.offsets.iter().map(|o| o + list));
                mu.extend_from_slice(&bins.list);
                let d = bins.dims;
                r[1] = [bins.origin[0], bins.origin[1], bins.origin[2], bins.cell];
                r[2] = [d[0], d[1], d[2], bin_off].map(f32::from_bits);
                r[3] = [tri, vert, norm, vadj].map(f32::from_bits);
            }
        }
        rec.extend_from_slice(&r);
    }
    rec.extend_from_slice(&members);
    (rec, mf, mu)
}

/// Bytes of the per-shape arrays [`Collide`] binds whole (not chunked): the shape records
/// (with clump members and hull data), the mesh floats and the mesh ints, for grains that
/// reach `reach` (largest grain radius + envelope) beyond their centre.
pub fn shape_array_bytes(shapes: &[BoundaryShape], reach: f32) -> [u64; 3] {
    let (rec, mf, mu) = shape_records(shapes, reach);
    [
        rec.len() as u64 * 16,
        mf.len() as u64 * 16,
        mu.len() as u64 * 4,
    ]
}

/// A convex hull's data appended to `extra` (whose vec4 index 0 is `first`); returns its
/// record [0] = (vertices, faces, first vertex, first plane), [1] = (edges, first edge) as
/// u32 bits. After the nf planes: nf face headers (first loop entry, count), the loops'
/// vertex indices packed 4 per vec4 (u32 bits), then one vec4 (u, w, f, g) per edge
/// (`crate::convex::hull_edges`). Layout read by `shaders/common/collide_convex.wgsl` and
/// the polytope section of `shaders/collide_pairs.wgsl`.
fn convex_record(
    vertices: &[[f32; 3]],
    planes: &[[f32; 4]],
    loops: &[Vec<u32>],
    first: usize,
    extra: &mut Vec<[f32; 4]>,
) -> [[f32; 4]; 2] {
    let vbase = (first + extra.len()) as u32;
    extra.extend(vertices.iter().map(|v| [v[0], v[1], v[2], 0.0]));
    let fbase = (first + extra.len()) as u32;
    extra.extend_from_slice(planes);
    let mut start = 0u32;
    for l in loops {
        extra.push([start, l.len() as u32, 0, 0].map(f32::from_bits));
        start += l.len() as u32;
    }
    let flat: Vec<u32> = loops.iter().flatten().copied().collect();
    for c in flat.chunks(4) {
        let mut q = [0u32; 4];
        q[..c.len()].copy_from_slice(c);
        extra.push(q.map(f32::from_bits));
    }
    let edges = crate::convex::hull_edges(loops);
    let ebase = (first + extra.len()) as u32;
    extra.extend(edges.iter().map(|e| e.map(f32::from_bits)));
    [
        [vertices.len() as u32, planes.len() as u32, vbase, fbase].map(f32::from_bits),
        [edges.len() as u32, ebase, 0, 0].map(f32::from_bits),
    ]
}

type IsRecord = fn(&BoundaryShape) -> bool;

/// A non-sphere grain's record in the shape table: the kind's name and whether a shape is
/// its record. (Every grain kind meets every body kind: no pair is refused.)
fn grain_rule(kind: u32) -> Option<(&'static str, IsRecord)> {
    use BoundaryShape as S;
    match kind {
        SHAPE_BOX => Some(("box", |s| matches!(s, S::GrainBox { .. }))),
        SHAPE_CAPSULE => Some(("capsule", |s| matches!(s, S::GrainCapsule { .. }))),
        SHAPE_CYLINDER => Some(("cylinder", |s| matches!(s, S::GrainCylinder { .. }))),
        SHAPE_CONVEX => Some(("convex", |s| matches!(s, S::GrainConvex { .. }))),
        SHAPE_CLUMP => Some((
            "clump",
            |s| matches!(s, S::GrainClump { members } if !members.is_empty()),
        )),
        _ => None,
    }
}

/// Grain `b` (kind `i[2]`, shape index `i[3]`): its shape record must be its kind's.
fn check_grain(b: usize, i: &[u32; 4], shapes: &[BoundaryShape]) -> Result<(), GpuError> {
    let Some((name, record)) = grain_rule(i[2]) else {
        return Ok(());
    };
    if !shapes.get(i[3] as usize).is_some_and(record) {
        return Err(invalid(format!(
            "{name} body {b}: shape index {} is not its grain shape record",
            i[3]
        )));
    }
    Ok(())
}

/// Every body's shape kind, shape index and material against the shape table and the
/// materials: boundaries first (with a shape record each), then grains (a grain's record its
/// kind's).
fn check_bodies(
    state: &BodyState,
    shapes: &[BoundaryShape],
    settings: &CollideSettings,
    nb: u32,
) -> Result<(), GpuError> {
    for (b, i) in state.info.iter().enumerate() {
        if (b as u32) < nb {
            if i[2] > SHAPE_MESH || i[3] as usize >= shapes.len() {
                return Err(invalid(format!(
                    "boundary body {b}: shape kind {} index {} (have {} shapes)",
                    i[2],
                    i[3],
                    shapes.len()
                )));
            }
        } else if !is_grain_shape(i[2]) {
            return Err(invalid(format!(
                "body {b} is a boundary after the first grain: boundaries must come first"
            )));
        } else {
            check_grain(b, i, shapes)?;
        }
        if i[1] as usize >= settings.friction.len() {
            return Err(invalid(format!(
                "body {b}: material {} has no friction entry",
                i[1]
            )));
        }
    }
    Ok(())
}

/// Removes every `// {tag}:begin` … `// {tag}:end` section (markers included).
fn strip_sections(text: &str, tag: &str) -> String {
    let (open, close) = (format!("// {tag}:begin"), format!("// {tag}:end"));
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(a) = rest.find(&open) {
        out.push_str(&rest[..a]);
        let end = rest[a..]
            .find(&close)
            .map_or(rest.len(), |e| a + e + close.len());
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// Which shape kinds a scene has: its collide pipelines are specialised to them (lavapipe
/// runs both sides of a divergent branch, so a sphere pair in a pipeline with the box code
/// pays for it; see common/collide.wgsl), by override constants and, for capsules,
/// cylinders and hulls, by stripping their sections from the source ([`stage_source`]).
#[derive(Clone, Copy, Debug)]
struct Contents {
    boxes: bool,
    capsules: bool,
    clumps: bool,
    cylinders: bool,
    convex: bool,
    sections: Sections,
    /// The pipeline options that are not shapes ([`Specialisation`]).
    spec: Specialisation,
}

/// What a scene's collide pipelines must handle beyond its shapes. Each is an override
/// constant that, when off, takes code out of the pair search (`common/collide.wgsl`): the
/// periodic cell's image loop and the parked-grain tests cost every scene ~20 % more
/// compile time on lavapipe when compiled in and unused. Known before the stage is built,
/// the pipelines are compiled once; a later switch ([`Collide::set_periodic`],
/// [`Collide::set_patch_materials`], [`Collide::allow_parking`]) rebuilds them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Specialisation {
    /// Some material has a patch friction model (`HAS_PATCHES`, pair and wall stages).
    pub patches: bool,
    /// The cell is periodic along some axis (`PERIODIC`).
    pub periodic: bool,
    /// Grains may be parked during the run: an inflow or an outflow (`PARKING`). A state
    /// that already holds a parked grain turns it on regardless.
    pub parking: bool,
}

/// The optional source sections a scene's collide stages keep (`// TAG:begin` …
/// `// TAG:end`; the others are stripped, see [`stage_source`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Sections {
    capsule: bool,
    cylinder: bool,
    convex: bool,
    /// Hull–hull, hull–box and hull–solid box pairs (`common/collide_polytope.wgsl`).
    polytope: bool,
    /// Capsule–hull pairs.
    capsulehull: bool,
    /// Support-mapped pairs (`common/collide_support.wgsl`): cylinders against boxes, hulls,
    /// capsules and cylinders, solid cylinders and boxes against shaped grains.
    cylpair: bool,
    /// Mesh triangles against box, capsule, cylinder and hull grains (needs `cylpair`).
    meshpair: bool,
    /// Mesh triangles against spheres (and clump members): `collide_walls::wall_sphere`'s
    /// mesh arm, whose masked code (lavapipe runs every arm) cost the wall pass more than
    /// its other arms together in scenes without a mesh.
    mesh: bool,
}

impl Sections {
    fn tags(&self) -> [(&'static str, bool); 8] {
        [
            ("capsule", self.capsule),
            ("cylinder", self.cylinder),
            ("convex", self.convex),
            ("polytope", self.polytope),
            ("capsulehull", self.capsulehull),
            ("cylpair", self.cylpair),
            ("meshpair", self.meshpair),
            ("mesh", self.mesh),
        ]
    }
}

impl Contents {
    fn of(state: &BodyState, shapes: &[BoundaryShape], spec: Specialisation) -> Self {
        let parked = state.info.iter().any(|i| i[0] == MOTION_PARKED);
        let spec = Specialisation {
            parking: spec.parking || parked,
            ..spec
        };
        let count = |k: u32| state.info.iter().filter(|i| i[2] == k).count();
        let body = |k: u32| count(k) > 0;
        let boxes = shapes
            .iter()
            .any(|s| matches!(s, BoundaryShape::GrainBox { .. }));
        let capsules = shapes
            .iter()
            .any(|s| matches!(s, BoundaryShape::GrainCapsule { .. }));
        let convex = body(SHAPE_CONVEX);
        let polytope_partner = boxes || count(SHAPE_CONVEX) > 1 || body(SHAPE_SOLID_BOX);
        let cylinders = body(SHAPE_CYLINDER);
        let shaped = boxes || capsules || convex || cylinders;
        // Support-mapped pairs: cylinder grains with boxes, capsules, hulls or each other;
        // a solid cylinder or a mesh with any of those grains; a solid box with cylinders.
        let meshpair = body(SHAPE_MESH) && shaped;
        let cylpair = (cylinders && (boxes || capsules || convex || count(SHAPE_CYLINDER) > 1))
            || (body(SHAPE_SOLID_CYLINDER) && shaped)
            || (body(SHAPE_SOLID_BOX) && cylinders)
            || meshpair;
        Contents {
            boxes,
            capsules,
            clumps: body(SHAPE_CLUMP),
            cylinders: body(SHAPE_CYLINDER),
            convex,
            sections: Sections {
                capsule: capsules,
                // The support-mapped pairs' contact lists are the cylinder code's.
                cylinder: cylinders || cylpair,
                convex,
                polytope: convex && polytope_partner,
                capsulehull: convex && capsules,
                cylpair,
                meshpair,
                mesh: body(SHAPE_MESH),
            },
            spec,
        }
    }

    /// Stage `name` specialised to these contents (the grid stage never emits patches).
    fn kernel(&self, ctx: &GpuContext, name: &'static str) -> Result<Kernel, GpuError> {
        let flag = |x: bool| if x { 1.0 } else { 0.0 };
        let patches = self.spec.patches && name != "collide_grid";
        let c = [
            ("HAS_BOXES", flag(self.boxes)),
            ("HAS_CAPSULES", flag(self.capsules)),
            ("HAS_CLUMPS", flag(self.clumps)),
            ("HAS_CYLINDERS", flag(self.cylinders)),
            ("HAS_CONVEX", flag(self.convex)),
            ("HAS_PATCHES", flag(patches)),
            ("PERIODIC", flag(self.spec.periodic)),
            ("PARKING", flag(self.spec.parking)),
        ];
        let src = stage_source(name, self.sections);
        Kernel::with_constants(ctx, src, &c)
    }

    /// The three specialised stages.
    fn stages(&self, ctx: &GpuContext) -> Result<(Kernel, Kernel, Kernel), GpuError> {
        Ok((
            self.kernel(ctx, "collide_grid")?,
            self.kernel(ctx, "collide_pairs")?,
            self.kernel(ctx, "collide_walls")?,
        ))
    }
}

/// A collide stage's source with the sections `keep` leaves out stripped (e.g. without
/// capsules, the `capsule` sections: `HAS_CAPSULES = false` alone leaves the driver
/// compiling that code before dropping it, ~0.1 s more per pipeline set on lavapipe, and
/// the hull pair code costs seconds). Each variant is built once.
fn stage_source(name: &'static str, keep: Sections) -> ShaderSource {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    type Texts = HashMap<(&'static str, Sections), (&'static str, &'static str)>;
    let full = ShaderSource::by_name(name).unwrap();
    let tags = keep.tags();
    if tags.iter().all(|t| t.1) {
        return full;
    }
    static OFF: OnceLock<Mutex<Texts>> = OnceLock::new();
    let mut m = OFF.get_or_init(Default::default).lock().unwrap();
    let (common, body) = *m.entry((name, keep)).or_insert_with(|| {
        let strip = |t: &str| {
            tags.iter()
                .filter(|(_, kept)| !kept)
                .fold(t.to_string(), |t, (tag, _)| strip_sections(&t, tag))
        };
        let leak = |t: &str| -> &'static str { Box::leak(strip(t).into_boxed_str()) };
        (leak(full.common), leak(full.body))
    });
    ShaderSource {
        common,
        body,
        ..full
    }
}

impl Collide {
    /// Builds the stage with a default contact capacity (4 per grain + 1024; grown on demand).
    pub fn new(
        ctx: &GpuContext,
        bodies: &GpuBodies,
        state: &BodyState,
        shapes: &[BoundaryShape],
        settings: &CollideSettings,
    ) -> Result<Self, GpuError> {
        let cap = Self::default_capacity(state) as u32;
        Self::with_capacity(ctx, bodies, state, shapes, settings, cap)
    }

    /// The starting contact capacity: 4 per grain + 1024 (grown on demand).
    pub fn default_capacity(state: &BodyState) -> u64 {
        4 * (state.len() - boundary_count(state)) as u64 + 1024
    }

    /// As [`Collide::new`] with an explicit initial contact capacity.
    pub fn with_capacity(
        ctx: &GpuContext,
        bodies: &GpuBodies,
        state: &BodyState,
        shapes: &[BoundaryShape],
        settings: &CollideSettings,
        capacity: u32,
    ) -> Result<Self, GpuError> {
        let spec = Specialisation::default();
        Self::specialised(ctx, bodies, state, shapes, settings, capacity, spec)
    }

    /// As [`Collide::with_capacity`], with pipelines compiled for `spec` from the start.
    pub fn specialised(
        ctx: &GpuContext,
        bodies: &GpuBodies,
        state: &BodyState,
        shapes: &[BoundaryShape],
        settings: &CollideSettings,
        capacity: u32,
        spec: Specialisation,
    ) -> Result<Self, GpuError> {
        let n = state.len() as u32;
        assert_eq!(n, bodies.count, "state and GPU bodies differ in length");
        let nb = boundary_count(state) as u32;
        let ng = n - nb;
        check_bodies(state, shapes, settings, nb)?;
        let rmax = state.pos[nb as usize..]
            .iter()
            .map(|p| p[3])
            .fold(0.0f32, f32::max);
        let env = settings.envelope;
        let plan = GridPlan::new(state, env, LARGE_RATIO);
        large_scans_fit(ctx, state, &plan)?;
        let table = (2 * ng).next_power_of_two().max(1024);
        // One row offset per (boundary + 1) × grain: checked in u64 before it is a u32.
        let offs_bytes = ((nb as u64 + 1) * ng as u64 + 1) * 4;
        buffers::check_binding(ctx, "collide row offsets", offs_bytes)?;
        let offs_len = (nb + 1) * ng + 1;
        let mut params = Params {
            envelope: env,
            bodies: n,
            boundaries: nb,
            grains: ng,
            table_size: table,
            contact_capacity: capacity,
            materials: settings.friction.len() as u32,
            row_offsets: offs_len,
            ..bytemuck::Zeroable::zeroed()
        };
        params.set_plan(&plan);
        // The per-shape arrays first: one past a storage binding is refused before the
        // kernels compile (minutes on lavapipe).
        let (rec, mf, mu) = shape_records(shapes, rmax + env);
        let shapes_buf = buffers::storage_from(ctx, "boundary shapes", &rec)?;
        let mesh_f = buffers::storage_from(ctx, "mesh floats", &mf)?;
        let mesh_u = buffers::storage_from(ctx, "mesh ints", &mu)?;
        let has = Contents::of(state, shapes, spec);
        let (grid, pairs, walls) = has.stages(ctx)?;
        let k = Kernels {
            grid,
            pairs,
            walls,
            csr: Kernel::new(ctx, ShaderSource::by_name("collide_csr").unwrap())?,
            scan: Kernel::new(ctx, ShaderSource::by_name("scan_exclusive").unwrap())?,
        };
        let z = |label: &str, bytes: u64| buffers::storage_zeroed(ctx, label, bytes);
        // Slots 0..T for the hashed cells, slot T for the large grains, one for the total.
        let hist = z("collide hist", (table as u64 + 2) * 4)?;
        let rank = z("collide rank", ng as u64 * 4)?;
        let sorted_idx = z("collide sorted idx", ng as u64 * 4)?;
        let sorted_pos = z("collide sorted pos", ng as u64 * 16)?;
        let offs = z("collide row offsets", offs_len as u64 * 4)?;
        let counts = z("collide counts", 64)?;
        let deg = z("collide degrees", n as u64 * 4)?;
        let body_offsets = z("collide body offsets", (n as u64 + 1) * 4)?;
        let contacts = contact_records(ctx, capacity)?;
        let body_entries = z("contact entries", capacity as u64 * 8)?;
        let mats: Vec<[f32; 4]> = settings
            .friction
            .iter()
            .map(|&m| [m, 0.0, 0.0, 0.0])
            .collect();
        let materials = buffers::storage_from(ctx, "materials", &mats)?;
        let params_buf = buffers::uniform_from(ctx, "collide params", &params);
        let scan_hist = Scan::new(ctx, &k.scan, &hist, table + 2)?;
        let scan_offs = Scan::new(ctx, &k.scan, &offs, offs_len)?;
        let scan_body = Scan::new(ctx, &k.scan, &body_offsets, n + 1)?;
        let fixed_bytes = [&hist, &rank, &sorted_idx, &sorted_pos, &offs, &counts, &deg]
            .iter()
            .map(|b| b.size())
            .sum::<u64>()
            + body_offsets.size()
            + shapes_buf.size()
            + mesh_f.size()
            + mesh_u.size();
        let binds = Binds {
            // Placeholders, replaced by `rebind` below.
            grid: k.scan.bind(ctx, &[&params_buf, &rank, &sorted_idx]),
            pairs: k.scan.bind(ctx, &[&params_buf, &rank, &sorted_idx]),
            walls: Vec::new(),
            csr: k.scan.bind(ctx, &[&params_buf, &rank, &sorted_idx]),
        };
        let mut c = Collide {
            has,
            params,
            params_buf,
            k,
            pos: bodies.pos.clone(),
            rot: bodies.rot.clone(),
            info: bodies.info.clone(),
            hist,
            rank,
            sorted_idx,
            sorted_pos,
            offs,
            contacts,
            counts,
            deg,
            body_offsets,
            body_entries,
            materials,
            shapes: shapes_buf,
            mesh_f,
            mesh_u,
            wall_ranges: wall_ranges(ctx, nb),
            scan_hist,
            scan_offs,
            scan_body,
            binds,
            n_bodies: n,
            nb,
            ng,
            capacity,
            capacity_limit: u64::MAX,
            fixed_bytes,
            plan,
        };
        c.rebind(ctx);
        Ok(c)
    }

    fn rebind(&mut self, ctx: &GpuContext) {
        let k = &self.k;
        let p = &self.params_buf;
        self.binds.pairs = k.pairs.bind(
            ctx,
            &[
                p,
                &self.rot,
                &self.sorted_pos,
                &self.sorted_idx,
                &self.hist,
                &self.info,
                &self.materials,
                &self.offs,
                &self.contacts,
                &self.shapes,
                &self.pos,
                &self.body_entries,
            ],
        );
        let walls = |range| {
            let buffers = [
                p,
                &self.pos,
                &self.rot,
                &self.info,
                &self.materials,
                &self.shapes,
                &self.mesh_f,
                &self.mesh_u,
                &self.offs,
                &self.contacts,
                range,
            ];
            k.walls.bind(ctx, &buffers)
        };
        self.binds.walls = self.wall_ranges.iter().map(walls).collect();
        self.binds.csr = k.csr.bind(
            ctx,
            &[
                p,
                &self.counts,
                &self.offs,
                &self.contacts,
                &self.deg,
                &self.body_offsets,
                &self.body_entries,
            ],
        );
        self.binds.grid = k.grid.bind(
            ctx,
            &[
                p,
                &self.pos,
                &self.hist,
                &self.rank,
                &self.sorted_idx,
                &self.sorted_pos,
                &self.offs,
                &self.counts,
                &self.info,
            ],
        );
    }

    /// Makes the cell periodic (contacts by the minimum image; `shaders/common/
    /// collide_periodic.wgsl`). The grains must lie in the cell and the periods exceed twice
    /// a contact's reach ([`PeriodicCell::check_reach`]), which is checked here.
    pub fn set_periodic(
        &mut self,
        ctx: &GpuContext,
        state: &BodyState,
        cell: &PeriodicCell,
        envelope: f32,
    ) -> Result<(), GpuError> {
        let rmax = state.pos[self.nb as usize..]
            .iter()
            .map(|p| p[3] as f64)
            .fold(0.0, f64::max);
        cell.check_reach(rmax, envelope as f64).map_err(invalid)?;
        self.params.cell = cell.gpu(0.0);
        ctx.queue
            .write_buffer(&self.params_buf, 0, bytemuck::bytes_of(&self.params));
        self.respecialise(
            ctx,
            Specialisation {
                periodic: cell.any(),
                ..self.has.spec
            },
        )
    }

    /// Lets grains be parked from now on (the pair search then tests for them; see
    /// [`Specialisation::parking`]). Rebuilds the pipelines only when they skip the test.
    pub fn allow_parking(&mut self, ctx: &GpuContext) -> Result<(), GpuError> {
        let spec = Specialisation {
            parking: true,
            ..self.has.spec
        };
        self.respecialise(ctx, spec)
    }

    /// The pipelines compiled for `spec` (nothing to do when they already are).
    fn respecialise(&mut self, ctx: &GpuContext, spec: Specialisation) -> Result<(), GpuError> {
        if spec == self.has.spec {
            return Ok(());
        }
        let has = Contents { spec, ..self.has };
        (self.k.grid, self.k.pairs, self.k.walls) = has.stages(ctx)?;
        self.has = has;
        self.rebind(ctx);
        Ok(())
    }

    /// The params uniform: a step of a sheared cell copies its offset δ to
    /// [`SHEAR_OFFSET_BYTE`] before the detection.
    pub fn params_buffer(&self) -> &wgpu::Buffer {
        &self.params_buf
    }

    /// Records one detection from the current body positions.
    pub fn record(&self, enc: &mut wgpu::CommandEncoder) {
        enc.clear_buffer(&self.hist, 0, None);
        enc.clear_buffer(&self.deg, 0, None);
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("collide"),
            timestamp_writes: None,
        });
        let (k, b) = (&self.k, &self.binds);
        let (ng, n) = (self.ng, self.n_bodies);
        k.grid.dispatch(&mut pass, "keys", &b.grid, ng);
        self.scan_hist.record(&k.scan, &mut pass);
        k.grid.dispatch(&mut pass, "scatter", &b.grid, ng);
        // `detect`'s passes: z = 1 counts, z = 2 writes (one pipeline per stage).
        let (count, write) = (1, 2);
        k.pairs
            .dispatch_layers(&mut pass, "detect", &b.pairs, ng, count);
        if self.nb > 0 {
            for walls in &b.walls {
                k.walls
                    .dispatch_layers(&mut pass, "detect", walls, ng, count);
            }
        }
        self.scan_offs.record(&k.scan, &mut pass);
        k.grid.dispatch(&mut pass, "finalize", &b.grid, 1);
        k.pairs
            .dispatch_layers(&mut pass, "detect", &b.pairs, ng, write);
        if self.nb > 0 {
            let args = (WALL_WRITE_INDIRECT * 4) as u64;
            k.walls
                .dispatch_indirect(&mut pass, "detect", &b.walls[0], &self.counts, args);
        }
        let args = (COUNT_INDIRECT * 4) as u64;
        k.csr
            .dispatch_indirect(&mut pass, "count_b", &b.csr, &self.counts, args);
        k.csr.dispatch(&mut pass, "row_degrees", &b.csr, n + 1);
        self.scan_body.record(&k.scan, &mut pass);
        k.csr
            .dispatch_indirect(&mut pass, "fill", &b.csr, &self.counts, args);
        k.csr.dispatch(&mut pass, "sort_b", &b.csr, n);
    }

    /// Records, submits and waits for one detection; returns the counts.
    pub fn detect_once(&self, ctx: &GpuContext) -> Result<CollideCounts, GpuError> {
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        self.record(&mut enc);
        ctx.queue.submit([enc.finish()]);
        self.read_counts(ctx)
    }

    /// Detects, growing the buffers and detecting again until nothing overflows.
    pub fn detect(&mut self, ctx: &GpuContext) -> Result<CollideCounts, GpuError> {
        loop {
            let c = self.detect_once(ctx)?;
            if c.overflow == 0 {
                return Ok(c);
            }
            self.grow(ctx, c.needed_contacts, c.needed_pairs)?;
        }
    }

    /// Grows the buffers if the last detection overflowed; true when it did (redo the step).
    pub fn ensure_capacity(&mut self, ctx: &GpuContext) -> Result<bool, GpuError> {
        let c = self.read_counts(ctx)?;
        if c.overflow != 0 {
            self.grow(ctx, c.needed_contacts, c.needed_pairs)?;
            return Ok(true);
        }
        Ok(false)
    }

    pub fn read_counts(&self, ctx: &GpuContext) -> Result<CollideCounts, GpuError> {
        let c = buffers::read_buffer::<u32>(ctx, &self.counts, 8)?;
        Ok(CollideCounts {
            contacts: c[0],
            overflow: c[1],
            needed_contacts: c[2],
            needed_pairs: c[3],
            indirect: [c[4], c[5], c[6]],
        })
    }

    /// Most contacts the buffers may hold: the records' chunks, one binding of CSR entries,
    /// and [`Collide::limit_capacity`] (the solver's arrays).
    pub fn max_capacity(&self, ctx: &GpuContext) -> u64 {
        Self::record_limit(ctx)
            .min(self.capacity_limit)
            .min(u32::MAX as u64)
    }

    /// Most contacts this stage's own buffers hold: the records' chunks (64 B each) and one
    /// binding of CSR entries (8 B each).
    pub fn record_limit(ctx: &GpuContext) -> u64 {
        let records = ctx.chunked_capacity(ShaderSource::chunks_of("contacts"));
        (records / RECORD_BYTES).min(ctx.max_binding() / 8)
    }

    /// Caps the capacity [`Collide::grow`] may reach (the solver's arrays hold fewer
    /// contacts than the records may).
    pub fn limit_capacity(&mut self, contacts: u64) {
        self.capacity_limit = contacts;
    }

    /// Re-allocates the contact buffers for [`grown_capacity`] of `needed_contacts` (never
    /// shrinks) and rebinds. Candidate pairs are not stored (pair search and narrow phase
    /// are fused), so `needed_pairs` is accepted for the interface and ignored.
    pub fn grow(
        &mut self,
        ctx: &GpuContext,
        needed_contacts: u32,
        _needed_pairs: u32,
    ) -> Result<(), GpuError> {
        let want = grown_capacity(
            needed_contacts as u64,
            (1u64 << ctx.chunk_log2()) / RECORD_BYTES,
        );
        let limit = self.max_capacity(ctx);
        if needed_contacts as u64 > limit {
            return Err(GpuError::TooLarge {
                what: format!("{needed_contacts} contacts ({RECORD_BYTES} B records, 8 B CSR entries and the solver's arrays)"),
                needed: needed_contacts as u64 * RECORD_BYTES,
                limit: limit * RECORD_BYTES,
            });
        }
        let cap = want.min(limit) as u32;
        if cap <= self.capacity {
            return Ok(());
        }
        self.contacts = contact_records(ctx, cap)?;
        self.body_entries = buffers::storage_zeroed(ctx, "contact entries", cap as u64 * 8)?;
        self.capacity = cap;
        self.params.contact_capacity = cap;
        ctx.queue
            .write_buffer(&self.params_buf, 0, bytemuck::bytes_of(&self.params));
        self.rebind(ctx);
        Ok(())
    }

    /// Marks the materials with a patch friction model (book: Contact patches; `patch[m]` = 1 for
    /// `lugre_reduced`, 2 for `lugre_patch`, whose record gets [`crate::patch::couple::PATCH_FEATURE_DIST`]): their
    /// face–face box manifolds also emit a patch record (`crate::patch::couple`) and their
    /// points keep only their normal rows (μ = 0). Rebuilds the narrow-phase pipelines with
    /// `HAS_PATCHES` on when any flag is set and they were not built with it
    /// ([`Collide::specialised`]); without a flag nothing changes.
    pub fn set_patch_materials(
        &mut self,
        ctx: &GpuContext,
        friction: &[f32],
        patch: &[u8],
    ) -> Result<(), GpuError> {
        if !patch.iter().any(|&p| p > 0) {
            return Ok(());
        }
        let mats: Vec<[f32; 4]> = friction
            .iter()
            .enumerate()
            .map(|(k, &m)| [m, f32::from(patch.get(k).copied().unwrap_or(0)), 0.0, 0.0])
            .collect();
        self.materials = buffers::storage_from(ctx, "materials", &mats)?;
        self.rebind(ctx);
        let spec = Specialisation {
            patches: true,
            ..self.has.spec
        };
        self.respecialise(ctx, spec)
    }

    pub fn contacts(&self) -> &wgpu::Buffer {
        &self.contacts
    }
    pub fn counts(&self) -> &wgpu::Buffer {
        &self.counts
    }
    pub fn body_offsets(&self) -> &wgpu::Buffer {
        &self.body_offsets
    }
    pub fn body_entries(&self) -> &wgpu::Buffer {
        &self.body_entries
    }
    pub fn capacity(&self) -> u32 {
        self.capacity
    }
    /// Number of leading boundary bodies.
    pub fn boundaries(&self) -> u32 {
        self.nb
    }
    /// Grid cell size (largest diameter of the grains in the grid + envelope, plus 1e-4
    /// relative margin).
    pub fn cell_size(&self) -> f32 {
        self.params.cell_size
    }

    /// The broad phase's plan (cell size, large grains).
    pub fn grid_plan(&self) -> GridPlan {
        self.plan
    }

    /// Replans the broad phase with another large-grain ratio (`f32::INFINITY`: one grid
    /// sized by the largest grain, as a baseline for benchmarks). Refuses, as `new` does, a
    /// plan whose large-grain scan a CPU adapter cannot run whole.
    pub fn set_large_ratio(
        &mut self,
        ctx: &GpuContext,
        state: &BodyState,
        ratio: f32,
    ) -> Result<(), GpuError> {
        let plan = GridPlan::new(state, self.params.envelope, ratio);
        large_scans_fit(ctx, state, &plan)?;
        self.plan = plan;
        self.params.set_plan(&plan);
        ctx.queue
            .write_buffer(&self.params_buf, 0, bytemuck::bytes_of(&self.params));
        Ok(())
    }

    /// Bytes of GPU memory held: (fixed per-body/per-scene part, per-contact part).
    pub fn memory_bytes(&self) -> (u64, u64) {
        (self.fixed_bytes, self.capacity as u64 * BYTES_PER_CONTACT)
    }

    /// Host copy of the contact list of the last detection (blocking).
    pub fn read_contacts(&self, ctx: &GpuContext) -> Result<Vec<ContactRecord>, GpuError> {
        let n = self.read_counts(ctx)?.contacts as usize;
        buffers::read_buffer(ctx, &self.contacts, n)
    }

    /// Host copy of the per-body CSR lists (offsets, entries) of the last detection.
    pub fn read_csr(&self, ctx: &GpuContext) -> Result<(Vec<u32>, Vec<u32>), GpuError> {
        let offsets: Vec<u32> =
            buffers::read_buffer(ctx, &self.body_offsets, self.n_bodies as usize + 1)?;
        let m = *offsets.last().unwrap() as usize;
        Ok((offsets, buffers::read_buffer(ctx, &self.body_entries, m)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growth_stops_at_a_chunk_boundary_that_leaves_headroom() {
        // lavapipe: 128 MiB chunks of 64 B records.
        let per_chunk = (128 << 20) / RECORD_BYTES;
        // Within one chunk, or where 1/32 of headroom needs the chunk anyway: 1.5 ×.
        assert_eq!(grown_capacity(13_554, per_chunk), 20_331);
        assert_eq!(grown_capacity(10, per_chunk), 1024);
        assert_eq!(grown_capacity(2_050_000, per_chunk), 3_075_000);
        // The 10⁶ pile: 3 chunks filled, not 4.
        let c = grown_capacity(5_931_746, per_chunk);
        assert_eq!(c, 3 * per_chunk);
        assert!(c >= 5_931_746 + 5_931_746 / 32);
        // Past the boundary's headroom: the next chunk, filled.
        assert_eq!(grown_capacity(6_150_000, per_chunk), 4 * per_chunk);
    }

    /// Every combination of stripped sections leaves stages that parse and validate (a
    /// call left behind in a kept section would name a stripped function).
    #[test]
    fn every_section_variant_validates() {
        for bits in 0..256u32 {
            let on = |k: u32| bits & (1 << k) != 0;
            let keep = Sections {
                capsule: on(0),
                cylinder: on(1),
                convex: on(2),
                polytope: on(2) && on(3),
                capsulehull: on(2) && on(0) && on(4),
                cylpair: on(1) && on(5),
                meshpair: on(1) && on(5) && on(6),
                mesh: on(7),
            };
            for name in [
                "collide_grid",
                "collide_pairs",
                "collide_walls",
                "collide_csr",
            ] {
                if let Err(e) = stage_source(name, keep).validate() {
                    panic!("{name} with {keep:?}: {e}");
                }
            }
        }
    }
}

/// The records this stage shares with its shaders have one layout on both sides.
#[cfg(test)]
#[test]
fn records_have_the_shaders_layout() {
    use crate::gpu::layout::{check, rust_words};
    let contact = rust_words!(ContactRecord { n_gap, ra, rb, ids });
    check("collide_pairs", "Contact", contact.clone());
    check("solve_update", "Contact", contact);
    check(
        "collide_pairs",
        "CollideParams",
        rust_words!(Params {
            cell_size,
            inv_cell_size,
            envelope,
            large_radius,
            bodies,
            boundaries,
            grains,
            table_size,
            contact_capacity,
            materials,
            row_offsets,
            _pad,
            cell,
        }),
    );
    let range = rust_words!(WallRange { first, end, _pad });
    check("collide_walls", "WallRange", range);
}
