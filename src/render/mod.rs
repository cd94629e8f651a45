//! Headless pictures of a run: `bristlecone render RUN_DIR`.
//!
//! wgpu offscreen (no window, no display; runs on lavapipe): spheres as ray-cast impostors
//! with exact silhouettes and depth, box and capsule bodies as shadow-casting triangles and
//! clumps as their member spheres ([`shapes`]), boundaries as opaque (planes, solid boxes and
//! cylinders) or cut-away translucent surfaces (containers: faint near walls, solid far
//! walls; meshes), one directional light with a shadow map, colour by speed (viridis, with a
//! colour bar) or material (with a legend), optional force chains from the contact frames.
//!
//! Output, all written only after every selected frame has been read and drawn (so a bad
//! frame leaves nothing half written), each file atomically:
//! * `OUT/particles_STEP.png` per frame;
//! * with `--all`: `OUT/animation.png` (animated PNG), `OUT/contact_sheet.png`, and
//!   `OUT/animation.mp4` when `ffmpeg` is on the PATH.
//!
//! Same run, same adapter → same bytes: fixed draw order, no blending between spheres,
//! integer supersample reduction and deterministic PNG encoding.

pub mod camera;
pub mod data;
pub mod geometry;
pub mod gpu;
pub mod image;
pub mod settings;
pub mod shapes;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use glam::DVec3;

use crate::gpu::{GpuContext, GpuError};
use crate::scene::Scene;
use camera::{Bounds, Camera};
use data::{Contacts, FrameRef, Particles};
use geometry::SurfaceVertex;
use gpu::{FrameScene, Renderer, SphereInstance};
use image::Legend;
pub use settings::{ColorBy, View, ViewLayer};

#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// A frame file is missing, unreadable or malformed.
    #[error("{}: {message}", path.display())]
    Frame { path: PathBuf, message: String },
    /// The run directory lacks something (index, scene) or it does not fit the frames.
    #[error("{}: {message}", path.display())]
    Run { path: PathBuf, message: String },
    #[error("{0}")]
    Options(String),
    #[error(transparent)]
    Gpu(#[from] GpuError),
    #[error(transparent)]
    Io(#[from] crate::io::IoError),
    #[error("drawing: {0}")]
    Draw(String),
}

/// Which frames of the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FrameSelect {
    /// The last frame (default).
    #[default]
    Last,
    /// Frame N of `particles.pvd` (0-based).
    Index(usize),
    /// Every frame, plus the animation and the contact sheet.
    All,
}

#[derive(Clone, Debug, Default)]
pub struct RenderOptions {
    pub frames: FrameSelect,
    /// Default `RUN_DIR/render`.
    pub out: Option<PathBuf>,
    /// Scene file; default `RUN_DIR/scene.toml` (the copy the run made).
    pub scene: Option<PathBuf>,
    /// The `--scale` the run was made with (needed to colour by material).
    pub scale: Option<f64>,
    /// Command-line settings; they override the scene's `[render]` table.
    pub flags: ViewLayer,
}

#[derive(Clone, Debug)]
pub struct RenderReport {
    pub written: Vec<PathBuf>,
    pub frames: usize,
    /// Bodies in the last frame (a clump counts once, though drawn as its members).
    pub spheres_last: usize,
    /// Wall time of drawing alone (GPU and read-back, no file I/O), per frame.
    pub seconds_per_frame: f64,
    /// Why no MP4 was written with `--all`, if none was.
    pub mp4_note: Option<String>,
}

/// Colour of the grains in force-chain views (the chains carry the colour map).
const CHAIN_GRAIN: [u8; 3] = [215, 215, 215];

fn run_err(path: &Path, message: impl Into<String>) -> RenderError {
    RenderError::Run {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

/// Everything needed to draw the frames of one run.
pub struct Prepared {
    pub scene: Scene,
    pub view: View,
    pub frames: Vec<(FrameRef, Particles, Option<Contacts>)>,
    /// The bodies of each frame drawn as their shapes (boxes, capsules, clumps).
    pub shapes: Vec<shapes::Shapes>,
}

/// Reads the scene, the settings and every selected frame. Nothing is written.
pub fn prepare(run_dir: &Path, opts: &RenderOptions) -> Result<Prepared, RenderError> {
    let index = data::frame_index(run_dir, "particles.pvd")?;
    let pvd = run_dir.join("particles.pvd");
    if index.is_empty() {
        return Err(run_err(&pvd, "lists no frames"));
    }
    let picked: Vec<FrameRef> = match opts.frames {
        FrameSelect::Last => vec![index[index.len() - 1].clone()],
        FrameSelect::All => index.clone(),
        FrameSelect::Index(i) => vec![index
            .get(i)
            .ok_or_else(|| {
                run_err(
                    &pvd,
                    format!("has no frame {i} (frames 0..={})", index.len() - 1),
                )
            })?
            .clone()],
    };
    let scene_path = opts
        .scene
        .clone()
        .unwrap_or_else(|| run_dir.join("scene.toml"));
    let text = crate::io::capped::read_toml(&scene_path, "scene file")
        .map_err(|e| run_err(&scene_path, format!("cannot read the scene: {e}")))?;
    let (scene, _) = crate::run::load_scene_scaled(&scene_path, opts.scale).map_err(|e| {
        run_err(
            &scene_path,
            format!("{e} (pass --scene with the original scene file if it uses relative paths)"),
        )
    })?;
    let table = settings::read_table(&text, &scene_path)?;
    prepare_loaded(run_dir, opts, picked, scene, &table)
}

/// [`prepare`] of the frames `picked` with the scene already loaded and its `[render]`
/// table read (`table`; the options' flags override it).
fn prepare_loaded(
    run_dir: &Path,
    opts: &RenderOptions,
    picked: Vec<FrameRef>,
    scene: Scene,
    table: &ViewLayer,
) -> Result<Prepared, RenderError> {
    let view = opts.flags.over(table).resolve("render settings")?;
    let contacts_index = if view.force_chains {
        data::frame_index(run_dir, "contacts.pvd").map_err(|_| {
            run_err(
                &run_dir.join("contacts.pvd"),
                "missing: force chains need a run with [output] contacts = true",
            )
        })?
    } else {
        Vec::new()
    };
    let shape_index = shapes::ShapeIndexes::read(run_dir)?;
    let mut frames = Vec::with_capacity(picked.len());
    let mut body_shapes = Vec::with_capacity(picked.len());
    for f in picked {
        body_shapes.push(shape_index.at(f.time)?);
        let p = data::read_particles(&f.path)?;
        let c = if view.force_chains {
            // Contacts are written at every frame but the first (no step taken yet).
            match contacts_index.iter().find(|c| c.time == f.time) {
                Some(c) => Some(data::read_contacts(&c.path)?),
                None => None,
            }
        } else {
            None
        };
        frames.push((f, p, c));
    }
    let pr = Prepared {
        scene,
        view,
        frames,
        shapes: body_shapes,
    };
    if pr.view.color_by == ColorBy::Material && !pr.view.force_chains {
        // Fails here, before any drawing, when the frames do not match the scene's bodies.
        for (f, p, _) in &pr.frames {
            colors(&pr, f, p, (0.0, 1.0))?;
        }
    }
    Ok(pr)
}

/// Sphere colours of a frame.
fn colors(
    pr: &Prepared,
    f: &FrameRef,
    p: &Particles,
    range: (f64, f64),
) -> Result<Vec<[u8; 3]>, RenderError> {
    match pr.view.color_by {
        ColorBy::Speed => Ok(p
            .speeds()
            .iter()
            .map(|&s| image::viridis((s as f64 - range.0) / (range.1 - range.0)))
            .collect()),
        ColorBy::Material => {
            let nb = pr.scene.boundaries.len() as u64;
            p.ids
                .iter()
                .map(|&id| {
                    let body = (id as u64).checked_sub(nb).map(|i| i as usize);
                    match body.and_then(|i| pr.scene.bodies.get(i)) {
                        Some(b) if pr.scene.bodies.len() == p.ids.len() => {
                            Ok(image::category(b.material))
                        }
                        _ => Err(run_err(
                            &f.path,
                            format!(
                                "{} particles (body id {id}) do not match the scene's {} bodies: \
                                 colouring by material needs the run's --scale",
                                p.ids.len(),
                                pr.scene.bodies.len()
                            ),
                        )),
                    }
                })
                .collect()
        }
    }
}

/// The speed range of the colour map: the setting, else 0 .. the largest speed drawn.
fn speed_range(pr: &Prepared) -> (f64, f64) {
    pr.view.range.unwrap_or_else(|| {
        let max = pr
            .frames
            .iter()
            .flat_map(|(_, p, _)| p.speeds())
            .fold(0.0f32, f32::max) as f64;
        (0.0, if max > 0.0 { max } else { 1.0 })
    })
}

/// Bounds of everything drawn over all selected frames (planes excepted).
fn bounds(pr: &Prepared) -> Bounds {
    let mut b = Bounds::empty();
    for (f, p, _) in &pr.frames {
        for (c, r) in p.positions.iter().zip(&p.radii) {
            b.add_sphere(DVec3::from(c.map(f64::from)), *r as f64);
        }
        geometry::boundary_bounds(&pr.scene.boundaries, f.time, pr.scene.sim.dt, &mut b);
    }
    if b.is_empty() {
        b.add_sphere(DVec3::ZERO, 1.0);
    }
    b
}

/// The camera of the settings for an image area of `aspect`.
pub fn camera_for(view: &View, b: &Bounds, aspect: f64) -> Result<Camera, RenderError> {
    let cam = match view.eye_target {
        Some((eye, target)) => Camera {
            eye: eye.into(),
            target: target.into(),
            up: view.up.into(),
            fov_deg: view.fov,
        },
        None => view.camera.frame(b, view.fov, aspect),
    };
    cam.check().map_err(RenderError::Options)?;
    Ok(cam)
}

/// The largest grain-grain contact force over the selected frames (1 when there is none).
fn max_force(pr: &Prepared) -> f64 {
    let m = pr
        .frames
        .iter()
        .filter_map(|(_, _, c)| c.as_ref())
        .flat_map(|c| c.force.iter())
        .fold(0.0f32, |a, &f| a.max(f)) as f64;
    if m > 0.0 {
        m
    } else {
        1.0
    }
}

/// Force-chain ribbons between touching grains, drawn over the (pale) grains: width and
/// colour by force, the strongest (`fmax`) as wide as the smaller grain's radius; contacts
/// with boundaries and those under 5 % of `fmax` are left out.
fn chains(pr: &Prepared, p: &Particles, c: &Contacts, eye: DVec3, fmax: f64) -> Vec<SurfaceVertex> {
    let nb = pr.scene.boundaries.len() as u32;
    let lookup: std::collections::HashMap<u32, usize> =
        p.ids.iter().enumerate().map(|(i, &id)| (id, i)).collect();
    let mut out = Vec::new();
    for k in 0..c.force.len() {
        let (a, b) = (c.body_a[k], c.body_b[k]);
        if a < nb || b < nb {
            continue;
        }
        let (Some(&i), Some(&j)) = (lookup.get(&a), lookup.get(&b)) else {
            continue;
        };
        let r = p.radii[i].min(p.radii[j]) as f64;
        let f = c.force[k] as f64 / fmax;
        if f < 0.05 {
            continue;
        }
        let [cr, cg, cb] = image::reds(f);
        let pa = DVec3::from(p.positions[i].map(f64::from));
        let pb = DVec3::from(p.positions[j].map(f64::from));
        geometry::ribbon(&mut out, pa, pb, eye, r * f, [cr, cg, cb, 255]);
    }
    out
}

/// The light: from above, front-left.
pub fn light_dir() -> DVec3 {
    DVec3::new(-0.35, -0.5, 1.0).normalize()
}

/// Draws every prepared frame; returns the RGB images (width × height × 3 each).
pub fn draw_frames(renderer: &Renderer, pr: &Prepared) -> Result<Vec<Vec<u8>>, RenderError> {
    let v = &pr.view;
    let lw = image::legend_width(v.width);
    let (aw, h) = (v.width - lw, v.height);
    let max = renderer.max_side();
    // The scene is drawn into a texture as wide as the image less its legend strip: refuse
    // the width and height asked for, not that texture's.
    if aw > max || h > max {
        return Err(RenderError::Options(format!(
            "image {}x{} is larger than this adapter draws: at most width {} (its largest \
             texture side {max} plus the {lw}-pixel legend) and height {max}",
            v.width,
            v.height,
            max + lw
        )));
    }
    let ss = v.supersample.min(max / aw.max(h)).max(1);
    let b = bounds(pr);
    let cam = camera_for(v, &b, aw as f64 / h as f64)?;
    let range = speed_range(pr);
    let legend = match v.color_by {
        _ if v.force_chains => Legend::Continuous {
            title: "force [N]".into(),
            range: (0.0, max_force(pr)),
            map: image::reds,
        },
        ColorBy::Speed => Legend::Continuous {
            title: "speed [m/s]".into(),
            range,
            map: image::viridis,
        },
        ColorBy::Material => Legend::Categories {
            title: "material".into(),
            names: pr.scene.materials.iter().map(|m| m.name.clone()).collect(),
        },
    };
    let mut images = Vec::with_capacity(pr.frames.len());
    for ((f, p, c), shapes) in pr.frames.iter().zip(&pr.shapes) {
        let cols = if v.force_chains {
            vec![CHAIN_GRAIN; p.radii.len()]
        } else {
            colors(pr, f, p, range)?
        };
        let mut surfaces =
            geometry::boundary_surfaces(&pr.scene.boundaries, f.time, pr.scene.sim.dt, &b);
        let mut spheres = Vec::with_capacity(p.radii.len());
        for (k, ((x, r), c)) in p.positions.iter().zip(&p.radii).zip(&cols).enumerate() {
            let color = [c[0], c[1], c[2], 255];
            match shapes.get(&p.ids[k]) {
                Some(s) => shapes::draw(s, color, &mut surfaces.bodies, &mut spheres),
                None => spheres.push(SphereInstance {
                    center_radius: [x[0], x[1], x[2], *r],
                    color,
                }),
            }
        }
        let chain = match c {
            Some(c) => chains(pr, p, c, cam.eye, max_force(pr)),
            None => Vec::new(),
        };
        let rgba = renderer.draw(&FrameScene {
            spheres: &spheres,
            surfaces: &surfaces,
            chains: &chain,
            camera: cam,
            bounds: b,
            light_dir: light_dir(),
            shadows: v.shadows,
            background: v.background,
            width: aw * ss,
            height: h * ss,
        })?;
        let area = image::downsample(&rgba.pixels, rgba.stride, aw, h, ss);
        let mut rgb = vec![0u8; (v.width * h * 3) as usize];
        for px in rgb.chunks_exact_mut(3) {
            px.copy_from_slice(&v.background);
        }
        for y in 0..h as usize {
            let src = &area[y * aw as usize * 3..(y + 1) * aw as usize * 3];
            let dst = y * v.width as usize * 3;
            rgb[dst..dst + src.len()].copy_from_slice(src);
        }
        image::draw_legend(&mut rgb, v.width, h, &legend)?;
        image::draw_caption(&mut rgb, v.width, h, &format!("t = {:.3} s", f.time))?;
        images.push(rgb);
    }
    Ok(images)
}

/// The last frame of the run in `run_dir` drawn for a scene already loaded (the library's
/// [`crate::facade::Simulation::render`]) as [`render_run`] draws it, with the settings
/// `view` (the scene's `[render]` table overridden by the caller's). Returns the RGB image
/// (height × width × 3) and its size.
pub fn render_last_frame(
    ctx: Arc<GpuContext>,
    run_dir: &Path,
    scene: Scene,
    view: &ViewLayer,
) -> Result<(Vec<u8>, u32, u32), RenderError> {
    let index = data::frame_index(run_dir, "particles.pvd")?;
    let Some(last) = index.last() else {
        return Err(run_err(&run_dir.join("particles.pvd"), "lists no frames"));
    };
    let opts = RenderOptions {
        flags: view.clone(),
        ..Default::default()
    };
    let pr = prepare_loaded(
        run_dir,
        &opts,
        vec![last.clone()],
        scene,
        &ViewLayer::default(),
    )?;
    let image = draw_frames(&Renderer::new(ctx)?, &pr)?.remove(0);
    Ok((image, pr.view.width, pr.view.height))
}

/// One selected frame of a run (not [`FrameSelect::All`]) drawn as [`render_run`] draws it:
/// the RGB image (height × width × 3) and its size, without writing anything.
pub fn render_image(
    ctx: Arc<GpuContext>,
    run_dir: &Path,
    opts: &RenderOptions,
) -> Result<(Vec<u8>, u32, u32), RenderError> {
    if opts.frames == FrameSelect::All {
        return Err(RenderError::Options(
            "one image is drawn at a time: pick a frame (or the last)".into(),
        ));
    }
    let pr = prepare(run_dir, opts)?;
    let image = draw_frames(&Renderer::new(ctx)?, &pr)?.remove(0);
    Ok((image, pr.view.width, pr.view.height))
}

/// Renders the run's selected frames and writes the images (see the module docs).
pub fn render_run(
    ctx: Arc<GpuContext>,
    run_dir: &Path,
    opts: &RenderOptions,
) -> Result<RenderReport, RenderError> {
    let pr = prepare(run_dir, opts)?;
    render_prepared(ctx, &pr, run_dir, opts)
}

/// [`render_run`] for frames already read by [`prepare`] (with the same options).
pub fn render_prepared(
    ctx: Arc<GpuContext>,
    pr: &Prepared,
    run_dir: &Path,
    opts: &RenderOptions,
) -> Result<RenderReport, RenderError> {
    let renderer = Renderer::new(ctx)?;
    let t = std::time::Instant::now();
    let images = draw_frames(&renderer, pr)?;
    let seconds_per_frame = t.elapsed().as_secs_f64() / images.len() as f64;
    let (w, h) = (pr.view.width, pr.view.height);
    let out = opts.out.clone().unwrap_or_else(|| run_dir.join("render"));
    // Encode everything before the first file is written.
    let mut files: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    for ((f, _, _), rgb) in pr.frames.iter().zip(&images) {
        files.push((
            out.join(format!("{}.png", f.stem())),
            image::encode_png(rgb, w, h)?,
        ));
    }
    let mut mp4_note = None;
    if opts.frames == FrameSelect::All {
        let fps = pr.view.fps as u16;
        files.push((
            out.join("animation.png"),
            image::encode_apng(&images, w, h, fps)?,
        ));
        let (sheet, sw, sh) = image::contact_sheet(&images, w, h, 16);
        files.push((
            out.join("contact_sheet.png"),
            image::encode_png(&sheet, sw, sh)?,
        ));
        match mp4(&files[..images.len()], pr.view.fps) {
            Ok(bytes) => files.push((out.join("animation.mp4"), bytes)),
            Err(note) => mp4_note = Some(note),
        }
    }
    std::fs::create_dir_all(&out).map_err(|e| run_err(&out, format!("cannot create: {e}")))?;
    let mut written = Vec::new();
    for (path, bytes) in files {
        crate::io::write_atomic(&path, |w| w.write_all(&bytes))
            .map_err(|e| run_err(&path, e.to_string()))?;
        written.push(path);
    }
    Ok(RenderReport {
        written,
        frames: images.len(),
        spheres_last: pr.frames.last().map_or(0, |(_, p, _)| p.radii.len()),
        seconds_per_frame,
        mp4_note,
    })
}

/// An H.264 MP4 of the frame PNGs through `ffmpeg`, when it is on the PATH. Frames go
/// through a private temporary directory; the result comes back as bytes.
fn mp4(frames: &[(PathBuf, Vec<u8>)], fps: u32) -> Result<Vec<u8>, String> {
    let probe = std::process::Command::new("ffmpeg")
        .arg("-version")
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        return Err("no MP4: ffmpeg is not on the PATH".into());
    }
    let tmp = tempdir().map_err(|e| format!("no MP4: temporary directory: {e}"))?;
    let result = (|| {
        for (k, (_, bytes)) in frames.iter().enumerate() {
            std::fs::write(tmp.join(format!("f{k:06}.png")), bytes).map_err(|e| e.to_string())?;
        }
        let out = tmp.join("out.mp4");
        let status = std::process::Command::new("ffmpeg")
            .args(["-loglevel", "error", "-y", "-framerate"])
            .arg(fps.to_string())
            .arg("-i")
            .arg(tmp.join("f%06d.png"))
            .args([
                "-c:v",
                "libx264",
                "-pix_fmt",
                "yuv420p",
                "-vf",
                "pad=ceil(iw/2)*2:ceil(ih/2)*2",
                "-threads",
                "1",
            ])
            .arg(&out)
            .status()
            .map_err(|e| e.to_string())?;
        if !status.success() {
            return Err(format!("ffmpeg failed ({status})"));
        }
        std::fs::read(&out).map_err(|e| e.to_string())
    })();
    let _ = std::fs::remove_dir_all(&tmp);
    result.map_err(|e| format!("no MP4: {e}"))
}

/// A fresh private directory under the system's temporary directory.
pub(crate) fn tempdir() -> std::io::Result<PathBuf> {
    let base = std::env::temp_dir();
    for k in 0..1000u32 {
        let p = base.join(format!("bristlecone-render-{}-{k}", std::process::id()));
        match std::fs::create_dir(&p) {
            Ok(()) => return Ok(p),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("no free temporary directory name"))
}
