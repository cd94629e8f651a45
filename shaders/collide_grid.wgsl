// Collision broad phase, part 1: counting sort of the grains by hashed grid cell.
// keys:    per grain, hash its cell into a table of T slots (power of two) and take a rank
//          in that slot with a u32 atomic (hist = slot populations).
// (host)   exclusive scan of hist (T + 1 entries) -> slot start offsets.
// scatter: sorted_idx[start[slot] + rank] = grain, sorted_pos likewise.
// The order inside one slot depends on atomic timing, but nothing downstream depends on it:
// counts are order-free and every contact row is sorted before it is used.

struct CollideParams {
    grid: vec4<f32>,   // x = cell size h, y = 1/h, z = envelope, w = unused
    counts: vec4<u32>, // x = bodies, y = boundaries nb, z = grains ng, w = table size T
    caps: vec4<u32>,   // x = contact capacity, y = materials, z = row-count entries, w = unused
}

@group(0) @binding(0) var<uniform> params: CollideParams;
@group(0) @binding(1) var<storage, read> pos: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> hist: array<atomic<u32>>;
@group(0) @binding(3) var<storage, read_write> rank: array<u32>;
@group(0) @binding(4) var<storage, read_write> sorted_idx: array<u32>;
@group(0) @binding(5) var<storage, read_write> sorted_pos: array<vec4<f32>>;

const CELL_CLAMP: f32 = 1048576.0;

fn cell_of(p: vec3<f32>) -> vec3<i32> {
    let c = floor(p * params.grid.y);
    return vec3<i32>(clamp(c, vec3<f32>(-CELL_CLAMP), vec3<f32>(CELL_CLAMP)));
}

// Wrapped grid: the T = 2^m slots form a periodic 2^bx x 2^by x 2^bz lattice of cells, so
// neighbouring cells get neighbouring slots (memory locality) and any cell, however far away,
// has a slot; cells that alias share a slot and are told apart by their coordinates.
fn cell_hash(c: vec3<i32>) -> u32 {
    let m = countTrailingZeros(params.counts.w);
    let bx = (m + 2u) / 3u;
    let by = (m + 1u) / 3u;
    let bz = m / 3u;
    let u = bitcast<vec3<u32>>(c);
    let x = u.x & ((1u << bx) - 1u);
    let y = u.y & ((1u << by) - 1u);
    let z = u.z & ((1u << bz) - 1u);
    // Each period of the lattice gets a pseudo-random offset, so long or scattered domains
    // do not pile many cells onto the same slots.
    let p = bitcast<vec3<u32>>(c >> vec3<u32>(bx, by, bz));
    var h = (p.x * 73856093u) ^ (p.y * 19349663u) ^ (p.z * 83492791u);
    h ^= h >> 16u;
    h *= 0x7feb352du;
    h ^= h >> 15u;
    return ((x | (y << bx) | (z << (bx + by))) + h) & (params.counts.w - 1u);
}

@compute @workgroup_size(256)
fn keys(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let g = linear_index(gid, nwg);
    if g >= params.counts.z {
        return;
    }
    let p = pos[params.counts.y + g];
    let slot = cell_hash(cell_of(p.xyz));
    rank[g] = atomicAdd(&hist[slot], 1u);
}

@compute @workgroup_size(256)
fn scatter(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let g = linear_index(gid, nwg);
    if g >= params.counts.z {
        return;
    }
    let p = pos[params.counts.y + g];
    let slot = cell_hash(cell_of(p.xyz));
    let k = atomicLoad(&hist[slot]) + rank[g];
    sorted_idx[k] = g;
    sorted_pos[k] = p;
}
