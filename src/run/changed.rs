//! Parameters changed from the library between steps (gravity, a material's friction, a joint
//! motor's target) that a checkpoint carries, so that resuming it — from the library or with
//! `bristlecone run --resume` — continues with them rather than with the scene file's values.
//!
//! They go into the checkpoint section `changed_parameters` as TOML (floats written as their
//! shortest round-trip decimal, so read back to the same bits); a checkpoint of a simulation
//! whose parameters were never changed has no such section and equals the command line's.

use serde::{Deserialize, Serialize};

use crate::gpu::GpuError;
use crate::io::Checkpoint;
use crate::joints::MotorTarget;
use crate::scene::Scene;
use crate::step::Simulation;

/// The checkpoint section's name.
pub const SECTION: &str = "changed_parameters";

/// What differs from the scene file (each the latest value set).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ChangedParameters {
    /// Gravity (m/s²).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gravity: Option<[f64; 3]>,
    /// Friction coefficient by material name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub friction: Vec<MaterialFriction>,
    /// Motor target by joint index (order of the scene's `[[joint]]` tables).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub motor_target: Vec<JointTarget>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MaterialFriction {
    pub material: String,
    pub friction: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JointTarget {
    pub joint: usize,
    pub target: f64,
}

impl ChangedParameters {
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    pub fn set_gravity(&mut self, g: [f64; 3]) {
        self.gravity = Some(g);
    }

    pub fn set_friction(&mut self, material: &str, friction: f64) {
        self.friction.retain(|m| m.material != material);
        self.friction.push(MaterialFriction {
            material: material.to_string(),
            friction,
        });
    }

    pub fn set_motor_target(&mut self, joint: usize, target: f64) {
        self.motor_target.retain(|j| j.joint != joint);
        self.motor_target.push(JointTarget { joint, target });
    }

    /// The checkpoint section, or none when nothing changed.
    pub fn section(&self) -> Option<(String, Vec<u8>)> {
        if self.is_empty() {
            return None;
        }
        let text = toml::to_string(self).expect("plain numbers and names serialize");
        Some((SECTION.to_string(), text.into_bytes()))
    }

    /// The changes a checkpoint carries (none when it has no such section).
    pub fn of(ck: &Checkpoint) -> Result<Self, String> {
        let Some((_, bytes)) = ck.sections.iter().find(|(n, _)| n == SECTION) else {
            return Ok(Self::default());
        };
        let text = std::str::from_utf8(bytes)
            .map_err(|_| format!("its '{SECTION}' section is not UTF-8"))?;
        toml::from_str(text).map_err(|e| format!("its '{SECTION}' section: {e}"))
    }

    /// Applies the changes to `sim` of `scene` (before its contact stages are rebuilt by a
    /// restore); refuses, naming it, a change the scene has no place for.
    pub fn apply(&self, sim: &mut Simulation, scene: &Scene) -> Result<(), String> {
        let bad = |what: String| format!("its '{SECTION}' section: {what}");
        if let Some(g) = self.gravity {
            if g.iter().any(|x| !x.is_finite()) {
                return Err(bad(format!("gravity {g:?} is not finite")));
            }
            sim.set_gravity(g);
        }
        for m in &self.friction {
            let Some(k) = scene.materials.iter().position(|x| x.name == m.material) else {
                return Err(bad(format!("the scene has no material '{}'", m.material)));
            };
            if !(m.friction.is_finite() && m.friction >= 0.0) {
                return Err(bad(format!(
                    "material '{}': friction {} is not ≥ 0",
                    m.material, m.friction
                )));
            }
            if let Some(c) = sim.settings.contact.as_mut() {
                c.collide.friction[k] = m.friction as f32;
            }
        }
        if !self.motor_target.is_empty() {
            let mut joints = sim.joints().to_vec();
            for j in &self.motor_target {
                let motor = joints
                    .get_mut(j.joint)
                    .and_then(|x| x.motor.as_mut())
                    .ok_or_else(|| bad(format!("joint {} has no motor", j.joint)))?;
                if !j.target.is_finite() {
                    return Err(bad(format!("joint {}: target is not finite", j.joint)));
                }
                motor.target = match motor.target {
                    MotorTarget::Velocity(_) => MotorTarget::Velocity(j.target),
                    MotorTarget::Position(_) => MotorTarget::Position(j.target),
                };
            }
            sim.set_joints(&joints)
                .map_err(|e: GpuError| bad(e.to_string()))?;
        }
        Ok(())
    }

    /// The changes written into `scene` (its gravity and materials), so that the scene a
    /// resumed simulation reports holds the values in force.
    pub fn write_into(&self, scene: &mut Scene) {
        if let Some(g) = self.gravity {
            scene.sim.gravity = g;
        }
        for m in &self.friction {
            if let Some(x) = scene.materials.iter_mut().find(|x| x.name == m.material) {
                x.friction = m.friction;
            }
        }
    }

    /// One line for the command line: what the resumed run continues with.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(g) = self.gravity {
            parts.push(format!("gravity {g:?}"));
        }
        for m in &self.friction {
            parts.push(format!("friction of '{}' {}", m.material, m.friction));
        }
        for j in &self.motor_target {
            parts.push(format!("motor target of joint {} {}", j.joint, j.target));
        }
        parts.join(", ")
    }
}
