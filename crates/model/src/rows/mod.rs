//! Contact and friction models as rows of the one CCP solver (book: Contact models, "Models as rows").
//!
//! # The row layout
//!
//! Every constraint the solver sees — a contact today; a joint, a LuGre patch or a shape
//! contact later — is one **row block** of 1–6 scalar rows. A block is described by:
//!
//! * **its record** (the 64-byte `bristlecone_engine::collide::ContactRecord` for contacts): bodies A < B,
//!   normal n, lever arms r_A, r_B, gap Φ, μ in `ra.w`, materials in `ids.w`. The Jacobian is
//!   never stored: rows 0–2 are `[n; u; w]` linear and `[r×n; r×u; r×w]` angular (u, w the
//!   deterministic `tangent_u/tangent_w(n)`); rows 3–5, when present, are angular only
//!   (spin about n, rolling about u and w). Kernels recompute them from the record.
//! * **a model id**, a small integer chosen per material pair (see *Mixing* below), which
//!   selects three things in the kernels, all by a `switch` on the id:
//!   - the **compliance** E of the block (diagonal; up to 3×3 on u, w, spin for patches),
//!     added to N in the product: `(N + E) γ`;
//!   - the **offset** added to the right-hand side p at assembly (and, for the exact cone, at
//!     every outer iteration);
//!   - the **projection** (cone, box, `γ_n ≥ 0` only, none, limit surface).
//! * **its per-row vectors**, in the solver's per-constraint arrays (`gam` γ/y/trial/best,
//!   `nv`, `rhs` = (p, η)): rows 0–2 in the `xyz` lanes of one `vec4` slot at the constraint's
//!   index, so a 3-row block costs exactly what the Coulomb solver always cost. Rows 3–5
//!   live in a second, *extension* slot at the same constraint index, in extra segments of
//!   `gam` and `nv` that exist only when the model table has a rolling or spinning
//!   coefficient (see *Rolling and spinning* below), and every kernel reads them behind the
//!   pipeline constant `HAS_ROLL`: a plain Coulomb pile allocates and reads no extension
//!   slot and never pays for 6 rows (its pipelines do not contain the code). (The first
//!   plan, an exclusive scan over the 6-row blocks, would save memory only in scenes that
//!   mix rolling and non-rolling materials, at the price of one more scan per step and an
//!   indirection in every kernel.) Blocks of 1–2 rows (joint rows,
//!   normal-only contacts) use the lanes they need and leave the rest zero with a zero
//!   projection (the lane stays 0).
//! * **its aux vector** (one `vec4` per constraint, segment 4 of `gam`, so no kernel needs
//!   another binding; written at assembly): x = the
//!   assembled normal offset before any outer correction (p_n of the book's Architecture page, "The step"), y = the current
//!   exact-cone correction s = μ‖u_T‖, z = the normal compliance E_n (compliant contact), w = the tangential
//!   compliance E_T (bristle, tanh, LuGre). Tables with state (tanh, LuGre, the bristle box,
//!   Hunt–Crossley's impact speed, cohesion) add a **state segment** (segment 5 of `gam`,
//!   allocated only then; written at assembly): the contact's projection — its kind, the
//!   disk's radius or the box's half-width, the cone's cohesive shift — encoded as
//!   [`projection`] documents, next to the model's own lanes (LuGre's z for the bristle
//!   update at the save), read by the projections behind the uniform flag `params.model.z`
//!   (`model.w` counts the joint blocks).
//! * **its carried state**: what a model needs from the previous step, found by the contact
//!   key (A, B, feature) exactly like the warm start (sorted keys + binary search) and saved
//!   with it, so checkpoints and snapshots that copy the warm-start buffer resume
//!   bit-identically. The last impulse γ⁻ (all rows) *is* the warm-start impulse: the bristle
//!   model's γ_T⁻ and the last γ_n need no extra state. tanh saves its last slip speed
//!   s⁺ = ‖v_T⁺‖ (from v⁺, after the velocity update) in the `w` lane of the saved impulse;
//!   LuGre saves (γ_n, z_u, z_w, s⁺), elasto-plastic LuGre κ⁺/σ0 in place of s⁺: its
//!   bristle state replaces the tangential impulse (its warm start is the model's
//!   prediction instead). The key's `w` lane is still free.
//!   Contacts that end drop their state with their key.
//!
//! # Mixing (material pairs)
//!
//! A contact between materials a and b uses:
//! * friction μ = min(μ_a, μ_b) (the weaker surface governs; collision writes it into `ra.w`);
//! * the model: the same model on both sides → that model; Coulomb with anything → the other
//!   model; two different non-Coulomb models → the scene is rejected (the scene builder
//!   refuses any scene whose materials use two different non-Coulomb models, since any two
//!   materials may touch);
//! * model parameters of two materials with the same model: stiffnesses in series
//!   (k = k_a k_b / (k_a + k_b); LuGre σ0), dampings likewise (LuGre σ1); coefficients
//!   (Hunt–Crossley α and n; LuGre σ2 and μ_s) and velocities (tanh v_s, LuGre v_s) by min;
//!   LuGre's elasto-plastic break-away ratio by min too, a plain LuGre side counting as 0
//!   (plain LuGre + elasto-plastic LuGre → plain; Coulomb + elasto-plastic → elasto-plastic).
//!   The table holds two `vec4` per material ([`MaterialRow`]): the main row and an
//!   extension (LuGre μ_s, v_s); the elasto-plastic break-away ratio rides in the LuGre id
//!   lane ([`lugre_lane`]).
//!
//! Solved: Coulomb, Kelvin–Voigt and Hunt–Crossley compliant contact, bristle, smooth tanh
//! and point LuGre friction (one file each in `crate::friction`, registered in its
//! `LAWS`); the scene builder validates every
//! parameter with a file:line:field error. The model parameters reach the solver as a
//! per-material table ([`MaterialRow`], set by `Solve::set_models`, empty = all Coulomb);
//! assembly mixes the pair (`pair_model`, `pair_ext`), writes (E_n, E_T) into the aux
//! vector's `zw` lanes and the offsets into p (bristle: the last impulse γ⁻ by key, looked up
//! even without warm start; tanh and LuGre: [`stateful_rows`] from the saved record). The
//! product kernels add diag(E_n, E_T, E_T) γ only when the scene has a non-Coulomb material
//! (a uniform flag `params.model.x`), so a Coulomb scene runs the same reads as before.
//! Compliant and bristle contacts keep the Coulomb cone as projection (a bristle material
//! with `projection = "box"` takes the paper's box |γ_u|, |γ_w| ≤ μ γ_n⁻ instead, see
//! [`MODEL_BRISTLE`]); compliant parameters may be physical quantities ([`compliant`]:
//! Hertz from E and ν, damping from a restitution); tanh and LuGre project on γ_n ≥ 0 and a disk
//! ‖γ_T‖ ≤ r whose radius comes from the last normal impulse, so the friction bound does not
//! couple to the current γ_n (a sliding contact does not lift off as with the relaxed cone;
//! the bound lags unloading by a step). The Painlevé diagnostic counts contacts with rigid
//! tangential rows only (E_T = 0).

//! # Rolling and spinning (rows 3–5; Tasora & Anitescu's rolling-friction CCP)
//!
//! A material's `rolling_friction` μ_r and `spinning_friction` μ_spin (dimensionless, in
//! [0, 1]; table lanes 6 and 7 of [`MaterialRow`], any model) mix by min(a, b) like μ. A
//! contact whose pair has either gets three angular rows, G = [0; ±n], [0; ±u], [0; ±w] on
//! (A, B): the spin and the two rolling torques (impulses), with
//! * **p** = (ω_B − ω_A)·(n, u, w) (free relative angular velocity), no compliance;
//! * **projection**: |γ_spin| ≤ μ_spin r_eff γ_n⁻ and ‖γ_roll‖ ≤ μ_r r_eff γ_n⁻ (an interval
//!   and a disk), with γ_n⁻ the contact's last normal impulse (the saved record's x, found by
//!   key like the warm start; a new contact has no resistance in its first step). The bounds
//!   are lagged, as tanh's disk, rather than coupled to the current γ_n as in Tasora–Anitescu's
//!   cone: the set is then a fixed product of a cone, an interval and a disk, the projection
//!   is exact and each step stays a convex problem on which APGD's estimates hold (Chrono's
//!   multicore solver projects the rolling part after the cone, which is not a projection
//!   on the coupled cone). A steady rolling or resting contact has γ_n⁻ = γ_n; the bound lags
//!   a change of load by one step;
//! * **r_eff** = r_A r_B/(r_A + r_B) with r = the lever arm's length ‖r_A‖, ‖r_B‖ (the sphere
//!   radii for two spheres, the LIGGGHTS / EDEM effective radius); a body with zero inverse
//!   mass (walls, fixed and kinematic boundaries) counts as flat: r_eff = the other side's
//!   ‖r‖, so a sphere on a plane has r_eff = R (Chrono's coefficient with units of length is
//!   μ_r r_eff here);
//! * **scaling**: the 6×6 block B satisfies B ≤ 2 blockdiag(B_lin, B_ang), so the linear rows
//!   take η = 3/(2 (trace B_lin + E)) and the angular ones η_e = 3/(2 trace B_ang) (with
//!   the contacts' count scaling), keeping N ≤ diag(3/η) (Jacobi ω < 2/3, APGD L ≤ 3); a
//!   contact whose bounds are both 0 this step keeps the 3-row η and η_e = 0;
//! * **storage** (HAS_ROLL only): `gam` segments 6–9 = the rows' γ, y, trial, best; 10 =
//!   (p_e, η_e); 11 = (bound spin, bound roll, r_eff, 0); `nv` segments 3–5 = their Nγ, Ny,
//!   N·trial. The rows have no warm start (they start at 0 each step; the saved record is
//!   unchanged, so checkpoints are too) and their residual enters the solver's residual;
//!   the tolerance stays an RMS over 3 rows per constraint.
//!
//! Analytic check: a sphere (I = 2/5 m R²) rolling on a plane under the bound torque μ_r R
//! m g decelerates at a = (5/7) μ_r g; one spinning on its pole under μ_spin R m g about n
//! slows at α = (5/2) μ_spin g / R.

//! # Joints (book: Joints; Peiret et al.; Negrut et al. 2017)
//!
//! A joint (`bristlecone_engine::joints::Joint`) expands into **row blocks** of 1–3 rows, one constraint
//! record each, appended after the step's contacts by the joint stage
//! (`shaders/joints_write.wgsl`): block j is constraint `counts[0] + j`; the solver's
//! constraint count is `counts[0] + params.model.w` (`model.w` = joint blocks, a uniform; 0
//! keeps every joint read out of contact-only scenes). `counts[0]` itself stays the contact
//! count, so contact readers (stats, VTK, `[[measure]]`) see no joint rows; `counts[2]`
//! (needed) includes them, so an overflow regrowth makes room.
//!
//! * **Record**: `ids = (A, B, block j, flags)` with flags = bit 31 (joint) | bit 30
//!   (angular) | lane mask (bits 0–2: rows n, u, w) | projection (bits 3–4: 0 none —
//!   bilateral, 1 γ ≥ 0 — limits and ropes, 2 box |γ| ≤ `ra.w` = F_max dt — motors).
//!   A = `WORLD` (u32::MAX) for a joint to the world (no mass, no velocity). `n_gap.xyz` is
//!   the row frame's n (u, w from `tangent_u/w(n)` as for contacts), `n_gap.w = 0` (no
//!   penetration); `ra`, `rb` the lever arms to B's anchor from both centres (linear rows;
//!   exact for axes fixed in A: d/dt[(P_B − P_A)·a] = aᵀ(v_B + ω_B×r_B − v_A − ω_A×r_A) with
//!   r_A = P_B − x_A). Linear rows: G = the contact's [t; r×t]; angular rows: [0; ±t].
//! * **Kinds** (`joints::BlockKind`): point (3 linear rows; n along the line between the
//!   centres, so that for spheres the rows are principal directions of N_ii), point ⟂ axis
//!   (prismatic: rows u, w ⟂ the slide axis), angle 3 (fixed orientation, error 2 vec(q_B q_A⁻¹)),
//!   angle 2 (hinge: z axes aligned, error (a_A × a_B)·u, w), angle 1 (universal: x_A ⟂ y_B),
//!   distance (n from B's anchor to A's, C = L − |d|; rope: γ ≥ 0), linear/angular limits
//!   (C = x − lower or upper − x, γ ≥ 0), linear/angular motors (box-projected). A revolute
//!   joint is point + angle 2 (+ 2 limit rows + motor); prismatic = point ⟂ + angle 3;
//!   fixed = point + angle 3; universal = point + angle 1; spherical = point.
//! * **Right-hand side**: p = offset + G v* (Negrut et al. 2017, eq. 8: b = g/dt + ∂g/∂t + Gᵀv*). The
//!   joint stage writes the offset into `rhs[i].xyz` before assembly: **drift
//!   stabilisation** C/dt clamped to ±`recovery_speed` for bilateral rows (the whole position
//!   error is removed in one step unless it would need more than the recovery speed — the
//!   contacts' max(Φ/dt, −v_rec) made two-sided), max(C/dt, −v_rec) for unilateral rows (a
//!   limit or rope acts only when the step would cross it, like a contact with gap C);
//!   motors: −v_target (velocity) or (x − x_target)/dt (position, i.e. reach the target in
//!   one step if the force limit allows). Hinge angles are in (−π, π] (no turn counting).
//! * **Scaling**: per row, η_k = 3/(k B_kk) for a block of k rows (B_ii count-scaled as for
//!   contacts, counts include joint blocks). B ≤ k diag(B) for a PSD k×k block, so the
//!   contacts' bound N ≤ diag(3/η) and with it Jacobi's ω < 2/3 and APGD's L ≤ 3 hold; η_0
//!   is `rhs.w`, η_1, η_2 `aux.zw` (joint blocks have no compliance), read by `row_eta`.
//! * **Gather**: joint blocks are not in collision's CSR; a static second list per body
//!   (`jcsr`, offsets then entries block·2 + side), built once on the CPU, is summed after
//!   the contacts (fixed order: deterministic).
//! * **Warm start**: key (WORLD, 0, j) — after every contact key, in block order, so the
//!   saved keys stay sorted for the binary search; checkpoints and snapshots copy it with
//!   the contacts'.
//! * **Conditioning** (measured): a spherical pendulum converges in ≤ 6 APGD sweeps per step;
//!   a revolute with a small bob (r/L = 0.1) does not reach 1e-6 m/s in 100 sweeps — its
//!   hinge rows and point rows both act on the bob's rotation (κ ≈ 1000 after scaling);
//!   a block (3×3) preconditioner would not remove that cross-block coupling either.
//!   A 100-link chain released at rest needs ~600 sweeps the first step, then ≤ 170 and soon
//!   0–20 with the warm start.
//!
//! # The cone (Coulomb without lift-off)
//!
//! [`Cone::Relaxed`] is Tasora & Anitescu 2011's convex CCP: a sliding contact separates at μ‖v_T‖.
//! [`Cone::Exact`] solves a short sequence of warm-started cone problems whose normal offset
//! is p_n + s with s = μ‖u_T‖ from the previous solution, u = Nγ + p (De Saxcé's change of
//! variables; the fixed point of Acary & Cadoux). At the fixed point u + s e_n ∈ K* and ⟂ γ,
//! i.e. u_n = 0 while sliding: the exact Coulomb law. The first offset comes from the
//! warm-started γ⁰, so a steady slide is usually at its fixed point after one or two cone
//! problems. Outer iterations stop when no contact's s changed by more than the solver
//! tolerance, when a cone problem hit the sweep cap (its error then hides a better offset;
//! the warm start carries the offset to the next step, so the fixed point is iterated in
//! time), or at `max_outer`; the count is reported per step (stats.csv `outer_iterations`).
//!
//! An offset larger than μ‖u_T‖ of the problem's solution lets the contact sink by the
//! excess times dt (a sticking contact solves u_n = −s). A contact still approaching at the
//! current γ (u_n < 0 with the uncorrected p_n) will take at least the normal impulse −u_n/N_nn
//! that stops it, and that impulse's friction can take μ (N_TT/N_nn)(−u_n) off its slip (N_dd:
//! the block's diagonal along d), so s counts only the slip left after that: a grain that lands
//! with a tangential speed does not start from μ times it. At the fixed point u_n = 0 and
//! the bound leaves s = μ‖u_T‖.
//!
//! Gauss–Seidel's visits take each contact's offset from its own slip as they go (the
//! shader's `follow_slip`), so a step that ends at the sweep cap keeps offsets at most a
//! sweep old.
//!
//! **Why relaxed stays the default** (`benches/exact_cone.sh`, lavapipe, one run): a sphere
//! launched at 2 m/s with μ = 0.3 rises 0.21 r with the relaxed cone and 0 with the exact one
//! (`tests/physics.rs`) — for few-body and sliding scenes use `cone = "exact"`. With
//! Gauss–Seidel the exact cone costs 1.10–1.13× the relaxed one on the default scene and the
//! hopper and sinks 1.03–1.19× as deep; with APGD (the default solver), whose capped steps
//! keep the warm start's offsets, grains sink 28–29× deeper. The default cap is 2.

use crate::friction::FrictionModel;

pub mod compliant;
pub mod projection;

pub use projection::Projection;

/// The cone the solver projects friction onto.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Cone {
    /// Seed 001's relaxed cone: one convex problem; sliding contacts lift off at μ‖v_T‖.
    #[default]
    Relaxed,
    /// Exact Coulomb by the De Saxcé / Acary–Cadoux fixed point (a few cone problems).
    Exact,
}

/// Model ids of the row kernels (see the module docs), each declared in its model's file.
pub use crate::friction::bristle::MODEL_BRISTLE;
pub use crate::friction::coulomb::MODEL_COULOMB;
pub use crate::friction::hunt_crossley::MODEL_HUNT_CROSSLEY;
pub use crate::friction::kelvin_voigt::MODEL_COMPLIANT;
use crate::friction::layout;
pub use crate::friction::lugre::{breakaway_ratio, lugre_lane, MODEL_LUGRE};
pub use crate::friction::lugre_patch::{patch_kind, MODEL_LUGRE_PATCH, MODEL_LUGRE_REDUCED};
pub use crate::friction::tanh::MODEL_TANH;

/// The table row of a material's model ([`FrictionModel::material_row`]).
pub fn material_row(model: &FrictionModel) -> MaterialRow {
    model.material_row()
}

/// A material's row in the model table; the registry writes it (`crate::friction`).
pub use crate::friction::MaterialRow;

/// Whether a model table needs the per-contact state segment (tanh, LuGre: the disk radius of
/// their projection and LuGre's z, dt; Hunt–Crossley with restitution: the impact speed v₀).
pub fn has_state(rows: &[MaterialRow]) -> bool {
    rows.iter().any(|r| layout(r).state) || has_cohesion(rows)
}

/// Whether a model table has a compliant normal row (Kelvin–Voigt or Hunt–Crossley, from
/// parameters or physical quantities): its contacts penetrate by design.
pub fn has_compliant_normal(rows: &[MaterialRow]) -> bool {
    rows.iter().any(|r| layout(r).compliant_normal)
}

/// Whether a model table has a patch model (collision emits patch records; the solver
/// pipelines are built with `HAS_PATCHES`).
pub fn has_patches(rows: &[MaterialRow]) -> bool {
    rows.iter().any(|r| layout(r).patch > 0)
}

/// A material row with its rolling and spinning coefficients (lanes 6 and 7; see
/// *Rolling and spinning*).
pub fn with_rolling(mut row: MaterialRow, rolling: f64, spinning: f64) -> MaterialRow {
    row[6] = rolling as f32;
    row[7] = spinning as f32;
    row
}

/// Cohesion (Chrono's NSC cohesion, Tasora et al. 2021, *Project Chrono*): a pull-off force
/// F_c per contact shifts the normal cone to γ_n ≥ −F_c dt, the projection being
/// Π(γ + F_c dt e_n) − F_c dt e_n, so a contact holds up to F_c in tension before it opens and
/// its friction bound is μ (γ_n + F_c dt). F_c = F_0 + 3/2 π W r_eff: a constant F_0 (N,
/// table lane 3) plus the JKR pull-off of two spheres of effective radius r_eff with work of
/// adhesion W (J/m², lane 4; Johnson, Kendall & Roberts 1971), r_eff as for rolling
/// resistance ([`rolling_radius`]). Lanes 3 and 4 are free in the rows of Coulomb and
/// Kelvin–Voigt materials, the two that take cohesion; a pair takes min(F_0) (Chrono's
/// default composition) and √(W_a W_b) (the geometric mean, Israelachvili's combining rule
/// for the work of adhesion), and a pair with any other model has none. A table with
/// cohesion has the state segment, whose `y` lane carries each cone contact's F_c dt from
/// assembly to the projections (`project_i` in `shaders/common/solve_sweep.wgsl`).
pub fn with_cohesion(mut row: MaterialRow, cohesion: f64, adhesion_energy: f64) -> MaterialRow {
    if cohesive_model(&row) {
        row[3] = cohesion as f32;
        row[4] = adhesion_energy as f32;
    }
    row
}

/// 3/2 π: the JKR pull-off force of two spheres is 3/2 π W r_eff.
pub const JKR_PULL_OFF: f64 = 1.5 * std::f64::consts::PI;

/// Whether a material's model takes cohesion (its lane 3 is free): Coulomb, Kelvin–Voigt.
fn cohesive_model(row: &MaterialRow) -> bool {
    layout(row).cohesive
}

/// The pair's (F_0 in N, W in J/m²) (`pair_cohesion` in `solve_assemble.wgsl`).
pub fn pair_cohesion(a: MaterialRow, b: MaterialRow) -> [f64; 2] {
    if cohesive_model(&a) && cohesive_model(&b) {
        [a[3].min(b[3]) as f64, ((a[4] * b[4]) as f64).sqrt()]
    } else {
        [0.0; 2]
    }
}

/// A contact's pull-off force F_c = F_0 + 3/2 π W r_eff (N).
pub fn pull_off(pair: [f64; 2], r_eff: f64) -> f64 {
    pair[0] + JKR_PULL_OFF * pair[1] * r_eff
}

/// Whether a model table has cohesion (then the state segment exists).
pub fn has_cohesion(rows: &[MaterialRow]) -> bool {
    rows.iter()
        .any(|r| cohesive_model(r) && (r[3] > 0.0 || r[4] > 0.0))
}

/// Whether a model table has rolling or spinning resistance (the HAS_ROLL pipelines and the
/// extension segments).
pub fn has_rolling(rows: &[MaterialRow]) -> bool {
    rows.iter().any(|r| r[6] > 0.0 || r[7] > 0.0)
}

/// The pair's (μ_r, μ_spin): each by min (`pair_rolling` in `solve_assemble.wgsl`).
pub fn pair_rolling(a: MaterialRow, b: MaterialRow) -> [f64; 2] {
    [(a[6].min(b[6])) as f64, (a[7].min(b[7])) as f64]
}

/// The effective rolling radius from the lever-arm lengths: r_A r_B/(r_A + r_B), a body with
/// zero inverse mass counting as flat (`rolling_radius` in the shader).
pub fn rolling_radius(la: f64, lb: f64, a_fixed: bool, b_fixed: bool) -> f64 {
    if a_fixed {
        lb
    } else if b_fixed {
        la
    } else if la + lb > 0.0 {
        la * lb / (la + lb)
    } else {
        0.0
    }
}

/// The bounds (spin, roll) of a contact's rows 3–5: μ_spin r_eff γ_n⁻ and μ_r r_eff γ_n⁻.
pub fn rolling_bounds(coef: [f64; 2], r_eff: f64, gn_last: f64) -> [f64; 2] {
    let g = gn_last.max(0.0) * r_eff;
    [coef[1] * g, coef[0] * g]
}

/// Projection of rows 3–5 (spin, roll u, roll w) on |γ_s| ≤ b_spin, ‖γ_r‖ ≤ b_roll.
pub fn project_rolling(g: [f64; 3], bounds: [f64; 2]) -> [f64; 3] {
    let t = (g[1] * g[1] + g[2] * g[2]).sqrt();
    let k = if t > bounds[1] { bounds[1] / t } else { 1.0 };
    [g[0].clamp(-bounds[0], bounds[0]), g[1] * k, g[2] * k]
}

/// Two springs (or dampers) in series: x y / (x + y), 0 when both are 0.
pub fn series(x: f64, y: f64) -> f64 {
    if x + y > 0.0 {
        x * y / (x + y)
    } else {
        0.0
    }
}

/// A pair's model: (id, k, c or α, exponent n).
pub type PairModel = (u32, f64, f64, f64);

/// The mixed model of a material pair (see *Mixing*): (model id, k, c). The solver's shader
/// `pair_model` in `solve_assemble.wgsl` is the same rule in f32. Two different non-Coulomb
/// models never meet (the scene builder rejects such scenes); they would give Coulomb.
pub fn pair_model(a: MaterialRow, b: MaterialRow) -> PairModel {
    let f = |r: MaterialRow| (r[0] as u32, r[1] as f64, r[2] as f64, r[3] as f64);
    let ((ia, ka, ca, na), (ib, kb, cb, nb)) = (f(a), f(b));
    if ia == ib && ia != MODEL_COULOMB {
        // Hunt–Crossley: α and n are coefficients (by min); dampings c in series; tanh's
        // slip velocity by min; LuGre: σ0, σ1 in series, σ2 by min.
        let c = if ia == MODEL_HUNT_CROSSLEY {
            ca.min(cb)
        } else {
            series(ca, cb)
        };
        let k = if ia == MODEL_TANH {
            ka.min(kb)
        } else {
            series(ka, kb)
        };
        (ia, k, c, na.min(nb))
    } else if ib == MODEL_COULOMB {
        (ia, ka, ca, na)
    } else if ia == MODEL_COULOMB {
        (ib, kb, cb, nb)
    } else {
        (MODEL_COULOMB, 0.0, 0.0, 0.0)
    }
}

/// The mixed extension parameters of a pair (LuGre: μ_s, v_s, break-away ratio, 0): the
/// model's side, each by min when both materials have the model (so a plain LuGre side,
/// ratio 0, makes the pair plain) — the same rule as `pair_ext` in `solve_assemble.wgsl`.
pub fn pair_ext(a: MaterialRow, b: MaterialRow) -> [f64; 4] {
    let (ia, ib) = (a[0] as u32, b[0] as u32);
    let e = |r: MaterialRow| [r[4] as f64, r[5] as f64, breakaway_ratio(r), 0.0];
    if ia == ib {
        let (x, y) = (e(a), e(b));
        [0, 1, 2, 3].map(|k| x[k].min(y[k]))
    } else if ib == MODEL_COULOMB {
        e(a)
    } else {
        e(b)
    }
}

/// Tangential rows of a stateful friction model: compliance E_T, offset added to p_T, the
/// projection, the state kept at assembly for the save (LuGre: z) and the warm start of the
/// tangential impulse.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TangentRows {
    pub e_t: f64,
    pub offset: [f64; 2],
    /// γ_n ≥ 0 and the disk ‖γ_T‖ ≤ radius (not coupled to the current γ_n, so a sliding
    /// contact does not lift off as with the relaxed cone).
    pub projection: Projection,
    pub state: [f64; 2],
    pub warm_t: [f64; 2],
}

/// Tanh and LuGre rows (see [`MODEL_TANH`], [`MODEL_LUGRE`]) from the contact's saved record
/// `last` = (γ_n⁻, y, z, s⁻) (zeros for a new contact), its μ, the free tangential velocity
/// `vt` and dt. Other models: None. The shader's `stateful_rows` is the same in f32.
pub fn stateful_rows(
    model: PairModel,
    ext: [f64; 4],
    mu: f64,
    last: [f64; 4],
    vt: [f64; 2],
    dt: f64,
) -> Option<TangentRows> {
    let (id, k, c, n) = model;
    let gn = last[0];
    let s = last[3];
    if id == MODEL_TANH {
        let (e_t, radius) = if mu * gn > 0.0 && k > 0.0 {
            let x = s / k;
            let e = if x > 1e-4 {
                s / (mu * gn * x.tanh())
            } else {
                k / (mu * gn)
            };
            (e, mu * gn)
        } else {
            (0.0, 0.0)
        };
        return Some(TangentRows {
            e_t,
            offset: [0.0; 2],
            projection: Projection::Disk { radius },
            state: [0.0; 2],
            warm_t: [last[1], last[2]],
        });
    }
    if id != MODEL_LUGRE {
        return None;
    }
    let (s0, s1, s2) = (k, c, n);
    let mu_s = ext[0];
    let a = lugre_relax(model, ext, mu, s, dt);
    let z = [last[1], last[2]];
    let big = s0 + s1 / dt;
    let c1 = big * a * dt + s2;
    let f0 = big * a - s1 / dt;
    let c0 = [f0 * z[0], f0 * z[1]];
    let vn = (vt[0] * vt[0] + vt[1] * vt[1]).sqrt();
    let (e_t, offset, radius, warm_t) = if gn > 0.0 {
        (
            1.0 / (gn * c1),
            [c0[0] / c1, c0[1] / c1],
            (2.0 * mu_s + (s1 + s2) * vn) * gn,
            [-gn * (c0[0] + c1 * vt[0]), -gn * (c0[1] + c1 * vt[1])],
        )
    } else {
        (0.0, [0.0; 2], 0.0, [0.0; 2])
    };
    Some(TangentRows {
        e_t,
        offset,
        projection: Projection::Disk { radius },
        state: z,
        warm_t,
    })
}

/// The frozen relaxation factor a = 1/(1 + dt κ) of a LuGre step from the record's `w`
/// lane: plain, w = s⁻ and κ = σ0 s⁻/g(s⁻); elasto-plastic (ext[2] > 0), w = κ/σ0.
fn lugre_relax(model: PairModel, ext: [f64; 4], mu: f64, w: f64, dt: f64) -> f64 {
    let (num, den) = if ext[2] > 0.0 {
        (1.0, 1.0 + dt * model.1 * w)
    } else {
        let g = stribeck(mu, ext[0], ext[1], w);
        (g, g + dt * model.1 * w)
    };
    if den > 0.0 {
        num / den
    } else {
        1.0
    }
}

/// κ/σ0 at the save: s/g(s), times the elasto-plastic β(z⁻, z_ss, v⁺) ([`crate::elasto_plastic::beta`],
/// z_ss = g(s)/σ0) when `ext[2]` = the break-away ratio > 0.
pub fn lugre_rate(model: PairModel, ext: [f64; 4], mu: f64, z: [f64; 2], vt: [f64; 2]) -> f64 {
    let s = (vt[0] * vt[0] + vt[1] * vt[1]).sqrt();
    let g = stribeck(mu, ext[0], ext[1], s);
    let b = if ext[2] > 0.0 {
        crate::elasto_plastic::beta(&z, &[g / model.1], &vt, ext[2])
    } else {
        1.0
    };
    b * s / g
}

/// LuGre's Stribeck curve g(s) = μ_c + (μ_s − μ_c) exp(−(s/v_s)²) (exponent 2).
pub fn stribeck(mu_c: f64, mu_s: f64, v_s: f64, s: f64) -> f64 {
    let r = s / v_s;
    mu_c + (mu_s - mu_c) * (-r * r).exp()
}

/// The record a contact saves for the next step (the warm-start impulse slot): γ as is for
/// the models without state; tanh adds its slip speed s⁺ = ‖v_T⁺‖ in `w`; LuGre saves
/// (γ_n, z⁺, s⁺) with z⁺ = (z + dt v_T⁺)/(1 + dt σ0 s⁺/g(s⁺)), the bristle update implicit
/// in the now known v⁺ (the step's force froze κ at s⁻; with κ at s⁻ here too the state lags
/// a decelerating slide by one step, which settles low-speed sliding ~10× slower at dt =
/// 1e-3). `state` = the model's lanes kept at assembly (LuGre: z; Hunt–Crossley: v₀); `mu`
/// the contact's μ (= μ_c); `dt` the step's.
pub fn saved_record(
    model: PairModel,
    ext: [f64; 4],
    mu: f64,
    gamma: [f64; 3],
    state: [f64; 2],
    vt: [f64; 2],
    dt: f64,
) -> [f64; 4] {
    let s = (vt[0] * vt[0] + vt[1] * vt[1]).sqrt();
    match model.0 {
        MODEL_TANH => [gamma[0], gamma[1], gamma[2], s],
        // Hunt–Crossley with restitution: the impact speed v₀ kept at assembly (0 otherwise).
        MODEL_HUNT_CROSSLEY => [gamma[0], gamma[1], gamma[2], state[0]],
        MODEL_LUGRE => {
            // Plain: w = s⁺; elasto-plastic: w = κ⁺/σ0 (β at z⁻ and v⁺).
            let w = if ext[2] > 0.0 {
                lugre_rate(model, ext, mu, [state[0], state[1]], vt)
            } else {
                s
            };
            let a = lugre_relax(model, ext, mu, w, dt);
            [
                gamma[0],
                a * (state[0] + dt * vt[0]),
                a * (state[1] + dt * vt[1]),
                w,
            ]
        }
        _ => [gamma[0], gamma[1], gamma[2], 0.0],
    }
}

/// The box of half-width μ γ_n⁻ of a box-projected bristle contact (`projection = "box"`:
/// table lane 3 = 1, Peiret et al.'s |γ_u|, |γ_w| ≤ μ γ_n⁻ with γ_n⁻ the last normal impulse);
/// None for the others. `assemble` in `solve_assemble.wgsl`.
pub fn bristle_box(model: PairModel, mu: f64, gn_last: f64) -> Option<Projection> {
    (model.0 == MODEL_BRISTLE && model.3 > 0.0).then(|| Projection::Box {
        half_width: mu * gn_last.max(0.0),
    })
}

/// The box projection: γ_n ≥ 0 and each tangential component in [−b, b].
pub fn project_box(g: [f64; 3], b: f64) -> [f64; 3] {
    [g[0].max(0.0), g[1].clamp(-b, b), g[2].clamp(-b, b)]
}

/// Tangential compliance E_T of a contact (bristle: 1/(k_b dt²); else 0).
pub fn tangent_compliance(model: PairModel, dt: f64) -> f64 {
    let (id, k, _, _) = model;
    if id == MODEL_BRISTLE && k > 0.0 {
        1.0 / (k * dt * dt)
    } else {
        0.0
    }
}

/// The normal offset of a rigid (Coulomb) contact, `rigid_offset` in the shader: a gap Φ ≥ 0
/// closes in one step (Φ/dt); a penetration deeper than the slop s is recovered at the rate
/// β/dt, capped at the recovery speed: max(β min(Φ + s, 0)/dt, −v_recover). With s = 0 and
/// β = 1 this is the classic max(Φ/dt, −v_recover). A resting contact settles inside the band
/// −s ≤ Φ < 0, where the f32 jitter of positions (~1e-8 m, i.e. ~1e-5 m/s through 1/dt) no
/// longer reaches the right-hand side, so a warm-started settled bed converges in a few sweeps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RigidOffset {
    pub v_recover: f64,
    /// s (m), ≥ 0.
    pub slop: f64,
    /// β in (0, 1].
    pub beta: f64,
}

impl RigidOffset {
    /// The classic offset max(Φ/dt, −v_recover) (no slop, β = 1).
    pub fn plain(v_recover: f64) -> Self {
        RigidOffset {
            v_recover,
            slop: 0.0,
            beta: 1.0,
        }
    }

    pub fn offset(&self, phi: f64, dt: f64) -> f64 {
        if phi >= 0.0 {
            phi / dt
        } else {
            (self.beta * (phi + self.slop).min(0.0) / dt).max(-self.v_recover)
        }
    }
}

/// Compliance E_n and normal stabilisation offset of a contact with gap `phi` (f64; the
/// shader's `normal_rows` is the same in f32). Coulomb: (0, [`RigidOffset::offset`]).
/// Kelvin–Voigt: the implicit force F = −k Φ⁺ − c v_n⁺ with Φ⁺ = Φ + dt v_n⁺ gives, for the
/// impulse γ_n = dt F, v_n⁺ + E_n γ_n + Φ/(dt + c/k) = 0, E_n = 1/(dt² k + dt c). A contact
/// still open (Φ > 0) keeps the rigid gap closing Φ/dt so that no force acts before touching.
/// Hunt–Crossley: see [`MODEL_HUNT_CROSSLEY`]; E_n = ∞ means no force this step (η = 0).
pub fn normal_rows(model: PairModel, phi: f64, dt: f64, rigid: RigidOffset) -> (f64, f64) {
    let (id, k, c, n) = model;
    if id == MODEL_COMPLIANT && k > 0.0 {
        let e = 1.0 / (dt * dt * k + dt * c);
        let stab = if phi > 0.0 {
            phi / dt
        } else {
            phi / (dt + c / k)
        };
        (e, stab)
    } else if id == MODEL_HUNT_CROSSLEY && k > 0.0 {
        if phi > 0.0 {
            // Open: no force before touching (whatever n).
            return (f64::INFINITY, 0.0);
        }
        let d0 = -phi;
        let (f0, k1, c1) = (
            k * d0.powf(n),
            n * k * d0.powf(n - 1.0),
            1.5 * c * k * d0.powf(n),
        );
        if dt * k1 + c1 > 0.0 {
            (1.0 / (dt * dt * k1 + dt * c1), -f0 / (dt * k1 + c1))
        } else {
            (f64::INFINITY, 0.0)
        }
    } else {
        (0.0, rigid.offset(phi, dt))
    }
}

/// Material indices (A, B) packed in a contact record's `ids.w`.
pub fn contact_materials(ids_w: u32) -> (usize, usize) {
    ((ids_w >> 16) as usize, (ids_w & 0xffff) as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every compliant normal model, in parameters or physical quantities, is one; friction
    /// models with a rigid normal row are not (the run's penetration warning relies on it).
    #[test]
    fn compliant_normal_rows_are_recognised() {
        let compliant = [
            FrictionModel::Compliant {
                stiffness: 1e6,
                damping: 10.0,
            },
            FrictionModel::CompliantRestitution {
                stiffness: 1e6,
                restitution: 0.5,
            },
            FrictionModel::HuntCrossley {
                stiffness: 1e8,
                exponent: 1.5,
                damping: 0.2,
            },
            FrictionModel::HuntCrossleyHertz {
                youngs_modulus: 1e8,
                poisson_ratio: 0.3,
                restitution: 0.5,
            },
        ];
        for m in &compliant {
            let rows = [material_row(&FrictionModel::Coulomb), material_row(m)];
            assert!(has_compliant_normal(&rows), "{m:?}");
        }
        let rigid = [
            FrictionModel::Coulomb,
            FrictionModel::Bristle { stiffness: 1e4 },
            FrictionModel::Tanh {
                slip_velocity: 1e-3,
            },
        ];
        let rows: Vec<MaterialRow> = rigid.iter().map(material_row).collect();
        assert!(!has_compliant_normal(&rows));
    }
}
