//! What [`super::Simulation::measurements`] returns: the scene's `[[measure]]` time series,
//! the same rows `bristlecone run` writes to `measurements/NAME.csv`, kept in memory.

use crate::run::flow::KeptRows;
use crate::scene::{Measure, MeasureKind, Scene};

/// One `[[measure]]`'s samples since the simulation was made (or resumed), or one
/// `[[inflow]]`'s or `[[outflow]]`'s counters at its waves or removals.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Measurement {
    /// The measurement's `name` (its CSV file's stem).
    pub name: String,
    /// The CSV header after `time`, one per value of a row.
    pub columns: Vec<String>,
    /// The unit of each column ("1" for a count or a ratio).
    pub units: Vec<&'static str>,
    /// The time of each sample (s).
    pub times: Vec<f64>,
    /// One row per sample, as many values as columns.
    pub rows: Vec<Vec<f64>>,
}

impl Measurement {
    pub(crate) fn new(spec: &Measure, scene: &Scene, samples: &[(f64, Vec<f64>)]) -> Self {
        let columns = crate::run::measure_columns(spec, scene);
        Measurement {
            name: spec.name.clone(),
            units: columns.iter().map(|c| unit(&spec.kind, c)).collect(),
            columns,
            times: samples.iter().map(|(t, _)| *t).collect(),
            rows: samples.iter().map(|(_, r)| r.clone()).collect(),
        }
    }

    pub(crate) fn of_flow(kept: KeptRows<'_>) -> Self {
        Measurement {
            name: kept.name.to_string(),
            columns: kept.columns.iter().map(|c| c.to_string()).collect(),
            units: kept.units.to_vec(),
            times: kept.rows.iter().map(|(t, _)| *t).collect(),
            rows: kept.rows.iter().map(|(_, r)| r.clone()).collect(),
        }
    }
}

/// The unit of column `column` of a measurement of kind `kind`.
fn unit(kind: &MeasureKind, column: &str) -> &'static str {
    match kind {
        MeasureKind::MassFlow { .. } if column == "rate" => "kg/s",
        MeasureKind::MassFlow { .. } => "kg",
        MeasureKind::BedHeight { .. } | MeasureKind::SurfaceProfile { .. } => "m",
        MeasureKind::KineticEnergy => "J",
        MeasureKind::Coordination => "1",
        MeasureKind::BoundaryForce { .. } if column.starts_with('f') => "N",
        MeasureKind::BoundaryForce { .. } => "N m",
        MeasureKind::ReposeAngle { .. } => match column {
            "angle" => "deg",
            "apex" | "flank_rms" => "m",
            _ => "1",
        },
        MeasureKind::Stress { .. } => "Pa",
        MeasureKind::SolidFraction { .. } => "1",
    }
}
