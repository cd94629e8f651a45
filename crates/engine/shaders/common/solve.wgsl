// Shared by every solve_* stage (prepended after the prelude).

// Pipeline specialisation per scene content (src/solve, `Specialisation`): false compiles
// the joint, compliance-model or model-state code out (lavapipe runs both sides of a branch,
// so code a scene never takes still costs every invocation). True: decided by `params`.
override HAS_JOINTS: bool = true;
override HAS_MODELS: bool = true;
override HAS_STATE: bool = true;

// Joint blocks this step (params.joint_blocks), some non-Coulomb model (has_models), model
// state (has_state).
fn joints_on() -> bool {
    return HAS_JOINTS && params.joint_blocks != 0u;
}

fn models_on() -> bool {
    return HAS_MODELS && params.has_models != 0u;
}

fn state_on() -> bool {
    return HAS_STATE && params.has_state != 0u;
}

struct SolveParams {
    bodies: u32,
    capacity: u32,   // contact capacity: the length of each segment of `gam` and `nv`
    kind: u32,       // 0 projected Jacobi (and Gauss–Seidel's scalars), 1 APGD
    warm_start: u32, // 1: γ⁰ from the last step's impulses by key
    dt: f32,
    omega: f32,          // Jacobi's relaxation ω
    recovery_speed: f32, // largest separating speed a penetration is pushed apart with (m/s)
    // The residual's tolerance (RMS per row, m/s); solve_iterate's velocity threshold too:
    // above it the exact cone's offset μ‖·‖ has moved and a tangential velocity slips.
    tolerance: f32,
    // 1 when some material has a non-Coulomb model (the product adds E γ; src/model/rows)
    has_models: u32,
    materials: u32, // entries of the model table (two vec4 each)
    // 1 when the table has a stateful model (LuGre: the state segment of `gam` exists and
    // holds every contact's projection)
    has_state: u32,
    joint_blocks: u32, // joint blocks appended after the contacts (0: none)
    slop: f32,          // m
    stabilisation: f32, // β of a rigid contact's penetration (solve_assemble `rigid_offset`)
    sweep_cap: f32,     // solve_fused's loop bound
    // loop iterations one invocation of solve_fused / solve_tail may run per dispatch
    // (0: no bound; a GPU)
    loop_budget: f32,
    // Lees–Edwards: xyz = the flow axis (zero without shear); a contact's rb.w from collision
    // is the flow velocity of B's image relative to B (solve_assemble `assemble`).
    shear_flow: vec4<f32>,
}

// Segments of `gam` (4 iterate slots, aux, state) and `nv` (3 slots): pipeline constants of
// src/solve/mod.rs `Layout`, so a solver allocates only what it uses; which slot holds which
// iterate is renamed as the solve goes (common/solve_roles.wgsl). Jacobi has one slot of
// each: every slot index maps to γ and Nγ. It accepts every trial, so its step writes the
// trial over γ_i (read just before by the same invocation) and the product N·trial over Nγ.
// Rolling rows keep the full layout.
const SEG_GAMMA: u32 = 0u;
// Whether the iterates have 4 `gam` and 3 `nv` slots (segments 0–3, 0–2); false: plain
// Jacobi, every slot is segment 0.
override SLOTS: bool = true;
// Whether a contact's step η carries the per-body contact counts n_b of projected Jacobi's
// bound (solve_assemble); false (APGD): the step takes the plain diagonal and the residual
// the counted η from the record's rb.w (`res_eta` in common/solve_sweep.wgsl).
override COUNT_BOUND: bool = false;
// Row layout aux (see solve_assemble): x = p_n before the correction, y = the correction s.
override SEG_AUX: u32 = 4u;
// Whether the aux segment exists (src/solve `Layout::aux`): plain Coulomb contacts with the
// relaxed cone never read it, and then SEG_AUX aliases γ and assembly does not write it.
override HAS_AUX: bool = true;
// The state segment (see solve_assemble), present when params.has_state: w = the disk radius
// of a tanh / LuGre contact's projection, −1 for a cone contact.
override SEG_STATE: u32 = 5u;
const SEG_NGAMMA: u32 = 0u;

// Rolling and spinning resistance (src/model/rows, "Rolling and spinning"): rows 3–5 of a
// contact in extension segments of `gam` and `nv`, which exist only in pipelines built with
// HAS_ROLL (a scene whose materials have rolling_friction or spinning_friction).
override HAS_ROLL: bool = false;
const SEG_EXT: u32 = 6u; // gam: ext γ, y, trial, best at 6..9 (the full layout below)
const SEG_EXT_RHS: u32 = 10u; // gam: (p_e, η_e)
const SEG_EXT_BOUND: u32 = 11u; // gam: (bound spin, bound roll, r_eff, 0)
const NV_EXT: u32 = 3u; // nv: ext Nγ, Ny, N·trial at 3..5

// Projection of rows 3–5 (spin, roll u, roll w): |γ_s| ≤ b.x, ‖γ_r‖ ≤ b.y.
fn project_ext(g: vec3<f32>, b: vec2<f32>) -> vec3<f32> {
    let t = length(g.yz);
    let k = select(1.0, b.y / t, t > b.y);
    return vec3<f32>(clamp(g.x, -b.x, b.x), g.yz * k);
}

// A sweep's product: each of its T invocations takes at least PER_LANE_MIN constraints and
// sums their partials in registers (common/solve_sweep.wgsl `product_trial_lane`; strided or
// in runs), at most PARTS_MAX + WG partials, which solve_reduce sums. Set per adapter kind by
// src/solve `Specialisation` (`Solve::set_gpu_lanes`), PARTS_MAX from its Rust constant.
override PER_LANE_MIN: u32 = 16u;
override LANES_STRIDED: bool = false;
override PARTS_MAX: u32 = 65536u;
// Where a gather takes a contact's lever arm (solve_schur `lever_arm`): a row load of its own
// (true) or the record already loaded (false); set per adapter kind by src/solve
// `Specialisation` (`Solve::set_arm_from_row`).
override ARM_FROM_ROW: bool = true;

struct Scalars {
    lip: f32,
    theta: f32,
    beta: f32,
    best: f32,
    res: f32,
    res0: f32,
    pen: f32,
    roles: u32, // common/solve_roles.wgsl
    accepted: u32,
    n_parts: u32, // product_trial's partials: one per invocation (solve_sweep `product_trial_lane`)
    converged: u32,
    iters: u32,
    n_contacts: u32,
    n_groups: u32,
    outer: u32,      // exact cone: cone problems solved this step (0 before the first)
    outer_done: u32, // exact cone: the fixed point is reached (no further outer pass)
    low: f32,        // Gauss–Seidel: the lowest residual since the momentum last (re)started
}

fn project_cone(g: vec4<f32>, mu: f32) -> vec4<f32> {
    let t = length(g.yz);
    // `g.x >= 0`: with μ = 0 and no tangential part, 0 ≤ μ g_n holds for a negative g_n too.
    if t <= mu * g.x && g.x >= 0.0 {
        return vec4<f32>(g.xyz, 0.0);
    }
    if mu * t <= -g.x {
        return vec4<f32>(0.0);
    }
    let gn = (mu * t + g.x) / (mu * mu + 1.0);
    return vec4<f32>(gn, g.yz * (mu * gn / t), 0.0);
}


// tanh and LuGre rows (src/model/rows): γ_n ≥ 0 and the tangential disk ‖γ_T‖ ≤ r, whose
// radius r = μ γ_n⁻ (tanh) or a guard (LuGre) comes from the last step's normal impulse, so
// the projection does not couple γ_T to γ_n (no relaxed-cone lift-off of a sliding contact).
fn project_disk(g: vec4<f32>, r: f32) -> vec4<f32> {
    let t = length(g.yz);
    let k = select(1.0, r / t, t > r);
    return vec4<f32>(max(g.x, 0.0), g.yz * k, 0.0);
}

// A bristle contact with `projection = "box"` (Peiret et al.): γ_n ≥ 0, |γ_u|, |γ_w| ≤ b = μ γ_n⁻.
fn project_box(g: vec4<f32>, b: f32) -> vec4<f32> {
    return vec4<f32>(max(g.x, 0.0), clamp(g.yz, vec2<f32>(-b), vec2<f32>(b)), 0.0);
}

// A contact's projection set in its state segment vec4 (src/model/rows/projection.rs, the one
// encoding, whose `Projection::encode` / `decode` these are): z = the kind, w = the disk's
// radius or the box's half-width (0 for the cone), y = the cone's normal shift (cohesion's
// F_c dt); x, and y off the cone, are the model's. μ is the record's ra.w. The kind is an
// exact small integer in f32, so a zeroed segment is the cone.
const PROJECTION_CONE: u32 = 0u;
const PROJECTION_DISK: u32 = 1u;
const PROJECTION_BOX: u32 = 2u;

fn projection_kind(st: vec4<f32>) -> u32 {
    return u32(st.z);
}

// The state vec4 with the projection's lanes written over the model's (x, y).
fn encode_projection(model: vec2<f32>, kind: u32, bound: f32, shift: f32) -> vec4<f32> {
    if kind == PROJECTION_CONE {
        return vec4<f32>(model.x, shift, f32(kind), 0.0);
    }
    return vec4<f32>(model, f32(kind), bound);
}

// Projection of g on the set the state vec4 st encodes (μ for the cone).
fn project_state(g: vec4<f32>, st: vec4<f32>, mu: f32) -> vec4<f32> {
    let kind = projection_kind(st);
    if kind == PROJECTION_BOX {
        return project_box(g, st.w);
    }
    if kind == PROJECTION_DISK {
        return project_disk(g, st.w);
    }
    let k = vec4<f32>(st.y, 0.0, 0.0, 0.0);
    return project_cone(g + k, mu) - k;
}

// Joint row blocks (src/model/rows, "Joints"): records after the contacts with `ids.w` =
// JOINT_BIT | (ANGULAR_BIT) | lane mask (bits 0–2: rows n, u, w) | projection (bits 3–4).
// Only read when params.joint_blocks (joint blocks this step) is non-zero, so contact-only scenes
// run the same reads as before.
const JOINT_BIT: u32 = 0x80000000u;
const JOINT_ANGULAR: u32 = 0x40000000u;
const JOINT_PROJ_NONE: u32 = 0u;
const JOINT_PROJ_LOWER: u32 = 1u; // γ ≥ 0 (limits, rope)
const JOINT_PROJ_BOX: u32 = 2u; // |γ| ≤ ra.w (motor force/torque limit × dt)
// Coloured Gauss–Seidel (solve_gauss): the colours a sweep visits, the last being the class of
// constraints left over by the colouring (src/solve `GS_COLOURS`), and the first word of
// colour 0's indirect arguments in solve_reduce's `args` (then colour k's at GS_ARGS + 4k,
// the left-over class's gather of Δv after the last colour's, then the extrapolation's, then
// the colouring's: reset, rounds and close, then the hubs' gather).
const GS_COLOURS: u32 = 16u;
// Gauss–Seidel's momentum restarts when a sweep's residual is above this many times the lowest
// since its last restart (solve_scalar `decide_gauss`; model::solver `GS_MOMENTUM_RISE`).
const GS_MOMENTUM_RISE: u32 = 2u;
const GS_ARGS: u32 = 24u;
// A moving body with this many constraints or more is a hub (solve_gauss `is_hub`;
// model::solver `GS_HUB_CONSTRAINTS`).
const GS_HUB_CONSTRAINTS: u32 = 32u;
// solve_gauss's `colour_count` after the counts and claimed slots (2 GS_COLOURS words):
// whether the stored colouring fails this step's constraint graph (`colour_check`), whether
// this step recolours (`colour_plan`; solve_reduce `colour_rounds_args` reads it), then the
// steps checked and the steps whose colouring was kept.
const GS_GRAPH_DIFFERS: u32 = 2u * GS_COLOURS;
const GS_RECOLOUR: u32 = GS_GRAPH_DIFFERS + 1u;
const GS_STEPS_CHECKED: u32 = GS_GRAPH_DIFFERS + 2u;
const GS_STEPS_KEPT: u32 = GS_GRAPH_DIFFERS + 3u;
// Then the hubs `colour_close` listed (solve_gauss `hub_gather`).
const GS_HUBS: u32 = GS_GRAPH_DIFFERS + 4u;

// Body index of "the world" (no velocity, no mass) on the A side of a joint block.
const WORLD: u32 = 0xffffffffu;

fn is_joint(flags: u32) -> bool {
    return joints_on() && (flags & JOINT_BIT) != 0u;
}

fn joint_mask(flags: u32) -> vec3<f32> {
    return vec3<f32>(f32(flags & 1u), f32((flags >> 1u) & 1u), f32((flags >> 2u) & 1u));
}

// Projection of a joint block's impulse: rows outside the mask stay 0.
fn project_joint(g: vec4<f32>, flags: u32, bound: f32) -> vec4<f32> {
    let m = joint_mask(flags);
    let proj = (flags >> 3u) & 3u;
    var x = g.xyz * m;
    if proj == JOINT_PROJ_LOWER {
        x = max(x, vec3<f32>(0.0));
    } else if proj == JOINT_PROJ_BOX {
        x = clamp(x, vec3<f32>(-bound), vec3<f32>(bound));
    }
    return vec4<f32>(x, 0.0);
}

// Friction coefficient of constraint c (0 for joint blocks, whose ra.w is a bound, and for
// patch blocks, which have no normal row for the exact cone or the Painlevé test).
fn friction_of(c: Contact) -> f32 {
    return select(c.ra.w, 0.0, is_joint(c.ids.w) || is_patch(c));
}

// Patch blocks (book: Contact patches, src/patch/couple.rs): a contact record with feature PATCH_FEATURE
// whose lanes are (spin about n, u, w at the patch centre). Pipeline-overridable: scenes
// without a patch model compile none of this (see common/collide.wgsl, HAS_PATCHES).
override HAS_PATCHES: bool = false;
const PATCH_FEATURE: u32 = 0xffffffffu;
// A lugre_patch (distributed) block: its full 3 × 3 compliance comes from the patch's cells
// (src/patch/stage.rs); the reduced model's blocks (PATCH_FEATURE) have a diagonal one.
const PATCH_FEATURE_DIST: u32 = 0xfffffffeu;

fn is_patch(c: Contact) -> bool {
    return HAS_PATCHES && c.ids.z >= PATCH_FEATURE_DIST && (c.ids.w & JOINT_BIT) == 0u;
}

fn is_dist_patch(c: Contact) -> bool {
    return HAS_PATCHES && c.ids.z == PATCH_FEATURE_DIST && (c.ids.w & JOINT_BIT) == 0u;
}

// The guard ball ‖(γ_x / r, γ_y, γ_z)‖ ≤ radius of a patch block (r = the patch's rb.w).
fn project_patch(g: vec4<f32>, radius: f32, r: f32) -> vec4<f32> {
    let t = length(vec3<f32>(g.x / r, g.yz));
    let k = select(1.0, radius / t, t > radius);
    return vec4<f32>(g.xyz * k, 0.0);
}

// Warm-start key: (A, B, feature) for contacts; (WORLD, 0, block) for joint blocks, which
// sorts them after every contact (A < B ≤ bodies) in block order.
fn warm_key(c: Contact) -> vec3<u32> {
    if is_joint(c.ids.w) {
        return vec3<u32>(WORLD, 0u, c.ids.z);
    }
    return c.ids.xyz;
}
