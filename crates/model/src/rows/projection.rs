//! A contact's projection set and its one encoding in the solver's state segment.
//!
//! A contact's rows 0–2 are projected on one of three convex sets, chosen at assembly by its
//! pair's model ([`Projection`]). The GPU keeps the choice in the contact's `vec4` of the state
//! segment (segment 5 of `gam`, present when the model table has state or cohesion), which
//! the projections already read for the set's size, so naming the kind costs no memory
//! traffic:
//!
//! | lane | cone | disk | box |
//! |---|---|---|---|
//! | x | the model's (Hunt–Crossley v₀) | the model's (LuGre z_u) | 0 |
//! | y | the normal shift F_c dt (cohesion; 0 without) | the model's (LuGre z_w) | 0 |
//! | z | [`PROJECTION_CONE`] | [`PROJECTION_DISK`] | [`PROJECTION_BOX`] |
//! | w | 0 | radius | half-width |
//!
//! The kind is a small integer stored as an f32 (exact), so a zeroed segment reads as the
//! cone. The cone's μ is the record's `ra.w`, not a state lane. `encode_projection` and
//! `project_state` in `shaders/common/solve.wgsl` are [`Projection::encode`] and
//! [`Projection::decode`] in f32, with the same `PROJECTION_*` constants (`step::shared_ids`
//! compares them); the f64 twin keeps a [`Projection`] per contact and projects with it.
//!
//! Joint blocks and patch blocks are not in this encoding: a record says it is one (its
//! `ids.w` joint bit, its patch feature id) before any state is read, and their lanes hold
//! other things (a joint's rule is in its flag bits and its bound in `ra.w`; a patch keeps
//! its bristle state and guard factor in the state segment).

/// The kind lane's value of the Coulomb cone (`PROJECTION_CONE` in the shaders).
pub const PROJECTION_CONE: u32 = 0;
/// The kind lane's value of the disk γ_n ≥ 0, ‖γ_T‖ ≤ r (tanh, point LuGre).
pub const PROJECTION_DISK: u32 = 1;
/// The kind lane's value of the box γ_n ≥ 0, |γ_u|, |γ_w| ≤ b (bristle, `projection = "box"`).
pub const PROJECTION_BOX: u32 = 2;

/// The set a contact's impulse (γ_n, γ_u, γ_w) is projected on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Projection {
    /// Coulomb's cone ‖γ_T‖ ≤ μ (γ_n + shift), γ_n ≥ −shift: the cone shifted along the
    /// normal by a cohesive pair's F_c dt (Tasora et al. 2021; shift 0 without cohesion).
    Cone { mu: f64, shift: f64 },
    /// γ_n ≥ 0 and ‖γ_T‖ ≤ radius, a bound lagged from the last step (tanh, point LuGre),
    /// so friction does not couple to the current γ_n.
    Disk { radius: f64 },
    /// γ_n ≥ 0 and |γ_u|, |γ_w| ≤ half_width = μ γ_n⁻ (Peiret et al.'s bristle box).
    Box { half_width: f64 },
}

impl Projection {
    /// The uncohesive Coulomb cone of μ.
    pub fn cone(mu: f64) -> Self {
        Projection::Cone { mu, shift: 0.0 }
    }

    /// The kind lane's value.
    pub fn kind(&self) -> u32 {
        match self {
            Projection::Cone { .. } => PROJECTION_CONE,
            Projection::Disk { .. } => PROJECTION_DISK,
            Projection::Box { .. } => PROJECTION_BOX,
        }
    }

    /// The contact's state `vec4` with this projection written into the lanes it owns (the
    /// table in the module docs); `model` = the lanes (x, y) the contact's model keeps (its
    /// y is overwritten by a cone's shift). μ stays in the record.
    pub fn encode(&self, model: [f32; 2]) -> [f32; 4] {
        let kind = self.kind() as f32;
        match *self {
            Projection::Cone { shift, .. } => [model[0], shift as f32, kind, 0.0],
            Projection::Disk { radius: b } | Projection::Box { half_width: b } => {
                [model[0], model[1], kind, b as f32]
            }
        }
    }

    /// The projection a state `vec4` encodes, with the record's μ for a cone; an unknown
    /// kind is an error naming it (the shaders, whose assembly writes only these kinds,
    /// read any other as the cone).
    pub fn decode(state: [f32; 4], mu: f32) -> Result<Self, String> {
        let bound = state[3] as f64;
        match state[2] {
            k if k == PROJECTION_CONE as f32 => Ok(Projection::Cone {
                mu: mu as f64,
                shift: state[1] as f64,
            }),
            k if k == PROJECTION_DISK as f32 => Ok(Projection::Disk { radius: bound }),
            k if k == PROJECTION_BOX as f32 => Ok(Projection::Box { half_width: bound }),
            k => Err(format!("state lane z = {k} is no projection kind")),
        }
    }

    /// The cone's (μ, shift); None for the sets whose rows separate (disk, box).
    pub fn as_cone(&self) -> Option<(f64, f64)> {
        match *self {
            Projection::Cone { mu, shift } => Some((mu, shift)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind survives encode → decode exactly (values representable in f32), and the
    /// model's lanes survive where the kind leaves them to the model.
    #[test]
    fn encode_then_decode_gives_every_kind_back() {
        let model = [0.25, -0.5];
        let cases = [
            (Projection::cone(0.5), [0.25, 0.0]),
            (
                Projection::Cone {
                    mu: 0.5,
                    shift: 0.125,
                },
                [0.25, 0.125],
            ),
            (Projection::Disk { radius: 0.0 }, model),
            (Projection::Disk { radius: 3.5 }, model),
            (Projection::Box { half_width: 0.0 }, model),
            (Projection::Box { half_width: 0.75 }, model),
        ];
        for (p, lanes) in cases {
            let s = p.encode(model);
            assert_eq!([s[0], s[1]], lanes, "{p:?}: model lanes");
            assert_eq!(s[2], p.kind() as f32, "{p:?}: kind lane");
            assert_eq!(Projection::decode(s, 0.5), Ok(p));
        }
        let kinds = [PROJECTION_CONE, PROJECTION_DISK, PROJECTION_BOX];
        assert!(kinds
            .iter()
            .enumerate()
            .all(|(i, a)| !kinds[..i].contains(a)));
        let err = Projection::decode([0.0, 0.0, 7.0, 0.0], 0.5).unwrap_err();
        assert!(err.contains("z = 7"), "{err}");
    }

    /// A zeroed state `vec4` (no assembly wrote it) is the uncohesive cone.
    #[test]
    fn a_zeroed_state_is_the_cone() {
        assert_eq!(
            Projection::decode([0.0; 4], 0.3),
            Ok(Projection::cone(0.3_f32 as f64))
        );
    }
}
