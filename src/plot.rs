//! PNG plots of a finished (or running) run directory: the per-step statistics and every
//! measurement CSV.
//!
//! [`plot_run`] reads `stats.csv` and `measurements/*.csv` and writes into `plots/`:
//!
//! | file | content |
//! |---|---|
//! | `kinetic_energy.png` | kinetic energy against time; log y when the positive values span two decades or more |
//! | `solver.png` | solver iterations (top) and final residual (bottom, log y) against time |
//! | `contacts.png` | number of contacts against time |
//! | `max_penetration.png` | largest penetration depth against time |
//! | `measurement_NAME.png` | the columns of `measurements/NAME.csv` against its first column (time), one panel per quantity ([`measurement_axes`]) |
//!
//! Each y axis holds one quantity and its unit; tick labels have the decimals their axis
//! range needs ([`TickFormat`]); a legend sits above the curves it names.
//!
//! Non-finite values (NaN, ±inf) are skipped point by point, and a series that is all zero
//! (or has no finite point) is not drawn; a plot left with no series is not written at all.
//! Text uses the embedded DejaVu Sans font, so plotting needs no system fonts. Images are
//! rendered into memory, encoded here (a small, dependency-free PNG writer) and written
//! with [`write_atomic`].

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::io::{read_stats, write_atomic, IoError, StatsRow};

/// Font family name the embedded font is registered under.
pub(crate) const FONT: &str = "sans-serif";
static FONT_BYTES: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/assets/fonts/DejaVuSans.ttf"
));

/// Size of a single-panel plot in pixels; multi-panel plots stack panels of this size.
const WIDTH: u32 = 1000;
const PANEL_HEIGHT: u32 = 560;

#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// Reading a file, listing a directory or writing a PNG failed.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A measurement CSV is malformed at the given 1-based line.
    #[error("{}:{line}: {message}", path.display())]
    Parse {
        path: PathBuf,
        line: usize,
        message: String,
    },

    /// `stats.csv` could not be read (the error names the file and line).
    #[error(transparent)]
    Stats(#[from] IoError),

    /// plotters failed to draw (should not happen with an in-memory backend).
    #[error("{}: drawing failed: {message}", path.display())]
    Render { path: PathBuf, message: String },

    #[error("the embedded plot font (assets/fonts/DejaVuSans.ttf) could not be loaded")]
    Font,
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> PlotError + '_ {
    move |source| PlotError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Draws every plot of `run_dir` into `run_dir/plots/` and returns the paths written, in
/// the order of the table in the [module docs](self) (measurements sorted by file name).
pub fn plot_run(run_dir: &Path) -> Result<Vec<PathBuf>, PlotError> {
    ensure_font()?;
    let out_dir = run_dir.join("plots");
    let mut figures: Vec<(String, Vec<Panel>)> = Vec::new();

    let stats_path = run_dir.join("stats.csv");
    let rows = if is_blank_file(&stats_path)? {
        Vec::new()
    } else {
        read_stats(&stats_path)?
    };
    figures.extend(stats_figures(&rows));

    let meas_dir = run_dir.join("measurements");
    if meas_dir.is_dir() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&meas_dir)
            .map_err(io_err(&meas_dir))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "csv") && p.is_file())
            .collect();
        files.sort();
        for path in files {
            let table = read_table(&path)?;
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let panels = table_panels(&stem, &table);
            if !panels.is_empty() {
                figures.push((format!("measurement_{stem}.png"), panels));
            }
        }
    }

    let mut written = Vec::new();
    for (name, panels) in figures {
        let panels: Vec<Panel> = panels.into_iter().filter_map(Panel::finish).collect();
        if panels.is_empty() {
            continue;
        }
        if written.is_empty() {
            std::fs::create_dir_all(&out_dir).map_err(io_err(&out_dir))?;
        }
        let path = out_dir.join(name);
        render(&path, &panels)?;
        written.push(path);
    }
    Ok(written)
}

/// Registers the bundled font with plotters (once); examples drawing text call it first.
pub fn ensure_font() -> Result<(), PlotError> {
    static LOADED: OnceLock<bool> = OnceLock::new();
    let ok = *LOADED.get_or_init(|| {
        plotters::style::register_font(FONT, FontStyle::Normal, FONT_BYTES).is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err(PlotError::Font)
    }
}

/// A missing file is an error; an empty (or whitespace-only) one just has nothing to plot.
fn is_blank_file(path: &Path) -> Result<bool, PlotError> {
    let bytes = std::fs::read(path).map_err(io_err(path))?;
    Ok(bytes.iter().all(u8::is_ascii_whitespace))
}

// ---------------------------------------------------------------------------------------
// Data

#[derive(Clone, Copy, Debug, PartialEq)]
enum YScale {
    Linear,
    /// Log when every value is ≥ 0 and the positive ones span at least two decades.
    LogIfDecades,
    /// Log whenever there is a positive value (non-positive points are dropped).
    Log,
}

struct Series {
    label: String,
    points: Vec<(f64, f64)>,
    /// Drawn as unconnected markers (measured points), not a polyline.
    markers: bool,
}

struct Panel {
    title: String,
    x_label: String,
    y_label: String,
    scale: YScale,
    series: Vec<Series>,
    /// Filled by [`Panel::finish`].
    log: bool,
    x_range: (f64, f64),
    y_range: (f64, f64),
}

impl Panel {
    fn new(title: &str, y_label: &str, scale: YScale, series: Vec<Series>) -> Self {
        Panel {
            title: title.to_string(),
            x_label: "time [s]".to_string(),
            y_label: y_label.to_string(),
            scale,
            series,
            log: false,
            x_range: (0.0, 1.0),
            y_range: (0.0, 1.0),
        }
    }

    /// Drops non-finite points and all-zero or empty series, picks the y scale and the
    /// axis ranges. `None` when nothing is left to draw.
    fn finish(mut self) -> Option<Self> {
        for s in &mut self.series {
            s.points.retain(|(x, y)| x.is_finite() && y.is_finite());
        }
        self.series
            .retain(|s| s.points.iter().any(|&(_, y)| y != 0.0));
        if self.series.is_empty() {
            return None;
        }
        let ys = || {
            self.series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.1))
        };
        let (pos_min, pos_max) = ys()
            .filter(|&y| y > 0.0)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), y| {
                (a.min(y), b.max(y))
            });
        let any_pos = pos_max > 0.0;
        let any_neg = ys().any(|y| y < 0.0);
        self.log = match self.scale {
            YScale::Linear => false,
            YScale::Log => any_pos,
            YScale::LogIfDecades => any_pos && !any_neg && pos_max / pos_min >= 100.0,
        };
        if self.log {
            for s in &mut self.series {
                s.points.retain(|&(_, y)| y > 0.0);
            }
            self.series.retain(|s| !s.points.is_empty());
            let lo = 10f64.powf(pos_min.log10().floor());
            let mut hi = 10f64.powf(pos_max.log10().ceil());
            if hi <= lo {
                hi = lo * 10.0;
            }
            self.y_range = (lo, hi);
        } else {
            self.y_range = padded(ys(), 0.05)?;
        }
        self.y_range = self.legend_headroom(self.y_range);
        let xs = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0));
        // A marker at the axis's end would be cut in half; a curve ends there.
        let pad = if self.series.iter().any(|s| s.markers) {
            0.03
        } else {
            0.0
        };
        self.x_range = padded(xs, pad)?;
        let finite = |(a, b): (f64, f64)| a.is_finite() && b.is_finite() && b > a;
        (finite(self.x_range) && finite(self.y_range)).then_some(self)
    }
}

/// Series a panel's legend lists at most; a panel with more (a surface profile's bins)
/// has none, a panel with one needs none (its axis label names it).
const MAX_LEGEND: usize = 8;

/// Height of one legend line and of the plotting area (pixels, approximately) of a panel.
const LEGEND_LINE_PX: f64 = 22.0;
const PLOT_AREA_PX: f64 = 400.0;

impl Panel {
    /// `range` raised at the top so the legend (upper right) sits above every curve
    /// instead of over them.
    fn legend_headroom(&self, (lo, hi): (f64, f64)) -> (f64, f64) {
        let n = self.series.len();
        if !(2..=MAX_LEGEND).contains(&n) {
            return (lo, hi);
        }
        let share = (LEGEND_LINE_PX * n as f64 + 16.0) / PLOT_AREA_PX;
        if self.log {
            let (a, b) = (lo.log10(), hi.log10());
            (lo, 10f64.powf(a + (b - a) / (1.0 - share)))
        } else {
            (lo, lo + (hi - lo) / (1.0 - share))
        }
    }
}

/// The range of `values`, widened by `pad` of its span on each side; a degenerate range
/// (one value) is widened around the value.
fn padded(values: impl Iterator<Item = f64>, pad: f64) -> Option<(f64, f64)> {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    });
    if lo > hi {
        return None;
    }
    let span = hi - lo;
    if span > 0.0 && span.is_finite() {
        Some((lo - pad * span, hi + pad * span))
    } else {
        let d = if lo != 0.0 { 0.1 * lo.abs() } else { 1.0 };
        Some((lo - d, hi + d))
    }
}

fn stats_figures(rows: &[StatsRow]) -> Vec<(String, Vec<Panel>)> {
    let series = |label: &str, f: &dyn Fn(&StatsRow) -> f64| Series {
        label: label.to_string(),
        points: rows.iter().map(|r| (r.time, f(r))).collect(),
        markers: false,
    };
    vec![
        (
            "kinetic_energy.png".into(),
            vec![Panel::new(
                "Kinetic energy",
                "kinetic energy [J]",
                YScale::LogIfDecades,
                vec![series("kinetic energy", &|r| r.kinetic_energy)],
            )],
        ),
        (
            "solver.png".into(),
            vec![
                Panel::new(
                    "Solver iterations per step",
                    "iterations [sweeps per step]",
                    YScale::Linear,
                    vec![series("iterations", &|r| r.iterations as f64)],
                ),
                Panel::new(
                    "Solver residual (RMS per contact row, m/s; lemke: the LCP's)",
                    "residual [m/s]",
                    YScale::Log,
                    vec![series("residual", &|r| r.residual)],
                ),
            ],
        ),
        (
            "contacts.png".into(),
            vec![Panel::new(
                "Contacts",
                "contacts [count]",
                YScale::Linear,
                vec![series("contacts", &|r| r.contacts as f64)],
            )],
        ),
        (
            "max_penetration.png".into(),
            vec![Panel::new(
                "Maximum penetration",
                "max penetration [m]",
                YScale::Linear,
                vec![series("max penetration", &|r| r.max_penetration)],
            )],
        ),
    ]
}

/// A measurement CSV: column names (the first is time) and rows of numbers.
struct Table {
    columns: Vec<String>,
    rows: Vec<Vec<f64>>,
}

/// Reads a measurement CSV. Blank lines are skipped, empty fields read as missing (NaN),
/// and an unterminated last line that does not parse (a write cut short) is dropped; any
/// other malformed line is an error naming the file and line.
fn read_table(path: &Path) -> Result<Table, PlotError> {
    let text = std::fs::read_to_string(path).map_err(io_err(path))?;
    let err = |line: usize, message: String| PlotError::Parse {
        path: path.to_path_buf(),
        line,
        message,
    };
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let Some((_, header)) = lines.next() else {
        return Ok(Table {
            columns: Vec::new(),
            rows: Vec::new(),
        });
    };
    let columns: Vec<String> = header.split(',').map(|c| c.trim().to_string()).collect();
    if let Some(c) = columns.iter().find(|c| c.parse::<f64>().is_ok()) {
        return Err(err(
            1,
            format!("expected a header of column names, found the number {c:?}"),
        ));
    }
    let last_unterminated = !text.ends_with('\n');
    let n_lines = text.lines().count();
    let mut rows = Vec::new();
    for (i, line) in lines {
        let parsed: Result<Vec<f64>, String> = if line.split(',').count() != columns.len() {
            Err(format!(
                "expected {} comma-separated fields (as in the header), found {}",
                columns.len(),
                line.split(',').count()
            ))
        } else {
            line.split(',')
                .zip(&columns)
                .map(|(f, name)| {
                    let f = f.trim();
                    if f.is_empty() {
                        Ok(f64::NAN)
                    } else {
                        f.parse::<f64>()
                            .map_err(|e| format!("column `{name}`: {f:?}: {e}"))
                    }
                })
                .collect()
        };
        match parsed {
            Ok(row) => rows.push(row),
            Err(_) if last_unterminated && i + 1 == n_lines => {}
            Err(m) => return Err(err(i + 1, m)),
        }
    }
    Ok(Table { columns, rows })
}

/// The panels of a measurement CSV: one per quantity ([`measurement_axes`]), stacked.
fn table_panels(name: &str, t: &Table) -> Vec<Panel> {
    if t.columns.len() < 2 || t.rows.is_empty() {
        return Vec::new();
    }
    let x_label = match t.columns[0].as_str() {
        "time" => "time [s]".to_string(),
        other => other.replace('_', " "),
    };
    let axes = measurement_axes(&t.columns);
    let many = axes.len() > 1;
    axes.into_iter()
        .map(|axis| {
            let series: Vec<Series> = axis
                .columns
                .iter()
                .map(|&c| Series {
                    label: t.columns[c].replace('_', " "),
                    points: t.rows.iter().map(|r| (r[0], r[c])).collect(),
                    markers: false,
                })
                .collect();
            let title = match many {
                true => format!("{}: {}", name.replace('_', " "), axis.quantity),
                false => name.replace('_', " "),
            };
            let mut p = Panel::new(&title, &axis.label, YScale::Linear, series);
            p.x_label = x_label.clone();
            p
        })
        .collect()
}

/// One y axis of a measurement plot: the quantity, its label with the unit
/// (`"force [N]"`), and the CSV columns drawn on it (indices into the header).
#[derive(Clone, Debug, PartialEq)]
pub struct MeasurementAxis {
    pub quantity: String,
    pub label: String,
    pub columns: Vec<usize>,
}

/// Splits the value columns of a measurement CSV (the header, time first) into axes of one
/// quantity each, with its unit: the columns of each `[[measure]]` kind (see the book's
/// "Measurements and outputs") and of `joints.csv` are known by name; an unknown column gets
/// an axis of its own, labelled with its name. Axes are in the order of their first column.
pub fn measurement_axes(columns: &[String]) -> Vec<MeasurementAxis> {
    let kinetic = columns.last().is_some_and(|c| c == "total");
    let mut axes: Vec<MeasurementAxis> = Vec::new();
    for (c, name) in columns.iter().enumerate().skip(1) {
        let (quantity, unit) = if kinetic {
            ("kinetic energy".to_string(), "J")
        } else {
            column_quantity(name)
        };
        let label = match unit {
            "" => quantity.clone(),
            u => format!("{quantity} [{u}]"),
        };
        match axes
            .iter_mut()
            .find(|a| a.label == label && !unit.is_empty())
        {
            Some(a) => a.columns.push(c),
            None => axes.push(MeasurementAxis {
                quantity,
                label,
                columns: vec![c],
            }),
        }
    }
    axes
}

/// The quantity and unit of a measurement column (`""`: unknown, the name is the label).
fn column_quantity(name: &str) -> (String, &'static str) {
    // `joints.csv`: `j3_fx` is joint 3's force; its motor's unit depends on the joint
    // (N for a slider, N·m for a hinge), so each motor has an axis of its own.
    let (joint, field) = match name.split_once('_') {
        Some((j, f)) if j.starts_with('j') && j[1..].parse::<u32>().is_ok() => (Some(j), f),
        _ => (None, name),
    };
    let known = match field {
        "net_mass" | "mass_positive" | "mass_negative" => Some(("mass", "kg")),
        "rate" => Some(("mass flow rate", "kg/s")),
        "height" => Some(("bed height", "m")),
        "z" => Some(("coordination number", "contacts per grain")),
        "contacts" => Some(("contacts", "count")),
        "fx" | "fy" | "fz" => Some(("force", "N")),
        "tx" | "ty" | "tz" => Some(("torque", "N·m")),
        "angle" => Some(("angle of repose", "°")),
        "slope" => Some(("flank slope", "m/m")),
        "apex" => Some(("apex height", "m")),
        "bins" => Some(("bins fitted", "count")),
        "flank_rms" => Some(("flank fit RMS residual", "m")),
        "sxx" | "syy" | "szz" | "sxy" | "sxz" | "syz" | "pressure" | "kinetic_pressure" => {
            Some(("stress", "Pa"))
        }
        "phi" => Some(("solid fraction", "m³/m³")),
        f if f.starts_with("x=") || f.starts_with("y=") => Some(("surface height", "m")),
        _ => None,
    };
    match (joint, field, known) {
        (Some(j), "motor", _) => (format!("{j} motor force or torque"), "N or N·m"),
        (_, _, Some((q, u))) => (q.to_string(), u),
        _ => (name.replace('_', " "), ""),
    }
}

// ---------------------------------------------------------------------------------------
// Drawing

const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

fn render(path: &Path, panels: &[Panel]) -> Result<(), PlotError> {
    let (w, h) = (WIDTH, PANEL_HEIGHT * panels.len() as u32);
    let mut rgb = vec![255u8; w as usize * h as usize * 3];
    let render_err = |message: String| PlotError::Render {
        path: path.to_path_buf(),
        message,
    };
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| render_err(e.to_string()))?;
        let areas = root.split_evenly((panels.len(), 1));
        for (area, panel) in areas.iter().zip(panels) {
            draw_panel(area, panel).map_err(|e| render_err(e.to_string()))?;
        }
        root.present().map_err(|e| render_err(e.to_string()))?;
    }
    let png = encode_png(&rgb, w, h);
    write_atomic(path, |f| f.write_all(&png)).map_err(io_err(path))
}

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    p: &Panel,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let mut b = ChartBuilder::on(area);
    b.caption(&p.title, (FONT, 26))
        .margin(16)
        .x_label_area_size(50)
        .y_label_area_size(90);
    let (x0, x1) = p.x_range;
    let (y0, y1) = p.y_range;
    let x_ticks = TickFormat::for_range(x0, x1);
    let y_ticks = TickFormat::for_range(y0, y1);
    if p.log {
        let mut c = b.build_cartesian_2d(x0..x1, (y0..y1).log_scale())?;
        c.configure_mesh()
            .x_labels(MAX_TICKS)
            .y_label_formatter(&|v| format!("{v:.0e}"))
            .x_label_formatter(&|v| x_ticks.label(*v))
            .x_desc(&p.x_label)
            .y_desc(&p.y_label)
            .label_style((FONT, 16))
            .axis_desc_style((FONT, 18))
            .draw()?;
        draw_lines(&mut c, p)
    } else {
        let mut c = b.build_cartesian_2d(x0..x1, y0..y1)?;
        c.configure_mesh()
            .x_labels(MAX_TICKS)
            .y_labels(MAX_TICKS)
            .y_label_formatter(&|v| y_ticks.label(*v))
            .x_label_formatter(&|v| x_ticks.label(*v))
            .x_desc(&p.x_label)
            .y_desc(&p.y_label)
            .label_style((FONT, 16))
            .axis_desc_style((FONT, 18))
            .draw()?;
        draw_lines(&mut c, p)
    }
}

fn draw_lines<'a, DB, Y>(
    c: &mut ChartContext<'a, DB, Cartesian2d<RangedCoordf64, Y>>,
    p: &Panel,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>
where
    DB: DrawingBackend + 'a,
    Y: Ranged<ValueType = f64>,
{
    for (i, s) in p.series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let style = color.stroke_width(2);
        if s.markers || s.points.len() == 1 {
            c.draw_series(PointSeries::of_element(
                s.points.iter().copied(),
                4,
                color.filled(),
                &|pt, size, st| Circle::new(pt, size, st),
            ))?
            .label(&s.label)
            .legend(move |(x, y)| Circle::new((x + 10, y), 4, color.filled()));
        } else {
            c.draw_series(LineSeries::new(s.points.iter().copied(), style))?
                .label(&s.label)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
        }
    }
    if !(2..=MAX_LEGEND).contains(&p.series.len()) {
        return Ok(());
    }
    c.configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .label_font((FONT, 16))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.4))
        .draw()
}

/// Most tick labels per axis: the tick format's resolution is chosen for this many.
const MAX_TICKS: usize = 10;

/// The tick labels of one axis: decimals (or scientific mantissa digits) chosen from the
/// axis range, so that ticks one tick spacing apart always read differently (a range of
/// 0.00110 to 0.00112 reads 0.001100, 0.001102, …, never "0.0011" five times).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TickFormat {
    decimals: usize,
    scientific: bool,
}

impl TickFormat {
    /// The format for an axis from `lo` to `hi` with at most `MAX_TICKS` labels: plain
    /// decimals for magnitudes from 10⁻³ to 10⁵, scientific otherwise, with one digit at the
    /// decade of the tick spacing (at least the range over `MAX_TICKS`).
    pub fn for_range(lo: f64, hi: f64) -> Self {
        let magnitude = lo.abs().max(hi.abs());
        let scientific = magnitude != 0.0 && !(1e-3..1e5).contains(&magnitude);
        let spacing = (hi - lo).abs() / MAX_TICKS as f64;
        if !(spacing > 0.0 && spacing.is_finite() && magnitude.is_finite()) {
            return TickFormat {
                decimals: 3,
                scientific,
            };
        }
        let spacing_decade = spacing.log10().floor() as i64;
        let digits = if scientific {
            magnitude.log10().floor() as i64 - spacing_decade
        } else {
            -spacing_decade
        };
        TickFormat {
            decimals: digits.clamp(0, 15) as usize,
            scientific,
        }
    }

    pub fn label(&self, v: f64) -> String {
        let d = self.decimals;
        let s = if self.scientific && v != 0.0 {
            format!("{v:.d$e}")
        } else {
            format!("{v:.d$}")
        };
        // A tick a rounding error below zero reads 0, not -0.000.
        match s.strip_prefix('-') {
            Some(rest) if rest.chars().all(|c| matches!(c, '0' | '.')) => rest.to_string(),
            _ => s,
        }
    }
}

/// Encodes an 8-bit RGB image (`rgb.len() == 3 * width * height`) as PNG.
pub fn encode_png(rgb: &[u8], width: u32, height: u32) -> Vec<u8> {
    assert_eq!(
        rgb.len(),
        3 * width as usize * height as usize,
        "RGB buffer size"
    );
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, width, height);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    enc.set_compression(png::Compression::Best);
    let mut w = enc.write_header().expect("in-memory PNG header");
    w.write_image_data(rgb).expect("in-memory PNG data");
    w.finish().expect("in-memory PNG end");
    out
}

/// One panel of [`plot_lines`]: title, x label, y label and labelled polylines.
pub struct LinePanel {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<(String, Vec<(f64, f64)>)>,
}

/// Draws stacked line panels into one PNG at `path` (used by `bristlecone patch` and the
/// patch figures). Panels with nothing to draw are dropped; `Ok(false)` if none is left.
pub fn plot_lines(path: &Path, panels: Vec<LinePanel>) -> Result<bool, PlotError> {
    plot_panels(path, panels, YScale::Linear)
}

/// [`plot_lines`] with every panel's y axis logarithmic (non-positive points dropped): for
/// costs that span decades, such as a benchmark ladder's ms per step.
pub fn plot_lines_log(path: &Path, panels: Vec<LinePanel>) -> Result<bool, PlotError> {
    plot_panels(path, panels, YScale::Log)
}

/// One panel of measured points (markers, `points`) over model curves (`lines.series`):
/// a measurement against the law it is checked by.
pub fn plot_points_on_lines(
    path: &Path,
    lines: LinePanel,
    points: Vec<(String, Vec<(f64, f64)>)>,
) -> Result<bool, PlotError> {
    ensure_font()?;
    let curves = lines.series.into_iter().map(|(label, points)| Series {
        label,
        points,
        markers: false,
    });
    let marked = points.into_iter().map(|(label, points)| Series {
        label,
        points,
        markers: true,
    });
    let mut panel = Panel::new(
        &lines.title,
        &lines.y_label,
        YScale::Linear,
        curves.chain(marked).collect(),
    );
    panel.x_label = lines.x_label;
    match panel.finish() {
        Some(panel) => render(path, &[panel]).map(|()| true),
        None => Ok(false),
    }
}

/// [`plot_lines`] with a y scale per panel: logarithmic where the flag is set.
pub fn plot_lines_scaled(path: &Path, panels: Vec<(LinePanel, bool)>) -> Result<bool, PlotError> {
    let scaled = (panels.into_iter())
        .map(|(lp, log)| (lp, if log { YScale::Log } else { YScale::Linear }))
        .collect();
    plot_scaled_panels(path, scaled)
}

fn plot_panels(path: &Path, panels: Vec<LinePanel>, scale: YScale) -> Result<bool, PlotError> {
    plot_scaled_panels(path, panels.into_iter().map(|lp| (lp, scale)).collect())
}

fn plot_scaled_panels(path: &Path, panels: Vec<(LinePanel, YScale)>) -> Result<bool, PlotError> {
    ensure_font()?;
    let panels: Vec<Panel> = panels
        .into_iter()
        .filter_map(|(lp, scale)| {
            let series = lp
                .series
                .into_iter()
                .map(|(label, points)| Series {
                    label,
                    points,
                    markers: false,
                })
                .collect();
            let mut p = Panel::new(&lp.title, &lp.y_label, scale, series);
            p.x_label = lp.x_label;
            p.finish()
        })
        .collect();
    if panels.is_empty() {
        return Ok(false);
    }
    render(path, &panels)?;
    Ok(true)
}
