//! f32 resolution at the scene's extent.
//!
//! The device stores positions as f32 in one world frame, so a coordinate x is held to
//! the f32 spacing at |x|: 2⁻²³·2^⌊log2|x|⌋, 6 µm at 100 m, 61 µm at 1 km, 3.9 mm at
//! 50 km, 31 mm at 500 km. Contact distances are differences of two such positions, so
//! every gap and penetration carries an error of that size: far from the origin a pile
//! that settles to micrometre overlaps near the origin sits on a millimetre grid.
//!
//! The scene is checked, not re-based. Storing positions relative to per-cell or per-body
//! origins would remove the error but put an origin beside every position in every stage
//! (integration, grid, narrow phases, joints, outputs) and in the checkpoint format, for
//! scenes that are nearly always built near their origin; moving the origin is one edit
//! of the scene file, and the message says where to move it.
//!
//! Measured (`examples/far_origin.rs`, lavapipe): a 4-sphere pile (radius 5 mm) on a plane,
//! 300 steps of 0.1 ms, placed at x = 0, 1, 10 and 100 km with every other input equal.
//! The top sphere's settled position, relative to the offset, moved from the pile's at
//! the origin by 3.3·10⁻⁵ m at 1 km (f32 spacing 6.1·10⁻⁵ m; 0.7 % of the radius),
//! 3.1·10⁻⁴ m at 10 km (spacing 9.8·10⁻⁴ m; 6 %, with a last-step penetration of
//! 2.3·10⁻⁴ m where the other piles had none) and 2.5·10⁻² m at 100 km (spacing
//! 7.8·10⁻³ m: five radii, another pile). The error follows the spacing (0.3 to 3 times
//! it), so the rule is stated in it: 1 km is warned about for this pile (spacing 1.2 % of
//! the radius), 10 and 100 km are refused.
//!
//! * warning: the spacing exceeds [`WARN_FRACTION`] of the smallest grain radius;
//! * error: it exceeds [`REFUSE_FRACTION`] of it (contacts are decided on a grid coarser
//!   than a tenth of a grain), or a generator's region lies where it does (checked before
//!   the region is filled: drawing spheres where f64 itself cannot place them found no
//!   room and retried for tens of seconds).

use super::generate::{RadiusDist, Region};
use super::{BodyDesc, Boundary, BoundaryShape, Motion, Num, ScheduleEntry};

/// Above this fraction of the smallest grain radius the f32 spacing gets a warning.
pub(crate) const WARN_FRACTION: f64 = 1e-3;
/// Above this fraction of the smallest grain radius the scene is refused.
pub(crate) const REFUSE_FRACTION: f64 = 0.1;

/// Distance from `x` to the next f32 away from zero (infinite past f32's range).
pub(crate) fn f32_spacing(x: f64) -> f64 {
    let a = x.abs() as f32;
    if !a.is_finite() {
        return f64::INFINITY;
    }
    (a.next_up() as f64 - a as f64).max(f32::MIN_POSITIVE as f64)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Severity {
    Warn,
    Refuse,
}

/// What the scene's precision is judged at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reach {
    /// The body that reaches farthest from the origin.
    Body(usize),
    /// The boundary that reaches farthest from the origin.
    Boundary(usize),
    /// The smallest body, too small for f32 even where it itself sits: its size is at fault.
    Size(usize),
}

/// What carries a kinematic body or boundary to its farthest point: the velocity it starts
/// with, or that of an entry of its schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Driver {
    Initial,
    Schedule(usize),
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Finding {
    pub severity: Severity,
    pub at: Reach,
    /// Set when the reach is along a kinematic body's or boundary's prescribed travel, not
    /// where it starts: the velocity that takes it there.
    pub moved: Option<Driver>,
    pub message: String,
}

/// Largest |coordinate| of a point.
fn max_abs(p: [f64; 3]) -> f64 {
    p.iter().fold(0.0f64, |m, x| m.max(x.abs()))
}

/// Largest |coordinate| the centre of a body or boundary at `position` reaches during the
/// run's `steps` steps of `dt`, and what drives it there (None: where it starts): for a
/// kinematic one also where its prescribed velocity (`velocity`, changed at each schedule
/// entry) takes it, up to its release (a released body is dynamic: its path is not known
/// before the run).
fn travel_reach(
    position: [f64; 3],
    velocity: [f64; 3],
    motion: Motion,
    schedule: &[ScheduleEntry],
    (dt, steps): (f64, u64),
) -> (f64, Option<Driver>) {
    let mut reach = (max_abs(position), None);
    if motion != Motion::Kinematic {
        return reach;
    }
    let (mut p, mut v, mut from, mut driver) = (position, velocity, 0u64, Driver::Initial);
    let changes = schedule
        .iter()
        .enumerate()
        .map(|(j, e)| (e.step.min(steps), Some((j, e))));
    for (step, change) in changes.chain([(steps, None)]) {
        let t = step.saturating_sub(from) as f64 * dt;
        p = [0, 1, 2].map(|i| p[i] + v[i] * t);
        if max_abs(p) > reach.0 {
            reach = (max_abs(p), Some(driver));
        }
        from = from.max(step);
        match change {
            Some((_, e)) if e.release => break,
            Some((j, e)) => (v, driver) = (e.velocity, Driver::Schedule(j)),
            None => {}
        }
    }
    reach
}

/// How far a boundary's geometry reaches from its position (planes: nowhere, as far as
/// telling an outlying body goes).
fn extent(shape: &BoundaryShape) -> f64 {
    let norm = |v: [f64; 3]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
    match shape {
        BoundaryShape::Plane => 0.0,
        BoundaryShape::BoxContainer { half_extents, .. }
        | BoundaryShape::SolidBox { half_extents } => norm(*half_extents),
        BoundaryShape::CylinderContainer { radius, height, .. }
        | BoundaryShape::SolidCylinder { radius, height } => radius.hypot(*height),
        BoundaryShape::Mesh { vertices, .. } => {
            vertices.iter().map(|v| norm(*v)).fold(0.0, f64::max)
        }
    }
}

/// The body f32 represents worst where it starts, and that worst fraction: the f32 spacing
/// at its place over its bounding radius.
fn worst_held_body(bodies: &[BodyDesc]) -> Option<(usize, f64)> {
    bodies
        .iter()
        .map(|b| {
            let r = b.shape.bounding_radius();
            f32_spacing(max_abs(b.position) + r) / r
        })
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

/// The scene's farthest coordinate (body centres plus their bounding radius, boundary
/// positions, both along a kinematic one's prescribed travel over the run's `steps` steps
/// of `dt`) against its smallest grain radius `r_min`; None when the spacing there is
/// within [`WARN_FRACTION`] of it.
pub(crate) fn check_scene(
    bodies: &[BodyDesc],
    boundaries: &[Boundary],
    r_min: f64,
    run: (f64, u64),
) -> Option<Finding> {
    let body_reach = bodies.iter().enumerate().map(|(k, b)| {
        let (travel, driver) = travel_reach(b.position, b.velocity, b.motion, &b.schedule, run);
        (Reach::Body(k), travel + b.shape.bounding_radius(), driver)
    });
    let wall_reach = boundaries.iter().enumerate().map(|(k, b)| {
        let (travel, driver) = travel_reach(b.position, b.velocity, b.motion, &b.schedule, run);
        (Reach::Boundary(k), travel, driver)
    });
    let (at, reach, moved) = body_reach
        .chain(wall_reach)
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    let spacing = f32_spacing(reach);
    let fraction = spacing / r_min;
    let severity = if fraction > REFUSE_FRACTION {
        Severity::Refuse
    } else if fraction > WARN_FRACTION {
        Severity::Warn
    } else {
        return None;
    };
    let limit = match severity {
        Severity::Warn => WARN_FRACTION,
        Severity::Refuse => REFUSE_FRACTION,
    };
    // A body too small for f32 at its own place is its size's fault when it alone is too
    // small (the scene's other grains would be resolved there) and it does not lie beyond
    // everything else in the scene (then its position is); when every grain is that small,
    // moving the origin is the remedy.
    if let Some((k, own)) = worst_held_body(bodies) {
        let r = bodies[k].shape.bounding_radius();
        let others_resolved = bodies
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != k)
            .map(|(_, b)| b.shape.bounding_radius())
            .reduce(f64::min)
            .is_none_or(|r_others| r < r_others && spacing / r_others <= limit);
        let reach_of = |b: &BodyDesc| max_abs(b.position) + b.shape.bounding_radius();
        let others = bodies
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != k)
            .map(|(_, b)| reach_of(b))
            .chain(
                boundaries
                    .iter()
                    .map(|b| max_abs(b.position) + extent(&b.shape)),
            )
            .fold(0.0f64, f64::max);
        let outlier = at == Reach::Body(k) && reach_of(&bodies[k]) > others;
        if own > limit && moved.is_none() && !outlier && others_resolved {
            let b = &bodies[k];
            let here = max_abs(b.position) + r;
            let message = format!(
                "a size of {} m (bounding radius) is below what f32 positions resolve where \
                 this body sits: {:.3e} m apart at {} m from the origin, {own:.2e} of it (more \
                 than {limit}); make it larger",
                short(r),
                f32_spacing(here),
                short(here)
            );
            let at = Reach::Size(k);
            return Some(Finding {
                severity,
                at,
                moved,
                message,
            });
        }
    }
    let centre = centre_of(bodies);
    let message = format!(
        "coordinates reach {} m{}, where f32 positions are {spacing:.3e} m apart, {fraction:.2e} \
         of the smallest grain radius {} m (more than {limit}): contacts are resolved no finer \
         than that; move the origin into the scene (subtract about {} from every position, \
         region and boundary position)",
        short(reach),
        match moved {
            Some(_) => " (along a kinematic body's or boundary's prescribed travel)",
            None => "",
        },
        short(r_min),
        point(centre)
    );
    Some(Finding {
        severity,
        at,
        moved,
        message,
    })
}

fn point(p: [f64; 3]) -> String {
    format!("[{}, {}, {}]", short(p[0]), short(p[1]), short(p[2]))
}

/// `x` to 6 significant digits, as [`Num`] writes numbers.
fn short(x: f64) -> Num {
    Num(format!("{x:.5e}").parse().unwrap_or(x))
}

/// Centre of the bodies' bounding box.
fn centre_of(bodies: &[BodyDesc]) -> [f64; 3] {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for b in bodies {
        for i in 0..3 {
            lo[i] = lo[i].min(b.position[i]);
            hi[i] = hi[i].max(b.position[i]);
        }
    }
    [0, 1, 2].map(|i| 0.5 * (lo[i] + hi[i]))
}

/// A generator's region where grains of `radius` cannot be placed meaningfully: the f32
/// spacing at the region's farthest corner exceeds [`REFUSE_FRACTION`] of the smallest
/// radius the generator draws. Returns the message: move the origin when the region lies
/// away from it, and (or) use a smaller region or larger grains when even a region centred
/// on the origin would be too coarse.
pub(crate) fn check_region(region: &Region, radius: &RadiusDist) -> Option<String> {
    let r_min = radius.min();
    let (lo, hi) = region.aabb();
    let reach = max_abs(lo).max(max_abs(hi));
    let spacing = f32_spacing(reach);
    if spacing <= REFUSE_FRACTION * r_min {
        return None;
    }
    let centre = [0, 1, 2].map(|i| 0.5 * (lo[i] + hi[i]));
    let half_extent = max_abs([0, 1, 2].map(|i| 0.5 * (hi[i] - lo[i])));
    let centred = f32_spacing(half_extent);
    let too_large = (centred > REFUSE_FRACTION * r_min).then(|| {
        format!(
            "the region (half size {} m) is too large for grains of radius {} m: even centred \
             on the origin, f32 positions across it are {centred:.3e} m apart, more than \
             {REFUSE_FRACTION} of the radius; use a smaller region or larger grains",
            short(half_extent),
            short(r_min)
        )
    });
    let far_from_origin = max_abs(centre) > half_extent;
    if let (Some(large), false) = (&too_large, far_from_origin) {
        return Some(large.clone());
    }
    let far = format!(
        "the region reaches {} m, where f32 positions are {spacing:.3e} m apart, more than \
         {REFUSE_FRACTION} of the smallest radius {} m: move the origin into the scene \
         (subtract about {} from every position, region and boundary position)",
        short(reach),
        short(r_min),
        point(centre)
    );
    Some(match too_large {
        Some(large) => format!("{far}; {large}"),
        None => far,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spacing_is_the_f32_ulp() {
        assert_eq!(f32_spacing(1.0), f32::EPSILON as f64);
        assert_eq!(f32_spacing(-1.5), f32::EPSILON as f64);
        // 500 km: 2^18 ≤ x < 2^19, spacing 2^(18−23) = 1/32 m.
        assert_eq!(f32_spacing(5e5), 1.0 / 32.0);
        assert_eq!(f32_spacing(1e3), 2f64.powi(9 - 23));
        assert_eq!(f32_spacing(1e39), f64::INFINITY);
        assert!(f32_spacing(0.0) > 0.0);
    }

    /// A kinematic body that starts near the origin and is driven 100 km away reaches
    /// there; one released before it gets far, or a dynamic one, does not.
    #[test]
    fn kinematic_travel_counts_until_release() {
        let entry = |step, vx, release| ScheduleEntry {
            t: 0.0,
            step,
            velocity: [vx, 0.0, 0.0],
            angular_velocity: [0.0; 3],
            release,
        };
        let run = (1e-3, 100_000);
        let (p, v) = ([1.0, 0.0, 0.0], [1000.0, 0.0, 0.0]);
        let near = |a: f64, b: f64| (a - b).abs() < 1e-9 * b;
        let (far, driver) = travel_reach(p, v, Motion::Kinematic, &[], run);
        assert!(near(far, 1.0 + 1000.0 * 100.0), "{far}");
        assert_eq!(driver, Some(Driver::Initial));
        assert_eq!(travel_reach(p, v, Motion::Dynamic, &[], run), (1.0, None));
        // 10 steps at 1000 m/s, then stopped: 10 m.
        let stopped = [entry(10, 0.0, false)];
        let (reach, _) = travel_reach(p, v, Motion::Kinematic, &stopped, run);
        assert!(near(reach, 11.0), "{reach}");
        let released = [entry(10, 5.0, true)];
        let (reach, _) = travel_reach(p, v, Motion::Kinematic, &released, run);
        assert!(near(reach, 11.0), "{reach}");
        // Out and back: the far point counts, not the end; then out the other way, driven
        // by the schedule's second velocity.
        let back = [entry(1000, -1000.0, false)];
        let (reach, _) = travel_reach([0.0; 3], v, Motion::Kinematic, &back, (1e-3, 2000));
        assert!(near(reach, 1000.0), "{reach}");
        let (reach, driver) = travel_reach([0.0; 3], v, Motion::Kinematic, &back, (1e-3, 2500));
        assert!(near(reach, 1000.0), "{reach}");
        assert_eq!(driver, Some(Driver::Initial));
        let (_, driver) = travel_reach([0.0; 3], v, Motion::Kinematic, &back, (1e-3, 3500));
        assert_eq!(driver, Some(Driver::Schedule(0)));
    }

    #[test]
    fn a_far_region_is_refused_and_a_near_one_is_not() {
        let near = Region::Box {
            min: [0.0; 3],
            max: [1.0; 3],
        };
        let far = Region::Box {
            min: [0.0, 0.0, 9e18],
            max: [1.0, 1.0, 9e18 + 1e6],
        };
        let r = RadiusDist::Uniform {
            min: 0.01,
            max: 0.02,
        };
        assert_eq!(check_region(&near, &r), None);
        let m = check_region(&far, &r).expect("refused");
        assert!(m.contains("move the origin"), "{m}");
        // Grains of 1 µm: in [0, 1]³ centring the region is enough; in [−1, 1]³, already
        // centred, only a smaller region or larger grains help.
        let small = RadiusDist::Constant(1e-6);
        let m = check_region(&near, &small).expect("refused");
        assert!(
            m.contains("move the origin") && !m.contains("too large"),
            "{m}"
        );
        let centred = Region::Box {
            min: [-1.0; 3],
            max: [1.0; 3],
        };
        let m = check_region(&centred, &small).expect("refused");
        assert!(
            m.contains("too large for grains") && !m.contains("move the origin"),
            "{m}"
        );
    }
}
