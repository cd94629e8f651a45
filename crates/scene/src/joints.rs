//! `[[joint]]` tables (book: Joints): joints between named `[[body]]` entries or a body and the
//! world, placed in the scene's initial configuration (world coordinates).
//!
//! ```toml
//! [[joint]]
//! kind = "revolute"        # spherical | revolute | prismatic | fixed | universal | distance
//! body_a = "world"         # a [[body]] or [[boundary]] name, or "world" (the default)
//! body_b = "arm"           # a [[body]] or (dynamic) [[boundary]] name
//! anchor = [0.0, 0.0, 1.0] # world point of the joint (distance: A's end)
//! axis = [0.0, 1.0, 0.0]   # hinge / slide axis (default +z); universal: the cross axis
//! limits = [-0.5, 0.5]     # revolute (rad) / prismatic (m): lower ≤ upper
//! motor_velocity = 2.0     # or motor_position = 0.3 (revolute / prismatic)
//! motor_max_force = 5.0    # force (N) or torque (N·m) limit; absent: unlimited
//! # distance only: anchor_b = B's end, length (default: the initial distance), rope = true
//! ```
//!
//! Errors name file, line and field: an unknown or ambiguous body, a joint of a body with
//! itself or between two fixed bodies (or a fixed body and the world), a zero axis,
//! lower > upper, fields that do not apply to the kind, two motor targets. With
//! `[solver] kind = "lemke"` the joints' rows are solved in the step's LCP (`reference::lcp`).

use std::ops::Range;

use glam::DVec3;

use super::raw::{RawBody, RawJoint, S};
use super::{BodyDesc, Motion, SceneError};
use bristlecone_model::body::BodyState;
use bristlecone_model::joint::{Joint, JointKind, Motor, MotorTarget};

/// A validated joint in world coordinates; bodies index [`super::Scene::bodies`], or
/// [`super::Scene::boundaries`] where `on_boundary` says so.
#[derive(Clone, Debug, PartialEq)]
pub struct JointDesc {
    pub kind: JointKind,
    /// None: the world.
    pub body_a: Option<usize>,
    pub body_b: usize,
    pub anchor: [f64; 3],
    /// Distance joints: B's end.
    pub anchor_b: Option<[f64; 3]>,
    /// Unit axis.
    pub axis: [f64; 3],
    pub limits: Option<(f64, f64)>,
    pub motor: Option<Motor>,
    /// Whether body_a / body_b name a boundary (index into `Scene::boundaries`).
    pub on_boundary: [bool; 2],
}

/// The error constructor of the scene validator: (span, field, message).
pub(super) type ErrFn<'a> = &'a dyn Fn(Option<Range<usize>>, String, String) -> SceneError;

/// Validates the `[[joint]]` tables against the explicit `[[body]]` entries (the first
/// `raw_bodies.len()` of `bodies`).
pub(super) fn parse(
    err: ErrFn,
    raw: &[S<RawJoint>],
    raw_bodies: &[S<RawBody>],
    bodies: &[BodyDesc],
    boundaries: &[super::Boundary],
) -> Result<Vec<JointDesc>, SceneError> {
    let bodies = Bodies {
        raw_bodies,
        bodies,
        boundaries,
    };
    raw.iter()
        .enumerate()
        .map(|(i, rj)| {
            let e = JointErr {
                err,
                base: format!("joint[{i}]"),
            };
            parse_joint(&e, rj, &bodies)
        })
        .collect()
}

/// What a joint's body names are looked up in, and whether each body moves.
struct Bodies<'a> {
    raw_bodies: &'a [S<RawBody>],
    bodies: &'a [BodyDesc],
    boundaries: &'a [super::Boundary],
}

/// The errors of one `[[joint]]` table: its field paths start with `joint[i]`.
struct JointErr<'a> {
    err: ErrFn<'a>,
    base: String,
}

impl JointErr<'_> {
    fn at(&self, span: Range<usize>, field: &str, msg: impl Into<String>) -> SceneError {
        (self.err)(Some(span), format!("{}.{field}", self.base), msg.into())
    }

    /// `v` finite, else an error at `span`.
    fn finite(&self, v: &[f64], span: Range<usize>, field: &str) -> Result<(), SceneError> {
        if v.iter().all(|x| x.is_finite()) {
            Ok(())
        } else {
            Err(self.at(span, field, "must be finite"))
        }
    }
}

type Found = Option<(usize, bool)>;

/// One `[[joint]]` table: its bodies, kind, anchors and axis, limits and motor.
fn parse_joint(e: &JointErr, rj: &S<RawJoint>, bodies: &Bodies) -> Result<JointDesc, SceneError> {
    let j = rj.get_ref();
    let a = match &j.body_a {
        Some(n) => bodies.find(e, n, "body_a")?,
        None => None,
    };
    let Some(b) = bodies.find(e, &j.body_b, "body_b")? else {
        return Err(e.at(
            j.body_b.span(),
            "body_b",
            "body_b must be a body, not the world",
        ));
    };
    if a == Some(b) {
        return Err(e.at(
            j.body_b.span(),
            "body_b",
            "a joint needs two different bodies",
        ));
    }
    if bodies.fixed(a) && bodies.fixed(Some(b)) {
        return Err(e.at(
            j.body_b.span(),
            "body_b",
            "a joint between two fixed (or kinematic) bodies, or one and the world, constrains \
             nothing",
        ));
    }
    let kind = joint_kind(e, j)?;
    e.finite(j.anchor.get_ref(), j.anchor.span(), "anchor")?;
    let axis = axis(e, j)?;
    let (kind, anchor_b) = match kind {
        JointKind::Distance { .. } => {
            let (kind, anchor_b) = distance(e, rj)?;
            (kind, Some(anchor_b))
        }
        kind => (kind, None),
    };
    let limits = limits(e, j, kind)?;
    let target = motor_target(e, j)?;
    let max_force = motor_max_force(e, j, target.is_some())?;
    Ok(JointDesc {
        kind,
        body_a: a.map(|x| x.0),
        body_b: b.0,
        anchor: *j.anchor.get_ref(),
        anchor_b,
        axis,
        limits,
        motor: target.map(|target| Motor { target, max_force }),
        on_boundary: [a.is_some_and(|x| x.1), b.1],
    })
}

impl Bodies<'_> {
    /// (index, is a boundary) of a body name among the [[body]] and [[boundary]] names; None
    /// for the world.
    fn find(&self, e: &JointErr, name: &S<String>, field: &str) -> Result<Found, SceneError> {
        let n = name.get_ref();
        if n == "world" {
            return Ok(None);
        }
        let named = |b: &&S<RawBody>| b.get_ref().name.as_ref().is_some_and(|x| x.get_ref() == n);
        let hits: Vec<(usize, bool)> = (self.raw_bodies.iter().enumerate())
            .filter(|(_, b)| named(b))
            .map(|(k, _)| (k, false))
            .chain(
                (self.boundaries.iter().enumerate())
                    .filter(|(_, b)| b.name == *n)
                    .map(|(k, _)| (k, true)),
            )
            .collect();
        match hits.as_slice() {
            [k] => Ok(Some(*k)),
            [] => Err(e.at(
                name.span(),
                field,
                format!("unknown body `{n}` (name a [[body]] or [[boundary]] entry, or \"world\")"),
            )),
            _ => Err(e.at(
                name.span(),
                field,
                format!(
                    "ambiguous body `{n}`: {} [[body]] / [[boundary]] entries have this name",
                    hits.len()
                ),
            )),
        }
    }

    /// Whether a joint's body (None: the world) does not move with the solve.
    fn fixed(&self, k: Found) -> bool {
        k.is_none_or(|(k, on_b)| {
            let m = if on_b {
                self.boundaries[k].motion
            } else {
                self.bodies[k].motion
            };
            m != Motion::Dynamic
        })
    }
}

/// The joint's kind, with the keys that do not apply to it refused.
fn joint_kind(e: &JointErr, j: &RawJoint) -> Result<JointKind, SceneError> {
    let kind_name = j.kind.get_ref().as_str();
    let kind = match kind_name {
        "spherical" => JointKind::Spherical,
        "revolute" => JointKind::Revolute,
        "prismatic" => JointKind::Prismatic,
        "fixed" => JointKind::Fixed,
        "universal" => JointKind::Universal,
        "distance" => JointKind::Distance {
            length: 0.0,
            rope: false,
        },
        other => {
            return Err(e.at(
                j.kind.span(),
                "kind",
                format!(
                    "unknown joint kind `{other}` (expected one of: spherical, revolute, \
                     prismatic, fixed, universal, distance)"
                ),
            ))
        }
    };
    let distance = matches!(kind, JointKind::Distance { .. });
    let driven = matches!(kind, JointKind::Revolute | JointKind::Prismatic);
    let keys = [
        ("anchor_b", j.anchor_b.as_ref().map(|s| s.span()), distance),
        ("length", j.length.as_ref().map(|s| s.span()), distance),
        ("rope", j.rope.as_ref().map(|s| s.span()), distance),
        ("axis", j.axis.as_ref().map(|s| s.span()), !distance),
        ("limits", j.limits.as_ref().map(|s| s.span()), driven),
        (
            "motor_velocity",
            j.motor_velocity.as_ref().map(|s| s.span()),
            driven,
        ),
        (
            "motor_position",
            j.motor_position.as_ref().map(|s| s.span()),
            driven,
        ),
        (
            "motor_max_force",
            j.motor_max_force.as_ref().map(|s| s.span()),
            driven,
        ),
    ];
    for (field, present, applies) in keys {
        if let (Some(s), false) = (present, applies) {
            return Err(e.at(
                s,
                field,
                format!("`{field}` does not apply to joint kind `{kind_name}`"),
            ));
        }
    }
    Ok(kind)
}

/// A distance joint's second anchor and length (given, or the anchors' distance).
fn distance(e: &JointErr, rj: &S<RawJoint>) -> Result<(JointKind, [f64; 3]), SceneError> {
    let j = rj.get_ref();
    let Some(ab) = &j.anchor_b else {
        return Err(e.at(
            rj.span(),
            "anchor_b",
            "missing field `anchor_b` (required for joint kind `distance`)",
        ));
    };
    e.finite(ab.get_ref(), ab.span(), "anchor_b")?;
    let length = match &j.length {
        Some(l) if !(l.get_ref().is_finite() && *l.get_ref() > 0.0) => {
            return Err(e.at(
                l.span(),
                "length",
                format!("must be positive (got {})", l.get_ref()),
            ))
        }
        Some(l) => *l.get_ref(),
        None => {
            (DVec3::from_array(*ab.get_ref()) - DVec3::from_array(*j.anchor.get_ref())).length()
        }
    };
    if length <= 0.0 {
        return Err(e.at(
            ab.span(),
            "anchor_b",
            "the anchors coincide: give `length` or move them apart",
        ));
    }
    let rope = j.rope.as_ref().is_some_and(|r| *r.get_ref());
    Ok((JointKind::Distance { length, rope }, *ab.get_ref()))
}

/// The joint's unit axis (z when not given).
fn axis(e: &JointErr, j: &RawJoint) -> Result<[f64; 3], SceneError> {
    let Some(ax) = &j.axis else {
        return Ok([0.0, 0.0, 1.0]);
    };
    let d = DVec3::from_array(*ax.get_ref());
    let n = d.length();
    if !n.is_finite() || n <= 1e-12 {
        return Err(e.at(ax.span(), "axis", "zero-length axis"));
    }
    Ok((d / n).to_array())
}

/// A driven joint's limits, ordered (a revolute joint's within (−π, π] rad).
fn limits(e: &JointErr, j: &RawJoint, kind: JointKind) -> Result<Option<(f64, f64)>, SceneError> {
    let Some(l) = &j.limits else {
        return Ok(None);
    };
    let [lo, hi] = *l.get_ref();
    e.finite(&[lo, hi], l.span(), "limits")?;
    if lo > hi {
        return Err(e.at(l.span(), "limits", format!("lower {lo} > upper {hi}")));
    }
    let pi = std::f64::consts::PI;
    if kind == JointKind::Revolute && (lo <= -pi || hi > pi) {
        return Err(e.at(
            l.span(),
            "limits",
            "revolute limits must lie in (−π, π] rad",
        ));
    }
    Ok(Some((lo, hi)))
}

/// A driven joint's motor target: a velocity or a position, not both.
fn motor_target(e: &JointErr, j: &RawJoint) -> Result<Option<MotorTarget>, SceneError> {
    match (&j.motor_velocity, &j.motor_position) {
        (Some(_), Some(p)) => Err(e.at(
            p.span(),
            "motor_position",
            "give motor_velocity or motor_position, not both",
        )),
        (Some(v), None) => {
            e.finite(&[*v.get_ref()], v.span(), "motor_velocity")?;
            Ok(Some(MotorTarget::Velocity(*v.get_ref())))
        }
        (None, Some(p)) => {
            e.finite(&[*p.get_ref()], p.span(), "motor_position")?;
            Ok(Some(MotorTarget::Position(*p.get_ref())))
        }
        (None, None) => Ok(None),
    }
}

/// The motor's force limit (unlimited when not given); refused without a motor target.
fn motor_max_force(e: &JointErr, j: &RawJoint, has_target: bool) -> Result<f64, SceneError> {
    match &j.motor_max_force {
        Some(f) if !has_target => Err(e.at(
            f.span(),
            "motor_max_force",
            "a force limit without a motor target (motor_velocity or motor_position)",
        )),
        Some(f) if f.get_ref().is_nan() || *f.get_ref() <= 0.0 => Err(e.at(
            f.span(),
            "motor_max_force",
            format!("must be positive (got {})", f.get_ref()),
        )),
        Some(f) => Ok(*f.get_ref()),
        None => Ok(f64::INFINITY),
    }
}

/// The library joints of a scene's joints for the body arrays of `setup::build_bodies`
/// (boundaries first: scene body k is body `boundaries + k`, boundary k is body k).
pub fn build_joints(joints: &[JointDesc], boundaries: usize, state: &BodyState) -> Vec<Joint> {
    joints
        .iter()
        .map(|d| {
            let id = |k: usize, on_b: bool| (if on_b { k } else { boundaries + k }) as u32;
            let a = d.body_a.map(|k| id(k, d.on_boundary[0]));
            let j = Joint::new(d.kind, a, id(d.body_b, d.on_boundary[1]));
            let p = DVec3::from_array(d.anchor);
            let mut j = match d.anchor_b {
                Some(pb) => j.between(state, p, DVec3::from_array(pb)),
                None => j.at(state, p, DVec3::from_array(d.axis)),
            };
            j.limits = d.limits;
            j.motor = d.motor;
            j
        })
        .collect()
}
