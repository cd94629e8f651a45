// stages: collide_pairs, collide_csr
// A short ascending list of distinct u32 keys kept in registers: collision's sphere rows
// (collide_pairs `write_sphere_row`) and CSR rows (collide_csr `sort_b`) are sorted in it
// as they are read. On llvmpipe every storage access is a loop over the SIMD lanes, so an
// insertion sort in storage (n² reads and moves) costs far more than these vector selects;
// a private array indexed per lane would live in scratch memory, each access such a loop.

const NO_KEY: u32 = 0xffffffffu;

// An ascending list of 16 ids in 4 vectors (empty slots NO_KEY).
struct Keys {
    a: vec4<u32>,
    b: vec4<u32>,
    c: vec4<u32>,
    d: vec4<u32>,
}

// Vector v of the list after inserting x (left: the id before v's first slot, 0 for the
// first): a slot takes its left neighbour when that is above x, x where x goes, else keeps
// its id (the ids of a row are distinct).
fn keys_insert4(v: vec4<u32>, left: u32, x: u32) -> vec4<u32> {
    let prev = vec4<u32>(left, v.xyz);
    let xs = vec4<u32>(x);
    return select(select(v, xs, v > xs), prev, prev > xs);
}

// Inserts x: selects on whole slots, nothing indexed per lane.
fn keys_insert(k: Keys, x: u32) -> Keys {
    return Keys(
        keys_insert4(k.a, 0u, x),
        keys_insert4(k.b, k.a.w, x),
        keys_insert4(k.c, k.b.w, x),
        keys_insert4(k.d, k.c.w, x),
    );
}

// Id m (< 16) of the list.
fn keys_pick(k: Keys, m: u32) -> u32 {
    var q = k.a;
    q = select(q, k.b, m >= 4u);
    q = select(q, k.c, m >= 8u);
    q = select(q, k.d, m >= 12u);
    let c = m & 3u;
    return select(select(q.x, q.y, c == 1u), select(q.z, q.w, c == 3u), c >= 2u);
}
