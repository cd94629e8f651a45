//! What the frames of a run with contact output carry beyond the contacts' VTK points: the
//! contact-force CSV rows, the threshold `[output] contact_force_min`, and each grain's net
//! contact force and average stress (`io::contact_forces::grain_loads`).

use super::writer::FrameSource;
use super::{contact_forces, RunError};
use crate::bodies::BodyState;
use crate::collide::ContactRecord;
use crate::io::contact_forces::{grain_loads, ContactForceRow};
use crate::measure::ContactForce;
use crate::scene::Scene;

/// Each grain's volume (m³): its mass over its material's density, so every shape (sphere,
/// box, clump, hull …) has the volume its mass was computed from.
pub(super) fn volumes(scene: &Scene) -> Vec<f64> {
    scene
        .bodies
        .iter()
        .map(|b| b.mass / scene.materials[b.material].density)
        .collect()
}

/// The contacts whose force magnitude is at least `min` (N), in their order.
pub(super) fn strong(
    contacts: Vec<ContactRecord>,
    forces: Vec<ContactForce>,
    min: f64,
) -> (Vec<ContactRecord>, Vec<ContactForce>) {
    if min <= 0.0 {
        return (contacts, forces);
    }
    contacts
        .into_iter()
        .zip(forces)
        .filter(|(_, f)| {
            let v = f.force_on_b;
            (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt() >= min
        })
        .unzip()
}

/// The CSV rows of the contacts and their forces.
pub(super) fn rows(contacts: &[ContactRecord], forces: &[ContactForce]) -> Vec<ContactForceRow> {
    contacts
        .iter()
        .zip(forces)
        .map(|(c, f)| ContactForceRow {
            body_a: f.body_a,
            body_b: f.body_b,
            feature: c.ids[2],
            point: f.point,
            normal: [0, 1, 2].map(|k| c.n_gap[k] as f64),
            force_on_b: f.force_on_b,
        })
        .collect()
}

/// Per grain: net contact force (N) and average stress (Pa, row-major 3×3).
type GrainArrays = (Vec<[f32; 3]>, Vec<[f32; 9]>);

/// The grains' `contact_force` (N) and `stress` (Pa) point arrays of this frame, from the
/// contacts of the step just taken (every contact, whatever the threshold); zero at step 0,
/// before any step, so every frame has the same arrays.
pub(super) fn grain_arrays(
    sim: &impl FrameSource,
    s: &BodyState,
    first_grain: usize,
    volumes: &[f64],
) -> Result<GrainArrays, RunError> {
    let n = volumes.len();
    if sim.step_index() == 0 {
        return Ok((vec![[0.0; 3]; n], vec![[0.0; 9]; n]));
    }
    let (contacts, impulses) = sim.read_contacts()?;
    let forces = one_sided(
        s,
        &contacts,
        contact_forces(s, &contacts, &impulses, sim.dt()),
    );
    let centres: Vec<[f64; 3]> = s.pos[first_grain..]
        .iter()
        .map(|p| [p[0] as f64, p[1] as f64, p[2] as f64])
        .collect();
    let loads = grain_loads(&forces, &centres, volumes, first_grain);
    Ok((
        loads.force.iter().map(|f| f.map(|x| x as f32)).collect(),
        loads.stress.iter().map(|t| t.map(|x| x as f32)).collect(),
    ))
}

/// Each contact as two one-sided loads, A's at the end of its lever arm and B's at the end of
/// its own (the other body `u32::MAX`, no grain): a grain's arm (point − centre) is then the
/// one the collision wrote, also for a pair across a periodic seam, where B's centre lies a
/// period away from the contact point near A.
fn one_sided(
    s: &BodyState,
    contacts: &[ContactRecord],
    forces: Vec<ContactForce>,
) -> Vec<ContactForce> {
    let at = |body: u32, arm: [f32; 4]| {
        let p = s.pos[body as usize];
        [0, 1, 2].map(|k| p[k] as f64 + arm[k] as f64)
    };
    contacts
        .iter()
        .zip(forces)
        .flat_map(|(c, f)| {
            let (a, b) = (c.ids[0], c.ids[1]);
            [
                ContactForce {
                    body_b: u32::MAX,
                    point: at(a, c.ra),
                    ..f
                },
                ContactForce {
                    body_a: u32::MAX,
                    point: at(b, c.rb),
                    ..f
                },
            ]
        })
        .collect()
}
