//! Cameras: presets framed on the scene's bounds, explicit eye/target, and the light's
//! orthographic shadow camera. All maths in f64; the matrices go to the GPU as f32.

use glam::{DMat4, DVec3};

/// A named view direction; the distance is chosen so that the bounds fill the frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preset {
    /// From the front-right, above: the usual paper-figure view.
    Iso,
    /// Along +y (from −y), z up.
    Front,
    /// Down along −z, y up.
    Top,
}

impl std::str::FromStr for Preset {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "iso" => Ok(Preset::Iso),
            "front" => Ok(Preset::Front),
            "top" => Ok(Preset::Top),
            other => Err(format!(
                "unknown camera '{other}' (expected iso, front or top)"
            )),
        }
    }
}

/// A perspective camera.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    pub eye: DVec3,
    pub target: DVec3,
    pub up: DVec3,
    /// Vertical field of view in degrees.
    pub fov_deg: f64,
}

/// Axis-aligned bounds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds {
    pub min: DVec3,
    pub max: DVec3,
}

impl Bounds {
    pub fn empty() -> Self {
        Bounds {
            min: DVec3::splat(f64::INFINITY),
            max: DVec3::splat(f64::NEG_INFINITY),
        }
    }
    pub fn add_point(&mut self, p: DVec3) {
        self.min = self.min.min(p);
        self.max = self.max.max(p);
    }
    pub fn add_sphere(&mut self, c: DVec3, r: f64) {
        self.add_point(c - DVec3::splat(r));
        self.add_point(c + DVec3::splat(r));
    }
    pub fn is_empty(&self) -> bool {
        self.min.x > self.max.x
    }
    pub fn center(&self) -> DVec3 {
        0.5 * (self.min + self.max)
    }
    /// Radius of the bounding sphere of the box (at least a tiny positive size).
    pub fn radius(&self) -> f64 {
        (0.5 * (self.max - self.min).length()).max(1e-9)
    }
}

impl Preset {
    /// (direction from target to eye, up).
    fn direction(self) -> (DVec3, DVec3) {
        match self {
            Preset::Iso => (DVec3::new(1.0, -1.3, 0.9).normalize(), DVec3::Z),
            Preset::Front => (DVec3::new(0.0, -1.0, 0.0), DVec3::Z),
            Preset::Top => (DVec3::new(0.0, 0.0, 1.0), DVec3::Y),
        }
    }

    /// The preset framed so that the bounding sphere of `b` fits the narrower field of view.
    pub fn frame(self, b: &Bounds, fov_deg: f64, aspect: f64) -> Camera {
        let (dir, up) = self.direction();
        let half_v = (0.5 * fov_deg).to_radians();
        let half_h = (half_v.tan() * aspect).atan();
        let half = half_v.min(half_h);
        // 5 % margin around the bounding sphere.
        let dist = 1.05 * b.radius() / half.sin();
        Camera {
            eye: b.center() + dir * dist,
            target: b.center(),
            up,
            fov_deg,
        }
    }
}

impl Camera {
    pub fn forward(&self) -> DVec3 {
        (self.target - self.eye).normalize()
    }

    /// Near and far planes that hold the bounds and the floor squares drawn for planes
    /// (2 radii around the centre), with the near plane kept positive.
    pub fn near_far(&self, b: &Bounds) -> (f64, f64) {
        let d = (b.center() - self.eye).dot(self.forward());
        let r = b.radius();
        let far = (d + 3.0 * r).max(1e-6);
        let near = (d - 3.0 * r).max(far * 1e-4);
        (near, far)
    }

    /// View-projection matrix (wgpu clip space: depth 0..1).
    pub fn view_proj(&self, aspect: f64, b: &Bounds) -> DMat4 {
        let (near, far) = self.near_far(b);
        let proj = DMat4::perspective_rh(self.fov_deg.to_radians(), aspect, near, far);
        proj * DMat4::look_at_rh(self.eye, self.target, self.up)
    }

    /// The camera's up vector made orthogonal to the viewing direction.
    pub fn true_up(&self) -> DVec3 {
        let f = self.forward();
        let right = f.cross(self.up).normalize();
        right.cross(f)
    }

    /// Rejects degenerate cameras (eye at the target, up along the view, bad field of view).
    pub fn check(&self) -> Result<(), String> {
        let f = self.target - self.eye;
        if !f.is_finite() || f.length() == 0.0 {
            return Err("camera eye and target must differ".into());
        }
        if f.normalize().cross(self.up).length() < 1e-6 {
            return Err("camera up must not be parallel to the viewing direction".into());
        }
        if !(self.fov_deg > 1.0 && self.fov_deg < 170.0) {
            return Err(format!(
                "fov must be in (1, 170) degrees (got {})",
                self.fov_deg
            ));
        }
        Ok(())
    }
}

/// The light's orthographic camera covering the bounds: (view-projection, world size of one
/// shadow-map texel, depth range).
pub fn light_view_proj(light_dir: DVec3, b: &Bounds, resolution: u32) -> (DMat4, f64, f64) {
    let c = b.center();
    let r = b.radius();
    let up = if light_dir.cross(DVec3::Z).length() < 1e-3 {
        DVec3::Y
    } else {
        DVec3::Z
    };
    let eye = c + light_dir * 2.0 * r;
    let view = DMat4::look_at_rh(eye, c, up);
    let proj = DMat4::orthographic_rh(-r, r, -r, r, 0.0, 4.0 * r);
    (proj * view, 2.0 * r / resolution as f64, 4.0 * r)
}

/// Projects a world point to pixel coordinates (x right, y down; pixel centres at +0.5).
pub fn project(view_proj: &DMat4, p: DVec3, width: u32, height: u32) -> (f64, f64) {
    let c = *view_proj * p.extend(1.0);
    let ndc = c.truncate() / c.w;
    (
        (ndc.x * 0.5 + 0.5) * width as f64,
        (0.5 - ndc.y * 0.5) * height as f64,
    )
}
