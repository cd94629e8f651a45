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
use bristlecone_engine::bodies::BodyState;
use bristlecone_engine::joints::{Joint, JointKind, Motor, MotorTarget};

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
    let mut out = Vec::with_capacity(raw.len());
    for (i, rj) in raw.iter().enumerate() {
        let base = format!("joint[{i}]");
        let j = rj.get_ref();
        let e = |span: Range<usize>, field: &str, msg: String| {
            err(Some(span), format!("{base}.{field}"), msg)
        };
        // (index, is a boundary); a name is looked up among [[body]] and [[boundary]] names.
        let body = |name: &S<String>, field: &str| -> Result<Option<(usize, bool)>, SceneError> {
            let n = name.get_ref();
            if n == "world" {
                return Ok(None);
            }
            let hits: Vec<(usize, bool)> = raw_bodies
                .iter()
                .enumerate()
                .filter(|(_, b)| b.get_ref().name.as_ref().is_some_and(|x| x.get_ref() == n))
                .map(|(k, _)| (k, false))
                .chain(
                    boundaries
                        .iter()
                        .enumerate()
                        .filter(|(_, b)| b.name == *n)
                        .map(|(k, _)| (k, true)),
                )
                .collect();
            match hits.as_slice() {
                [k] => Ok(Some(*k)),
                [] => Err(e(
                    name.span(),
                    field,
                    format!(
                        "unknown body `{n}` (name a [[body]] or [[boundary]] entry, or \"world\")"
                    ),
                )),
                _ => Err(e(
                    name.span(),
                    field,
                    format!(
                        "ambiguous body `{n}`: {} [[body]] / [[boundary]] entries have this name",
                        hits.len()
                    ),
                )),
            }
        };
        let a = match &j.body_a {
            Some(n) => body(n, "body_a")?,
            None => None,
        };
        let Some(b) = body(&j.body_b, "body_b")? else {
            return Err(e(
                j.body_b.span(),
                "body_b",
                "body_b must be a body, not the world".into(),
            ));
        };
        if a == Some(b) {
            return Err(e(
                j.body_b.span(),
                "body_b",
                "a joint needs two different bodies".into(),
            ));
        }
        let fixed = |k: Option<(usize, bool)>| {
            k.is_none_or(|(k, on_b)| {
                let m = if on_b {
                    boundaries[k].motion
                } else {
                    bodies[k].motion
                };
                m != Motion::Dynamic
            })
        };
        if fixed(a) && fixed(Some(b)) {
            return Err(e(
                j.body_b.span(),
                "body_b",
                "a joint between two fixed (or kinematic) bodies, or one and the world, constrains nothing".into(),
            ));
        }
        let on_boundary = [a.is_some_and(|x| x.1), b.1];
        let (a, b) = (a.map(|x| x.0), b.0);
        let kind_name = j.kind.get_ref().as_str();
        let mut kind = match kind_name {
            "spherical" => JointKind::Spherical,
            "revolute" => JointKind::Revolute,
            "prismatic" => JointKind::Prismatic,
            "fixed" => JointKind::Fixed,
            "universal" => JointKind::Universal,
            "distance" => JointKind::Distance { length: 0.0, rope: false },
            other => {
                return Err(e(
                    j.kind.span(),
                    "kind",
                    format!("unknown joint kind `{other}` (expected one of: spherical, revolute, prismatic, fixed, universal, distance)"),
                ))
            }
        };
        let not_for = |present: Option<Range<usize>>, field: &str, ok: bool| match present {
            Some(s) if !ok => Err(e(
                s,
                field,
                format!("`{field}` does not apply to joint kind `{kind_name}`"),
            )),
            _ => Ok(()),
        };
        let distance = matches!(kind, JointKind::Distance { .. });
        let driven = matches!(kind, JointKind::Revolute | JointKind::Prismatic);
        not_for(j.anchor_b.as_ref().map(|s| s.span()), "anchor_b", distance)?;
        not_for(j.length.as_ref().map(|s| s.span()), "length", distance)?;
        not_for(j.rope.as_ref().map(|s| s.span()), "rope", distance)?;
        not_for(j.axis.as_ref().map(|s| s.span()), "axis", !distance)?;
        for (f, s) in [
            ("limits", j.limits.as_ref().map(|s| s.span())),
            (
                "motor_velocity",
                j.motor_velocity.as_ref().map(|s| s.span()),
            ),
            (
                "motor_position",
                j.motor_position.as_ref().map(|s| s.span()),
            ),
            (
                "motor_max_force",
                j.motor_max_force.as_ref().map(|s| s.span()),
            ),
        ] {
            not_for(s, f, driven)?;
        }
        let finite = |v: &[f64], span: Range<usize>, field: &str| {
            if v.iter().all(|x| x.is_finite()) {
                Ok(())
            } else {
                Err(e(span, field, "must be finite".into()))
            }
        };
        finite(j.anchor.get_ref(), j.anchor.span(), "anchor")?;
        let axis = match &j.axis {
            Some(ax) => {
                let d = DVec3::from_array(*ax.get_ref());
                let n = d.length();
                if !n.is_finite() || n <= 1e-12 {
                    return Err(e(ax.span(), "axis", "zero-length axis".into()));
                }
                (d / n).to_array()
            }
            None => [0.0, 0.0, 1.0],
        };
        let mut anchor_b = None;
        if distance {
            let Some(ab) = &j.anchor_b else {
                return Err(e(
                    rj.span(),
                    "anchor_b",
                    "missing field `anchor_b` (required for joint kind `distance`)".into(),
                ));
            };
            finite(ab.get_ref(), ab.span(), "anchor_b")?;
            let len = match &j.length {
                Some(l) if !(l.get_ref().is_finite() && *l.get_ref() > 0.0) => {
                    return Err(e(
                        l.span(),
                        "length",
                        format!("must be positive (got {})", l.get_ref()),
                    ))
                }
                Some(l) => *l.get_ref(),
                None => (DVec3::from_array(*ab.get_ref()) - DVec3::from_array(*j.anchor.get_ref()))
                    .length(),
            };
            if len <= 0.0 {
                return Err(e(
                    ab.span(),
                    "anchor_b",
                    "the anchors coincide: give `length` or move them apart".into(),
                ));
            }
            kind = JointKind::Distance {
                length: len,
                rope: j.rope.as_ref().is_some_and(|r| *r.get_ref()),
            };
            anchor_b = Some(*ab.get_ref());
        }
        let limits = match &j.limits {
            Some(l) => {
                let [lo, hi] = *l.get_ref();
                finite(&[lo, hi], l.span(), "limits")?;
                if lo > hi {
                    return Err(e(l.span(), "limits", format!("lower {lo} > upper {hi}")));
                }
                if kind == JointKind::Revolute
                    && (lo <= -std::f64::consts::PI || hi > std::f64::consts::PI)
                {
                    return Err(e(
                        l.span(),
                        "limits",
                        "revolute limits must lie in (−π, π] rad".into(),
                    ));
                }
                Some((lo, hi))
            }
            None => None,
        };
        let target = match (&j.motor_velocity, &j.motor_position) {
            (Some(_), Some(p)) => {
                return Err(e(
                    p.span(),
                    "motor_position",
                    "give motor_velocity or motor_position, not both".into(),
                ))
            }
            (Some(v), None) => {
                finite(&[*v.get_ref()], v.span(), "motor_velocity")?;
                Some(MotorTarget::Velocity(*v.get_ref()))
            }
            (None, Some(p)) => {
                finite(&[*p.get_ref()], p.span(), "motor_position")?;
                Some(MotorTarget::Position(*p.get_ref()))
            }
            (None, None) => None,
        };
        let max_force = match &j.motor_max_force {
            Some(f) if target.is_none() => {
                return Err(e(
                    f.span(),
                    "motor_max_force",
                    "a force limit without a motor target (motor_velocity or motor_position)"
                        .into(),
                ))
            }
            Some(f) if f.get_ref().is_nan() || *f.get_ref() <= 0.0 => {
                return Err(e(
                    f.span(),
                    "motor_max_force",
                    format!("must be positive (got {})", f.get_ref()),
                ))
            }
            Some(f) => *f.get_ref(),
            None => f64::INFINITY,
        };
        out.push(JointDesc {
            kind,
            body_a: a,
            body_b: b,
            anchor: *j.anchor.get_ref(),
            anchor_b,
            axis,
            limits,
            motor: target.map(|target| Motor { target, max_force }),
            on_boundary,
        });
    }
    Ok(out)
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
