//! Pressure distributions over a patch's cell grid: cell weights (pressure × area,
//! normalised to sum 1) and the centre of pressure.

/// The outline of a uniformly pressed region, centred on the patch centre.
#[derive(Clone, Debug, PartialEq)]
pub enum Outline {
    Circle {
        radius: f64,
    },
    Rectangle {
        a: f64,
        b: f64,
    },
    /// A line of length `length` along x (one cell row wide).
    Line {
        length: f64,
    },
    /// Any simple polygon (vertices in order, patch frame).
    Polygon {
        vertices: Vec<[f64; 2]>,
    },
}

impl Outline {
    /// Half extents of the bounding box.
    pub fn half_extent(&self) -> [f64; 2] {
        match self {
            Outline::Circle { radius } => [*radius, *radius],
            Outline::Rectangle { a, b } => [a / 2.0, b / 2.0],
            Outline::Line { length } => [length / 2.0, length / 2.0],
            Outline::Polygon { vertices } => {
                let m = |i: usize| vertices.iter().map(|v| v[i].abs()).fold(0.0, f64::max);
                [m(0), m(1)]
            }
        }
    }

    fn contains(&self, x: f64, y: f64) -> bool {
        match self {
            Outline::Circle { radius } => x * x + y * y <= radius * radius,
            Outline::Rectangle { a, b } => x.abs() <= a / 2.0 && y.abs() <= b / 2.0,
            Outline::Line { length } => x.abs() <= length / 2.0,
            Outline::Polygon { vertices } => {
                // Even-odd crossing rule.
                let mut inside = false;
                let n = vertices.len();
                for i in 0..n {
                    let [xi, yi] = vertices[i];
                    let [xj, yj] = vertices[(i + n - 1) % n];
                    if (yi > y) != (yj > y) && x < (xj - xi) * (y - yi) / (yj - yi) + xi {
                        inside = !inside;
                    }
                }
                inside
            }
        }
    }
}

/// How the normal force is distributed over the patch.
#[derive(Clone, Debug, PartialEq)]
pub enum Pressure {
    /// Uniform over the outline.
    Uniform(Outline),
    /// `p ∝ max(0, 1 + g·ρ)` over the outline (a linear gradient, `g` in 1/m).
    Gradient { outline: Outline, g: [f64; 2] },
    /// Explicit weights, `nx × ny` row-major in x (index `ix + nx·iy`), any scale.
    Grid(Vec<f64>),
    /// Xydas–Kao soft-finger law `p ∝ [1 − (|ρ|/a)^k]^{1/k}`, contact radius `a = c f_N^γ`.
    XydasKao { c: f64, gamma: f64, k: f64 },
}

/// Sub-samples per cell edge for the area fraction of an outline inside a cell.
const SUB: usize = 8;

/// A patch: its cell grid, normalised cell weights and centre of pressure.
#[derive(Clone, Debug, PartialEq)]
pub struct PatchShape {
    pub nx: usize,
    pub ny: usize,
    /// Cell edge length (m).
    pub h: f64,
    /// `nx·ny` weights, sum 1, index `ix + nx·iy`.
    pub weights: Vec<f64>,
    pub cop: [f64; 2],
}

impl PatchShape {
    /// Cell centre of cell `i`.
    pub fn cell(&self, i: usize) -> [f64; 2] {
        cell_centre(self.nx, self.ny, self.h, i)
    }

    /// Builds the grid for `pressure` under normal force `f_n` (only Xydas–Kao uses it):
    /// `nx × ny` square cells covering the outline's bounding box (or `2a` for
    /// Xydas–Kao); `h` overrides the cell size.
    pub fn new(
        pressure: &Pressure,
        nx: usize,
        ny: usize,
        h: Option<f64>,
        f_n: f64,
    ) -> Result<PatchShape, String> {
        if nx == 0 || ny == 0 || nx * ny > 1 << 16 {
            return Err(format!(
                "grid {nx}x{ny}: each side must be >= 1, at most 65536 cells"
            ));
        }
        let half = match pressure {
            Pressure::Uniform(o) | Pressure::Gradient { outline: o, .. } => o.half_extent(),
            Pressure::XydasKao { c, gamma, .. } => {
                let a = c * f_n.powf(*gamma);
                [a, a]
            }
            Pressure::Grid(w) => {
                if w.len() != nx * ny {
                    return Err(format!(
                        "weight grid has {} values, grid is {nx}x{ny}",
                        w.len()
                    ));
                }
                [0.0, 0.0]
            }
        };
        let h = match h {
            Some(h) => h,
            None => (2.0 * half[0] / nx as f64).max(2.0 * half[1] / ny as f64),
        };
        if !(h.is_finite() && h > 0.0) {
            return Err(format!(
                "cell size must be finite and > 0 (got {h}); give `cell` for a weight grid"
            ));
        }
        let density = match pressure {
            // Explicit weights are the distribution itself: nothing to sample.
            Pressure::Grid(w) => return Self::from_weights(nx, ny, h, w.clone()),
            Pressure::Uniform(outline) => Density::Outline {
                outline,
                g: [0.0, 0.0],
            },
            Pressure::Gradient { outline, g } => Density::Outline { outline, g: *g },
            Pressure::XydasKao { c, gamma, k } => Density::SoftFinger {
                a: c * f_n.powf(*gamma),
                k: *k,
            },
        };
        let weights: Vec<f64> = (0..nx * ny)
            .map(|i| cell_weight(&density, cell_centre(nx, ny, h, i), h))
            .collect();
        Self::from_weights(nx, ny, h, weights)
    }

    /// Normalises explicit weights and computes the centre of pressure.
    pub fn from_weights(
        nx: usize,
        ny: usize,
        h: f64,
        mut weights: Vec<f64>,
    ) -> Result<PatchShape, String> {
        if weights.iter().any(|w| !w.is_finite() || *w < 0.0) {
            return Err("pressure weights must be finite and >= 0".into());
        }
        let sum: f64 = weights.iter().sum();
        if sum <= 0.0 {
            return Err("the pressure distribution covers no cell of the grid".into());
        }
        weights.iter_mut().for_each(|w| *w /= sum);
        let mut cop = [0.0; 2];
        for (i, w) in weights.iter().enumerate() {
            let c = cell_centre(nx, ny, h, i);
            cop[0] += w * c[0];
            cop[1] += w * c[1];
        }
        Ok(PatchShape {
            nx,
            ny,
            h,
            weights,
            cop,
        })
    }
}

pub fn cell_centre(nx: usize, ny: usize, h: f64, i: usize) -> [f64; 2] {
    let (ix, iy) = (i % nx, i / nx);
    [
        (ix as f64 + 0.5 - nx as f64 / 2.0) * h,
        (iy as f64 + 0.5 - ny as f64 / 2.0) * h,
    ]
}

/// A pressure density sampled over the cells (every [`Pressure`] but an explicit grid).
enum Density<'a> {
    /// `max(0, 1 + g·ρ)` inside the outline, 0 outside.
    Outline { outline: &'a Outline, g: [f64; 2] },
    /// Xydas–Kao `[1 − (|ρ|/a)^k]^{1/k}` inside the contact radius `a`.
    SoftFinger { a: f64, k: f64 },
}

/// Pressure × area fraction of one cell (sub-sampled), before normalisation.
fn cell_weight(density: &Density, c: [f64; 2], h: f64) -> f64 {
    // A line has no area: the cell row(s) whose y-range holds y = 0 carry it.
    let line = matches!(
        density,
        Density::Outline {
            outline: Outline::Line { .. },
            ..
        }
    );
    let row = if line {
        let (lo, hi) = (c[1] - h / 2.0, c[1] + h / 2.0);
        let eps = 1e-9 * h;
        if lo < -eps && hi > eps {
            1.0
        } else if lo.abs() <= eps || hi.abs() <= eps {
            0.5
        } else {
            return 0.0;
        }
    } else {
        1.0
    };
    let mut sum = 0.0;
    for sy in 0..SUB {
        for sx in 0..SUB {
            let x = c[0] + ((sx as f64 + 0.5) / SUB as f64 - 0.5) * h;
            let y = if line {
                0.0
            } else {
                c[1] + ((sy as f64 + 0.5) / SUB as f64 - 0.5) * h
            };
            let v = match density {
                Density::SoftFinger { a, k } => {
                    let r = (x * x + y * y).sqrt() / a;
                    if r < 1.0 {
                        (1.0 - r.powf(*k)).powf(1.0 / k)
                    } else {
                        0.0
                    }
                }
                Density::Outline { outline, g } if outline.contains(x, y) => {
                    (1.0 + g[0] * x + g[1] * y).max(0.0)
                }
                Density::Outline { .. } => 0.0,
            };
            sum += v;
        }
    }
    row * sum / (SUB * SUB) as f64
}

/// Area fraction of the cell centred at `c` (side `h`) inside `outline`, from the same
/// SUB × SUB sub-samples as uniform pressure (the lugre_patch stage's twin).
pub fn coverage(outline: &Outline, c: [f64; 2], h: f64) -> f64 {
    let g = [0.0, 0.0];
    cell_weight(&Density::Outline { outline, g }, c, h)
}
