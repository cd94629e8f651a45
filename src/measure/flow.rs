//! Mass flow through a plane, and the steady discharge rate of a cumulative-mass signal.

use crate::bodies::{BodyState, MOTION_PARKED};

/// Mass transported through a plane, accumulated frame by frame from the previous and the
/// current positions of the grains (body centres).
///
/// A grain crosses in the positive direction when its centre goes from behind the plane
/// (signed distance along `normal` < 0) to on or in front of it (≥ 0), and negatively the
/// other way. Three totals are kept, all in kg:
///
/// * [`net_mass`](Self::net_mass): every crossing, +m along the normal and −m against it.
///   On an unbounded plane this is exact whatever the frame spacing (it telescopes to the
///   change of mass in front of the plane), and a grain jittering on the plane adds +m, −m,
///   +m, … = its real transport. The rate returned by [`update`](Self::update) is Δ(net)/Δt.
/// * [`mass_positive`](Self::mass_positive) / [`mass_negative`](Self::mass_negative): each
///   grain counted at most once per direction, the first time it crosses that way — the
///   "grains discharged" count of a hopper, immune to grains bouncing back through the
///   outlet plane.
///
/// With [`with_radius`](Self::with_radius) only crossings within that distance of
/// `plane_point` (measured in the plane, at the point where the straight path between the
/// two frames meets the plane) count: a flow through an orifice. Then crossings are found
/// from the two endpoint positions only, so frames must be close enough that grains do not
/// cross the plane and come back between two of them.
///
/// Masses come from `mass_props` (w = inverse mass) of the state given to
/// [`new`](Self::new); later updates need positions only. Fixed and kinematic bodies
/// (inverse mass 0) count as massless.
#[derive(Clone, Debug)]
pub struct MassFlow {
    plane_point: [f64; 3],
    normal: [f64; 3],
    radius: Option<f64>,
    first_grain: usize,
    mass: Vec<f64>,
    prev_pos: Vec<[f64; 3]>,
    prev_time: f64,
    /// Bit 0: counted in `mass_positive`; bit 1: counted in `mass_negative`.
    counted: Vec<u8>,
    net: Sum,
    positive: Sum,
    negative: Sum,
}

/// Compensated (Neumaier) running sum, so that millions of ± grain masses do not drift.
#[derive(Clone, Copy, Debug, Default)]
struct Sum {
    sum: f64,
    carry: f64,
}

impl Sum {
    fn add(&mut self, x: f64) {
        let t = self.sum + x;
        self.carry += if self.sum.abs() >= x.abs() {
            (self.sum - t) + x
        } else {
            (x - t) + self.sum
        };
        self.sum = t;
    }

    fn value(&self) -> f64 {
        self.sum + self.carry
    }
}

/// The totals after one [`MassFlow::update`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlowSample {
    pub time: f64,
    /// Net mass through the plane since the start, positive along the normal (kg).
    pub net_mass: f64,
    /// Mass of distinct grains that have crossed along the normal (kg).
    pub mass_positive: f64,
    /// Mass of distinct grains that have crossed against the normal (kg).
    pub mass_negative: f64,
    /// Δ(net mass)/Δt since the previous update [kg/s]; NaN when Δt ≤ 0.
    pub rate: f64,
}

fn pos3(p: &[f32; 4]) -> [f64; 3] {
    [p[0] as f64, p[1] as f64, p[2] as f64]
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

impl MassFlow {
    /// Starts counting at `time` from the positions in `state`, which must include
    /// `mass_props`. Panics if `normal` is zero or not finite, or `mass_props` is missing.
    pub fn new(
        plane_point: [f64; 3],
        normal: [f64; 3],
        state: &BodyState,
        first_grain: usize,
        time: f64,
    ) -> Self {
        let len = dot(normal, normal).sqrt();
        assert!(
            len > 0.0 && len.is_finite(),
            "MassFlow: plane normal {normal:?} must be non-zero and finite"
        );
        assert_eq!(
            state.mass_props.len(),
            state.len(),
            "MassFlow::new needs a BodyState with mass_props (a full download)"
        );
        let first_grain = first_grain.min(state.len());
        let mass = state.mass_props[first_grain..]
            .iter()
            .map(|m| if m[3] > 0.0 { 1.0 / m[3] as f64 } else { 0.0 })
            .collect::<Vec<_>>();
        let n = mass.len();
        MassFlow {
            plane_point,
            normal: normal.map(|c| c / len),
            radius: None,
            first_grain,
            mass,
            prev_pos: state.pos[first_grain..].iter().map(pos3).collect(),
            prev_time: time,
            counted: vec![0; n],
            net: Sum::default(),
            positive: Sum::default(),
            negative: Sum::default(),
        }
    }

    /// Counts only crossings within `radius` of `plane_point`, in the plane.
    pub fn with_radius(mut self, radius: f64) -> Self {
        self.radius = Some(radius);
        self
    }

    /// Signed distance of `p` from the plane along the (unit) normal.
    fn distance(&self, p: [f64; 3]) -> f64 {
        dot(sub(p, self.plane_point), self.normal)
    }

    /// Advances to the positions in `state` at `time`; O(N). Panics if the body count
    /// changed.
    /// Body `body` left or entered the scene (an outflow, an inflow) since the last update:
    /// the jump between its old and new place is no crossing, so its next position starts
    /// afresh, and when it enters again it is a new grain for the distinct-grain counts.
    pub fn forget(&mut self, body: usize) {
        let Some(i) = body.checked_sub(self.first_grain) else {
            return;
        };
        if i < self.prev_pos.len() {
            self.prev_pos[i] = [f64::NAN; 3];
            self.counted[i] = 0;
        }
    }

    pub fn update(&mut self, state: &BodyState, time: f64) -> FlowSample {
        assert_eq!(
            state.len(),
            self.first_grain + self.mass.len(),
            "MassFlow::update: body count changed"
        );
        let net_before = self.net.value();
        for (i, p) in state.pos[self.first_grain..].iter().enumerate() {
            let now = pos3(p);
            let before = self.prev_pos[i];
            // A parked grain (an inflow's pool, or taken out by an outflow) crosses nothing,
            // and the step from its parking place to where it enters is no crossing either.
            let parked = state
                .info
                .get(self.first_grain + i)
                .is_some_and(|k| k[0] == MOTION_PARKED);
            if parked || before[0].is_nan() {
                self.prev_pos[i] = if parked { [f64::NAN; 3] } else { now };
                continue;
            }
            let (d0, d1) = (self.distance(before), self.distance(now));
            let dir = match (d0 >= 0.0, d1 >= 0.0) {
                (false, true) => 1,
                (true, false) => -1,
                _ => 0,
            };
            if dir != 0 && self.within_radius(before, now, d0, d1) {
                let m = self.mass[i];
                if dir > 0 {
                    self.net.add(m);
                    if self.counted[i] & 1 == 0 {
                        self.counted[i] |= 1;
                        self.positive.add(m);
                    }
                } else {
                    self.net.add(-m);
                    if self.counted[i] & 2 == 0 {
                        self.counted[i] |= 2;
                        self.negative.add(m);
                    }
                }
            }
            self.prev_pos[i] = now;
        }
        let dt = time - self.prev_time;
        self.prev_time = time;
        FlowSample {
            time,
            net_mass: self.net.value(),
            mass_positive: self.positive.value(),
            mass_negative: self.negative.value(),
            rate: if dt > 0.0 {
                (self.net.value() - net_before) / dt
            } else {
                f64::NAN
            },
        }
    }

    fn within_radius(&self, a: [f64; 3], b: [f64; 3], d0: f64, d1: f64) -> bool {
        let Some(r) = self.radius else {
            return true;
        };
        let s = d0 / (d0 - d1);
        let hit = [0, 1, 2].map(|k| a[k] + s * (b[k] - a[k]));
        let v = sub(hit, self.plane_point);
        let along = dot(v, self.normal);
        dot(v, v) - along * along <= r * r
    }

    /// Net mass through the plane so far, positive along the normal (kg).
    pub fn net_mass(&self) -> f64 {
        self.net.value()
    }

    /// Mass of distinct grains that have crossed along the normal (kg).
    pub fn mass_positive(&self) -> f64 {
        self.positive.value()
    }

    /// Mass of distinct grains that have crossed against the normal (kg).
    pub fn mass_negative(&self) -> f64 {
        self.negative.value()
    }

    /// The unit normal.
    pub fn normal(&self) -> [f64; 3] {
        self.normal
    }

    pub fn plane_point(&self) -> [f64; 3] {
        self.plane_point
    }
}

/// Largest relative deviation of the quarter-window slopes from the overall slope for which
/// [`steady_rate`] calls a flow steady.
pub const STEADY_TOLERANCE: f64 = 0.10;

/// Steady discharge rate from a cumulative mass signal (e.g. [`MassFlow::net_mass`] or
/// [`MassFlow::mass_positive`] sampled at frames).
///
/// Uses the samples with `window.0 <= t <= window.1` (non-finite samples skipped) and
/// returns `(rate, standard_error, max_relative_deviation)`:
///
/// * `rate`: the ordinary least-squares slope of mass against time [kg/s];
/// * `standard_error`: its standard error, `sqrt(SSR / (n − 2) / Σ(t − t̄)²)` (NaN with
///   fewer than 3 samples). It assumes independent residuals, which a cumulative signal
///   does not have, so read it as a fit-quality figure rather than a confidence interval;
///   the steadiness criterion is the check that matters;
/// * `max_relative_deviation`: the window is cut into four quarters of equal duration, the
///   slope is fitted on each, and this is `max |slope_q − rate| / |rate|`.
///
/// **Steadiness criterion:** the flow is steady over the window when
/// `max_relative_deviation <= STEADY_TOLERANCE` (10 %), i.e. the rate over every quarter
/// of the window is within 10 % of the rate over the whole window. A quarter with fewer
/// than two samples makes the deviation NaN, which fails the criterion; so does a zero
/// overall rate (deviation infinite or NaN). With grains crossing one at a time the signal
/// is a staircase, so each quarter needs many grains for the criterion to be meaningful.
///
/// Returns NaN for all three when fewer than two samples lie in the window, or they all
/// have the same time. Panics if the slices differ in length.
pub fn steady_rate(times: &[f64], cumulative_mass: &[f64], window: (f64, f64)) -> (f64, f64, f64) {
    assert_eq!(
        times.len(),
        cumulative_mass.len(),
        "steady_rate: times and cumulative_mass differ in length"
    );
    let samples = |lo: f64, hi: f64, last: bool| {
        times
            .iter()
            .zip(cumulative_mass)
            .map(|(&t, &m)| (t, m))
            .filter(move |&(t, m)| {
                t.is_finite() && m.is_finite() && t >= lo && (t < hi || (last && t <= hi))
            })
    };
    let (a, b) = window;
    let Some((rate, se)) = fit(samples(a, b, true)) else {
        return (f64::NAN, f64::NAN, f64::NAN);
    };
    let q = (b - a) / 4.0;
    let mut max_dev: f64 = 0.0;
    for k in 0..4 {
        let lo = a + k as f64 * q;
        let hi = if k == 3 { b } else { a + (k + 1) as f64 * q };
        let dev = match fit(samples(lo, hi, k == 3)) {
            Some((s, _)) => (s - rate).abs() / rate.abs(),
            None => f64::NAN,
        };
        // NaN propagates: a quarter that cannot be fitted fails the criterion.
        max_dev = if dev.is_nan() || max_dev.is_nan() {
            f64::NAN
        } else {
            max_dev.max(dev)
        };
    }
    (rate, se, max_dev)
}

/// Least-squares slope and its standard error; `None` with fewer than two distinct times.
fn fit(points: impl Iterator<Item = (f64, f64)> + Clone) -> Option<(f64, f64)> {
    let (n, st, sm) = points
        .clone()
        .fold((0usize, 0.0, 0.0), |(n, st, sm), (t, m)| {
            (n + 1, st + t, sm + m)
        });
    if n < 2 {
        return None;
    }
    let (tm, mm) = (st / n as f64, sm / n as f64);
    let (sxx, sxy) = points.clone().fold((0.0, 0.0), |(sxx, sxy), (t, m)| {
        (sxx + (t - tm) * (t - tm), sxy + (t - tm) * (m - mm))
    });
    if sxx <= 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    let se = if n > 2 {
        let ssr: f64 = points
            .map(|(t, m)| {
                let r = m - mm - slope * (t - tm);
                r * r
            })
            .sum();
        (ssr / (n - 2) as f64 / sxx).sqrt()
    } else {
        f64::NAN
    };
    Some((slope, se))
}
