//! The solver's choices: which solver runs ([`SolverKind`]) with which settings
//! ([`SolverSettings`]), the coloured Gauss–Seidel's colour and round counts, and where an
//! exact Lemke step runs ([`LemkeStep`]). The GPU solver and its CPU twins read them alike.

use crate::contact::BoundaryShape;
use crate::defaults;
use crate::rows::Cone;

/// The contact record of the contract (64 bytes), as collision writes it and the solver reads it.
pub use crate::contact::ContactRecord as Contact;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SolverKind {
    Jacobi,
    Apgd,
    /// Coloured nonsmooth Gauss–Seidel with over-relaxation ω (`omega`): the engine's
    /// `solve::gauss`.
    GaussSeidel,
}

/// APGD, or Gauss–Seidel with the feature `gauss-seidel-default`
/// ([`defaults::GAUSS_SEIDEL_IS_DEFAULT`]).
impl Default for SolverKind {
    fn default() -> Self {
        if defaults::GAUSS_SEIDEL_IS_DEFAULT {
            SolverKind::GaussSeidel
        } else {
            SolverKind::Apgd
        }
    }
}

impl SolverKind {
    /// `omega` when the scene or the user leaves it out: the Jacobi relaxation, or
    /// Gauss–Seidel's over-relaxation (APGD reads none).
    pub fn default_omega(self) -> f64 {
        match self {
            SolverKind::GaussSeidel => defaults::GAUSS_SEIDEL_OMEGA,
            _ => defaults::OMEGA,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SolverSettings {
    pub kind: SolverKind,
    /// Sweeps recorded per solve (each one matrix-free product).
    pub max_iterations: u32,
    /// Tolerance on the RMS per row of the residual r = (γ − Π_K(γ − η ∘ ∇f))/η, i.e.
    /// ‖r‖₂ / √(3 · contacts), in m/s: the typical velocity error a contact row is left with.
    /// Per row, so it means the same for 10 contacts and for 10⁶ (an absolute 2-norm grows
    /// with √contacts and a large settled bed never meets it at the f32 floor).
    pub tolerance: f32,
    /// Jacobi relaxation ω: the step is ω η_i with η_i = 3/trace(B_ii) (contact-count scaled,
    /// see `solve_assemble.wgsl`), convergent for every ω < 2/3.
    pub omega: f32,
    /// Cap on the penetration recovery speed: the stabilisation term is max(Φ/dt, −v).
    pub recovery_speed: f32,
    /// Penetration slop s (m) and stabilisation factor β of rigid contacts: the offset of a
    /// penetration is β min(Φ + s, 0)/dt (see [`crate::rows::RigidOffset`]); 0 and 1: the classic.
    pub slop: f32,
    pub stabilisation: f32,
    pub warm_start: bool,
    /// Relaxed (Tasora & Anitescu 2011) or exact Coulomb cone (see [`crate::rows`]).
    pub cone: Cone,
    /// Exact cone: cone problems per step at most (each up to `max_iterations` sweeps).
    pub max_outer: u32,
    /// Gauss–Seidel's slab correction: the height (m) of the horizontal slabs of its coarse
    /// level; 0: none (book: Solver depth, "The slab correction on the GPU").
    pub coarse_slab: f32,
}

impl Default for SolverSettings {
    fn default() -> Self {
        let kind = SolverKind::default();
        SolverSettings {
            kind,
            max_iterations: defaults::MAX_ITERATIONS,
            tolerance: defaults::TOLERANCE as f32,
            omega: kind.default_omega() as f32,
            recovery_speed: defaults::RECOVERY_SPEED as f32,
            slop: 0.0,
            stabilisation: defaults::STABILISATION as f32,
            warm_start: defaults::WARM_START,
            cone: Cone::default(),
            max_outer: defaults::MAX_OUTER,
            coarse_slab: 0.0,
        }
    }
}

/// Colours a sweep visits; the last is the class of constraints the colouring left over
/// (shaders/common/solve.wgsl `GS_COLOURS`). Each is a dispatch per sweep, empty or not: a
/// sphere pack's contact graph (a constraint shares its two grains with ~20 others) takes 6–8
/// colours with the smallest free colour chosen.
pub const GS_COLOURS: u32 = 16;
/// Gauss–Seidel's momentum restarts when a sweep's residual is above this many times the
/// lowest since its last restart (shaders/common/solve.wgsl `GS_MOMENTUM_RISE`): the sign of a
/// diverging momentum, which over-relaxed steps (ω > 1) can give; a residual that merely
/// oscillates while it converges stays below it.
pub const GS_MOMENTUM_RISE: u32 = 2;
/// Constraints (contacts and joint blocks) from which a moving body is a hub for Gauss–Seidel
/// (shaders/common/solve.wgsl `GS_HUB_CONSTRAINTS`): it links nothing in the colouring and its
/// mass is split over its constraints (a drum, a slab under a bed, a large grain among fine
/// ones). Twice the colours: a box in a wall (4 neighbours × 4 manifold points) keeps its
/// constraints linked, where splitting its share 16 ways, among neighbours of its own mass,
/// made every step of a brick wall a damped Jacobi step.
pub const GS_HUB_CONSTRAINTS: u32 = 2 * GS_COLOURS;
/// Jones–Plassmann rounds recorded per solve; what is left uncoloured after them joins the
/// left-over class.
pub const COLOUR_ROUNDS: u32 = 24;

/// Where a Lemke step runs (`[solver] lemke_step`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LemkeStep {
    /// The CPU for at most [`CPU_STEP_MAX_BODIES`] bodies and no mesh boundary, else the GPU.
    #[default]
    Auto,
    /// Everything on the CPU (the engine's `step::lemke_cpu`).
    Cpu,
    /// Free velocity, collision and positions on the GPU; the solve on the CPU.
    Gpu,
}

/// Most bodies (boundaries included) for which `Auto` steps on the CPU. The twin's collision
/// tests all pairs below 2048 grains; at 256 bodies that is 33 k pair tests (~0.1 ms), well
/// below one GPU round trip on lavapipe, while the Lemke solve of such a pile (hundreds of
/// contacts, dense pivoting) costs far more than either. Mesh boundaries go to the GPU: the
/// twin rebuilds a mesh's topology and tests every triangle each step.
pub const CPU_STEP_MAX_BODIES: u32 = 256;

impl LemkeStep {
    /// Whether this choice steps `bodies` bodies with boundaries `shapes` on the CPU.
    pub fn on_cpu(self, bodies: u32, shapes: &[BoundaryShape]) -> bool {
        match self {
            LemkeStep::Cpu => true,
            LemkeStep::Gpu => false,
            LemkeStep::Auto => {
                bodies <= CPU_STEP_MAX_BODIES
                    && !shapes
                        .iter()
                        .any(|s| matches!(s, BoundaryShape::Mesh { .. }))
            }
        }
    }
}
