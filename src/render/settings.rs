//! The look of a render: the scene's `[render]` table, overridden field by field by the
//! command-line flags, over the defaults.
//!
//! ```toml
//! [render]
//! camera = "iso"            # "iso" | "front" | "top": framed on the scene's bounds
//! eye = [0.3, -0.4, 0.3]    # an explicit camera instead (both eye and target)
//! target = [0.0, 0.0, 0.05]
//! up = [0.0, 0.0, 1.0]      # default +z
//! fov = 30.0                # vertical field of view, degrees
//! width = 800
//! height = 600
//! background = "#ffffff"    # or "white" / "black"
//! color_by = "speed"        # "speed" | "material"
//! range = [0.0, 1.0]        # colour-map range of the speed; default 0..max over the frames
//! force_chains = false      # pale grains with ribbons between touching ones, width and
//!                           # colour by force (needs a run with [output] contacts = true)
//! shadows = true
//! supersample = 2           # drawn this many times larger per side, box-filtered down
//! fps = 10                  # animation frame rate
//! ```

use std::path::Path;

use serde::Deserialize;
use serde_spanned::Spanned;

use super::camera::Preset;
use super::RenderError;

/// What the spheres are coloured by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColorBy {
    /// |v| through viridis, with a colour bar.
    Speed,
    /// The body's material (its group in the engine), with a legend.
    Material,
}

impl std::str::FromStr for ColorBy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "speed" => Ok(ColorBy::Speed),
            "material" | "group" => Ok(ColorBy::Material),
            other => Err(format!(
                "unknown color_by '{other}' (expected speed or material)"
            )),
        }
    }
}

/// Every setting optional: one layer (table or flags). [`ViewLayer::resolve`] fills defaults.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ViewLayer {
    pub camera: Option<Preset>,
    pub eye: Option<[f64; 3]>,
    pub target: Option<[f64; 3]>,
    pub up: Option<[f64; 3]>,
    pub fov: Option<f64>,
    pub width: Option<u32>,
    pub height: Option<u32>,
    pub background: Option<[u8; 3]>,
    pub color_by: Option<ColorBy>,
    pub range: Option<(f64, f64)>,
    pub force_chains: Option<bool>,
    pub shadows: Option<bool>,
    pub supersample: Option<u32>,
    pub fps: Option<u32>,
}

/// The settings in force.
#[derive(Clone, Debug, PartialEq)]
pub struct View {
    pub camera: Preset,
    /// Explicit eye and target (override the preset when both are given).
    pub eye_target: Option<([f64; 3], [f64; 3])>,
    pub up: [f64; 3],
    pub fov: f64,
    pub width: u32,
    pub height: u32,
    pub background: [u8; 3],
    pub color_by: ColorBy,
    pub range: Option<(f64, f64)>,
    pub force_chains: bool,
    pub shadows: bool,
    pub supersample: u32,
    pub fps: u32,
}

macro_rules! over {
    ($top:expr, $base:expr; $($f:ident),*) => {
        ViewLayer { $($f: $top.$f.or($base.$f)),* }
    };
}

impl ViewLayer {
    /// `self` where set, else `base`.
    pub fn over(&self, base: &ViewLayer) -> ViewLayer {
        over!(self.clone(), base.clone(); camera, eye, target, up, fov, width, height,
            background, color_by, range, force_chains, shadows, supersample, fps)
    }

    /// Defaults for what is unset; checks the values. `source` names where they came from.
    pub fn resolve(&self, source: &str) -> Result<View, RenderError> {
        self.checked()
            .map_err(|(_, m)| RenderError::Options(format!("{source}: {m}")))
    }

    /// [`ViewLayer::resolve`], a refusal naming its field (`fov`, `width`, …).
    fn checked(&self) -> Result<View, (&'static str, String)> {
        let eye_target = match (self.eye, self.target) {
            (Some(e), Some(t)) => Some((e, t)),
            (None, None) => None,
            (None, _) => return Err(("target", "eye and target must be given together".into())),
            (_, None) => return Err(("eye", "eye and target must be given together".into())),
        };
        let v = View {
            camera: self.camera.unwrap_or(Preset::Iso),
            eye_target,
            up: self.up.unwrap_or([0.0, 0.0, 1.0]),
            fov: self.fov.unwrap_or(30.0),
            width: self.width.unwrap_or(800),
            height: self.height.unwrap_or(600),
            background: self.background.unwrap_or([255, 255, 255]),
            color_by: self.color_by.unwrap_or(ColorBy::Speed),
            range: self.range,
            force_chains: self.force_chains.unwrap_or(false),
            shadows: self.shadows.unwrap_or(true),
            supersample: self.supersample.unwrap_or(2),
            fps: self.fps.unwrap_or(10),
        };
        if !(v.fov > 1.0 && v.fov < 170.0) {
            return Err((
                "fov",
                format!("fov must be in (1, 170) degrees (got {})", v.fov),
            ));
        }
        for (name, side) in [("width", v.width), ("height", v.height)] {
            if side < MIN_SIDE {
                return Err((
                    name,
                    format!("image {name} must be at least {MIN_SIDE} pixels (got {side})"),
                ));
            }
        }
        if let Some((lo, hi)) = v.range {
            if !(lo.is_finite() && hi.is_finite() && hi > lo) {
                return Err((
                    "range",
                    format!("range must be [min, max] with max > min (got [{lo}, {hi}])"),
                ));
            }
        }
        if !(1..=4).contains(&v.supersample) {
            return Err((
                "supersample",
                format!("supersample must be 1..=4 (got {})", v.supersample),
            ));
        }
        if !(1..=100).contains(&v.fps) {
            return Err(("fps", format!("fps must be 1..=100 (got {})", v.fps)));
        }
        for (name, p) in [("eye", self.eye), ("target", self.target), ("up", self.up)] {
            if p.is_some_and(|p| p.iter().any(|x| !x.is_finite())) {
                return Err((name, format!("{name} must be finite")));
            }
        }
        Ok(v)
    }
}

/// Smallest image side in pixels.
const MIN_SIDE: u32 = 16;

/// `#rrggbb`, `white` or `black`.
pub fn parse_color(s: &str) -> Result<[u8; 3], String> {
    match s {
        "white" => return Ok([255; 3]),
        "black" => return Ok([0; 3]),
        _ => {}
    }
    let hex = s
        .strip_prefix('#')
        .filter(|h| h.len() == 6 && h.chars().all(|c| c.is_ascii_hexdigit()))
        .ok_or_else(|| format!("colour '{s}' is not #rrggbb, white or black"))?;
    Ok(std::array::from_fn(|i| {
        u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap_or(0)
    }))
}

type Sp<T> = Option<Spanned<T>>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRender {
    camera: Sp<String>,
    eye: Sp<[f64; 3]>,
    target: Sp<[f64; 3]>,
    up: Sp<[f64; 3]>,
    fov: Sp<f64>,
    width: Sp<u32>,
    height: Sp<u32>,
    background: Sp<String>,
    color_by: Sp<String>,
    range: Sp<[f64; 2]>,
    force_chains: Sp<bool>,
    shadows: Sp<bool>,
    supersample: Sp<u32>,
    fps: Sp<u32>,
}

/// Only the `[render]` table of a scene file; everything else is the scene loader's.
#[derive(Deserialize)]
struct RenderOnly {
    render: Option<RawRender>,
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// The `[render]` table of the scene text (an empty layer when there is none). Errors are
/// `file:line:column: render.field: message`.
pub fn read_table(text: &str, file: &Path) -> Result<ViewLayer, RenderError> {
    let at = |span: Option<std::ops::Range<usize>>, field: &str, msg: String| {
        let loc = span.map_or(String::new(), |s| {
            let (l, c) = line_col(text, s.start);
            format!(":{l}:{c}")
        });
        let field = if field.is_empty() {
            String::new()
        } else {
            format!("render.{field}: ")
        };
        RenderError::Options(format!("{}{loc}: {field}{msg}", file.display()))
    };
    let raw: RenderOnly =
        toml::from_str(text).map_err(|e| at(e.span(), "", e.message().trim().to_string()))?;
    let Some(r) = raw.render else {
        return Ok(ViewLayer::default());
    };
    fn val<T: Clone>(s: &Sp<T>) -> Option<T> {
        s.as_ref().map(|s| s.get_ref().clone())
    }
    let parse = |s: &Sp<String>, field: &str, f: &dyn Fn(&str) -> Result<(), String>| {
        if let Some(s) = s {
            f(s.get_ref()).map_err(|m| at(Some(s.span()), field, m))?;
        }
        Ok::<(), RenderError>(())
    };
    parse(&r.camera, "camera", &|s| s.parse::<Preset>().map(|_| ()))?;
    parse(&r.color_by, "color_by", &|s| {
        s.parse::<ColorBy>().map(|_| ())
    })?;
    parse(&r.background, "background", &|s| parse_color(s).map(|_| ()))?;
    let layer = ViewLayer {
        camera: r.camera.as_ref().and_then(|s| s.get_ref().parse().ok()),
        eye: val(&r.eye),
        target: val(&r.target),
        up: val(&r.up),
        fov: val(&r.fov),
        width: val(&r.width),
        height: val(&r.height),
        background: r
            .background
            .as_ref()
            .and_then(|s| parse_color(s.get_ref()).ok()),
        color_by: r.color_by.as_ref().and_then(|s| s.get_ref().parse().ok()),
        range: val(&r.range).map(|[a, b]| (a, b)),
        force_chains: val(&r.force_chains),
        shadows: val(&r.shadows),
        supersample: val(&r.supersample),
        fps: val(&r.fps),
    };
    // Range checks here too, so the message points at the field's line in the scene file.
    if let Err((field, m)) = layer.checked() {
        let at_field = match field {
            "fov" => r.fov.as_ref().map(|v| v.span()),
            "width" => r.width.as_ref().map(|v| v.span()),
            "height" => r.height.as_ref().map(|v| v.span()),
            "range" => r.range.as_ref().map(|v| v.span()),
            "supersample" => r.supersample.as_ref().map(|v| v.span()),
            "fps" => r.fps.as_ref().map(|v| v.span()),
            "eye" => r.eye.as_ref().map(|v| v.span()),
            "target" => r.target.as_ref().map(|v| v.span()),
            "up" => r.up.as_ref().map(|v| v.span()),
            _ => None,
        };
        return Err(at(at_field, field, m));
    }
    Ok(layer)
}
