//! Scene measurements for papers: host-side (f64) functions of a [`BodyState`] read back at
//! output frames, and a CSV writer for their time series.
//!
//! Every function is pure and O(N) (O(N log N) where it sorts). Bodies `0..first_grain`
//! are the boundaries and `first_grain..` the grains, as in [`BodyState`].
//!
//! | measurement | function |
//! |---|---|
//! | mass flow through a plane (hopper discharge) | [`MassFlow`], then [`steady_rate`] on its cumulative mass |
//! | bed height, free-surface profile | [`bed_height`], [`surface_profile`] |
//! | kinetic energy per group of bodies | [`kinetic_energy_by_group`] |
//! | mean coordination number | [`coordination_number`] |
//! | force and torque on a boundary | [`boundary_wrench`] |
//! | angle of repose of a heap (surface-profile fit) | [`repose_angle`] |
//! | stress tensor of a region (contact and kinetic parts) | [`region_stress`] |
//! | solid fraction of a region | [`solid_fraction`] |
//!
//! [`MeasurementWriter`] stores one CSV per measurement in `run_dir/measurements/`, which
//! [`crate::plot::plot_run`] draws.
//!
//! [`BodyState`]: crate::bodies::BodyState

mod contacts;
mod flow;
mod height;
mod repose;
mod stress;
mod writer;

pub use contacts::{boundary_wrench, coordination_number, kinetic_energy_by_group, ContactForce};
pub use flow::{steady_rate, FlowSample, MassFlow, STEADY_TOLERANCE};
pub use height::{bed_height, surface_profile};
pub use repose::{repose_angle, HeapAxis, Repose};
pub use stress::{region_stress, solid_fraction, Region, RegionStress, STRESS_COLUMNS};
pub use writer::{MeasurementId, MeasurementWriter};
