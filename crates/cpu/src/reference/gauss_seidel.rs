//! The f64 twin of the GPU's coloured Gauss–Seidel (`shaders/solve_gauss.wgsl`,
//! the engine's `solve::gauss`): the same colouring (Jones–Plassmann rounds with the same
//! priorities, the smallest colour free among the neighbours, the same round budget and
//! left-over class), the same block step in the metric of the block's diagonal, the same
//! order of colours and the residual taken after each sweep from the bodies' Δv. It runs inside the
//! twin's solve (`reference::solve`, `settings.kind = GaussSeidel`): assembly, warm start,
//! the exact cone's outer loop and the velocity update are the twin's own. A contact's
//! rolling and spinning rows 3–5, which the twin holds as constraints of their own after the
//! records, share their contact's colour and take their own block step (the GPU steps them
//! in the contact's visit). Patch blocks (rows spin, u, w) step like contacts, with the
//! majorant in their guard ball's metric and, for lugre_patch blocks, the full E. Hub bodies
//! (moving bodies of [`HUB_CONSTRAINTS`] or more constraints) link nothing in the colouring
//! and take their Δv from a gather after each sweep.

use super::integrate::Body64;
use super::solve::{inv_inertia, project_cone, solve_with_method, Extra, Schur, SolveOutput};
use super::solve::{SweepMethod, Sweeps, Vec3, WarmStart};
use crate::model::solver::{Contact, SolverSettings, COLOUR_ROUNDS, GS_COLOURS, GS_MOMENTUM_RISE};
use glam::DVec3;

/// The left-over class (the last colour).
const LEFT_OVER: u32 = GS_COLOURS - 1;
/// Projected Jacobi's safe relaxation with the count-scaled η, for the left-over class.
const JACOBI_OMEGA: f64 = 0.6;

/// PCG's output permutation of an index (`hash_index` in the shader).
pub fn hash_index(i: u32) -> u32 {
    let s = i.wrapping_mul(747_796_405).wrapping_add(2_891_336_453);
    let w = ((s >> ((s >> 28) + 4)) ^ s).wrapping_mul(277_803_737);
    (w >> 22) ^ w
}

/// Constraint a's priority over b in the colouring: a constraint on a hub (a moving body with
/// [`HUB_CONSTRAINTS`] or more constraints) yields to every other, so that the hub's
/// constraints take the colours the grains leave (`priority_beats` in the shader); then the
/// hash of the index, then the index.
fn beats(a: usize, b: usize, yields: &[bool]) -> bool {
    (!yields[a], hash_index(a as u32), a) > (!yields[b], hash_index(b as u32), b)
}

fn moves(bodies: &[Body64], b: u32) -> bool {
    b != crate::model::joint::WORLD && bodies[b as usize].inv_mass != 0.0
}

/// The records (contacts and joint blocks alike, the first `n` constraints) of each moving
/// body.
fn by_body(schur: &Schur, n: usize) -> Vec<Vec<usize>> {
    let mut list = vec![Vec::new(); schur.bodies.len()];
    for (i, c) in schur.contacts[..n].iter().enumerate() {
        for b in [c.ids[0], c.ids[1]] {
            if moves(schur.bodies, b) {
                list[b as usize].push(i);
            }
        }
    }
    list
}

/// Each constraint's colour (< `GS_COLOURS`; `LEFT_OVER` for the left-over class), as the
/// GPU's `colour_round` rounds and `colour_close` give it to the first `n` constraints (the
/// records); a contact's rolling and spinning rows 3–5 (constraint n + i) take the colour of
/// their contact i: they act on the angular velocities of the same two bodies, so the colour
/// that keeps contact i apart from its neighbours keeps them apart too, and the GPU visits
/// them with the contact, where they live at its index. A hub ([`Hubs`]) links nothing.
pub fn colours(schur: &Schur, n: usize) -> Vec<u32> {
    colours_linking(schur, n, &Hubs::find(schur, n, HUB_CONSTRAINTS))
}

/// [`colours`] where the bodies of `hubs` link nothing, as a fixed body does.
fn colours_linking(schur: &Schur, n: usize, hubs: &Hubs) -> Vec<u32> {
    const UNCOLOURED: u32 = u32::MAX;
    let lists = by_body(schur, n);
    let yields: Vec<bool> = (0..n)
        .map(|i| {
            let c = &schur.contacts[i];
            [c.ids[0], c.ids[1]]
                .iter()
                .any(|&b| moves(schur.bodies, b) && lists[b as usize].len() >= HUB_CONSTRAINTS)
        })
        .collect();
    let mut colour = vec![UNCOLOURED; n];
    for _round in 0..COLOUR_ROUNDS {
        let start = colour.clone();
        for i in 0..n {
            if start[i] != UNCOLOURED {
                continue;
            }
            let c = &schur.contacts[i];
            let mut mask = 0u32;
            let mut waits = false;
            for b in [c.ids[0], c.ids[1]] {
                if !moves(schur.bodies, b) || hubs.is_hub(b) {
                    continue;
                }
                for &j in &lists[b as usize] {
                    match start[j] {
                        UNCOLOURED => waits |= j != i && beats(j, i, &yields),
                        LEFT_OVER => {}
                        k => mask |= 1 << k,
                    }
                }
            }
            if !waits {
                colour[i] = (!mask).trailing_zeros().min(LEFT_OVER);
            }
        }
    }
    let mut colour: Vec<u32> = colour
        .into_iter()
        .map(|k| if k == UNCOLOURED { LEFT_OVER } else { k })
        .collect();
    colour.extend_from_within(..schur.contacts.len() - n);
    colour
}

/// Which of a block's rows share one metric in its set's projection, so that the majorant's
/// entries there are set equal (see [`block_diagonal`]).
#[derive(Clone, Copy)]
enum Round {
    /// Rows that separate (a joint block's bounds).
    None,
    /// The last two rows: a contact's cone, disk or box, or its rows 3–5's rolling disk.
    Tangents,
    /// A patch block's guard ball ‖(γ_s / r, γ_u, γ_w)‖ ≤ ρ of patch radius r.
    Ball(f64),
}

/// The diagonal majorant D ⪰ N_ii + E_ii of constraint i's block (`block_diagonal` and
/// `patch_block_diagonal` in the shader): each row's diagonal entry plus the magnitudes of
/// its off-diagonal ones (a lugre_patch block's full E included). Where the set is round in
/// some rows (`round`) their entries are raised to a common one, so that the set's
/// projection in the metric of D (a cone of μ √(d_t / d_n), a disk or ball as it is) is the
/// step's metric too: with unequal entries the sweeps' fixed points are not the problem's.
/// Body b's share counts `shared(b)` times (1 but for a hub: its constraints, which move it
/// at once, [`Hubs`]).
fn block_diagonal(schur: &Schur, i: usize, round: Round, shared: impl Fn(u32) -> f64) -> Vec3 {
    let mut a = [[0.0; 3]; 3];
    for (b, lin, ang) in schur.row_jacobian(i) {
        if moves(schur.bodies, b) {
            let body = &schur.bodies[b as usize];
            let w = shared(b);
            for k in 0..3 {
                for l in 0..3 {
                    a[k][l] += w
                        * (body.inv_mass * lin[k].dot(lin[l])
                            + ang[k].dot(inv_inertia(body, ang[l])));
                }
            }
        }
    }
    if let Some(o) = schur.coupling.get(i) {
        for (k, l, e) in [(0, 1, o[0]), (0, 2, o[1]), (1, 2, o[2])] {
            a[k][l] += e;
            a[l][k] += e;
        }
    }
    let mut d = [0, 1, 2].map(|k| {
        a[k][k]
            + (0..3)
                .filter(|&l| l != k)
                .map(|l| a[k][l].abs())
                .sum::<f64>()
    });
    if let Some(e) = schur.compliance.get(i) {
        for k in 0..3 {
            d[k] += e[k];
        }
    }
    match round {
        Round::None => d,
        Round::Tangents => {
            let r = d[1].max(d[2]);
            [d[0], r, r]
        }
        // The ball is round in (γ_s / r, γ_u, γ_w): its Euclidean projection there (a radial
        // scaling, `project_patch`) is the projection in the metric m·diag(1/r², 1, 1), so D
        // takes that form with m the largest of d_s r², d_u, d_w.
        Round::Ball(r) => {
            let m = (d[0] * r * r).max(d[1]).max(d[2]);
            [m / (r * r), m, m]
        }
    }
}

/// Π_D(z) on constraint i's set in the metric of the block diagonal d (`project_scaled`).
fn project_scaled(sw: &Sweeps, z: Vec3, d: Vec3, i: usize) -> Vec3 {
    let Some((mu, shift)) = sw.cone(i).filter(|_| d[0] > 0.0) else {
        return sw.project(z, i);
    };
    let dt = d[1].max(d[2]);
    let s = [d[0].sqrt(), dt.sqrt(), dt.sqrt()];
    let y = project_cone(
        [s[0] * (z[0] + shift), s[1] * z[1], s[2] * z[2]],
        mu * (dt / d[0]).sqrt(),
    );
    [y[0] / s[0] - shift, y[1] / s[1], y[2] / s[2]]
}

/// A body's Δv: linear, angular.
type BodyDv = (DVec3, DVec3);

/// Δv of the bodies += M⁻¹ D_i δ, but for the hubs' (gathered after the sweep).
fn apply_change(schur: &Schur, hubs: &Hubs, dv: &mut [BodyDv], i: usize, delta: Vec3) {
    for (b, lin, ang) in schur.row_jacobian(i) {
        if !moves(schur.bodies, b) || hubs.is_hub(b) {
            continue;
        }
        let body = &schur.bodies[b as usize];
        let f = lin[0] * delta[0] + lin[1] * delta[1] + lin[2] * delta[2];
        let t = ang[0] * delta[0] + ang[1] * delta[1] + ang[2] * delta[2];
        let e = &mut dv[b as usize];
        e.0 += body.inv_mass * f;
        e.1 += inv_inertia(body, t);
    }
}

/// Constraints a moving body needs to be a hub (the shader's `is_hub`).
pub const HUB_CONSTRAINTS: usize = crate::model::solver::GS_HUB_CONSTRAINTS as usize;

/// Hub bodies: a moving body with many more constraints than the colours can keep apart
/// ([`HUB_CONSTRAINTS`] or more: a drum, a mixer's blade, a slab under a bed, a large grain
/// among fine ones). Were it to link its constraints in the colouring as a grain does, it
/// would keep at most one per colour and send the rest to the left-over class, whose damped Jacobi steps are bounded by the hub's
/// count. A hub links nothing instead, as a fixed body does, so its constraints take the
/// grains' colours; every visit in a sweep reads the hub's Δv of the sweep's start and leaves
/// it, and after the sweep the hub's Δv is gathered from the impulses. That is a Jacobi step
/// in the hub's velocities inside a Gauss–Seidel sweep, and it stays a descent step when each
/// constraint's majorant counts the hub's share k times, k the hub's constraints (by
/// Cauchy–Schwarz, ‖Σⱼ Jⱼ δⱼ‖² ≤ k Σⱼ ‖Jⱼ δⱼ‖²: the mass splitting of Tonge, Benevolenski &
/// Voroshilov 2012). A heavy hub's share is small, so the grains' sides keep nearly their
/// exact step.
pub(crate) struct Hubs {
    /// Per body its constraints where it is a hub, else 0; empty when no body is a hub.
    count: Vec<usize>,
}

impl Hubs {
    /// The moving bodies with at least `min` of the first `n` constraints (the records).
    fn find(schur: &Schur, n: usize, min: usize) -> Hubs {
        let count: Vec<usize> = (by_body(schur, n).iter())
            .map(|l| if l.len() >= min { l.len() } else { 0 })
            .collect();
        if count.iter().any(|&k| k > 0) {
            Hubs { count }
        } else {
            Hubs { count: Vec::new() }
        }
    }

    fn is_hub(&self, b: u32) -> bool {
        self.count.get(b as usize).is_some_and(|&k| k > 0)
    }

    /// How many times body b's share counts in a majorant.
    fn share(&self, b: u32) -> f64 {
        match self.count.get(b as usize) {
            Some(&k) if k > 0 => k as f64,
            _ => 1.0,
        }
    }

    fn any(&self) -> bool {
        !self.count.is_empty()
    }
}

/// D_iᵀ Δv + E γ_i + p_i: constraint i's velocity from the bodies' current Δv.
fn local_velocity(sw: &Sweeps, dv: &[(DVec3, DVec3)], gamma: &[Vec3], i: usize) -> Vec3 {
    let schur = sw.schur;
    let mut u = sw.p[i];
    for (b, lin, ang) in schur.row_jacobian(i) {
        if b == crate::model::joint::WORLD {
            continue;
        }
        let (v, w) = dv[b as usize];
        for k in 0..3 {
            u[k] += lin[k].dot(v) + ang[k].dot(w);
        }
    }
    if let Some(e) = schur.compliance.get(i) {
        for k in 0..3 {
            u[k] += e[k] * gamma[i][k];
        }
    }
    if let Some(o) = schur.coupling.get(i) {
        let g = gamma[i];
        u[0] += o[0] * g[1] + o[1] * g[2];
        u[1] += o[0] * g[0] + o[2] * g[2];
        u[2] += o[1] * g[0] + o[2] * g[1];
    }
    u
}

/// Coloured Gauss–Seidel with over-relaxation ω (`settings.omega`) and Nesterov's momentum
/// on the sweeps.
pub struct ColouredGaussSeidel;

/// What every sweep of a solve reads: each constraint's colour and diagonal majorant, and
/// the hubs.
pub(crate) struct Colouring {
    colour: Vec<u32>,
    diag: Vec<Vec3>,
    hubs: Hubs,
}

impl ColouredGaussSeidel {
    /// The GPU's colouring: hubs of [`HUB_CONSTRAINTS`] or more constraints.
    pub(crate) fn prepare(sw: &Sweeps) -> Colouring {
        Self::prepare_with(sw, HUB_CONSTRAINTS)
    }

    /// [`Self::prepare`] with hubs of `min_hub` or more constraints.
    fn prepare_with(sw: &Sweeps, min_hub: usize) -> Colouring {
        let schur = sw.schur;
        let n = sw.records();
        let hubs = Hubs::find(schur, n, min_hub);
        let colour = colours_linking(schur, n, &hubs);
        let diag: Vec<Vec3> = (0..schur.contacts.len())
            .map(|i| {
                let round = match sw.patch_radius(i) {
                    Some(r) => Round::Ball(r),
                    None if i >= n || sw.is_plain_contact(i) => Round::Tangents,
                    None => Round::None,
                };
                block_diagonal(schur, i, round, |b| hubs.share(b))
            })
            .collect();
        Colouring { colour, diag, hubs }
    }

    /// Nesterov's momentum coefficient β after a sweep, and the next θ; restarted (β = 0,
    /// θ = 1) when `restart` (`decide_gauss`).
    pub(crate) fn momentum(theta: f64, restart: bool) -> (f64, f64) {
        if restart {
            return (0.0, 1.0);
        }
        let th = 0.5 * (-theta * theta + theta * (theta * theta + 4.0).sqrt());
        (theta * (1.0 - theta) / (theta * theta + th), th)
    }

    /// Whether the momentum restarts after a sweep took the impulses from `before` (the
    /// extrapolated y) to `swept` (x), the last sweep having left `previous` (`decide_gauss`):
    /// when the sweep's own step y − x and the progress x − x_prev point apart,
    /// (y − x)·(x − x_prev) > 0 — O'Donoghue & Candès's (2015) gradient restart, as APGD's,
    /// with the sweep's step in place of the gradient (`gauss_phase` forms each constraint's
    /// term, `gauss_residual` sums them) — or when the sweep's residual `r` is above
    /// [`GS_MOMENTUM_RISE`] × `low`, the lowest since the momentum last (re)started: the
    /// momentum is diverging, as over-relaxed steps (ω > 1) let it. Not tested while the
    /// momentum is `fresh` (θ = 1: the cone problem's first sweep, which has no previous one,
    /// or the sweep after a restart, where y = x_prev and the product is −‖y − x‖²).
    pub(crate) fn restarts(
        fresh: bool,
        (before, swept, previous): (&[Vec3], &[Vec3], &[Vec3]),
        r: f64,
        low: f64,
    ) -> bool {
        let mut product = 0.0;
        for ((y, x), p) in before.iter().zip(swept).zip(previous) {
            product += (0..3).map(|k| (y[k] - x[k]) * (x[k] - p[k])).sum::<f64>();
        }
        !fresh && (product > 0.0 || r > GS_MOMENTUM_RISE as f64 * low)
    }

    /// The lowest residual since the momentum last (re)started, after a sweep of residual `r`
    /// (`decide_gauss` keeps it as the solver scalar `low`).
    pub(crate) fn lowest(fresh: bool, low: f64, r: f64) -> f64 {
        if fresh {
            r
        } else {
            low.min(r)
        }
    }

    /// `gauss_extrapolate`: γ ← γ + β(γ − γ_prev), not projected, and Δv likewise per body;
    /// the swept γ and Δv become the previous ones.
    pub(crate) fn extrapolate(
        beta: f64,
        gamma: &mut [Vec3],
        previous: &mut [Vec3],
        dv: &mut [(DVec3, DVec3)],
        dv_previous: &mut [(DVec3, DVec3)],
    ) {
        for (g, p) in gamma.iter_mut().zip(previous.iter_mut()) {
            let swept = *g;
            *g = [0, 1, 2].map(|k| swept[k] + beta * (swept[k] - p[k]));
            *p = swept;
        }
        for (d, p) in dv.iter_mut().zip(dv_previous.iter_mut()) {
            let swept = *d;
            *d = (
                swept.0 + beta * (swept.0 - p.0),
                swept.1 + beta * (swept.1 - p.1),
            );
            *p = swept;
        }
    }

    /// One sweep over the colours; then the hubs' Δv (`hub_gather`) and, when some
    /// constraint is left over, every body's are gathered from the impulses.
    pub(crate) fn sweep(
        sw: &mut Sweeps,
        colouring: &Colouring,
        gamma: &mut [Vec3],
        dv: &mut Vec<(DVec3, DVec3)>,
    ) {
        let Colouring { colour, diag, hubs } = colouring;
        let omega = sw.settings.omega as f64;
        for k in 0..GS_COLOURS {
            // Rows 3–5 (after the records) are visited after every record of the colour,
            // where the GPU visits them right after their contact: no other constraint of
            // the colour moves their bodies, so both orders do the same arithmetic.
            for i in (0..gamma.len()).filter(|&i| colour[i] == k) {
                let g = gamma[i];
                let mut u = local_velocity(sw, dv, gamma, i);
                let mut t = [0.0; 3];
                if sw.eta[i] > 0.0 {
                    sw.follow_slip(i, &mut u);
                    if k == LEFT_OVER {
                        let e = sw.residual_rows(i);
                        t = sw.project([0, 1, 2].map(|r| g[r] - JACOBI_OMEGA * e[r] * u[r]), i);
                    } else {
                        let d = diag[i];
                        let inv = d.map(|x| if x > 0.0 { 1.0 / x } else { 0.0 });
                        let x = project_scaled(sw, [0, 1, 2].map(|r| g[r] - inv[r] * u[r]), d, i);
                        t = x;
                        if omega != 1.0 {
                            let z = [0, 1, 2].map(|r| g[r] + omega * (x[r] - g[r]));
                            t = project_scaled(sw, z, d, i);
                        }
                    }
                }
                gamma[i] = t;
                let delta = [0, 1, 2].map(|r| t[r] - g[r]);
                if k != LEFT_OVER {
                    apply_change(sw.schur, hubs, dv, i, delta);
                }
            }
        }
        if colour.contains(&LEFT_OVER) {
            *dv = sw.schur.delta_v(gamma);
        } else if hubs.any() {
            let gathered = sw.schur.delta_v(gamma);
            for (b, d) in dv.iter_mut().enumerate() {
                if hubs.is_hub(b as u32) {
                    *d = gathered[b];
                }
            }
        }
    }
}

impl SweepMethod for ColouredGaussSeidel {
    fn run(
        &self,
        sw: &mut Sweeps,
        gamma: Vec<Vec3>,
        _ngamma: Vec<Vec3>,
        res0: f64,
    ) -> (Vec<Vec3>, f64, bool) {
        Self::run_with(sw, gamma, res0, HUB_CONSTRAINTS)
    }
}

/// Coloured Gauss–Seidel with [`Hubs`] of `min_constraints` or more constraints (the GPU's:
/// [`HUB_CONSTRAINTS`]; `usize::MAX`: none, every body links its constraints).
pub struct HubSplitGaussSeidel {
    pub min_constraints: usize,
}

/// The twin's solve with its cone problems swept by [`HubSplitGaussSeidel`] (`settings.kind`
/// is ignored).
pub fn solve_hub_split(
    bodies: &[Body64],
    contacts: &[Contact],
    settings: &SolverSettings,
    dt: f64,
    warm: Option<WarmStart>,
    min_constraints: usize,
) -> SolveOutput {
    let method = HubSplitGaussSeidel { min_constraints };
    let extra = Extra::default();
    solve_with_method(bodies, contacts, settings, dt, warm, extra, Some(&method))
}

impl SweepMethod for HubSplitGaussSeidel {
    fn run(
        &self,
        sw: &mut Sweeps,
        gamma: Vec<Vec3>,
        _ngamma: Vec<Vec3>,
        res0: f64,
    ) -> (Vec<Vec3>, f64, bool) {
        ColouredGaussSeidel::run_with(sw, gamma, res0, self.min_constraints)
    }
}

impl ColouredGaussSeidel {
    /// The sweeps of one cone problem, with hubs of `min_hub` or more constraints.
    fn run_with(
        sw: &mut Sweeps,
        mut gamma: Vec<Vec3>,
        res0: f64,
        min_hub: usize,
    ) -> (Vec<Vec3>, f64, bool) {
        let schur = sw.schur;
        let colouring = Self::prepare_with(sw, min_hub);
        let tol = sw.tolerance_norm();
        let mut dv = schur.delta_v(&gamma);
        let (mut residual, mut converged) = (res0, res0 <= tol);
        let mut sweeps = 0;
        let mut theta = 1.0f64;
        let mut previous = gamma.clone();
        let mut dv_previous = dv.clone();
        let mut low = res0;
        // The impulses before each sweep (the extrapolated y), for the restart test.
        let mut before = gamma.clone();
        while !converged && sweeps < sw.settings.max_iterations {
            before.clone_from(&gamma);
            Self::sweep(sw, &colouring, &mut gamma, &mut dv);
            let r = sw.residual(&gamma, &schur.apply_from(&dv, &gamma));
            sweeps += 1;
            *sw.iterations += 1;
            // Nesterov's momentum with its restart (`decide_gauss`).
            let beta;
            let fresh = theta == 1.0;
            low = Self::lowest(fresh, low, r);
            let restart = Self::restarts(fresh, (&before, &gamma, &previous), r, low);
            (beta, theta) = Self::momentum(theta, restart);
            residual = r;
            sw.history.push([r, low, beta, 1.0]);
            converged = r <= tol;
            if converged {
                break;
            }
            // `gauss_extrapolate`: y = γ + β(γ − γ_prev), not projected, so that Δv(y) is
            // formed per body from Δv and the previous sweep's Δv.
            Self::extrapolate(beta, &mut gamma, &mut previous, &mut dv, &mut dv_previous);
        }
        // `gauss_finish`: at the cap, the last swept γ.
        if !converged && sweeps > 0 {
            gamma = previous;
        }
        (gamma, residual, converged)
    }
}

/// A hub problem: a `width` × `width` simple-cubic bed `layers` deep (spheres of radius
/// 5 mm, density 2500 kg/m³, every neighbour touching) on one dynamic slab (a sphere body
/// of radius `width` × 5 mm whose mass is `mass_ratio` × the bed's), the slab on a fixed
/// plane at four corner contacts. Every bed grain and the slab carry one step of gravity
/// (dt); friction μ = 0.5. Body 0 is the plane, body 1 the slab; the bottom layer's
/// `width`² contacts all move the slab.
pub fn hub_slab(
    width: usize,
    layers: usize,
    mass_ratio: f64,
    dt: f32,
) -> (crate::model::body::BodyState, Vec<Contact>) {
    use crate::model::body::{BodyInit, BodyState, SHAPE_PLANE};
    const R: f32 = 0.005;
    const MU: f32 = 0.5;
    let fall = [0.0, 0.0, -9.81 * dt];
    let half = width as f32 * R;
    let grain = BodyInit::sphere([0.0; 3], R, 2500.0);
    let bed_mass = (width * width * layers) as f64 / grain.inv_mass as f64;
    let slab_volume = 4.0 / 3.0 * std::f64::consts::PI * (half as f64).powi(3);
    let mut slab = BodyInit::sphere(
        [0.0, 0.0, half],
        half,
        (mass_ratio * bed_mass / slab_volume) as f32,
    );
    slab.velocity = fall;
    let mut inits = vec![BodyInit::fixed(SHAPE_PLANE, 0, [0.0; 3], 1.0), slab];
    let top = 2.0 * half;
    let id = |i: usize, j: usize, k: usize| (2 + (k * width + j) * width + i) as u32;
    let at = |i: usize| -half + R * (2 * i + 1) as f32;
    let contact = |n: [f32; 3], ra: [f32; 3], rb: [f32; 3], a: u32, b: u32| Contact {
        n_gap: [n[0], n[1], n[2], 0.0],
        ra: [ra[0], ra[1], ra[2], MU],
        rb: [rb[0], rb[1], rb[2], 0.0],
        ids: [a, b, 0, 0],
    };
    let mut contacts: Vec<Contact> = [(-1.0, -1.0), (-1.0, 1.0), (1.0, -1.0), (1.0, 1.0)]
        .map(|(x, y)| contact([0.0, 0.0, 1.0], [0.0; 3], [x * half, y * half, -half], 0, 1))
        .to_vec();
    for k in 0..layers {
        for j in 0..width {
            for i in 0..width {
                let mut b =
                    BodyInit::sphere([at(i), at(j), top + R * (2 * k + 1) as f32], R, 2500.0);
                b.velocity = fall;
                inits.push(b);
                let (up, down) = ([0.0, 0.0, R], [0.0, 0.0, -R]);
                contacts.push(if k == 0 {
                    contact([0.0, 0.0, 1.0], [at(i), at(j), half], down, 1, id(i, j, 0))
                } else {
                    contact([0.0, 0.0, 1.0], up, down, id(i, j, k - 1), id(i, j, k))
                });
                if i > 0 {
                    contacts.push(contact(
                        [1.0, 0.0, 0.0],
                        [R, 0.0, 0.0],
                        [-R, 0.0, 0.0],
                        id(i - 1, j, k),
                        id(i, j, k),
                    ));
                }
                if j > 0 {
                    contacts.push(contact(
                        [0.0, 1.0, 0.0],
                        [0.0, R, 0.0],
                        [0.0, -R, 0.0],
                        id(i, j - 1, k),
                        id(i, j, k),
                    ));
                }
            }
        }
    }
    contacts.sort_by_key(|c| c.key());
    (BodyState::from_inits(&inits), contacts)
}
