//! Contact forces per frame as CSV (`frames/contacts_STEP.csv`), and the per-grain loads the
//! grain frames carry: the net contact force on each grain and its average stress, the
//! contact dyads summed over the grain's contacts and divided by its volume,
//! σ = (1/V) Σ_c r_c ⊗ f_c (Christoffersen, Mehrabadi & Nemat-Nasser 1981; Andreotti,
//! Forterre & Pouliquen, *Granular Media*, 2013, §2.2), with r_c from the grain's centre to
//! the contact point and f_c the force of the contact on the grain. With that sign,
//! compression is negative (a grain squeezed along z has σ_zz < 0).

use std::path::Path;

use super::{write_atomic, IoError};

/// Header of the contact-force CSV: pair, point (m), unit normal A → B, normal and
/// tangential force magnitudes (N), force on B (N, world).
pub const CONTACT_FORCES_HEADER: &str =
    "body_a,body_b,feature,x,y,z,nx,ny,nz,normal_force,tangential_force,fx,fy,fz";

/// One contact's force, as the solver reports it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactForce {
    pub body_a: u32,
    pub body_b: u32,
    /// Contact point (world) (m).
    pub point: [f64; 3],
    /// Force on body B (world) (N); the force on body A is its negative.
    pub force_on_b: [f64; 3],
}

/// One contact of a frame: the pair, the point, the normal and the force on B.
#[derive(Clone, Debug, PartialEq)]
pub struct ContactForceRow {
    pub body_a: u32,
    pub body_b: u32,
    /// Feature id of the point within the pair's manifold (see `io::ContactFrame`).
    pub feature: u32,
    pub point: [f64; 3],
    /// Unit normal from A to B.
    pub normal: [f64; 3],
    /// Force on B (N, world): impulse / dt; the force on A is its negative.
    pub force_on_b: [f64; 3],
}

impl ContactForceRow {
    /// f·n (N): positive when the bodies push each other apart.
    pub fn normal_force(&self) -> f64 {
        dot(self.force_on_b, self.normal)
    }

    /// |f − (f·n) n| (N): the friction force's magnitude.
    pub fn tangential_force(&self) -> f64 {
        let fn_ = self.normal_force();
        let t = [0, 1, 2].map(|k| self.force_on_b[k] - fn_ * self.normal[k]);
        dot(t, t).sqrt()
    }

    /// |f| (N), what `[output] contact_force_min` compares against.
    pub fn magnitude(&self) -> f64 {
        dot(self.force_on_b, self.force_on_b).sqrt()
    }
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// Writes the rows under [`CONTACT_FORCES_HEADER`] (numbers in Rust's shortest round-trip
/// form). Atomic; refuses NaN/inf, naming the row.
pub fn write_contact_forces(path: &Path, rows: &[ContactForceRow]) -> Result<(), IoError> {
    let mut text = String::with_capacity(64 * (rows.len() + 1));
    text.push_str(CONTACT_FORCES_HEADER);
    text.push('\n');
    for (index, r) in rows.iter().enumerate() {
        let flat: Vec<f64> = r
            .point
            .iter()
            .chain(&r.normal)
            .chain(&[r.normal_force(), r.tangential_force()])
            .chain(&r.force_on_b)
            .copied()
            .collect();
        if let Some(k) = flat.iter().position(|x| !x.is_finite()) {
            return Err(IoError::NonFinite {
                path: path.to_path_buf(),
                array: "contact force".into(),
                index,
                component: Some(k),
                value: flat[k],
            });
        }
        let cols: Vec<String> = flat.iter().map(f64::to_string).collect();
        text.push_str(&format!(
            "{},{},{},{}\n",
            r.body_a,
            r.body_b,
            r.feature,
            cols.join(",")
        ));
    }
    write_atomic(path, |w| w.write_all(text.as_bytes())).map_err(|e| IoError::os(path, e))
}

/// Reads a file written by [`write_contact_forces`]; an error names the file and line.
pub fn read_contact_forces(path: &Path) -> Result<Vec<ContactForceRow>, IoError> {
    let text = std::fs::read_to_string(path).map_err(|e| IoError::os(path, e))?;
    let bad = |line: usize, message: String| IoError::Parse {
        path: path.to_path_buf(),
        line,
        message,
    };
    let mut lines = text.lines().enumerate();
    match lines.next() {
        Some((_, h)) if h.trim() == CONTACT_FORCES_HEADER => {}
        _ => {
            return Err(bad(
                1,
                format!("expected the header {CONTACT_FORCES_HEADER}"),
            ))
        }
    }
    let mut rows = Vec::new();
    for (i, line) in lines.filter(|(_, l)| !l.trim().is_empty()) {
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        if f.len() != 14 {
            return Err(bad(i + 1, format!("expected 14 fields, found {}", f.len())));
        }
        let int = |k: usize| {
            f[k].parse::<u32>()
                .map_err(|e| bad(i + 1, format!("{}: {e}", f[k])))
        };
        let num = |k: usize| {
            f[k].parse::<f64>()
                .map_err(|e| bad(i + 1, format!("{}: {e}", f[k])))
        };
        let v3 =
            |k: usize| -> Result<[f64; 3], IoError> { Ok([num(k)?, num(k + 1)?, num(k + 2)?]) };
        rows.push(ContactForceRow {
            body_a: int(0)?,
            body_b: int(1)?,
            feature: int(2)?,
            point: v3(3)?,
            normal: v3(6)?,
            force_on_b: v3(11)?,
        });
    }
    Ok(rows)
}

/// Net contact force (N) and average stress (Pa, row-major 3×3, `σ[3a + b] = Σ r_a f_b / V`)
/// of each grain.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GrainLoads {
    pub force: Vec<[f64; 3]>,
    pub stress: Vec<[f64; 9]>,
}

/// The loads of the grains, bodies `first_body..first_body + centres.len()` (centres in m,
/// volumes in m³), from the contacts' forces; contacts with other bodies (boundaries)
/// count for the grain side only. Every contact is counted, whatever its force.
pub fn grain_loads(
    contacts: &[ContactForce],
    centres: &[[f64; 3]],
    volumes: &[f64],
    first_body: usize,
) -> GrainLoads {
    let n = centres.len();
    let mut loads = GrainLoads {
        force: vec![[0.0; 3]; n],
        stress: vec![[0.0; 9]; n],
    };
    let grain = |body: u32| (body as usize).checked_sub(first_body).filter(|&g| g < n);
    for c in contacts {
        let on_b = c.force_on_b;
        let on_a = on_b.map(|x| -x);
        for (body, f) in [(c.body_a, on_a), (c.body_b, on_b)] {
            let Some(g) = grain(body) else { continue };
            let r = [0, 1, 2].map(|k| c.point[k] - centres[g][k]);
            for (sum, fk) in loads.force[g].iter_mut().zip(f) {
                *sum += fk;
            }
            for (k, sum) in loads.stress[g].iter_mut().enumerate() {
                *sum += r[k / 3] * f[k % 3];
            }
        }
    }
    for (s, &v) in loads.stress.iter_mut().zip(volumes) {
        // A body without volume (a massless kinematic one) has no average stress.
        let scale = if v > 0.0 { 1.0 / v } else { 0.0 };
        for x in s.iter_mut() {
            *x *= scale;
        }
    }
    loads
}
