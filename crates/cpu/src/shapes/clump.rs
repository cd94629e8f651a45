//! Clumps: rigid aggregates of spheres. Mass properties from the member spheres, once at
//! load.
//!
//! * Members that do not overlap (a single sphere, or spheres that only touch): exact — the
//!   sum of the spheres' masses and of their inertias moved by the parallel-axis theorem.
//! * Members that overlap: the union is integrated numerically, column by column. A square
//!   grid of `n × n` columns (default [`DEFAULT_COLUMNS`]) covers the clump's bounding box
//!   in x, y; along each column the union of the spheres' chords is exact (the intervals are
//!   merged, so overlaps count once) and 1, z, z² are integrated analytically; the columns
//!   are summed by the midpoint rule (with the h²/12 term of x² and y² over a cell). The
//!   only error is the midpoint rule at the silhouette, where the chord length has a
//!   square-root edge. Stated bound, tested (tests/clumps.rs) on overlapping pairs and
//!   triples against the lens formula and the single sphere: relative error of the volume
//!   ≤ [`VOLUME_REL_ERROR`] and of the principal moments ≤ [`INERTIA_REL_ERROR`].
//!
//! The body frame of a clump is its centre of mass with its principal axes: the inertia
//! tensor is diagonalised (nalgebra's symmetric eigen-decomposition) and the members are
//! re-expressed in that frame. [`ClumpMass::frame`] gives the pose of that frame in the
//! frame the members were written in, so the scene's position and orientation keep their
//! meaning (the pose of the frame the spheres were written in).

use glam::{DMat3, DQuat, DVec3};

/// Columns per side of the integration grid for overlapping members.
pub const DEFAULT_COLUMNS: usize = 600;
/// Stated bound on the relative volume error of an overlapping clump at [`DEFAULT_COLUMNS`].
pub const VOLUME_REL_ERROR: f64 = 1e-4;
/// Stated bound on the relative error of each principal moment at [`DEFAULT_COLUMNS`].
pub const INERTIA_REL_ERROR: f64 = 2e-4;
/// Most member spheres per clump (feature ids pack the member index in 8 bits).
pub const MAX_MEMBERS: usize = 64;
/// Relative slack of the "touches" test: |ci − cj| ≤ (ri + rj)(1 + TOUCH_TOL).
pub const TOUCH_TOL: f64 = 1e-9;

/// Why a list of spheres is not a clump.
#[derive(Clone, Debug, PartialEq)]
pub enum ClumpError {
    Empty,
    TooMany(usize),
    /// Member k has a non-positive or non-finite radius (or a non-finite centre).
    BadSphere(usize),
    /// Member k is not connected to member 0 through touching or overlapping spheres.
    Disconnected(usize),
}

impl std::fmt::Display for ClumpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClumpError::Empty => write!(f, "a clump needs at least one sphere"),
            ClumpError::TooMany(n) => {
                write!(f, "a clump has at most {MAX_MEMBERS} spheres (got {n})")
            }
            ClumpError::BadSphere(k) => write!(
                f,
                "sphere {k}: the radius must be positive and the centre finite"
            ),
            ClumpError::Disconnected(k) => write!(
                f,
                "sphere {k} does not touch or overlap the others: a clump must be connected"
            ),
        }
    }
}

/// Mass properties of a clump per unit density, and its members in the body frame.
#[derive(Clone, Debug, PartialEq)]
pub struct ClumpMass {
    /// Volume (= mass at unit density).
    pub volume: f64,
    /// Centre of mass in the input frame.
    pub com: DVec3,
    /// Inertia tensor about the centre of mass, input frame, unit density.
    pub tensor: DMat3,
    /// Principal moments (unit density), about the body frame's axes.
    pub principal: [f64; 3],
    /// Rotation from the body (principal) frame to the input frame.
    pub axes: DQuat,
    /// Members in the body frame: centre xyz, radius.
    pub members: Vec<[f64; 4]>,
    /// Whether the result is exact (no two members overlap).
    pub exact: bool,
}

/// Checks the member list: non-empty, at most [`MAX_MEMBERS`], positive radii, connected.
pub fn validate(spheres: &[[f64; 4]]) -> Result<(), ClumpError> {
    if spheres.is_empty() {
        return Err(ClumpError::Empty);
    }
    if spheres.len() > MAX_MEMBERS {
        return Err(ClumpError::TooMany(spheres.len()));
    }
    if let Some(k) = spheres
        .iter()
        .position(|s| !(s[3] > 0.0 && s[3].is_finite() && s.iter().all(|x| x.is_finite())))
    {
        return Err(ClumpError::BadSphere(k));
    }
    // Flood fill from member 0 over "touch or overlap".
    let n = spheres.len();
    let mut seen = vec![false; n];
    seen[0] = true;
    let mut stack = vec![0];
    while let Some(i) = stack.pop() {
        for j in 0..n {
            if !seen[j] && touches(&spheres[i], &spheres[j], TOUCH_TOL) {
                seen[j] = true;
                stack.push(j);
            }
        }
    }
    match seen.iter().position(|s| !s) {
        Some(k) => Err(ClumpError::Disconnected(k)),
        None => Ok(()),
    }
}

fn centre(s: &[f64; 4]) -> DVec3 {
    DVec3::new(s[0], s[1], s[2])
}

fn touches(a: &[f64; 4], b: &[f64; 4], tol: f64) -> bool {
    centre(a).distance(centre(b)) <= (a[3] + b[3]) * (1.0 + tol)
}

/// Whether any two members overlap (beyond touching).
fn overlapping(spheres: &[[f64; 4]]) -> bool {
    (0..spheres.len()).any(|i| {
        (i + 1..spheres.len()).any(|j| {
            let (a, b) = (&spheres[i], &spheres[j]);
            centre(a).distance(centre(b)) < (a[3] + b[3]) * (1.0 - TOUCH_TOL)
        })
    })
}

/// Raw moments of a solid: ∫1, ∫x, ∫x xᵀ (input frame, unit density).
#[derive(Clone, Copy, Debug)]
struct Moments {
    v: f64,
    s: DVec3,
    /// ∫ x xᵀ
    ss: DMat3,
}

impl Moments {
    /// The inertia tensor about the centre of mass.
    fn inertia_about_com(&self) -> (DVec3, DMat3) {
        let c = self.s / self.v;
        // Second moments about the centre: ∫(x−c)(x−c)ᵀ = ∫xxᵀ − V c cᵀ.
        let cc = outer(c, c) * self.v;
        let m = self.ss - cc;
        let tr = m.x_axis.x + m.y_axis.y + m.z_axis.z;
        (c, DMat3::from_diagonal(DVec3::splat(tr)) - m)
    }
}

fn outer(a: DVec3, b: DVec3) -> DMat3 {
    DMat3::from_cols(a * b.x, a * b.y, a * b.z)
}

/// Exact moments of disjoint (at most touching) spheres.
fn exact_moments(spheres: &[[f64; 4]]) -> Moments {
    // (glam's DMat3::default() is the identity, hence the explicit zero.)
    let mut m = Moments {
        v: 0.0,
        s: DVec3::ZERO,
        ss: DMat3::ZERO,
    };
    for s in spheres {
        let c = centre(s);
        let r = s[3];
        let v = 4.0 / 3.0 * std::f64::consts::PI * r * r * r;
        // ∫xxᵀ of a ball about its centre: V r²/5 · 1.
        m.v += v;
        m.s += c * v;
        m.ss += DMat3::from_diagonal(DVec3::splat(v * r * r / 5.0)) + outer(c, c) * v;
    }
    m
}

/// Moments of the union by columns along z (see the module notes).
fn column_moments(spheres: &[[f64; 4]], n: usize) -> Moments {
    let lo = spheres
        .iter()
        .fold(DVec3::splat(f64::INFINITY), |a, s| a.min(centre(s) - s[3]));
    let hi = spheres
        .iter()
        .fold(DVec3::splat(f64::NEG_INFINITY), |a, s| {
            a.max(centre(s) + s[3])
        });
    let side = (hi.x - lo.x).max(hi.y - lo.y);
    let h = side / n as f64;
    let cell = h * h;
    let mut iv: Vec<(f64, f64)> = Vec::with_capacity(spheres.len());
    let (mut v, mut sx, mut sy, mut sz) = (0.0, 0.0, 0.0, 0.0);
    let (mut sxx, mut syy, mut szz, mut sxy, mut sxz, mut syz) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    for iy in 0..n {
        let y = lo.y + (iy as f64 + 0.5) * h;
        for ix in 0..n {
            let x = lo.x + (ix as f64 + 0.5) * h;
            iv.clear();
            for s in spheres {
                let d2 = s[3] * s[3] - (x - s[0]).powi(2) - (y - s[1]).powi(2);
                if d2 > 0.0 {
                    let w = d2.sqrt();
                    iv.push((s[2] - w, s[2] + w));
                }
            }
            if iv.is_empty() {
                continue;
            }
            let (l, z1, z2) = union_integrals(&mut iv);
            v += l;
            sx += x * l;
            sy += y * l;
            sz += z1;
            sxx += (x * x + h * h / 12.0) * l;
            syy += (y * y + h * h / 12.0) * l;
            szz += z2;
            sxy += x * y * l;
            sxz += x * z1;
            syz += y * z1;
        }
    }
    Moments {
        v: v * cell,
        s: DVec3::new(sx, sy, sz) * cell,
        ss: DMat3::from_cols(
            DVec3::new(sxx, sxy, sxz),
            DVec3::new(sxy, syy, syz),
            DVec3::new(sxz, syz, szz),
        ) * cell,
    }
}

/// ∫1, ∫z, ∫z² over the union of the intervals (sorted and merged here).
fn union_integrals(iv: &mut [(f64, f64)]) -> (f64, f64, f64) {
    iv.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (mut l, mut z1, mut z2) = (0.0, 0.0, 0.0);
    let mut add = |a: f64, b: f64| {
        l += b - a;
        z1 += 0.5 * (b * b - a * a);
        z2 += (b * b * b - a * a * a) / 3.0;
    };
    let (mut a, mut b) = iv[0];
    for &(c, d) in &iv[1..] {
        if c > b {
            add(a, b);
            (a, b) = (c, d);
        } else {
            b = b.max(d);
        }
    }
    add(a, b);
    (l, z1, z2)
}

/// Principal moments and the rotation body → input frame (a proper rotation).
pub(crate) fn principal_axes(t: &DMat3) -> ([f64; 3], DQuat) {
    let m = nalgebra::Matrix3::from_fn(|i, j| t.col(j)[i]);
    let e = nalgebra::SymmetricEigen::new(m);
    let mut cols: Vec<DVec3> = (0..3)
        .map(|k| {
            let c = e.eigenvectors.column(k);
            DVec3::new(c[0], c[1], c[2])
        })
        .collect();
    let mut vals = [e.eigenvalues[0], e.eigenvalues[1], e.eigenvalues[2]];
    // A degenerate spectrum (sphere, symmetric clumps) keeps the input axes where it can:
    // if the tensor is already diagonal, use the identity.
    let off = t.x_axis.y.abs() + t.x_axis.z.abs() + t.y_axis.z.abs();
    let scale = vals.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    if off <= 1e-14 * scale {
        return ([t.x_axis.x, t.y_axis.y, t.z_axis.z], DQuat::IDENTITY);
    }
    if cols[0].cross(cols[1]).dot(cols[2]) < 0.0 {
        cols[2] = -cols[2];
    }
    // Keep a fixed order (ascending moments) so the frame is a function of the tensor.
    let mut idx = [0usize, 1, 2];
    idx.sort_by(|&a, &b| vals[a].total_cmp(&vals[b]));
    let mut c = [cols[idx[0]], cols[idx[1]], cols[idx[2]]];
    if c[0].cross(c[1]).dot(c[2]) < 0.0 {
        c[2] = -c[2];
    }
    vals = [vals[idx[0]], vals[idx[1]], vals[idx[2]]];
    let q = DQuat::from_mat3(&DMat3::from_cols(c[0], c[1], c[2])).normalize();
    (vals, q)
}

impl ClumpMass {
    /// Mass properties of the clump of `spheres` (centre xyz, radius) per unit density,
    /// with `columns` per side of the integration grid when members overlap.
    pub fn with_columns(spheres: &[[f64; 4]], columns: usize) -> Result<Self, ClumpError> {
        validate(spheres)?;
        let exact = !overlapping(spheres);
        let m = if exact {
            exact_moments(spheres)
        } else {
            column_moments(spheres, columns.max(8))
        };
        let (com, tensor) = m.inertia_about_com();
        let (principal, axes) = principal_axes(&tensor);
        let inv = axes.inverse();
        let members = spheres
            .iter()
            .map(|s| {
                let c = inv * (centre(s) - com);
                [c.x, c.y, c.z, s[3]]
            })
            .collect();
        Ok(ClumpMass {
            volume: m.v,
            com,
            tensor,
            principal,
            axes,
            members,
            exact,
        })
    }

    /// [`ClumpMass::with_columns`] at [`DEFAULT_COLUMNS`].
    pub fn new(spheres: &[[f64; 4]]) -> Result<Self, ClumpError> {
        Self::with_columns(spheres, DEFAULT_COLUMNS)
    }

    /// Radius of the sphere about the centre of mass that holds every member.
    pub fn bounding_radius(&self) -> f64 {
        self.members
            .iter()
            .map(|s| centre(s).length() + s[3])
            .fold(0.0, f64::max)
    }

    /// The same clump scaled by `s` about its centre of mass (same body frame).
    pub fn scaled(&self, s: f64) -> ClumpMass {
        let s5 = s.powi(5);
        ClumpMass {
            volume: self.volume * s * s * s,
            com: self.com * s,
            tensor: self.tensor * s5,
            principal: self.principal.map(|i| i * s5),
            axes: self.axes,
            members: self.members.iter().map(|m| m.map(|x| x * s)).collect(),
            exact: self.exact,
        }
    }

    /// Mass and principal moments at `density`.
    pub fn mass_properties(&self, density: f64) -> (f64, [f64; 3]) {
        (density * self.volume, self.principal.map(|i| i * density))
    }

    /// The body pose for a clump whose input frame is placed at `position` with
    /// `orientation` (x, y, z, w): the centre of mass and the principal frame in world.
    pub fn frame(&self, position: [f64; 3], orientation: [f64; 4]) -> ([f64; 3], [f64; 4]) {
        let q = DQuat::from_array(orientation).normalize();
        let p = DVec3::from_array(position) + q * self.com;
        let qb = (q * self.axes).normalize();
        (p.to_array(), qb.to_array())
    }
}

/// Volume of the lens where two spheres of radii `r1`, `r2` at distance `d` overlap
/// (|r1 − r2| < d < r1 + r2), the textbook formula.
pub fn lens_volume(r1: f64, r2: f64, d: f64) -> f64 {
    std::f64::consts::PI
        * (r1 + r2 - d).powi(2)
        * (d * d + 2.0 * d * (r1 + r2) - 3.0 * (r1 - r2).powi(2))
        / (12.0 * d)
}

impl super::Solid for ClumpMass {
    /// The member sphere reaching farthest along `d`.
    fn support(&self, d: DVec3) -> DVec3 {
        let u = d.normalize_or_zero();
        let reach = |s: &[f64; 4]| centre(s).dot(u) + s[3];
        let far = self
            .members
            .iter()
            .fold(None::<&[f64; 4]>, |b, s| match b {
                Some(b) if reach(b) >= reach(s) => Some(b),
                _ => Some(s),
            })
            .expect("a clump has members");
        centre(far) + u * far[3]
    }
    fn bounding_radius(&self) -> f64 {
        ClumpMass::bounding_radius(self)
    }
    fn mass_properties(&self, density: f64) -> (f64, [f64; 3]) {
        ClumpMass::mass_properties(self, density)
    }
    /// Drawn as its member spheres.
    fn surface(&self) -> Option<super::Surface> {
        None
    }
}

pub struct ClumpFamily;

impl super::ShapeFamily for ClumpFamily {
    fn name(&self) -> &'static str {
        "clump"
    }
    fn id(&self) -> u32 {
        super::SHAPE_CLUMP
    }
    fn routine(&self) -> super::Routine {
        super::Routine::Clump
    }
    fn keys(&self) -> &'static [&'static str] {
        &["spheres"]
    }
    /// Given by data (its member `spheres`), which the scene loader reads.
    fn parse(
        &self,
        _: &dyn super::ShapeKeys,
    ) -> Option<Result<super::BodyShape, crate::model::keys::KeyError>> {
        None
    }
}
