//! `[periodic]`: the cell's faces along some axes identified (book: Boundaries, "Periodic
//! cells"; engine: `collide::periodic`).
//!
//! ```toml
//! [periodic]
//! x = [-0.05, 0.05]   # periodic along x over [x0, x1) (m)
//! y = [0.0, 0.1]      # and along y; an axis left out is not periodic
//! shear = { rate = 20.0, flow = "x", gradient = "y" }   # Lees–Edwards, optional
//! ```
//!
//! Refused at the line of the field: an interval that is empty or reversed; a period no longer
//! than 2 × (largest grain bounding diameter + envelope) (a grain could touch two images of
//! one neighbour); a body whose centre lies outside the cell; a plane whose normal has a
//! component along a periodic axis, a container (its walls would cut the seam), and the exact
//! solver (its CPU step detects without images). A shear is refused at its field: a rate that
//! is not finite, an axis that is not x, y or z or not periodic, flow = gradient, and grains
//! that are not spheres (only the sphere pair writes the image's velocity).

use std::ops::Range;

use super::joints::ErrFn;
use super::raw::{RawBoundary, RawPeriodic, RawShear, S};
use super::{BodyDesc, Boundary, BoundaryShape, SceneError, SolverKind, SolverSettings};
use bristlecone_model::periodic::{LeesEdwards, PeriodicCell};

const AXES: [&str; 3] = ["x", "y", "z"];

/// What the cell is checked against: the bodies (with a label for each and the lines that set
/// its position and its size), the boundaries (with their tables, in the same order) and the
/// solver.
pub(super) struct Context<'a> {
    pub bodies: &'a [BodyDesc],
    pub placed: &'a dyn Fn(usize) -> (String, usize),
    pub sized: &'a dyn Fn(usize) -> (String, usize),
    /// The 1-based line of a span.
    pub line: &'a dyn Fn(Range<usize>) -> usize,
    pub boundaries: &'a [Boundary],
    pub raw_boundaries: &'a [S<RawBoundary>],
    pub solver: &'a SolverSettings,
}

/// The validated cell, or None without a `[periodic]` table.
pub(super) fn parse(
    err: ErrFn,
    raw: Option<&S<RawPeriodic>>,
    cx: &Context,
) -> Result<Option<PeriodicCell>, SceneError> {
    let (bodies, solver) = (cx.bodies, cx.solver);
    let Some(raw) = raw else {
        return Ok(None);
    };
    let r = raw.get_ref();
    let fields = [&r.x, &r.y, &r.z];
    let mut cell = PeriodicCell::default();
    for (k, f) in fields.iter().enumerate() {
        if let Some(f) = f {
            let [lo, hi] = *f.get_ref();
            if hi <= lo {
                return Err(err(
                    Some(f.span()),
                    format!("periodic.{}", AXES[k]),
                    format!("[{lo}, {hi}] is empty: give [lower, upper] with lower < upper (m)"),
                ));
            }
            cell.origin[k] = lo;
            cell.length[k] = hi - lo;
        }
    }
    let first = fields
        .iter()
        .enumerate()
        .find_map(|(k, f)| f.as_ref().map(|f| (k, f.span())));
    let Some((_, table_span)) = first else {
        return Err(err(
            Some(raw.span()),
            "periodic".into(),
            "no periodic axis: give at least one of x, y, z as [lower, upper] (m)".into(),
        ));
    };
    if let Some(sh) = &r.shear {
        cell.shear = Some(parse_shear(err, sh.get_ref(), &cell, bodies)?);
    }
    if solver.kind == SolverKind::Lemke {
        return Err(err(
            Some(table_span),
            "periodic".into(),
            "a periodic cell needs solver kind \"apgd\" or \"jacobi\": the exact solver's CPU \
             step detects contacts without periodic images"
                .into(),
        ));
    }
    let field = |k: usize| {
        (
            fields[k].as_ref().map(|f| f.span()),
            format!("periodic.{}", AXES[k]),
        )
    };
    let largest = (0..bodies.len()).max_by(|&i, &j| {
        let r = |k: usize| bodies[k].shape.bounding_radius();
        r(i).total_cmp(&r(j))
    });
    let r_max = largest.map_or(0.0, |i| bodies[i].shape.bounding_radius());
    if let Err(m) = cell.check_reach(r_max, solver.envelope) {
        let k = (0..3)
            .find(|&k| {
                cell.length[k] > 0.0 && cell.length[k] <= 2.0 * (2.0 * r_max + solver.envelope)
            })
            .unwrap_or(0);
        let (span, name) = field(k);
        // The grain's size may be what is wrong: name where it is set.
        let (label, line) = (cx.sized)(largest.unwrap_or(0));
        return Err(err(
            span,
            name,
            format!("{m}; the largest grain is {label}, sized on line {line}"),
        ));
    }
    for (i, b) in bodies.iter().enumerate() {
        for k in (0..3).filter(|&k| cell.length[k] > 0.0) {
            let (lo, hi) = (cell.origin[k], cell.origin[k] + cell.length[k]);
            let x = b.position[k];
            if !(lo..hi).contains(&x) {
                let (span, name) = field(k);
                let (label, line) = (cx.placed)(i);
                return Err(err(
                    span,
                    name,
                    format!(
                        "body {i} ({label}, placed on line {line}) lies at {} = {x}, outside \
                         the cell [{lo}, {hi}): a periodic cell holds every body (move it, or \
                         the generator's region, inside)",
                        AXES[k]
                    ),
                ));
            }
        }
    }
    for (i, b) in cx.boundaries.iter().enumerate() {
        if let Some((key, m)) = crosses_seam(b, &cell) {
            let rb = cx.raw_boundaries.get(i).map(|r| r.get_ref());
            let span = match key {
                "normal" => rb.and_then(|r| r.normal.as_ref()).map(|n| n.span()),
                _ => rb.map(|r| r.kind.span()),
            };
            return Err(err(
                span,
                format!("boundary[{i}].{key}"),
                format!(
                    "`{}` {m} (the cell is periodic from line {})",
                    b.name,
                    (cx.line)(table_span.clone())
                ),
            ));
        }
    }
    Ok(Some(cell))
}

/// The Lees–Edwards shear of `cell` (its periods already read).
fn parse_shear(
    err: ErrFn,
    sh: &RawShear,
    cell: &PeriodicCell,
    bodies: &[BodyDesc],
) -> Result<LeesEdwards, SceneError> {
    let rate = *sh.rate.get_ref();
    if !rate.is_finite() {
        return Err(err(
            Some(sh.rate.span()),
            "periodic.shear.rate".into(),
            format!("{rate} is not a finite shear rate (1/s)"),
        ));
    }
    let axis = |f: &S<String>, key: &str| {
        let name = f.get_ref().as_str();
        let field = format!("periodic.shear.{key}");
        let Some(k) = AXES.iter().position(|&a| a == name) else {
            let m = format!("\"{name}\" is not an axis: give \"x\", \"y\" or \"z\"");
            return Err(err(Some(f.span()), field, m));
        };
        if cell.length[k] <= 0.0 {
            let m = format!("the cell is not periodic along {name}: give periodic.{name} too");
            return Err(err(Some(f.span()), field, m));
        }
        Ok(k)
    };
    let flow = axis(&sh.flow, "flow")?;
    let gradient = axis(&sh.gradient, "gradient")?;
    if flow == gradient {
        return Err(err(
            Some(sh.gradient.span()),
            "periodic.shear.gradient".into(),
            format!(
                "the gradient axis must differ from the flow axis ({})",
                AXES[flow]
            ),
        ));
    }
    if let Some(i) = bodies
        .iter()
        .position(|b| !matches!(b.shape, super::BodyShape::Sphere { .. }))
    {
        return Err(err(
            Some(sh.rate.span()),
            "periodic.shear".into(),
            format!(
                "body {i} is not a sphere: Lees–Edwards shear takes sphere grains only (the \
                 other narrow phases do not write the image's velocity)"
            ),
        ));
    }
    Ok(LeesEdwards {
        rate,
        flow,
        gradient,
    })
}

/// Why boundary `b` cannot stand in the cell, if it cannot (the key at fault, the reason):
/// boundaries are not imaged, so one that cuts a periodic axis would act on one side of the
/// seam only.
fn crosses_seam(b: &Boundary, cell: &PeriodicCell) -> Option<(&'static str, String)> {
    match &b.shape {
        BoundaryShape::Plane => {
            let q = glam::DQuat::from_array(b.orientation);
            let n = q * glam::DVec3::Z;
            let k = (0..3).find(|&k| cell.length[k] > 0.0 && n[k].abs() > 1e-9)?;
            Some((
                "normal",
                format!(
                    "is a plane with normal {n:.3} not perpendicular to the periodic axis {}: \
                     boundaries are not imaged across the seam",
                    AXES[k]
                ),
            ))
        }
        BoundaryShape::BoxContainer { .. } | BoundaryShape::CylinderContainer { .. } => Some((
            "kind",
            "is a container: its walls would cut the periodic cell (boundaries are not imaged \
             across the seam); use planes perpendicular to the axes that are not periodic"
                .into(),
        )),
        _ => None,
    }
}
