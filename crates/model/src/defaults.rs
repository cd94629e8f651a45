//! The one table of solver defaults. The scene file's `[solver]` section
//! (`bristlecone::scene`), `bristlecone_engine::solve::SolverSettings::default` and
//! `bristlecone_engine::reference::lcp::LcpSettings::default` all read their defaults here, so a scene that leaves a key out and an engine user who leaves a field at its
//! default get the same solve; the book's scene reference lists the same values
//! (`tests/docs.rs` checks the table against it).

/// `kind = "gauss_seidel"` in place of `"apgd"` as the solver of a scene that names none (and
/// of `bristlecone_engine::solve::SolverSettings::default`): off, since APGD reaches the
/// tolerance sooner in wall time on the measured scenes (book: Coloured Gauss–Seidel, "Choice
/// of the default"). The crate feature `gauss-seidel-default` turns it on, so that the whole
/// suite runs under Gauss–Seidel: `cargo test --features gauss-seidel-default`.
pub const GAUSS_SEIDEL_IS_DEFAULT: bool = cfg!(feature = "gauss-seidel-default");
/// `max_iterations`: sweeps recorded per solve at most.
pub const MAX_ITERATIONS: u32 = 100;
/// `tolerance`: RMS residual per contact row (m/s) at which a solve stops.
pub const TOLERANCE: f64 = 1e-5;
/// `omega`: the Jacobi relaxation (convergent below 2/3).
pub const OMEGA: f64 = 0.6;
/// `omega` of `kind = "gauss_seidel"`: the over-relaxation of each block's step (< 2).
pub const GAUSS_SEIDEL_OMEGA: f64 = 1.0;
/// `recovery_speed`: cap (m/s) on the speed at which a penetration is pushed out.
pub const RECOVERY_SPEED: f64 = 0.1;
/// `slop` per smallest body radius: the slop scales with the grains, so the engine, which
/// sees no radius in `bristlecone_engine::solve::SolverSettings::default`, defaults to the classic 0.
pub const SLOP_PER_RADIUS: f64 = 1e-4;
/// `stabilisation`: β, the fraction of a penetration beyond the slop pushed out per step.
pub const STABILISATION: f64 = 1.0;
/// `warm_start`: start each solve from the previous step's impulses.
pub const WARM_START: bool = true;
/// `max_outer`: cone problems per step at most with the exact cone.
pub const MAX_OUTER: u32 = 2;
/// `envelope` per smallest body radius: contacts are found when the gap is below it.
pub const ENVELOPE_PER_RADIUS: f64 = 0.05;
/// `compliance` (Lemke): normal compliance 1/k in m/N; 0 is rigid.
pub const COMPLIANCE: f64 = 0.0;
/// `friction_directions` (Lemke, pyramid): directions of the friction polygon.
pub const FRICTION_DIRECTIONS: u32 = 8;
