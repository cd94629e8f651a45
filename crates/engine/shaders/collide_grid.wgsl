// Collision broad phase, part 1: counting sort of the grains by hashed grid cell.
// keys:    per grain, hash its cell into a table of T slots (power of two) and take a rank
//          in that slot with a u32 atomic (hist = slot populations). Large grains (bounding
//          radius > large_radius; src/collide/mod.rs, `GridPlan`) all go to slot T instead, and
//          parked grains (MOTION_PARKED) to slot T + 1, which no grain's search visits.
// (host)   exclusive scan of hist (T + 2 entries) -> slot start offsets.
// scatter: sorted_idx[start[slot] + rank] = grain, sorted_pos likewise.
// finalize: after the contact rows are counted and scanned (see the end of this file).
// The order inside one slot depends on atomic timing, but nothing downstream depends on it:
// counts are order-free and every contact row is sorted before it is used.

@group(0) @binding(0) var<uniform> params: CollideParams;
@group(0) @binding(1) var<storage, read> pos: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> hist: array<atomic<u32>>;
@group(0) @binding(3) var<storage, read_write> rank: array<u32>;
@group(0) @binding(4) var<storage, read_write> sorted_idx: array<u32>;
@group(0) @binding(5) var<storage, read_write> sorted_pos: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read> offs: array<u32>;
@group(0) @binding(7) var<storage, read_write> counts: array<u32>;
@group(0) @binding(8) var<storage, read> info: array<vec4<u32>>;

// Wrapped grid: the T = 2^m slots form a periodic 2^bx x 2^by x 2^bz lattice of cells, so
// neighbouring cells get neighbouring slots (memory locality) and any cell, however far away,
// has a slot; cells that alias share a slot and are told apart by their coordinates.
fn grain_slot(p: vec4<f32>, b: u32) -> u32 {
    if PARKING && info[b].x == MOTION_PARKED {
        return params.table_size + 1u;
    }
    if p.w > params.large_radius {
        return params.table_size;
    }
    return cell_hash(cell_of(p.xyz));
}

@compute @workgroup_size(256)
fn keys(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let g = linear_index(gid, nwg);
    if g >= params.grains {
        return;
    }
    let p = pos[params.boundaries + g];
    let slot = grain_slot(p, params.boundaries + g);
    rank[g] = atomicAdd(&hist[slot], 1u);
}

@compute @workgroup_size(256)
fn scatter(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let g = linear_index(gid, nwg);
    if g >= params.grains {
        return;
    }
    let p = pos[params.boundaries + g];
    let slot = grain_slot(p, params.boundaries + g);
    let k = atomicLoad(&hist[slot]) + rank[g];
    sorted_idx[k] = g;
    sorted_pos[k] = p;
}

// After the row scan of collide_pairs/collide_walls: contact count, overflow flag, needed
// size, indirect args (here because collide_pairs' bindings are full, and collide_csr's
// bind group is used with `counts` as the indirect buffer).
@compute @workgroup_size(256)
fn finalize(@builtin(global_invocation_id) gid: vec3<u32>) {
    if gid.x != 0u || gid.y != 0u {
        return;
    }
    let total = offs[params.row_offsets - 1u];
    let cap = params.contact_capacity;
    let n = min(total, cap);
    counts[0] = n;
    counts[1] = select(0u, 2u, total > cap);
    counts[2] = total;
    counts[3] = 0u;
    // Contacts (collide_csr), 0 on overflow: the batch is redone.
    indirect_args(4u, select((n + 255u) / 256u, 0u, total > cap), 1u);
    // collide_walls' write pass: one thread per boundary contact, in z = 2 layers (its pass)
    // that split them.
    let walls = min(offs[params.boundaries * params.grains], cap);
    indirect_args(8u, ((walls + 1u) / 2u + 255u) / 256u, 2u);
}

// Indirect dispatch args at counts[slot..slot + 4]: `groups` workgroups split into a grid
// within the 65535-per-dimension limit, `z` layers.
fn indirect_args(slot: u32, groups: u32, z: u32) {
    counts[slot] = min(groups, 65535u);
    counts[slot + 1u] = select(1u, (groups + 65534u) / 65535u, groups > 65535u);
    counts[slot + 2u] = z;
    counts[slot + 3u] = 0u;
}
