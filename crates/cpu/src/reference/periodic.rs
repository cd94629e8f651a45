//! f64 twin of the periodic cell's collision (`shaders/common/collide_periodic.wgsl`): every
//! grain pair by the minimum image (`collide::PeriodicCell::image_delta`), by brute force;
//! boundaries as in [`super::collide::detect`] (they are not imaged). A sheared
//! (Lees–Edwards) cell images across the gradient seam with the flow offset δ
//! ([`detect_periodic_at`]), and a contact's image velocity is [`image_flow_speed`].

use super::collide::{detect, Contact64, Ctx};
use crate::model::body::BodyState;
use crate::model::contact::{BoundaryShape, CollideSettings};
use crate::model::periodic::PeriodicCell;
use crate::shapes::boundary_count;

/// Every contact with gap ≤ envelope in the periodic `cell`, sorted by (A, B, feature). Each
/// pair a < b is tested with b moved to its image nearest to a, so the normal, gap and lever
/// arms are those of the touching images. O(n²): for tests.
pub fn detect_periodic(
    state: &BodyState,
    shapes: &[BoundaryShape],
    settings: &CollideSettings,
    cell: &PeriodicCell,
) -> Vec<Contact64> {
    detect_periodic_at(state, shapes, settings, cell, 0.0)
}

/// [`detect_periodic`] in a sheared cell whose images up the gradient axis are offset by
/// `offset` (δ, `PeriodicCell::shear_offset`) along the flow.
pub fn detect_periodic_at(
    state: &BodyState,
    shapes: &[BoundaryShape],
    settings: &CollideSettings,
    cell: &PeriodicCell,
    offset: f64,
) -> Vec<Contact64> {
    let nb = boundary_count(state);
    let n = state.len();
    // The boundary rows of the plain detection (A is a boundary there, never a grain).
    let mut out: Vec<Contact64> = detect(state, shapes, settings)
        .into_iter()
        .filter(|c| (c.a as usize) < nb)
        .collect();
    let mut moved = state.clone();
    for a in nb..n {
        // a itself where it is (an earlier a' moved it next to a').
        moved.pos[a] = state.pos[a];
        let pa = super::collide::v3(state.pos[a]);
        for b in a + 1..n {
            let pb = pa + cell.image(pa, super::collide::v3(state.pos[b]), offset).0;
            moved.pos[b][..3].copy_from_slice(&[pb.x as f32, pb.y as f32, pb.z as f32]);
        }
        let mut cx = Ctx {
            state: &moved,
            settings,
            out: Vec::new(),
        };
        for b in a + 1..n {
            cx.grain_pair(a, b, shapes);
        }
        out.extend(cx.out);
    }
    out.sort_by_key(|c| c.key());
    out
}

/// The flow velocity of contact `c`'s B image relative to B (m/s, along the flow axis): γ̇ L_g
/// per period up the gradient axis between B and the image that touches A (collision's
/// rb.w, `image_flow_speed` in `shaders/common/collide_periodic.wgsl`).
pub fn image_flow_speed(state: &BodyState, cell: &PeriodicCell, c: &Contact64) -> f64 {
    let Some(s) = cell.shear else {
        return 0.0;
    };
    let v3 = super::collide::v3;
    let image = v3(state.pos[c.a as usize]) + c.ra - c.rb;
    let periods = (image - v3(state.pos[c.b as usize]))[s.gradient] / cell.length[s.gradient];
    periods.round() * cell.shear_speed()
}
