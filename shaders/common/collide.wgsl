// Shared by every collide_* stage (prepended after the prelude).

// Cell coordinates are clamped so far-away grains cannot overflow i32.
const CELL_CLAMP: f32 = 1048576.0;

struct CollideParams {
    grid: vec4<f32>,   // x = cell size h, y = 1/h, z = envelope, w = unused
    counts: vec4<u32>, // x = bodies, y = boundaries nb, z = grains ng, w = table size T
    caps: vec4<u32>,   // x = contact capacity, y = materials, z = row-count entries, w = unused
}

fn cell_of(p: vec3<f32>) -> vec3<i32> {
    let c = floor(p * params.grid.y);
    return vec3<i32>(clamp(c, vec3<f32>(-CELL_CLAMP), vec3<f32>(CELL_CLAMP)));
}

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

