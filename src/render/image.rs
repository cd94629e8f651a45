//! CPU side of the pictures: colour maps, supersample reduction, the colour bar or legend,
//! PNG / animated PNG encoding and the contact sheet. All integer or fixed-order
//! arithmetic, so the bytes depend only on the GPU image and the inputs.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::RenderError;
use crate::plot::{ensure_font, FONT};

/// matplotlib's viridis at t = 0, 0.1, …, 1 (sRGB bytes); linear in between.
const VIRIDIS: [[u8; 3]; 11] = [
    [68, 1, 84],
    [72, 36, 117],
    [65, 68, 135],
    [53, 95, 141],
    [42, 120, 142],
    [33, 145, 140],
    [34, 168, 132],
    [68, 190, 112],
    [122, 209, 81],
    [189, 223, 38],
    [253, 231, 37],
];

/// Tableau 10, for categories (materials).
const CATEGORIES: [[u8; 3]; 10] = [
    [78, 121, 167],
    [242, 142, 43],
    [225, 87, 89],
    [118, 183, 178],
    [89, 161, 79],
    [237, 201, 72],
    [176, 122, 161],
    [255, 157, 167],
    [156, 117, 95],
    [186, 176, 172],
];

/// Viridis at `t` (clamped to [0, 1]; NaN maps to 0).
pub fn viridis(t: f64) -> [u8; 3] {
    let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
    let x = t * 10.0;
    let i = (x.floor() as usize).min(9);
    let f = x - i as f64;
    let (a, b) = (VIRIDIS[i], VIRIDIS[i + 1]);
    std::array::from_fn(|k| (a[k] as f64 + f * (b[k] as f64 - a[k] as f64)).round() as u8)
}

/// White to dark red, for force chains (light = weak).
pub fn reds(t: f64) -> [u8; 3] {
    let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
    let lerp = |a: f64, b: f64| (a + t * (b - a)).round() as u8;
    [lerp(252.0, 120.0), lerp(187.0, 0.0), lerp(161.0, 20.0)]
}

/// The colour of category `k` (cycles after ten).
pub fn category(k: usize) -> [u8; 3] {
    CATEGORIES[k % CATEGORIES.len()]
}

/// Box-filters an RGBA image `ss` times larger in each direction down to RGB, rounding
/// to nearest. `row_stride` is the byte stride of the big image.
pub fn downsample(rgba: &[u8], row_stride: usize, w: u32, h: u32, ss: u32) -> Vec<u8> {
    let (w, h, ss) = (w as usize, h as usize, ss as usize);
    let n = (ss * ss) as u32;
    let mut out = vec![0u8; w * h * 3];
    for y in 0..h {
        for x in 0..w {
            let mut acc = [0u32; 3];
            for sy in 0..ss {
                let row = (y * ss + sy) * row_stride;
                for sx in 0..ss {
                    let p = row + (x * ss + sx) * 4;
                    for c in 0..3 {
                        acc[c] += rgba[p + c] as u32;
                    }
                }
            }
            for c in 0..3 {
                out[(y * w + x) * 3 + c] = ((acc[c] + n / 2) / n) as u8;
            }
        }
    }
    out
}

/// What the colour bar shows.
#[derive(Clone, Debug)]
pub enum Legend {
    /// A continuous map from `range.0` to `range.1`, with a title.
    Continuous {
        title: String,
        range: (f64, f64),
        map: fn(f64) -> [u8; 3],
    },
    /// Named categories in the category colours.
    Categories { title: String, names: Vec<String> },
}

/// Width in pixels taken by the legend at the right edge (the scene is framed in the rest).
pub fn legend_width(width: u32) -> u32 {
    (width / 7).clamp(70, 160)
}

fn font_err(e: impl std::fmt::Display) -> RenderError {
    RenderError::Draw(e.to_string())
}

/// Draws the legend into the right-hand strip of an RGB image.
pub fn draw_legend(rgb: &mut [u8], w: u32, h: u32, legend: &Legend) -> Result<(), RenderError> {
    ensure_font().map_err(font_err)?;
    let lw = legend_width(w);
    let x0 = (w - lw) as i32;
    let size = (h as f64 / 32.0).clamp(11.0, 22.0);
    let root = BitMapBackend::with_buffer(rgb, (w, h)).into_drawing_area();
    let text = |anchor| {
        TextStyle::from((FONT, size).into_font())
            .color(&RGBColor(30, 30, 30))
            .pos(anchor)
    };
    match legend {
        Legend::Continuous { title, range, map } => {
            let top = (h as f64 * 0.18) as i32;
            let bottom = (h as f64 * 0.82) as i32;
            let bx = x0 + (lw as i32) / 5;
            let bw = (lw as i32 / 6).max(8);
            for y in top..bottom {
                let t = (bottom - 1 - y) as f64 / (bottom - 1 - top).max(1) as f64;
                let c = map(t);
                root.draw(&Rectangle::new(
                    [(bx, y), (bx + bw, y + 1)],
                    RGBColor(c[0], c[1], c[2]).filled(),
                ))
                .map_err(font_err)?;
            }
            root.draw(&Rectangle::new(
                [(bx, top), (bx + bw, bottom)],
                RGBColor(40, 40, 40).stroke_width(1),
            ))
            .map_err(font_err)?;
            let labels: Vec<String> = (0..=4)
                .map(|k| {
                    tick_label(
                        range.0 + k as f64 / 4.0 * (range.1 - range.0),
                        range.1 - range.0,
                    )
                })
                .collect();
            // Scientific labels are wide: shrink the tick font until the widest fits the strip.
            let room = (w as i32 - (bx + bw + 9) - 2).max(1) as f64;
            let mut tick_size = size;
            for l in &labels {
                let style = TextStyle::from((FONT, tick_size).into_font());
                let (tw, _) = root.estimate_text_size(l, &style).map_err(font_err)?;
                if tw as f64 > room {
                    tick_size *= room / tw as f64;
                }
            }
            let tick_text = TextStyle::from((FONT, tick_size).into_font())
                .color(&RGBColor(30, 30, 30))
                .pos(Pos::new(HPos::Left, VPos::Center));
            for (k, label) in labels.iter().enumerate() {
                let f = k as f64 / 4.0;
                let y = bottom - ((bottom - top) as f64 * f).round() as i32;
                root.draw(&PathElement::new(
                    [(bx + bw, y), (bx + bw + 4, y)],
                    RGBColor(40, 40, 40),
                ))
                .map_err(font_err)?;
                root.draw_text(label, &tick_text, (bx + bw + 9, y))
                    .map_err(font_err)?;
            }
            root.draw_text(
                title,
                &text(Pos::new(HPos::Center, VPos::Bottom)),
                (x0 + lw as i32 / 2, top - (size as i32) / 2),
            )
            .map_err(font_err)?;
        }
        Legend::Categories { title, names } => {
            let step = (size * 1.6) as i32;
            let mut y = (h as f64 * 0.18) as i32;
            root.draw_text(
                title,
                &text(Pos::new(HPos::Left, VPos::Center)),
                (x0 + 6, y),
            )
            .map_err(font_err)?;
            for (k, name) in names.iter().enumerate() {
                y += step;
                let c = category(k);
                let s = size as i32 / 2;
                root.draw(&Rectangle::new(
                    [(x0 + 6, y - s), (x0 + 6 + 2 * s, y + s)],
                    RGBColor(c[0], c[1], c[2]).filled(),
                ))
                .map_err(font_err)?;
                root.draw_text(
                    name,
                    &text(Pos::new(HPos::Left, VPos::Center)),
                    (x0 + 12 + 2 * s, y),
                )
                .map_err(font_err)?;
            }
        }
    }
    root.present().map_err(font_err)?;
    Ok(())
}

/// A tick label with as many decimals as the span needs.
fn tick_label(v: f64, span: f64) -> String {
    let span = span.abs().max(1e-300);
    let decimals = (2.0 - span.log10().floor()).clamp(0.0, 8.0) as usize;
    if !(1e-4..1e5).contains(&span) {
        format!("{v:.2e}")
    } else {
        format!("{v:.decimals$}")
    }
}

/// Writes text (e.g. the frame time) at the top-left corner.
pub fn draw_caption(rgb: &mut [u8], w: u32, h: u32, caption: &str) -> Result<(), RenderError> {
    ensure_font().map_err(font_err)?;
    let size = (h as f64 / 30.0).clamp(11.0, 22.0);
    let root = BitMapBackend::with_buffer(rgb, (w, h)).into_drawing_area();
    let style = TextStyle::from((FONT, size).into_font())
        .color(&RGBColor(30, 30, 30))
        .pos(Pos::new(HPos::Left, VPos::Top));
    root.draw_text(caption, &style, (8, 6)).map_err(font_err)?;
    root.present().map_err(font_err)?;
    Ok(())
}

fn png_err(e: impl std::fmt::Display) -> RenderError {
    RenderError::Draw(format!("PNG encoding: {e}"))
}

/// An 8-bit RGB PNG, default compression (deterministic for the same pixels).
pub fn encode_png(rgb: &[u8], w: u32, h: u32) -> Result<Vec<u8>, RenderError> {
    let mut bytes = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut bytes, w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut wr = enc.write_header().map_err(png_err)?;
        wr.write_image_data(rgb).map_err(png_err)?;
    }
    Ok(bytes)
}

/// An animated PNG (APNG; still images show its first frame), `fps` frames per second,
/// looping forever.
pub fn encode_apng(frames: &[Vec<u8>], w: u32, h: u32, fps: u16) -> Result<Vec<u8>, RenderError> {
    let mut bytes = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut bytes, w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_animated(frames.len() as u32, 0).map_err(png_err)?;
        enc.set_frame_delay(1, fps.max(1)).map_err(png_err)?;
        let mut wr = enc.write_header().map_err(png_err)?;
        for f in frames {
            wr.write_image_data(f).map_err(png_err)?;
        }
        wr.finish().map_err(png_err)?;
    }
    Ok(bytes)
}

/// A grid of up to `max_tiles` frames (evenly picked, first and last included), each shrunk
/// by an integer factor so that the sheet is at most `2 × w` wide. Returns (rgb, w, h).
pub fn contact_sheet(frames: &[Vec<u8>], w: u32, h: u32, max_tiles: usize) -> (Vec<u8>, u32, u32) {
    let n = frames.len().min(max_tiles).max(1);
    let picks: Vec<usize> = if frames.len() <= 1 {
        vec![0]
    } else {
        (0..n)
            .map(|k| (k * (frames.len() - 1) + (n - 1) / 2) / (n - 1).max(1))
            .collect()
    };
    let cols = (n as f64).sqrt().ceil() as usize;
    let rows = n.div_ceil(cols);
    let shrink = (cols as u32).div_ceil(2).max(1);
    let (tw, th) = (w / shrink, h / shrink);
    let (sw, sh) = (tw * cols as u32, th * rows as u32);
    let mut sheet = vec![255u8; (sw * sh * 3) as usize];
    for (k, &i) in picks.iter().enumerate() {
        let (cx, cy) = ((k % cols) as u32 * tw, (k / cols) as u32 * th);
        let rgba: Vec<u8> = frames[i]
            .chunks_exact(3)
            .flat_map(|p| [p[0], p[1], p[2], 255])
            .collect();
        let small = downsample(&rgba, (w * 4) as usize, tw, th, shrink);
        for y in 0..th {
            let src = &small[(y * tw * 3) as usize..((y + 1) * tw * 3) as usize];
            let dst = (((cy + y) * sw + cx) * 3) as usize;
            sheet[dst..dst + src.len()].copy_from_slice(src);
        }
    }
    (sheet, sw, sh)
}
