//! Sphere generators (`lattice`, `random_fill`) and the spatial hash used for overlap checks.
//!
//! Both generators are deterministic: all randomness comes from
//! `ChaCha8Rng::seed_from_u64(seed)`, and uniform numbers are mapped to ranges with plain
//! f64 arithmetic, so the output is bit-identical across runs and platforms.
//!
//! Generated spheres never overlap each other, explicitly placed bodies, or bodies of earlier
//! generators. They are NOT checked against boundaries: they are confined to the generator's
//! region, and it is the scene author's job to put that region inside the container.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::gap::OVERLAP_TOL;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Two spheres overlap when their centres are closer than the sum of the radii (less a
/// relative tolerance of [`OVERLAP_TOL`], so that exactly touching spheres are fine).
pub(crate) fn spheres_overlap(a: [f64; 3], ra: f64, b: [f64; 3], rb: f64) -> bool {
    let d2 = (a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2);
    let s = (ra + rb) * (1.0 - OVERLAP_TOL);
    d2 < s * s
}

/// FxHash-style hasher: deterministic and fast for integer cell keys.
#[derive(Default)]
struct CellHasher(u64);

impl Hasher for CellHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_i64(&mut self, i: i64) {
        self.write_u64(i as u64);
    }
}

type Cell = (i64, i64, i64);

/// Spatial hash of spheres. Spheres with radius ≤ `cell/2` are binned by centre; larger ones
/// go to a short list that is checked by brute force.
pub(crate) struct SphereGrid {
    cell: f64,
    inv_cell: f64,
    cells: HashMap<Cell, Vec<u32>, BuildHasherDefault<CellHasher>>,
    big: Vec<u32>,
    pub centers: Vec<[f64; 3]>,
    pub radii: Vec<f64>,
    /// Caller-defined id of each sphere (e.g. its body index).
    pub ids: Vec<usize>,
}

impl SphereGrid {
    /// `max_radius`: the largest radius that will usually be inserted and queried.
    pub fn new(max_radius: f64) -> Self {
        let cell = (2.0 * max_radius).max(f64::MIN_POSITIVE);
        Self {
            cell,
            inv_cell: 1.0 / cell,
            cells: HashMap::default(),
            big: Vec::new(),
            centers: Vec::new(),
            radii: Vec::new(),
            ids: Vec::new(),
        }
    }

    fn key(&self, p: [f64; 3]) -> Cell {
        let f = |x: f64| (x * self.inv_cell).floor().clamp(-1e15, 1e15) as i64;
        (f(p[0]), f(p[1]), f(p[2]))
    }

    pub fn insert(&mut self, c: [f64; 3], r: f64, id: usize) {
        let i = self.centers.len() as u32;
        self.centers.push(c);
        self.radii.push(r);
        self.ids.push(id);
        if r > 0.5 * self.cell {
            self.big.push(i);
        } else {
            let k = self.key(c);
            self.cells.entry(k).or_default().push(i);
        }
    }

    /// Index (into `centers`/`radii`/`ids`) of a sphere overlapping the query, if any.
    pub fn find_overlap(&self, c: [f64; 3], r: f64) -> Option<usize> {
        self.find_overlap_where(c, r, |_| true)
    }

    /// Index of a sphere overlapping the query for which `really(index)` holds too: the
    /// spheres are a broad phase, `really` the exact test of what a sphere bounds.
    pub fn find_overlap_where(
        &self,
        c: [f64; 3],
        r: f64,
        mut really: impl FnMut(usize) -> bool,
    ) -> Option<usize> {
        let mut hit = |i: usize| spheres_overlap(c, r, self.centers[i], self.radii[i]) && really(i);
        for &i in &self.big {
            let i = i as usize;
            if hit(i) {
                return Some(i);
            }
        }
        let reach = r + 0.5 * self.cell;
        let lo = self.key([c[0] - reach, c[1] - reach, c[2] - reach]);
        let hi = self.key([c[0] + reach, c[1] + reach, c[2] + reach]);
        if (hi.0 - lo.0 + 1) * (hi.1 - lo.1 + 1) * (hi.2 - lo.2 + 1) > 4096 {
            // A query much larger than the cells: scan everything instead.
            return (0..self.centers.len()).find(|&i| hit(i));
        }
        for z in lo.2..=hi.2 {
            for y in lo.1..=hi.1 {
                for x in lo.0..=hi.0 {
                    if let Some(list) = self.cells.get(&(x, y, z)) {
                        for &i in list {
                            let i = i as usize;
                            if hit(i) {
                                return Some(i);
                            }
                        }
                    }
                }
            }
        }
        None
    }
}

impl SphereGrid {
    /// Empties the grid, keeping its cells' storage for the next fill of about as many spheres
    /// (overlap removal rebuilds it every sweep).
    fn clear(&mut self) {
        self.cells.values_mut().for_each(Vec::clear);
        self.big.clear();
        self.centers.clear();
        self.radii.clear();
        self.ids.clear();
    }

    /// Indices of every sphere overlapping the query, in a fixed order (cells z, y, x, then
    /// insertion order), appended to `out`.
    pub fn overlaps(&self, c: [f64; 3], r: f64, out: &mut Vec<usize>) {
        for &i in &self.big {
            let i = i as usize;
            if spheres_overlap(c, r, self.centers[i], self.radii[i]) {
                out.push(i);
            }
        }
        let reach = r + 0.5 * self.cell;
        let lo = self.key([c[0] - reach, c[1] - reach, c[2] - reach]);
        let hi = self.key([c[0] + reach, c[1] + reach, c[2] + reach]);
        for z in lo.2..=hi.2 {
            for y in lo.1..=hi.1 {
                for x in lo.0..=hi.0 {
                    for &i in self.cells.get(&(x, y, z)).into_iter().flatten() {
                        let i = i as usize;
                        if spheres_overlap(c, r, self.centers[i], self.radii[i]) {
                            out.push(i);
                        }
                    }
                }
            }
        }
    }
}

/// Region a generator fills. Sphere centres are placed so that whole spheres lie inside.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Region {
    Box {
        min: [f64; 3],
        max: [f64; 3],
    },
    /// Vertical cylinder: `base` is the centre of the bottom disk.
    Cylinder {
        base: [f64; 3],
        radius: f64,
        height: f64,
    },
}

impl Region {
    pub fn aabb(&self) -> ([f64; 3], [f64; 3]) {
        match *self {
            Region::Box { min, max } => (min, max),
            Region::Cylinder {
                base,
                radius,
                height,
            } => (
                [base[0] - radius, base[1] - radius, base[2]],
                [base[0] + radius, base[1] + radius, base[2] + height],
            ),
        }
    }

    pub fn volume(&self) -> f64 {
        match *self {
            Region::Box { min, max } => (0..3).map(|i| max[i] - min[i]).product(),
            Region::Cylinder { radius, height, .. } => {
                std::f64::consts::PI * radius * radius * height
            }
        }
    }

    /// Whether a sphere of radius `r` fits somewhere in the region.
    pub fn fits_radius(&self, r: f64) -> bool {
        match *self {
            Region::Box { min, max } => (0..3).all(|i| max[i] - min[i] >= 2.0 * r),
            Region::Cylinder { radius, height, .. } => radius >= r && height >= 2.0 * r,
        }
    }

    /// Whether the whole sphere lies inside the region (with a tiny tolerance).
    pub fn contains_sphere(&self, c: [f64; 3], r: f64) -> bool {
        let eps = 1e-12 * (1.0 + r);
        match *self {
            Region::Box { min, max } => {
                (0..3).all(|i| c[i] - r >= min[i] - eps && c[i] + r <= max[i] + eps)
            }
            Region::Cylinder {
                base,
                radius,
                height,
            } => {
                let dx = c[0] - base[0];
                let dy = c[1] - base[1];
                (dx * dx + dy * dy).sqrt() + r <= radius + eps
                    && c[2] - r >= base[2] - eps
                    && c[2] + r <= base[2] + height + eps
            }
        }
    }

    /// The nearest centre to `c` at which a sphere of radius `r` lies inside the region
    /// (requires `fits_radius(r)`).
    fn clamp(&self, c: [f64; 3], r: f64) -> [f64; 3] {
        match *self {
            Region::Box { min, max } => [0, 1, 2].map(|i| c[i].clamp(min[i] + r, max[i] - r)),
            Region::Cylinder {
                base,
                radius,
                height,
            } => {
                let (dx, dy) = (c[0] - base[0], c[1] - base[1]);
                let rho = dx.hypot(dy);
                let s = if rho > radius - r {
                    (radius - r) / rho
                } else {
                    1.0
                };
                [
                    base[0] + dx * s,
                    base[1] + dy * s,
                    c[2].clamp(base[2] + r, base[2] + height - r),
                ]
            }
        }
    }

    /// Uniform random centre for a sphere of radius `r` (requires `fits_radius(r)`).
    pub fn sample(&self, r: f64, rng: &mut ChaCha8Rng) -> [f64; 3] {
        let lerp = |a: f64, b: f64, u: f64| a + (b - a) * u;
        match *self {
            Region::Box { min, max } => {
                let mut c = [0.0; 3];
                for i in 0..3 {
                    let u: f64 = rng.random();
                    c[i] = lerp(min[i] + r, max[i] - r, u);
                }
                c
            }
            Region::Cylinder {
                base,
                radius,
                height,
            } => {
                let rr = radius - r;
                let (dx, dy) = loop {
                    let u: f64 = rng.random();
                    let v: f64 = rng.random();
                    let (x, y) = (2.0 * u - 1.0, 2.0 * v - 1.0);
                    if x * x + y * y <= 1.0 {
                        break (x * rr, y * rr);
                    }
                };
                let w: f64 = rng.random();
                [
                    base[0] + dx,
                    base[1] + dy,
                    lerp(base[2] + r, base[2] + height - r, w),
                ]
            }
        }
    }
}

/// Radius distribution of a generator.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum RadiusDist {
    Constant(f64),
    Uniform { min: f64, max: f64 },
}

impl RadiusDist {
    pub fn min(&self) -> f64 {
        match *self {
            RadiusDist::Constant(r) => r,
            RadiusDist::Uniform { min, .. } => min,
        }
    }

    pub fn max(&self) -> f64 {
        match *self {
            RadiusDist::Constant(r) => r,
            RadiusDist::Uniform { max, .. } => max,
        }
    }
    pub(crate) fn draw(&self, rng: &mut ChaCha8Rng) -> f64 {
        match *self {
            RadiusDist::Constant(r) => r,
            RadiusDist::Uniform { min, max } => {
                let u: f64 = rng.random();
                min + (max - min) * u
            }
        }
    }
}

/// A sphere's clearance from an obstacle's actual shape: (unit normal from the obstacle
/// towards the sphere, signed gap; negative when they overlap).
pub(crate) type Clearance = ([f64; 3], f64);

/// Existing bodies (explicit ones, earlier generators' grains) that generated spheres must
/// avoid: their bounding spheres, and for a body that is not its bounding sphere its exact
/// clearance from a sphere.
pub(crate) struct Obstacles<'a> {
    pub centers: &'a [[f64; 3]],
    pub radii: &'a [f64],
    /// `exact(i, c, r)`: obstacle i's clearance from the sphere (c, r), or None when
    /// obstacle i is the sphere `centers[i]`, `radii[i]`. Asked only of obstacles whose
    /// bounding sphere the sphere meets.
    pub exact: &'a dyn Fn(usize, [f64; 3], f64) -> Option<Clearance>,
}

impl Obstacles<'_> {
    /// Obstacles that are all spheres.
    #[cfg(test)]
    pub(crate) fn spheres<'a>(centers: &'a [[f64; 3]], radii: &'a [f64]) -> Obstacles<'a> {
        Obstacles {
            centers,
            radii,
            exact: &|_, _, _| None,
        }
    }

    /// The exact clearance of grid entry `id`'s shape from the sphere (c, r) when it is an
    /// obstacle whose shape is not its bounding sphere.
    fn clearance(&self, id: usize, c: [f64; 3], r: f64) -> Option<(Clearance, f64)> {
        let i = obstacle_index(id)?;
        let tol = super::gap::touch_tolerance(r, self.radii[i]);
        (self.exact)(i, c, r).map(|cl| (cl, tol))
    }

    /// Whether the sphere (c, r), which meets grid entry `id`'s bounding sphere, overlaps
    /// what that sphere bounds.
    fn really_overlaps(&self, id: usize, c: [f64; 3], r: f64) -> bool {
        self.clearance(id, c, r)
            .is_none_or(|((_, gap), tol)| gap < -tol)
    }
}

/// Grid ids of obstacles count down from `usize::MAX`, those of generated spheres up from 0.
fn obstacle_index(id: usize) -> Option<usize> {
    (id > usize::MAX / 2).then(|| usize::MAX - id)
}

fn grid_with_obstacles(region: &Region, r_max: f64, obstacles: &Obstacles<'_>) -> SphereGrid {
    let mut grid = SphereGrid::new(r_max);
    let (lo, hi) = region.aabb();
    for (i, (&c, &r)) in obstacles.centers.iter().zip(obstacles.radii).enumerate() {
        if (0..3).all(|k| c[k] + r >= lo[k] && c[k] - r <= hi[k]) {
            grid.insert(c, r, usize::MAX - i);
        }
    }
    grid
}

/// Cubic lattice: sites `min + r + jitter + k·spacing` along each axis (z-major: the lowest
/// layer first, then y, then x), kept when the whole (jittered) sphere fits in the region and
/// does not overlap an obstacle. Each site is displaced by a random vector of length ≤
/// `jitter`; with `spacing ≥ 2r + 2·jitter` (checked by the caller) no two spheres overlap.
pub(crate) fn lattice(
    region: &Region,
    radius: f64,
    spacing: f64,
    jitter: f64,
    max_count: Option<usize>,
    seed: u64,
    obstacles: &Obstacles<'_>,
) -> Vec<[f64; 3]> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let grid = grid_with_obstacles(region, radius, obstacles);
    let (lo, hi) = region.aabb();
    let margin = radius + jitter;
    let n = |k: usize| -> i64 {
        let span = hi[k] - lo[k] - 2.0 * margin;
        if span < -1e-12 * (1.0 + margin) {
            0
        } else {
            ((span.max(0.0) / spacing) * (1.0 + 1e-12)).floor().min(1e8) as i64 + 1
        }
    };
    let (nx, ny, nz) = (n(0), n(1), n(2));
    let limit = max_count.unwrap_or(usize::MAX);
    let mut out = Vec::new();
    // Bound the work when most sites are rejected (e.g. a region mostly covered by obstacles).
    let mut visits_left = 4 * MAX_GENERATED;
    'outer: for iz in 0..nz {
        for iy in 0..ny {
            for ix in 0..nx {
                if out.len() >= limit || visits_left == 0 {
                    break 'outer;
                }
                visits_left -= 1;
                let site = [
                    lo[0] + margin + ix as f64 * spacing,
                    lo[1] + margin + iy as f64 * spacing,
                    lo[2] + margin + iz as f64 * spacing,
                ];
                // Jitter is drawn for every site (even skipped ones) so that a site's
                // displacement depends only on the seed and its position in the sequence.
                let mut d = [0.0; 3];
                if jitter > 0.0 {
                    loop {
                        for v in d.iter_mut() {
                            let u: f64 = rng.random();
                            *v = 2.0 * u - 1.0;
                        }
                        if d.iter().map(|x| x * x).sum::<f64>() <= 1.0 {
                            break;
                        }
                    }
                }
                let c = [
                    site[0] + jitter * d[0],
                    site[1] + jitter * d[1],
                    site[2] + jitter * d[2],
                ];
                if !region.contains_sphere(c, radius)
                    || grid
                        .find_overlap_where(c, radius, |k| {
                            obstacles.really_overlaps(grid.ids[k], c, radius)
                        })
                        .is_some()
                {
                    continue;
                }
                out.push(c);
            }
        }
    }
    out
}

/// What a random fill aims for.
pub(crate) struct FillTarget {
    pub count: Option<usize>,
    pub volume_fraction: Option<f64>,
}

/// Why a random fill stopped short.
pub(crate) struct FillShortfall {
    pub placed: usize,
    pub wanted: usize,
    /// Solid fraction of the spheres wanted, in the region's volume.
    pub fraction: f64,
    /// Sweeps of overlap removal spent before giving up (0: the fill was not tried).
    pub sweeps: usize,
}

/// The solid fraction `random_fill` promises to reach in any region (box or cylinder, one
/// radius or a range): random sequential addition jams near 0.38 in open space and lower
/// near walls (0.27 in a cylinder 17 grains across), overlap removal goes on from there.
pub(crate) const RANDOM_FILL_REACHES: f64 = 0.55;
/// Above this solid fraction a random fill is not tried at all (random close packing of
/// equal spheres is ≈ 0.64).
const RANDOM_FILL_MAX: f64 = 0.6;

/// Upper bound on the number of spheres one generator may create.
pub(crate) const MAX_GENERATED: usize = 10_000_000;

/// Random sequential addition, then overlap removal. The radii are drawn first (until
/// `count` is reached or the drawn sphere volume reaches `volume_fraction × region volume`,
/// whichever comes first), sorted largest first, then each sphere is tried at up to
/// `attempts` uniformly random positions inside the region and kept at the first one that
/// overlaps nothing. Random sequential addition jams (near φ ≈ 0.38 in open space, lower
/// near walls); when a sphere finds no spot, the rest are put at random spots and [`relax`]
/// pushes all apart. Returns (centre, radius): the placed spheres largest first, then the
/// rest. Reaches [`RANDOM_FILL_REACHES`] in any region.
pub(crate) fn random_fill(
    region: &Region,
    dist: RadiusDist,
    target: &FillTarget,
    attempts: usize,
    seed: u64,
    obstacles: &Obstacles<'_>,
) -> Result<Vec<([f64; 3], f64)>, FillShortfall> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let vol_target = target.volume_fraction.map(|f| f * region.volume());
    let mut radii = Vec::new();
    let mut vol = 0.0;
    loop {
        if target.count.is_some_and(|n| radii.len() >= n) || radii.len() >= MAX_GENERATED {
            break;
        }
        if vol_target.is_some_and(|v| vol >= v) {
            break;
        }
        let r = dist.draw(&mut rng);
        vol += 4.0 / 3.0 * std::f64::consts::PI * r * r * r;
        radii.push(r);
    }
    let fraction = vol / region.volume();
    if fraction > RANDOM_FILL_MAX {
        return Err(FillShortfall {
            placed: 0,
            wanted: radii.len(),
            fraction,
            sweeps: 0,
        });
    }
    // Largest first: big spheres find room while the region is still empty.
    radii.sort_by(|a, b| b.total_cmp(a));
    let mut grid = grid_with_obstacles(region, dist.max(), obstacles);
    let first_new = grid.centers.len();
    for (n, &r) in radii.iter().enumerate() {
        let mut placed = false;
        for _ in 0..attempts {
            let c = region.sample(r, &mut rng);
            let clear = grid
                .find_overlap_where(c, r, |k| obstacles.really_overlaps(grid.ids[k], c, r))
                .is_none();
            if clear {
                grid.insert(c, r, n);
                placed = true;
                break;
            }
        }
        if !placed {
            // Jammed: put the rest anywhere and push all apart until none overlaps.
            let mut spheres: Vec<([f64; 3], f64)> = grid.centers[first_new..]
                .iter()
                .copied()
                .zip(grid.radii[first_new..].iter().copied())
                .collect();
            for &r in &radii[n..] {
                spheres.push((region.sample(r, &mut rng), r));
            }
            let fixed = grid_with_obstacles(region, dist.max(), obstacles);
            return relax(region, spheres, &fixed, obstacles, dist.max(), &mut rng).map_err(
                |(placed, sweeps)| FillShortfall {
                    placed,
                    wanted: radii.len(),
                    fraction,
                    sweeps,
                },
            );
        }
    }
    Ok(grid.centers[first_new..]
        .iter()
        .copied()
        .zip(grid.radii[first_new..].iter().copied())
        .collect())
}

/// Sweeps of overlap removal before a fill gives up.
const RELAX_SWEEPS: usize = 4000;
/// Overlapping pairs are pushed to this relative clearance: a little room settles a dense
/// fill in far fewer sweeps than pushing to exact touching (230 instead of 580 at φ = 0.5).
const RELAX_CLEARANCE: f64 = 1e-3;
/// Sweeps over which overlap removal must make progress, and the progress it must make: the
/// total of the moves must fall below this fraction of what it was a window earlier. A fill
/// that will come apart shrinks its moves geometrically (to 0.45–0.65 of themselves per
/// window); one packed beyond what the region can take shrinks them ever more slowly (0.8,
/// then 0.9 per window) and would spend all [`RELAX_SWEEPS`] before giving up.
const RELAX_WINDOW: usize = 400;
const RELAX_PROGRESS: f64 = 0.8;

/// Spheres as (centre, radius).
type Spheres = Vec<([f64; 3], f64)>;

/// Overlap removal: in each sweep every sphere moves by half of each overlap with another
/// sphere and all of each overlap with an obstacle (along the line of centres, or for an
/// obstacle that is not a sphere along the normal of its exact clearance, or to a fresh
/// random spot when its centre lies inside that shape; all moves computed before any is
/// applied, so the order does not matter), then back into the
/// region. Returns the spheres once none overlaps, else (after [`RELAX_SWEEPS`], or once a
/// window makes too little progress) the number without an overlap and the sweeps spent.
fn relax(
    region: &Region,
    mut spheres: Spheres,
    fixed: &SphereGrid,
    obstacles: &Obstacles<'_>,
    r_max: f64,
    rng: &mut ChaCha8Rng,
) -> Result<Spheres, (usize, usize)> {
    let mut near = Vec::new();
    let mut moves = vec![[0.0; 3]; spheres.len()];
    let mut overlapping = spheres.len();
    let mut grid = SphereGrid::new(r_max);
    let mut window_start = f64::INFINITY;
    let mut sweeps = RELAX_SWEEPS;
    for sweep in 0..RELAX_SWEEPS {
        grid.clear();
        for (i, &(c, r)) in spheres.iter().enumerate() {
            grid.insert(c, r, i);
        }
        overlapping = 0;
        for (i, &(c, r)) in spheres.iter().enumerate() {
            let mut d = [0.0; 3];
            near.clear();
            grid.overlaps(c, r, &mut near);
            let others = near.iter().filter(|&&j| j != i);
            let mut hit = false;
            for &j in others {
                let away = if j < i { 1.0 } else { -1.0 };
                push_apart(c, r, grid.centers[j], grid.radii[j], 0.5, away, &mut d);
                hit = true;
            }
            near.clear();
            fixed.overlaps(c, r, &mut near);
            let mut buried = false;
            for &j in &near {
                match obstacles.clearance(fixed.ids[j], c, r) {
                    None => push_apart(c, r, fixed.centers[j], fixed.radii[j], 1.0, 1.0, &mut d),
                    Some(((_, gap), tol)) if gap >= -tol => continue,
                    // The centre inside the shape: its nearest face may lead out of the
                    // region (a slab whose lower half the region holds), where the region
                    // would put the sphere back every sweep. It is drawn afresh instead.
                    Some(((_, gap), _)) if gap < -r => buried = true,
                    Some(((n, gap), _)) => {
                        // Out along the shape's normal, to the same relative clearance.
                        let push = RELAX_CLEARANCE * r - gap;
                        for k in 0..3 {
                            d[k] += push * n[k];
                        }
                    }
                }
                hit = true;
            }
            if buried {
                let fresh = region.sample(r, rng);
                d = [0, 1, 2].map(|k| fresh[k] - c[k]);
            }
            overlapping += hit as usize;
            moves[i] = d;
        }
        if overlapping == 0 {
            return Ok(spheres);
        }
        if sweep % RELAX_WINDOW == 0 {
            let total: f64 = moves
                .iter()
                .map(|d| d.iter().map(|x| x * x).sum::<f64>().sqrt())
                .sum();
            if total > RELAX_PROGRESS * window_start {
                sweeps = sweep + 1;
                break;
            }
            window_start = total;
        }
        for (s, d) in spheres.iter_mut().zip(&moves) {
            s.0 = region.clamp([s.0[0] + d[0], s.0[1] + d[1], s.0[2] + d[2]], s.1);
        }
    }
    Err((spheres.len() - overlapping, sweeps))
}

/// Adds to `d` the move of sphere (c, r) by `share` of its overlap with (o, ro); coincident
/// centres separate along ±z (`away` picks the sign, opposite for the two partners).
fn push_apart(c: [f64; 3], r: f64, o: [f64; 3], ro: f64, share: f64, away: f64, d: &mut [f64; 3]) {
    let v = [c[0] - o[0], c[1] - o[1], c[2] - o[2]];
    let dist = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    let gap = (r + ro) * (1.0 + RELAX_CLEARANCE) - dist;
    let dir = if dist > 0.0 {
        v.map(|x| x / dist)
    } else {
        [0.0, 0.0, away]
    };
    for k in 0..3 {
        d[k] += share * gap * dir[k];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_matches_brute_force() {
        let mut rng = ChaCha8Rng::seed_from_u64(42);
        let mut grid = SphereGrid::new(0.05);
        let mut all: Vec<([f64; 3], f64)> = Vec::new();
        for i in 0..400 {
            let c = [
                rng.random::<f64>(),
                rng.random::<f64>(),
                rng.random::<f64>(),
            ];
            // Mostly small spheres, a few big ones (which go to the brute-force list).
            let r = if i % 50 == 0 {
                0.2
            } else {
                0.01 + 0.04 * rng.random::<f64>()
            };
            grid.insert(c, r, i);
            all.push((c, r));
        }
        for _ in 0..2000 {
            let c = [
                rng.random::<f64>(),
                rng.random::<f64>(),
                rng.random::<f64>(),
            ];
            let r = 0.05 * rng.random::<f64>();
            let brute = all.iter().any(|&(p, rp)| spheres_overlap(c, r, p, rp));
            let hit = grid.find_overlap(c, r);
            assert_eq!(hit.is_some(), brute);
            if let Some(k) = hit {
                assert!(spheres_overlap(c, r, grid.centers[k], grid.radii[k]));
            }
        }
    }

    #[test]
    fn touching_is_not_overlapping() {
        assert!(!spheres_overlap([0.0; 3], 0.5, [1.0, 0.0, 0.0], 0.5));
        assert!(spheres_overlap([0.0; 3], 0.5, [0.999, 0.0, 0.0], 0.5));
    }

    #[test]
    fn cylinder_region_sampling_stays_inside() {
        let region = Region::Cylinder {
            base: [1.0, -1.0, 2.0],
            radius: 0.3,
            height: 0.5,
        };
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for _ in 0..1000 {
            let c = region.sample(0.1, &mut rng);
            assert!(region.contains_sphere(c, 0.1));
        }
        assert!(region.fits_radius(0.25));
        assert!(!region.fits_radius(0.26));
    }

    #[test]
    fn lattice_avoids_obstacles() {
        let region = Region::Box {
            min: [0.0; 3],
            max: [1.0; 3],
        };
        let obstacles = Obstacles::spheres(&[[0.5, 0.5, 0.5]], &[0.3]);
        let none = Obstacles::spheres(&[], &[]);
        let free = lattice(&region, 0.05, 0.1, 0.0, None, 0, &none);
        let blocked = lattice(&region, 0.05, 0.1, 0.0, None, 0, &obstacles);
        assert_eq!(free.len(), 1000);
        assert!(blocked.len() < free.len());
        assert!(blocked
            .iter()
            .all(|&c| !spheres_overlap(c, 0.05, [0.5, 0.5, 0.5], 0.3)));
    }
}
