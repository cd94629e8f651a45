// CCP solver, coloured Gauss–Seidel sweeps (book: Solver depth, "Coloured Gauss–Seidel on the
// GPU"). Projected Jacobi and APGD let a load travel about one contact layer per sweep; a
// Gauss–Seidel sweep lets each constraint read its neighbours' impulses of the same sweep
// (nonsmooth Gauss–Seidel: Jean 1999), which halves the sweeps of a smooth error and
// propagates a load in one direction across the whole bed in one sweep.
//
// Colouring (once per solve, after assembly): two constraints are neighbours when they share
// a moving body. Jones & Plassmann (1993): in round r each uncoloured constraint whose
// priority (constraints on a hub last, then a hash of its index, then the index:
// `priority_beats`) beats every uncoloured neighbour's takes the smallest colour none of its
// coloured neighbours has. A round decides from the colours of
// the rounds before it (a colour word records its round), so the result does not depend on
// the order in which invocations run. Constraints left after the recorded rounds, or whose
// neighbours hold every colour, are "left over". The colours' indirect arguments are written
// by solve_reduce (`colour_args`), which owns the arguments buffer.
//
// The colouring is a function of the constraint graph only: the constraint count, the
// contacts before the joint blocks (where those start), and per constraint the two bodies it
// couples that move (the bodies' lists and the joint lists follow from them: the joint lists
// change only with the joints, when the host forgets the colouring). A bed at rest keeps its
// graph from step to step, and the 26 dispatches of the colouring then recompute the same
// colours, so the colour buffer keeps, after the colours and lists, the graph they were
// computed for (`graph_key` per constraint, then a header: valid, constraints, contacts).
// `colour_check` compares this step's graph with it (an integer flag, set by whichever
// invocation finds a difference), `colour_plan` decides, and the reset, rounds and close are
// dispatched over every constraint when the graph differs and over none when it is the same
// (solve_reduce `colour_rounds_args`: no readback). A colouring recomputed in a step whose
// contacts overflowed a capacity (the bodies' lists may then name constraints past the
// step's) is stored as invalid, so it is never kept.
//
// After the rounds, `colour_sort` lists the constraints by colour (colour k's at
// colour[capacity + start_k ..], start_k the sum of the counts before k), so that a sweep's
// dispatch per colour covers that colour's constraints only: a dispatch over every constraint
// that filtered by colour ran ~1 invocation in 8 of each SIMD group, as a warp would. The
// order within a colour is claimed with an integer atomic and varies from run to run, which
// changes no bit: no two constraints of a colour share a moving body, so their visits
// commute, and the left-over class's visits write only their own impulse.
//
// A sweep is one dispatch per colour: every constraint of the colour computes its local
// velocity u = D_iᵀ Δv + E γ_i + p_i from the bodies' current Δv, takes the block step
// x = Π_D(γ_i − D⁻¹ u) in the metric of a diagonal majorant D of the block (its diagonal for
// a sphere's contact, whose block is diagonal: the exact block minimiser), relaxes it by ω and
// writes Δv += M⁻¹ D_i (γ_new − γ_i) for its two bodies. The left-over constraints then take
// a damped projected Jacobi step (the count-scaled η of solve_assemble) and Δv is gathered
// again from γ (solve_schur), so a scene whose contact graph needs more colours still
// converges. The residual (solve_sweep `residual_sq`, with the η Jacobi and APGD use, so the
// tolerance means the same) is taken after the sweep from the bodies' Δv, summed per
// workgroup in a fixed order; solve_reduce's `reduce_gauss` decides, and unless the solve
// converged the next sweep starts from the swept impulses extrapolated with Nesterov's
// momentum (`gauss_extrapolate`), whose Δv is extrapolated with them per body.
//
// Hubs: a moving body with many more constraints than the colours can keep apart (`is_hub`: a
// drum, a mixer's blade, a slab under a bed, a large grain among fine ones) links nothing in
// the colouring, as a fixed body does, so its constraints take the grains' colours instead of
// one per colour and the rest left over. A visit reads a hub's Δv and leaves it; after the
// sweep's colours `hub_gather` gathers each hub's Δv from its constraints' impulses (a
// workgroup per hub, a fixed-order sum). That is a Jacobi step in the hub's velocities inside
// the sweep, which stays a descent step because each constraint's majorant counts the hub's
// share as many times as the hub has constraints (`side_rows`; Cauchy–Schwarz: the mass
// splitting of Tonge, Benevolenski & Voroshilov 2012). Whether a body is a hub follows from
// the constraint graph, so a kept colouring keeps its hubs; `colour_close` lists them.
//
// Rolling and spinning resistance (HAS_ROLL): a contact's rows 3–5 are a second block of the
// same constraint, visited right after its rows 0–2 in the same invocation (they act on the
// angular velocities of the same two bodies, so the colouring holds for them unchanged), with
// their own majorant and their set |γ_s| ≤ μ_spin r_eff γ_n⁻, ‖γ_r‖ ≤ μ_r r_eff γ_n⁻ (bounds
// lagged by a step: solve_assemble `assemble_ext`). Their residual, momentum and finish
// follow rows 0–2's.
//
// Patch blocks (HAS_PATCHES; rows spin about n, u, w at the patch centre: book, Contact
// patches) take the same block step with their own majorant (`patch_block_diagonal`, in the
// metric of their guard ball) and projection (solve_sweep `project_i`); the spin lane is a
// torque on the same two bodies, so the colouring holds for them as for a contact.

@group(0) @binding(0) var<uniform> params: SolveParams;
@group(0) @binding(1) var<storage, read> contacts: array<Contact>; // chunked(4)
@group(0) @binding(2) var<storage, read> body_offsets: array<u32>;
@group(0) @binding(3) var<storage, read> body_entries: array<u32>;
@group(0) @binding(4) var<storage, read> rot: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read> mass_props: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> gam: array<vec4<f32>>; // chunked(8)
@group(0) @binding(7) var<storage, read_write> dv: array<vec4<f32>>;
@group(0) @binding(8) var<storage, read> counts: array<u32>;
@group(0) @binding(9) var<storage, read> jcsr: array<u32>;
@group(0) @binding(10) var<storage, read_write> nv: array<vec4<f32>>; // chunked(4)
@group(0) @binding(11) var<storage, read_write> rhs: array<vec4<f32>>;
@group(0) @binding(12) var<storage, read_write> partials: array<vec4<f32>>;
@group(0) @binding(13) var<uniform> scal: Scalars;
// Per constraint i < capacity (params.capacity): its colour word (UNCOLOURED, or
// (round << 8) | colour, with the YIELDS bit of `priority_beats` on either); then
// the constraints listed by colour (`colour_sort`: the index with ENTRY_HUB_A, ENTRY_HUB_B);
// then per constraint the two words of the
// graph the colours were computed for (`graph_key`), and the graph's header (`graph_header`).
// After the header, the hubs (`hub_at`).
@group(0) @binding(14) var<storage, read_write> colour: array<u32>;
// Constraints per colour (GS_COLOURS of them; the last is the left-over class), which
// solve_reduce's `colour_args` turns into the colours' indirect arguments; then per colour
// the slots `colour_sort` has claimed; then the words from GS_GRAPH_DIFFERS on (the counts
// stay those of the stored colouring while it is kept).
@group(0) @binding(15) var<storage, read_write> colour_count: array<atomic<u32>>;
// x = the colour this dispatch sweeps, y = the colouring round (256 B apart in one buffer,
// chosen per dispatch by the offset: src/solve `gauss`).
// Which colour a sweep's dispatch solves, or which round a colouring dispatch decides (both
// k in the k-th of the buffer's 256-byte slots, bound at a dynamic offset: src/solve/gauss.rs).
struct Phase {
    colour: u32,
    round: u32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(16) var<uniform> phase: Phase; // dynamic offset
// Per constraint: the previous sweep's result (the momentum's γ_{k−1}); then per constraint
// its block's diagonal majorant D (`block_diagonal`, set once per solve by `colour_sort`: it
// depends on the bodies' poses, masses and the compliance only). The previous sweep's Δv is
// kept per body in dv's second half (dv[2 bodies + 2b ..]).
@group(0) @binding(17) var<storage, read_write> previous: array<vec4<f32>>;

// A contact's rolling and spinning rows 3–5 (HAS_ROLL): γ stays in ext slot 0 like the rows
// 0–2 in slot 0; ext slot 1 keeps their previous sweep's impulses and ext slot 2 their block's
// majorant, slots that APGD's iterates use and Gauss–Seidel leaves free.
const EXT_PREVIOUS: u32 = 1u;
const EXT_DIAGONAL: u32 = 2u;

// A colour word: bit 31 `YIELDS` (the constraint moves a hub: `yields_bit`), bits 8–30 the
// round that coloured it (all ones while uncoloured), bits 0–7 the colour.
const UNCOLOURED: u32 = 0x7fffffffu;
const YIELDS: u32 = 0x80000000u;
const LEFT_OVER: u32 = GS_COLOURS - 1u;
// A list entry (`colour_sort`): the constraint's index (below 2^28: 16 B per constraint of
// capacity in one binding), and whether its body A, B is a hub.
const ENTRY_HUB_A: u32 = 0x80000000u;
const ENTRY_HUB_B: u32 = 0x40000000u;
const ENTRY_INDEX: u32 = 0x3fffffffu;

fn uncoloured(w: u32) -> bool {
    return (w & ~YIELDS) == UNCOLOURED;
}

fn round_of(w: u32) -> u32 {
    return (w & ~YIELDS) >> 8u;
}

// Constraint a's priority over b (`ya`, `yb`: their YIELDS bits): a constraint on a hub
// (`is_hub`) yields to every other, so that around a hub the grains' contacts between
// themselves take their colours first and the hub's contacts the colours they leave; then an
// integer hash of the index (Jones & Plassmann's random order, reproducible), ties broken by
// the index.
fn priority_beats(a: u32, ya: u32, b: u32, yb: u32) -> bool {
    if ya != yb {
        return yb != 0u;
    }
    let ha = hash_index(a);
    let hb = hash_index(b);
    return ha > hb || (ha == hb && a > b);
}

// Body b's constraints: its contacts and joint blocks.
fn constraints_of(b: u32) -> u32 {
    var n = body_offsets[b + 1u] - body_offsets[b];
    if joints_on() {
        n += jcsr[b + 1u] - jcsr[b];
    }
    return n;
}

// Whether body b moves and has GS_HUB_CONSTRAINTS or more constraints, many more than the
// colours can keep apart.
fn is_hub(b: u32) -> bool {
    return moves(b) && constraints_of(b) >= GS_HUB_CONSTRAINTS;
}

// How many times body b's share counts in a block's majorant: its constraints for a hub,
// whose Δv they all change at once in a sweep, else once.
fn hub_share(b: u32) -> f32 {
    if is_hub(b) {
        return f32(constraints_of(b));
    }
    return 1.0;
}

// Hub h's word in the colour buffer (after the stored graph's header), h < `max_hubs`.
fn hub_at(h: u32) -> u32 {
    return graph_header() + GRAPH_HEADER_WORDS + h;
}

// Room for hubs: each has GS_HUB_CONSTRAINTS or more constraints and a constraint moves two
// bodies at most.
fn max_hubs() -> u32 {
    return params.capacity * 2u / GS_HUB_CONSTRAINTS + 1u;
}

// Whether constraint i (a contact, or a joint block from counts[0] on) holds the first entry
// of hub b's lists (its side `side`: 0 for A), so that one invocation lists the hub.
fn first_of_hub(i: u32, side: u32, b: u32) -> bool {
    if body_offsets[b + 1u] > body_offsets[b] {
        return body_entries[body_offsets[b]] == ((i << 1u) | side);
    }
    let e = jcsr[params.bodies + 1u + jcsr[b]];
    return min(counts[0], params.capacity) + (e >> 1u) == i && (e & 1u) == side;
}

// The YIELDS bit of constraint i: one of its bodies is a hub (`is_hub`).
fn yields_bit(i: u32) -> u32 {
    let ids = contacts_at(i).ids;
    return select(0u, YIELDS, is_hub(ids.x) || is_hub(ids.y));
}

// PCG's output permutation of the index (O'Neill 2014), as reference::gauss_seidel.
fn hash_index(i: u32) -> u32 {
    let s = i * 747796405u + 2891336453u;
    let w = ((s >> ((s >> 28u) + 4u)) ^ s) * 277803737u;
    return (w >> 22u) ^ w;
}

// Whether body b moves (a neighbour relation through a fixed body would serialise every
// grain on the floor for nothing: a fixed body's Δv stays 0).
fn moves(b: u32) -> bool {
    return b != WORLD && mass_props[b].w != 0.0;
}

// What round `round` knows of neighbour j: (its colour bit, or 0 when it is uncoloured at the
// round's start, then whether it beats constraint i, whose YIELDS bit is `yi`).
fn neighbour_state(i: u32, yi: u32, j: u32, round: u32) -> vec2<u32> {
    let w = colour[j];
    if !uncoloured(w) && round_of(w) < round {
        let k = w & 0xffu;
        return vec2<u32>(select(1u << k, 0u, k == LEFT_OVER), 0u);
    }
    return vec2<u32>(0u, select(0u, 1u, j != i && priority_beats(j, w & YIELDS, i, yi)));
}

// The colours held by constraint i's neighbours through body b, and whether one of its
// uncoloured neighbours there beats it (then i waits: bit 1 of the result's y).
fn scan_body(i: u32, yi: u32, b: u32, round: u32) -> vec2<u32> {
    var acc = vec2<u32>(0u);
    if !moves(b) || is_hub(b) {
        return acc;
    }
    for (var k = body_offsets[b]; k < body_offsets[b + 1u]; k++) {
        let s = neighbour_state(i, yi, body_entries[k] >> 1u, round);
        acc = vec2<u32>(acc.x | s.x, acc.y | s.y);
    }
    if joints_on() {
        let nb = params.bodies;
        let first = min(counts[0], params.capacity);
        for (var k = jcsr[b]; k < jcsr[b + 1u]; k++) {
            let j = first + (jcsr[nb + 1u + k] >> 1u);
            if j < params.capacity {
                let s = neighbour_state(i, yi, j, round);
                acc = vec2<u32>(acc.x | s.x, acc.y | s.y);
            }
        }
    }
    return acc;
}

// Constraint i's word pair in the stored graph, and the header after them: (1 when the
// stored colouring may be kept, its constraints, its contacts before the joint blocks).
fn graph_at(i: u32) -> u32 {
    return 2u * params.capacity + 2u * i;
}

const GRAPH_HEADER_WORDS: u32 = 4u;

fn graph_header() -> u32 {
    return 4u * params.capacity;
}

// The bodies constraint i couples as the colouring sees them: one that does not move couples
// nothing (`scan_body`), so it reads as WORLD.
fn graph_key(i: u32) -> vec2<u32> {
    let ids = contacts_at(i).ids;
    return vec2<u32>(select(WORLD, ids.x, moves(ids.x)), select(WORLD, ids.y, moves(ids.y)));
}

// Whether a capacity overflowed this step (the step is redone): the bodies' lists may then
// name constraints past the step's, whose colour words the colouring reads as they are.
fn graph_overflows() -> bool {
    return counts[1] != 0u || counts[0] + params.joint_blocks > params.capacity;
}

// Whether constraint i couples other bodies than when the stored colouring was computed.
@compute @workgroup_size(256)
fn colour_check(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if i >= scal.n_contacts {
        return;
    }
    let k = graph_key(i);
    let at = graph_at(i);
    if colour[at] != k.x || colour[at + 1u] != k.y {
        atomicStore(&colour_count[GS_GRAPH_DIFFERS], 1u);
    }
}

// One workgroup after `colour_check`: keep the stored colouring when it is valid and its
// graph is this step's, else recolour (GS_RECOLOUR) and store this step's header (the rounds
// that follow in the same pass compute the colours it describes, from counts at 0). The
// slots `colour_sort` claims start at 0 either way.
@compute @workgroup_size(256)
fn colour_plan(@builtin(local_invocation_index) lid: u32) {
    if lid < GS_COLOURS {
        atomicStore(&colour_count[GS_COLOURS + lid], 0u);
    }
    if lid != 0u {
        return;
    }
    let h = graph_header();
    let n = scal.n_contacts;
    let stored = colour[h] == 1u && colour[h + 1u] == n && colour[h + 2u] == counts[0];
    let differs = atomicLoad(&colour_count[GS_GRAPH_DIFFERS]) != 0u;
    let keep = stored && !differs && !graph_overflows();
    atomicStore(&colour_count[GS_GRAPH_DIFFERS], 0u);
    atomicStore(&colour_count[GS_RECOLOUR], select(1u, 0u, keep));
    atomicAdd(&colour_count[GS_STEPS_CHECKED], 1u);
    if keep {
        atomicAdd(&colour_count[GS_STEPS_KEPT], 1u);
        return;
    }
    colour[h] = select(1u, 0u, graph_overflows());
    colour[h + 1u] = n;
    colour[h + 2u] = counts[0];
    // The reset zeroes them too, but covers no invocation when there is no constraint.
    for (var k = 0u; k < GS_COLOURS; k++) {
        atomicStore(&colour_count[k], 0u);
    }
}

// Before the rounds: no colours, no counts, and this step's graph stored with them.
@compute @workgroup_size(256)
fn colour_reset(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if i < 2u * GS_COLOURS {
        atomicStore(&colour_count[i], 0u);
    }
    if i == 0u {
        atomicStore(&colour_count[GS_HUBS], 0u);
    }
    if i < scal.n_contacts {
        colour[i] = UNCOLOURED | yields_bit(i);
        let k = graph_key(i);
        let at = graph_at(i);
        colour[at] = k.x;
        colour[at + 1u] = k.y;
    }
}

// One Jones–Plassmann round (`phase.round`).
@compute @workgroup_size(256)
fn colour_round(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if i >= scal.n_contacts {
        return;
    }
    let own = colour[i];
    if !uncoloured(own) {
        return;
    }
    let yi = own & YIELDS;
    let round = phase.round;
    let c = contacts_at(i);
    let a = scan_body(i, yi, c.ids.x, round);
    let b = scan_body(i, yi, c.ids.y, round);
    if (a.y | b.y) != 0u {
        return;
    }
    let free = ~(a.x | b.x);
    let k = min(firstTrailingBit(free), LEFT_OVER);
    colour[i] = yi | (round << 8u) | k;
    atomicAdd(&colour_count[k], 1u);
}

// After the rounds: the constraints still uncoloured join the left-over class, and each hub
// is listed by the constraint that holds its first entry (the list's order varies from run to
// run and changes no bit: each hub's gather is its own).
@compute @workgroup_size(256)
fn colour_close(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if i >= scal.n_contacts {
        return;
    }
    if uncoloured(colour[i]) {
        colour[i] = (colour[i] & YIELDS) | LEFT_OVER;
        atomicAdd(&colour_count[LEFT_OVER], 1u);
    }
    let ids = contacts_at(i).ids;
    for (var side = 0u; side < 2u; side++) {
        let b = select(ids.y, ids.x, side == 0u);
        if is_hub(b) && first_of_hub(i, side, b) {
            let h = atomicAdd(&colour_count[GS_HUBS], 1u);
            if h < max_hubs() {
                colour[hub_at(h)] = b;
            }
        }
    }
}

// The first slot of colour k's list: the constraints of the colours before it.
fn colour_start(k: u32) -> u32 {
    var start = 0u;
    for (var j = 0u; j < k; j++) {
        start += atomicLoad(&colour_count[j]);
    }
    return start;
}

// After `colour_close`: constraint i takes a slot in its colour's list, and its block's
// majorant D is set for the sweeps.
@compute @workgroup_size(256)
fn colour_sort(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if i >= scal.n_contacts {
        return;
    }
    let k = colour[i] & 0xffu;
    let slot = colour_start(k) + atomicAdd(&colour_count[GS_COLOURS + k], 1u);
    let c = contacts_at(i);
    // The list entry carries which of its bodies are hubs, so that a visit knows without
    // reading their constraint counts.
    var hubs = 0u;
    if (colour[i] & YIELDS) != 0u {
        hubs = select(0u, ENTRY_HUB_A, is_hub(c.ids.x)) | select(0u, ENTRY_HUB_B, is_hub(c.ids.y));
    }
    colour[params.capacity + slot] = i | hubs;
    previous[params.capacity + i] = vec4<f32>(block_diagonal(c, i), 0.0);
    if HAS_ROLL {
        gam_put(ext_at(EXT_DIAGONAL, i), vec4<f32>(rolling_block_diagonal(c), 0.0));
    }
}

// Body b's share of constraint c's block N_ii: the diagonal (x, y, z) and the off-diagonal
// entries (01, 02, 12) of rows t0, t1, t2 (masked joint rows are 0) applied at lever arm r,
// or as torques (angular joint rows).
fn side_block(b: u32, r: vec3<f32>, t: mat3x3<f32>, angular: bool) -> array<vec3<f32>, 2> {
    if angular {
        return side_rows(b, mat3x3<f32>(vec3<f32>(0.0), vec3<f32>(0.0), vec3<f32>(0.0)), t);
    }
    return side_rows(b, t, mat3x3<f32>(cross(r, t[0]), cross(r, t[1]), cross(r, t[2])));
}

// Body b's share of the block of rows k with linear parts lₖ and angular parts aₖ:
// m⁻¹ lₖ·lₗ + aₖᵀ I⁻¹ aₗ, I⁻¹ in world frame (diagonal, then the entries 01, 02, 12).
fn side_rows(b: u32, l: mat3x3<f32>, a: mat3x3<f32>) -> array<vec3<f32>, 2> {
    if !moves(b) {
        return array<vec3<f32>, 2>(vec3<f32>(0.0), vec3<f32>(0.0));
    }
    let mp = mass_props[b] * hub_share(b);
    let q = rot[b];
    let m = mp.w;
    let i0 = quat_rotate(q, mp.xyz * quat_rotate_inv(q, a[0]));
    let i1 = quat_rotate(q, mp.xyz * quat_rotate_inv(q, a[1]));
    let i2 = quat_rotate(q, mp.xyz * quat_rotate_inv(q, a[2]));
    let diag = vec3<f32>(
        m * dot(l[0], l[0]) + dot(a[0], i0),
        m * dot(l[1], l[1]) + dot(a[1], i1),
        m * dot(l[2], l[2]) + dot(a[2], i2),
    );
    let off = vec3<f32>(
        m * dot(l[0], l[1]) + dot(a[0], i1),
        m * dot(l[0], l[2]) + dot(a[0], i2),
        m * dot(l[1], l[2]) + dot(a[1], i2),
    );
    return array<vec3<f32>, 2>(diag, off);
}

// A diagonal D ⪰ N_ii + E_ii for constraint i's block step: each row's diagonal entry plus
// the magnitudes of its off-diagonal ones (Gershgorin: D − A is then diagonally dominant),
// so the step x = Π_D(γ − D⁻¹u) never increases the block's objective and the sweeps
// converge whatever the shape (Tseng 2001, block coordinate descent with a majorant). A
// sphere's contact block is diagonal: D is the block and the step its exact minimiser.
fn block_diagonal(c: Contact, i: u32) -> vec3<f32> {
    if is_patch(c) {
        return patch_block_diagonal(c, i);
    }
    let n = c.n_gap.xyz;
    var t = mat3x3<f32>(n, tangent_u(n), tangent_w(n));
    var angular = false;
    if is_joint(c.ids.w) {
        let mask = joint_mask(c.ids.w);
        t = mat3x3<f32>(t[0] * mask.x, t[1] * mask.y, t[2] * mask.z);
        angular = (c.ids.w & JOINT_ANGULAR) != 0u;
    }
    var d = gershgorin(c, c.ra.xyz, c.rb.xyz, t, angular);
    if models_on() && !is_joint(c.ids.w) {
        let e = gam_at(SEG_AUX * params.capacity + i).zw;
        d += vec3<f32>(e.x, e.y, e.y);
    }
    if !is_joint(c.ids.w) {
        // A contact's set is round in u, w and projected in the metric of their larger
        // entry (`project_scaled`): the step takes the same metric, or its fixed points
        // are not the problem's where the two entries differ (non-sphere grains).
        d = round_tangents(d);
    }
    return d;
}

// Each row's diagonal entry of the block of rows t at lever arms ra, rb plus the magnitudes
// of its off-diagonal entries.
fn gershgorin(c: Contact, ra: vec3<f32>, rb: vec3<f32>, t: mat3x3<f32>, angular: bool) -> vec3<f32> {
    let sa = side_block(c.ids.x, ra, t, angular);
    let sb = side_block(c.ids.y, rb, t, angular);
    return gershgorin_sum(sa[0] + sb[0], sa[1] + sb[1]);
}

// A symmetric 3 × 3 block's Gershgorin majorant from its diagonal and its entries 01, 02, 12.
fn gershgorin_sum(diag: vec3<f32>, off: vec3<f32>) -> vec3<f32> {
    let o = abs(off);
    return diag + vec3<f32>(o.x + o.y, o.x + o.z, o.y + o.z);
}

// A patch block's majorant (rows spin, u, w: solve_sweep `product`): the spin row is a torque
// about n (angular only), u and w are the patch centre's linear rows at ra, rb; Gershgorin
// on N_ii + E_ii with a lugre_patch block's full symmetric E (E_ss, E_uu in aux.zw; E_ww,
// E_su, E_sw, E_uw in the state segment, as `product_e` reads them). The guard ball
// ‖(γ_s / r, γ_u, γ_w)‖ ≤ ρ (`project_patch`, r = rb.w) is round in (γ_s / r, γ_u, γ_w):
// its radial scaling is the projection in the metric m·diag(1/r², 1, 1), so D is raised to
// that form, m the largest of d_s r², d_u, d_w; with any other D the step's metric and the
// projection's differ and the sweeps' fixed points are not the problem's.
fn patch_block_diagonal(c: Contact, i: u32) -> vec3<f32> {
    let n = c.n_gap.xyz;
    let u = tangent_u(n);
    let w = tangent_w(n);
    let l = mat3x3<f32>(vec3<f32>(0.0), u, w);
    let ra = c.ra.xyz;
    let rb = c.rb.xyz;
    let sa = side_rows(c.ids.x, l, mat3x3<f32>(n, cross(ra, u), cross(ra, w)));
    let sb = side_rows(c.ids.y, l, mat3x3<f32>(n, cross(rb, u), cross(rb, w)));
    var diag = sa[0] + sb[0];
    var off = sa[1] + sb[1];
    if models_on() {
        let e = gam_at(SEG_AUX * params.capacity + i).zw;
        var ed = vec3<f32>(e.x, e.y, e.y);
        if is_dist_patch(c) {
            let s = gam_at(SEG_STATE * params.capacity + i);
            ed.z = s.x;
            off += s.yzw;
        }
        diag += ed;
    }
    let d = gershgorin_sum(diag, off);
    let r2 = c.rb.w * c.rb.w;
    let m = max(d.x * r2, max(d.y, d.z));
    return vec3<f32>(m / r2, m, m);
}

// The two rows of a set round in them (a cone's or disk's tangential pair) at the larger
// of their entries.
fn round_tangents(d: vec3<f32>) -> vec3<f32> {
    let r = max(d.y, d.z);
    return vec3<f32>(d.x, r, r);
}

// The majorant of a contact's rows 3–5, torques ±(n, u, w) on its two bodies (Gershgorin as
// `block_diagonal`), with both rolling rows at the larger of their entries: the rolling set is
// a disk on them, whose Euclidean projection is then the projection in the metric of D (the
// spinning row's interval separates). A sphere's block is already diagonal with equal
// rolling entries: D is the block.
fn rolling_block_diagonal(c: Contact) -> vec3<f32> {
    let n = c.n_gap.xyz;
    let t = mat3x3<f32>(n, tangent_u(n), tangent_w(n));
    return round_tangents(gershgorin(c, vec3<f32>(0.0), vec3<f32>(0.0), t, true));
}

// Whether constraint i's set is a Coulomb cone (else a set whose rows separate: a joint's
// bounds, a disk, a box, a patch's ball), and the cone's shift (cohesion; solve_sweep `project_i`).
fn cone_of(c: Contact, i: u32) -> vec2<f32> {
    if is_joint(c.ids.w) || is_patch(c) {
        return vec2<f32>(0.0, 0.0);
    }
    if !state_on() {
        return vec2<f32>(1.0, 0.0);
    }
    let st = gam_at(SEG_STATE * params.capacity + i);
    let cone = projection_kind(st) == PROJECTION_CONE;
    return vec2<f32>(select(0.0, 1.0, cone), select(0.0, st.y, cone));
}

// Π_D(z): the projection of z on constraint i's set in the metric of the block diagonal d.
// A cone scales into the Euclidean cone of μ √(d_t/d_n) (d_t: the larger tangential entry,
// which makes the metric dominate the block's tangential rows); the other sets separate by
// row (equal weights on u and w for a disk), so their Euclidean projection is the metric one.
fn project_scaled(z: vec4<f32>, d: vec3<f32>, c: Contact, i: u32) -> vec4<f32> {
    let k = cone_of(c, i);
    if k.x == 0.0 || d.x <= 0.0 {
        return project_i(z, c, i);
    }
    let dt = max(d.y, d.z);
    let s = sqrt(vec3<f32>(d.x, dt, dt));
    let shift = vec4<f32>(k.y, 0.0, 0.0, 0.0);
    let mu = c.ra.w * sqrt(dt / d.x);
    let y = project_cone(vec4<f32>(s, 1.0) * (z + shift), mu);
    return y / vec4<f32>(s, 1.0) - shift;
}

// Δv of body b += M_b⁻¹ (force f at lever arm r, plus torque tq), as solve_schur gathers it,
// unless b is a hub (`hub`), whose Δv is gathered after the sweep (`hub_gather`).
fn add_impulse(b: u32, r: vec3<f32>, f: vec3<f32>, tq: vec3<f32>, hub: bool) {
    if !moves(b) || hub {
        return;
    }
    let mp = mass_props[b];
    let q = rot[b];
    let ang = cross(r, f) + tq;
    dv[2u * b] += vec4<f32>(mp.w * f, 0.0);
    dv[2u * b + 1u] += vec4<f32>(quat_rotate(q, mp.xyz * quat_rotate_inv(q, ang)), 0.0);
}

// The bodies' Δv after constraint c's impulse changed by δ (solve_gather's per-entry terms).
fn apply_change(c: Contact, delta: vec3<f32>, hub: vec2<bool>) {
    let n = c.n_gap.xyz;
    var g = delta;
    if is_joint(c.ids.w) {
        g = delta * joint_mask(c.ids.w);
    }
    if is_patch(c) {
        // Lane x is a torque about n, lanes y, z a force at the patch centre.
        let f = delta.y * tangent_u(n) + delta.z * tangent_w(n);
        let tq = delta.x * n;
        add_impulse(c.ids.x, c.ra.xyz, -f, -tq, hub.x);
        add_impulse(c.ids.y, c.rb.xyz, f, tq, hub.y);
        return;
    }
    let f = g.x * n + g.y * tangent_u(n) + g.z * tangent_w(n);
    if is_joint(c.ids.w) && (c.ids.w & JOINT_ANGULAR) != 0u {
        add_impulse(c.ids.x, vec3<f32>(0.0), vec3<f32>(0.0), -f, hub.x);
        add_impulse(c.ids.y, vec3<f32>(0.0), vec3<f32>(0.0), f, hub.y);
        return;
    }
    add_impulse(c.ids.x, c.ra.xyz, -f, vec3<f32>(0.0), hub.x);
    add_impulse(c.ids.y, c.rb.xyz, f, vec3<f32>(0.0), hub.y);
}

// The exact cone in a visit (scal.outer counts the exact cone's problems; 0 throughout a
// relaxed solve): the offset s = μ‖u_T‖ taken from the contact's own slip u at the visit
// (bounded as the outer pass bounds it, common/solve_exact.wgsl) rather than held at the
// slip of the warm start or of the last cone problem until the next outer pass. Each block
// then solves the exact Coulomb law's local problem with its neighbours' latest impulses,
// as nonsmooth contact dynamics codes do (Jean 1999); a step that ends at the sweep cap
// keeps offsets at most a sweep old instead of the warm start's, which let a contact whose
// slip the step stopped sink by s·dt. The new offset goes to rhs (the residual and the next
// visit read it) and to aux.y (outer_offset's test of a moved offset). Returns the change
// of u_n.
fn follow_slip(i: u32, c: Contact, u: vec4<f32>, q: vec4<f32>) -> f32 {
    let mu = friction_of(c);
    if mu == 0.0 || is_patch(c) {
        return 0.0;
    }
    let at = SEG_AUX * params.capacity + i;
    let a = gam_at(at);
    let s = slip_offset(c, mu, u.x - (q.x - a.x), u.yz, true);
    rhs[i] = vec4<f32>(a.x + s, q.yzw);
    gam_put(at, vec4<f32>(a.x, s, a.zw));
    return a.x + s - q.x;
}

// Constraint i's new impulse from its velocity u = D_iᵀΔv + E γ + p: the block step in the
// metric of its majorant D, over-relaxed by ω; or, for the left-over class, a damped
// projected Jacobi step (Δv is gathered again after that dispatch). An inactive constraint
// (η = 0) gets 0. The w lane keeps γ's (μ, where the steps carry it).
fn new_impulse(i: u32, c: Contact, g: vec4<f32>, left_over: bool) -> vec4<f32> {
    let q = rhs[i];
    if q.w <= 0.0 {
        return vec4<f32>(0.0, 0.0, 0.0, g.w);
    }
    var u = product_e(c, i, g) + vec4<f32>(q.xyz, 0.0);
    if scal.outer > 0u {
        u.x += follow_slip(i, c, u, q);
    }
    var t: vec4<f32>;
    if left_over {
        t = project_i(g - JACOBI_OMEGA * row_eta(i, c, res_eta(c, q.w)) * u, c, i);
    } else {
        let d = previous[params.capacity + i].xyz;
        let inv = select(vec3<f32>(0.0), 1.0 / d, d > vec3<f32>(0.0));
        let x = project_scaled(g - vec4<f32>(inv * u.xyz, 0.0), d, c, i);
        t = x;
        let w = params.omega;
        if w != 1.0 {
            t = project_scaled(g + w * (x - g), d, c, i);
        }
    }
    t.w = g.w;
    return t;
}

// Rows 3–5 of contact i after its rows 0–2 (HAS_ROLL), from the bodies' Δv that step left:
// the block step in the metric of their majorant, over-relaxed by ω, on the lagged bounds
// (|γ_s| ≤ b.x, ‖γ_r‖ ≤ b.y: solve_assemble `assemble_ext`); left over, a damped projected
// Jacobi step. They are a pure torque ±(γ_s n + γ_ru u + γ_rw w) on the two bodies. Returns
// their term of the momentum's restart test (`restart_term`).
fn visit_rolling(i: u32, c: Contact, left_over: bool, hub: vec2<bool>) -> f32 {
    let at = ext_at(0u, i);
    let g = gam_at(at).xyz;
    let qe = ext_rhs(i);
    var t = vec3<f32>(0.0);
    if qe.w > 0.0 {
        let b = ext_bounds(i);
        let u = ext_product(c) + qe.xyz;
        if left_over {
            t = project_ext(g - (JACOBI_OMEGA * qe.w) * u, b);
        } else {
            let d = gam_at(ext_at(EXT_DIAGONAL, i)).xyz;
            let inv = select(vec3<f32>(0.0), 1.0 / d, d > vec3<f32>(0.0));
            let x = project_ext(g - inv * u, b);
            t = x;
            let w = params.omega;
            if w != 1.0 {
                t = project_ext(g + w * (x - g), b);
            }
        }
    }
    gam_put(at, vec4<f32>(t, 0.0));
    if !left_over {
        let n = c.n_gap.xyz;
        let dt = t - g;
        let tq = dt.x * n + dt.y * tangent_u(n) + dt.z * tangent_w(n);
        add_impulse(c.ids.x, vec3<f32>(0.0), vec3<f32>(0.0), -tq, hub.x);
        add_impulse(c.ids.y, vec3<f32>(0.0), vec3<f32>(0.0), tq, hub.y);
    }
    return restart_term(g, t, gam_at(ext_at(EXT_PREVIOUS, i)).xyz);
}

// A constraint's term (y − x)·(x − x_prev) of the momentum's restart test (solve_scalar
// `decide_gauss`): its impulse y before this sweep's visit, x after it, x_prev after the last
// sweep.
fn restart_term(y: vec3<f32>, x: vec3<f32>, x_prev: vec3<f32>) -> f32 {
    return dot(y - x, x - x_prev);
}

// Constraint i's visit in its colour's dispatch: its new impulse, and its bodies' Δv unless
// it is left over; then a contact's rows 3–5, which act on the same two bodies, so that the
// colour that keeps the contact apart from its neighbours keeps them apart too. Its term of
// the restart test goes to the w lane of its previous impulse, which `gauss_residual` sums
// and `gauss_extrapolate` then overwrites (γ's own w lane stays in `gam`).
fn visit(i: u32, left_over: bool, hub: vec2<bool>) {
    let at = SEG_GAMMA * params.capacity + i;
    let c = contacts_at(i);
    let g = gam_at(at);
    let t = new_impulse(i, c, g, left_over);
    gam_put(at, t);
    if !left_over {
        apply_change(c, t.xyz - g.xyz, hub);
    }
    var term = restart_term(g.xyz, t.xyz, previous[i].xyz);
    if HAS_ROLL && !is_joint(c.ids.w) {
        term += visit_rolling(i, c, left_over, hub);
    }
    previous[i].w = term;
}

// Projected Jacobi's safe relaxation with the count-scaled η (solve_assemble's header).
const JACOBI_OMEGA: f32 = 0.6;

// Colour `phase.colour` of a sweep, over its list (the dispatch covers it: `colour_args`).
@compute @workgroup_size(256)
fn gauss_phase(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = linear_index(gid, nwg);
    let k = phase.colour;
    if t >= atomicLoad(&colour_count[k]) {
        return;
    }
    let e = colour[params.capacity + colour_start(k) + t];
    let hub = vec2<bool>((e & ENTRY_HUB_A) != 0u, (e & ENTRY_HUB_B) != 0u);
    visit(e & ENTRY_INDEX, k == LEFT_OVER, hub);
}

// Lever arm of side A (else B) of contact ci, from its record (common/solve_gather.wgsl).
fn lever_arm(ci: u32, c: Contact, side_a: bool) -> vec3<f32> {
    return select(c.rb.xyz, c.ra.xyz, side_a);
}

// After a sweep's colours, unless some constraint was left over (then solve_schur gathers
// every body's Δv again: solve_reduce `colour_args`): hub `workgroup`'s Δv from its
// constraints' impulses, each invocation summing every WG-th of the hub's contacts, then a
// fixed-order tree (no float atomics: the same bits every run); its joint blocks, few, by one
// invocation.
@compute @workgroup_size(256)
fn hub_gather(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let h = wid.x + wid.y * nwg.x;
    let live = h < min(atomicLoad(&colour_count[GS_HUBS]), max_hubs());
    var b = 0u;
    var lin = vec3<f32>(0.0);
    var ang = vec3<f32>(0.0);
    let base = gam_seg(0u) * params.capacity;
    if live {
        b = colour[hub_at(h)];
        let end = body_offsets[b + 1u];
        for (var k = body_offsets[b] + lid; k < end; k += WG) {
            add_entry(body_entries[k], base, 0u, 0.0, &lin, &ang);
        }
    }
    let total_lin = tree_total(vec4<f32>(lin, 0.0), lid, false).xyz;
    workgroupBarrier();
    let total_ang = tree_total(vec4<f32>(ang, 0.0), lid, false).xyz;
    if live && lid == 0u {
        var l = total_lin;
        var a = total_ang;
        if joints_on() {
            let j = gather_joints(b, base, 0.0);
            l += j[0];
            a += j[1];
        }
        put_dv(b, mass_props[b], l, a);
    }
}

// After a sweep: the residual of γ from the bodies' Δv, which the colours kept up to date (the
// left-over class's gather included), and the restart test's product (the visits' terms),
// partials per workgroup for solve_reduce. Measured
// after the sweep rather than as each constraint is visited: a visit's residual is that of
// the impulse before its update, ~1.3× the sweep's result on a settled bed, where it kept
// solves above the tolerance for tens of sweeps.
@compute @workgroup_size(256)
fn gauss_residual(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    let i = linear_index(gid, nwg);
    var r2 = 0.0;
    var term = 0.0;
    if i < scal.n_contacts {
        let c = contacts_at(i);
        let q = rhs[i];
        let g = gam_at(SEG_GAMMA * params.capacity + i);
        let u = product_e(c, i, g) + vec4<f32>(q.xyz, 0.0);
        r2 = residual_sq(g, u, row_eta(i, c, res_eta(c, q.w)), c, i);
        if HAS_ROLL {
            let qe = ext_rhs(i);
            r2 += ext_residual_sq(gam_at(ext_at(0u, i)).xyz, ext_product(c) + qe.xyz, qe.w, i);
        }
        term = previous[i].w;
    }
    reduce_to_partial(vec4<f32>(r2, term, 0.0, 0.0), lid, wid.x + wid.y * nwg.x, false);
}

// After a sweep that did not converge: the momentum step y = γ + β (γ − γ_prev) from the
// swept γ (β from solve_reduce's `decide_gauss`; 0 on the first sweep of a cone problem and
// after a rise of the residual), which the next sweep starts from; the swept γ is kept as
// the next γ_prev (Nesterov 1983 on the sweeps, as APGD on the gradient steps). y is not
// projected: every constraint's next visit projects its own step, and Δv = M⁻¹ D γ is then
// linear in γ, so Δv(y) = Δv + β (Δv − Δv_prev) is formed per body (bodies' invocations)
// where a gather would read every constraint of every body again. The invocations cover
// max(constraints, bodies) (`colour_args`).
@compute @workgroup_size(256)
fn gauss_extrapolate(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    let beta = scal.beta;
    if i < scal.n_contacts {
        let at = SEG_GAMMA * params.capacity + i;
        let g = gam_at(at);
        let before = previous[i];
        previous[i] = g;
        gam_put(at, vec4<f32>(g.xyz + beta * (g.xyz - before.xyz), g.w));
        if HAS_ROLL {
            let ae = ext_at(0u, i);
            let ge = gam_at(ae);
            let pe = ext_at(EXT_PREVIOUS, i);
            let be = gam_at(pe);
            gam_put(pe, ge);
            gam_put(ae, vec4<f32>(ge.xyz + beta * (ge.xyz - be.xyz), ge.w));
        }
    }
    let n = params.bodies;
    if i < n {
        for (var k = 0u; k < 2u; k++) {
            let d = dv[2u * i + k];
            let e = dv[2u * (n + i) + k];
            dv[2u * (n + i) + k] = d;
            dv[2u * i + k] = vec4<f32>(d.xyz + beta * (d.xyz - e.xyz), d.w);
        }
    }
}

// After the sweeps: a solve that ended at the cap returns its last swept γ, not the step
// extrapolated from it.
@compute @workgroup_size(256)
fn gauss_finish(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if i >= scal.n_contacts || scal.converged != 0u || scal.iters == 0u {
        return;
    }
    let at = SEG_GAMMA * params.capacity + i;
    gam_put(at, vec4<f32>(previous[i].xyz, gam_at(at).w));
    if HAS_ROLL {
        gam_put(ext_at(0u, i), gam_at(ext_at(EXT_PREVIOUS, i)));
    }
}
