//! The offscreen wgpu renderer: no window, no surface; a colour and a depth texture, a
//! shadow map, and a copy back to the CPU.

use std::sync::Arc;

use bytemuck::{Pod, Zeroable};
use glam::{DMat4, DVec3};
use wgpu::util::DeviceExt;

use super::camera::{light_view_proj, Bounds, Camera};
use super::geometry::{SurfaceVertex, Surfaces};
use super::RenderError;
use crate::gpu::{buffers::map_and_read, GpuContext, GpuError};

/// The render shaders (not a compute stage, so not among the engine's `shaders/*.wgsl`).
pub const RENDER_WGSL: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/src/render/render.wgsl"
));

/// Lighting constants (ambient, diffuse, specular): pixel = base·(A + D·max(n·l, 0)·lit)
/// + S·spec·lit, clamped, in sRGB bytes / 255.
pub const AMBIENT: f32 = 0.35;
pub const DIFFUSE: f32 = 0.65;
pub const SPECULAR: f32 = 0.25;
/// Blinn-Phong exponent used by the shader.
pub const SHININESS: f32 = 48.0;
const SHADOW_RES: u32 = 2048;
const COLOR_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8Unorm;
const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;

/// Parses and validates the render shaders with naga (name and line in the message).
pub fn validate_shaders() -> Result<naga::Module, GpuError> {
    let err = |message: String| GpuError::Shader {
        name: "render".into(),
        message,
    };
    let path = "src/render/render.wgsl";
    let module = naga::front::wgsl::parse_str(RENDER_WGSL)
        .map_err(|e| err(e.emit_to_string_with_path(RENDER_WGSL, path)))?;
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::empty(),
    )
    .validate(&module)
    .map_err(|e| err(e.emit_to_string_with_path(RENDER_WGSL, path)))?;
    Ok(module)
}

/// One sphere (matches `SphereIn`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable, PartialEq)]
pub struct SphereInstance {
    pub center_radius: [f32; 4],
    pub color: [u8; 4],
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct CameraUniform {
    view_proj: [[f32; 4]; 4],
    light_view_proj: [[f32; 4]; 4],
    eye: [f32; 4],
    forward: [f32; 4],
    up: [f32; 4],
    light_dir: [f32; 4],
    shading: [f32; 4],
    shadow: [f32; 4],
}

/// Everything one image needs.
pub struct FrameScene<'a> {
    pub spheres: &'a [SphereInstance],
    pub surfaces: &'a Surfaces,
    /// Force-chain ribbons, drawn over everything.
    pub chains: &'a [SurfaceVertex],
    pub camera: Camera,
    /// Bounds of what is drawn: near/far planes and the shadow camera.
    pub bounds: Bounds,
    /// Unit direction towards the light.
    pub light_dir: DVec3,
    pub shadows: bool,
    pub background: [u8; 3],
    /// Size of the image drawn (before any supersample reduction).
    pub width: u32,
    pub height: u32,
}

/// An RGBA image as read back: rows `stride` bytes apart.
pub struct Rgba {
    pub pixels: Vec<u8>,
    pub stride: usize,
    pub width: u32,
    pub height: u32,
}

pub struct Renderer {
    ctx: Arc<GpuContext>,
    cam_layout: wgpu::BindGroupLayout,
    shadow_layout: wgpu::BindGroupLayout,
    sampler: wgpu::Sampler,
    sphere: wgpu::RenderPipeline,
    sphere_depth: wgpu::RenderPipeline,
    surface_opaque: wgpu::RenderPipeline,
    /// Shadow pass of the body triangles (boundaries cast no shadows).
    surface_depth: wgpu::RenderPipeline,
    surface_blend: wgpu::RenderPipeline,
    chains: wgpu::RenderPipeline,
}

fn mat(m: DMat4) -> [[f32; 4]; 4] {
    m.as_mat4().to_cols_array_2d()
}

fn v4(v: DVec3, w: f32) -> [f32; 4] {
    let v = v.as_vec3();
    [v.x, v.y, v.z, w]
}

const SPHERE_ATTRS: [wgpu::VertexAttribute; 2] =
    wgpu::vertex_attr_array![0 => Float32x4, 1 => Unorm8x4];
const SURFACE_ATTRS: [wgpu::VertexAttribute; 4] =
    wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32x3, 2 => Unorm8x4, 3 => Float32x2];

/// One render pipeline of the renderer: its shader entry points, vertex layout and how it
/// writes colour and depth.
#[derive(Clone, Copy)]
struct PipelineSpec<'a> {
    label: &'a str,
    layout: &'a wgpu::PipelineLayout,
    vs: &'a str,
    fs: &'a str,
    buffer: &'a wgpu::VertexBufferLayout<'a>,
    /// Writes colour; false: a shadow map's depth-only pass.
    color: bool,
    blend: Option<wgpu::BlendState>,
    depth_write: bool,
    compare: wgpu::CompareFunction,
}

fn render_pipeline(
    device: &wgpu::Device,
    module: &wgpu::ShaderModule,
    spec: &PipelineSpec,
) -> wgpu::RenderPipeline {
    let targets = [Some(wgpu::ColorTargetState {
        format: COLOR_FORMAT,
        blend: spec.blend,
        write_mask: wgpu::ColorWrites::ALL,
    })];
    device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some(spec.label),
        layout: Some(spec.layout),
        vertex: wgpu::VertexState {
            module,
            entry_point: Some(spec.vs),
            compilation_options: Default::default(),
            buffers: &[Some(spec.buffer.clone())],
        },
        primitive: wgpu::PrimitiveState {
            topology: wgpu::PrimitiveTopology::TriangleList,
            cull_mode: None,
            ..Default::default()
        },
        depth_stencil: Some(wgpu::DepthStencilState {
            format: DEPTH_FORMAT,
            depth_write_enabled: Some(spec.depth_write),
            depth_compare: Some(spec.compare),
            stencil: Default::default(),
            bias: Default::default(),
        }),
        multisample: Default::default(),
        fragment: Some(wgpu::FragmentState {
            module,
            entry_point: Some(spec.fs),
            compilation_options: Default::default(),
            targets: if spec.color { &targets } else { &[] },
        }),
        multiview_mask: None,
        cache: None,
    })
}

/// The bind group layouts: the camera uniform, and the shadow map with its comparison sampler.
fn bind_group_layouts(device: &wgpu::Device) -> (wgpu::BindGroupLayout, wgpu::BindGroupLayout) {
    let cam_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("render camera"),
        entries: &[wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::VERTEX_FRAGMENT,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        }],
    });
    let shadow_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("render shadow map"),
        entries: &[
            wgpu::BindGroupLayoutEntry {
                binding: 0,
                visibility: wgpu::ShaderStages::FRAGMENT,
                ty: wgpu::BindingType::Texture {
                    sample_type: wgpu::TextureSampleType::Depth,
                    view_dimension: wgpu::TextureViewDimension::D2,
                    multisampled: false,
                },
                count: None,
            },
            wgpu::BindGroupLayoutEntry {
                binding: 1,
                visibility: wgpu::ShaderStages::FRAGMENT,
                ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Comparison),
                count: None,
            },
        ],
    });
    (cam_layout, shadow_layout)
}

impl Renderer {
    pub fn new(ctx: Arc<GpuContext>) -> Result<Self, RenderError> {
        validate_shaders()?;
        let device = &ctx.device;
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("render"),
            source: wgpu::ShaderSource::Wgsl(RENDER_WGSL.into()),
        });
        let (cam_layout, shadow_layout) = bind_group_layouts(device);
        let main_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("render main"),
            bind_group_layouts: &[Some(&cam_layout), Some(&shadow_layout)],
            immediate_size: 0,
        });
        let depth_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("render shadow"),
            bind_group_layouts: &[Some(&cam_layout)],
            immediate_size: 0,
        });
        let sampler = device.create_sampler(&wgpu::SamplerDescriptor {
            label: Some("shadow"),
            compare: Some(wgpu::CompareFunction::LessEqual),
            mag_filter: wgpu::FilterMode::Nearest,
            min_filter: wgpu::FilterMode::Nearest,
            ..Default::default()
        });
        let sphere_buf = wgpu::VertexBufferLayout {
            array_stride: std::mem::size_of::<SphereInstance>() as u64,
            step_mode: wgpu::VertexStepMode::Instance,
            attributes: &SPHERE_ATTRS,
        };
        let surface_buf = wgpu::VertexBufferLayout {
            array_stride: std::mem::size_of::<SurfaceVertex>() as u64,
            step_mode: wgpu::VertexStepMode::Vertex,
            attributes: &SURFACE_ATTRS,
        };
        use wgpu::CompareFunction::{Always, Less};
        let spheres = PipelineSpec {
            label: "spheres",
            layout: &main_layout,
            vs: "vs_sphere",
            fs: "fs_sphere",
            buffer: &sphere_buf,
            color: true,
            blend: None,
            depth_write: true,
            compare: Less,
        };
        let surfaces = PipelineSpec {
            label: "surfaces",
            vs: "vs_surface",
            fs: "fs_surface",
            buffer: &surface_buf,
            ..spheres
        };
        let make = |spec: PipelineSpec| render_pipeline(device, &module, &spec);
        let sphere = make(spheres);
        let sphere_depth = make(PipelineSpec {
            label: "sphere shadows",
            layout: &depth_layout,
            fs: "fs_sphere_depth",
            color: false,
            ..spheres
        });
        let surface_opaque = make(surfaces);
        let surface_depth = make(PipelineSpec {
            label: "body surface shadows",
            layout: &depth_layout,
            fs: "fs_surface_depth",
            color: false,
            ..surfaces
        });
        let surface_blend = make(PipelineSpec {
            label: "translucent surfaces",
            blend: Some(wgpu::BlendState::ALPHA_BLENDING),
            depth_write: false,
            ..surfaces
        });
        let chains = make(PipelineSpec {
            label: "force chains",
            depth_write: false,
            compare: Always,
            ..surfaces
        });
        Ok(Renderer {
            ctx,
            cam_layout,
            shadow_layout,
            sampler,
            sphere,
            sphere_depth,
            surface_opaque,
            surface_depth,
            surface_blend,
            chains,
        })
    }

    pub fn ctx(&self) -> &Arc<GpuContext> {
        &self.ctx
    }

    /// Largest image side the device allows.
    pub fn max_side(&self) -> u32 {
        self.ctx.limits.max_texture_dimension_2d
    }

    fn uniform(&self, u: &CameraUniform) -> wgpu::BindGroup {
        let buf = self
            .ctx
            .device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("render camera"),
                contents: bytemuck::bytes_of(u),
                usage: wgpu::BufferUsages::UNIFORM,
            });
        self.ctx
            .device
            .create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("render camera"),
                layout: &self.cam_layout,
                entries: &[wgpu::BindGroupEntry {
                    binding: 0,
                    resource: buf.as_entire_binding(),
                }],
            })
    }

    fn texture(
        &self,
        label: &str,
        w: u32,
        h: u32,
        format: wgpu::TextureFormat,
        usage: wgpu::TextureUsages,
    ) -> wgpu::Texture {
        self.ctx.device.create_texture(&wgpu::TextureDescriptor {
            label: Some(label),
            size: wgpu::Extent3d {
                width: w,
                height: h,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format,
            usage,
            view_formats: &[],
        })
    }

    fn vertices<T: Pod>(&self, label: &str, data: &[T]) -> Option<wgpu::Buffer> {
        (!data.is_empty()).then(|| {
            self.ctx
                .device
                .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some(label),
                    contents: bytemuck::cast_slice(data),
                    usage: wgpu::BufferUsages::VERTEX,
                })
        })
    }

    /// Draws one image and reads it back.
    pub fn draw(&self, f: &FrameScene) -> Result<Rgba, RenderError> {
        let (w, h) = (f.width, f.height);
        if w == 0 || h == 0 || w > self.max_side() || h > self.max_side() {
            return Err(RenderError::Options(format!(
                "image size {w}x{h} is outside what this adapter can draw (1..={} per side)",
                self.max_side()
            )));
        }
        let shadow_res = SHADOW_RES.min(self.max_side());
        let (main, light) = cameras(f, shadow_res);
        let main_bg = self.uniform(&main);
        let light_bg = self.uniform(&light);
        let shadow_tex = self.texture(
            "shadow map",
            shadow_res,
            shadow_res,
            DEPTH_FORMAT,
            wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::TEXTURE_BINDING,
        );
        let shadow_view = shadow_tex.create_view(&Default::default());
        let shadow_bg = self.shadow_bind_group(&shadow_view);
        let color = self.texture(
            "image",
            w,
            h,
            COLOR_FORMAT,
            wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        );
        let color_view = color.create_view(&Default::default());
        let depth = self.texture(
            "depth",
            w,
            h,
            DEPTH_FORMAT,
            wgpu::TextureUsages::RENDER_ATTACHMENT,
        );
        let depth_view = depth.create_view(&Default::default());
        let v = FrameVertices {
            spheres: self.vertices("spheres", f.spheres),
            opaque: self.vertices("surfaces", &f.surfaces.opaque),
            bodies: self.vertices("body surfaces", &f.surfaces.bodies),
            translucent: self.vertices("translucent surfaces", &f.surfaces.translucent),
            chains: self.vertices("force chains", f.chains),
        };
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        self.shadow_pass(&mut enc, f, &v, &shadow_view, &light_bg);
        self.image_pass(
            &mut enc,
            f,
            &v,
            [&color_view, &depth_view],
            [&main_bg, &shadow_bg],
        );
        self.read_image(enc, &color, w, h)
    }

    fn shadow_bind_group(&self, shadow_view: &wgpu::TextureView) -> wgpu::BindGroup {
        self.ctx
            .device
            .create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("shadow map"),
                layout: &self.shadow_layout,
                entries: &[
                    wgpu::BindGroupEntry {
                        binding: 0,
                        resource: wgpu::BindingResource::TextureView(shadow_view),
                    },
                    wgpu::BindGroupEntry {
                        binding: 1,
                        resource: wgpu::BindingResource::Sampler(&self.sampler),
                    },
                ],
            })
    }

    /// The shadow map: the depth of the spheres and bodies seen from the light (cleared only
    /// when shadows are off: the image pass's bind group still needs a defined texture).
    fn shadow_pass(
        &self,
        enc: &mut wgpu::CommandEncoder,
        f: &FrameScene,
        v: &FrameVertices,
        shadow_view: &wgpu::TextureView,
        light_bg: &wgpu::BindGroup,
    ) {
        let mut pass = enc.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some(if f.shadows { "shadow" } else { "shadow (off)" }),
            color_attachments: &[],
            depth_stencil_attachment: Some(depth_attachment(shadow_view)),
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        if !f.shadows {
            return;
        }
        if let Some(b) = &v.spheres {
            pass.set_pipeline(&self.sphere_depth);
            pass.set_bind_group(0, light_bg, &[]);
            pass.set_vertex_buffer(0, b.slice(..));
            pass.draw(0..6, 0..f.spheres.len() as u32);
        }
        if let Some(b) = &v.bodies {
            pass.set_pipeline(&self.surface_depth);
            pass.set_bind_group(0, light_bg, &[]);
            pass.set_vertex_buffer(0, b.slice(..));
            pass.draw(0..f.surfaces.bodies.len() as u32, 0..1);
        }
    }

    /// The image: spheres, then opaque, body, translucent surfaces and force chains, over
    /// the background (`targets`: colour and depth views; `binds`: camera and shadow map).
    fn image_pass(
        &self,
        enc: &mut wgpu::CommandEncoder,
        f: &FrameScene,
        v: &FrameVertices,
        targets: [&wgpu::TextureView; 2],
        binds: [&wgpu::BindGroup; 2],
    ) {
        let bg = f.background.map(|c| c as f64 / 255.0);
        let mut pass = enc.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("image"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: targets[0],
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(wgpu::Color {
                        r: bg[0],
                        g: bg[1],
                        b: bg[2],
                        a: 1.0,
                    }),
                    store: wgpu::StoreOp::Store,
                },
            })],
            depth_stencil_attachment: Some(depth_attachment(targets[1])),
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        pass.set_bind_group(0, binds[0], &[]);
        pass.set_bind_group(1, binds[1], &[]);
        if let Some(b) = &v.spheres {
            pass.set_pipeline(&self.sphere);
            pass.set_vertex_buffer(0, b.slice(..));
            pass.draw(0..6, 0..f.spheres.len() as u32);
        }
        for (buf, pipe, n) in [
            (&v.opaque, &self.surface_opaque, f.surfaces.opaque.len()),
            (&v.bodies, &self.surface_opaque, f.surfaces.bodies.len()),
            (
                &v.translucent,
                &self.surface_blend,
                f.surfaces.translucent.len(),
            ),
            (&v.chains, &self.chains, f.chains.len()),
        ] {
            if let Some(b) = buf {
                pass.set_pipeline(pipe);
                pass.set_vertex_buffer(0, b.slice(..));
                pass.draw(0..n as u32, 0..1);
            }
        }
    }

    /// Copies the image to a mappable buffer (rows padded to the copy alignment), submits
    /// the frame and reads it back.
    fn read_image(
        &self,
        mut enc: wgpu::CommandEncoder,
        color: &wgpu::Texture,
        w: u32,
        h: u32,
    ) -> Result<Rgba, RenderError> {
        let stride = (w as usize * 4).next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT as usize);
        let size = (stride * h as usize) as u64;
        let staging = self.ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("image readback"),
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        enc.copy_texture_to_buffer(
            wgpu::TexelCopyTextureInfo {
                texture: color,
                mip_level: 0,
                origin: wgpu::Origin3d::ZERO,
                aspect: wgpu::TextureAspect::All,
            },
            wgpu::TexelCopyBufferInfo {
                buffer: &staging,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(stride as u32),
                    rows_per_image: Some(h),
                },
            },
            wgpu::Extent3d {
                width: w,
                height: h,
                depth_or_array_layers: 1,
            },
        );
        self.ctx.queue.submit([enc.finish()]);
        let pixels = map_and_read::<u8>(&self.ctx, &staging, size as usize)?;
        Ok(Rgba {
            pixels,
            stride,
            width: w,
            height: h,
        })
    }
}

/// A frame's vertex buffers (None where the frame has none of that kind).
struct FrameVertices {
    spheres: Option<wgpu::Buffer>,
    opaque: Option<wgpu::Buffer>,
    bodies: Option<wgpu::Buffer>,
    translucent: Option<wgpu::Buffer>,
    chains: Option<wgpu::Buffer>,
}

/// The camera's and the light's uniforms (the light's view fits the scene's bounds into a
/// `shadow_res` map).
fn cameras(f: &FrameScene, shadow_res: u32) -> (CameraUniform, CameraUniform) {
    let aspect = f.width as f64 / f.height as f64;
    let (light_vp, texel, depth_range) = light_view_proj(f.light_dir, &f.bounds, shadow_res);
    let shading = [
        AMBIENT,
        DIFFUSE,
        SPECULAR,
        if f.shadows { 1.0 } else { 0.0 },
    ];
    let shadow = [
        1.0 / shadow_res as f32,
        (3.0 * texel / depth_range) as f32,
        0.0,
        0.0,
    ];
    let main = CameraUniform {
        view_proj: mat(f.camera.view_proj(aspect, &f.bounds)),
        light_view_proj: mat(light_vp),
        eye: v4(f.camera.eye, 1.0),
        forward: v4(f.camera.forward(), 0.0),
        up: v4(f.camera.true_up(), 0.0),
        light_dir: v4(f.light_dir, 0.0),
        shading,
        shadow,
    };
    let light_up = if f.light_dir.cross(DVec3::Z).length() < 1e-3 {
        DVec3::Y
    } else {
        DVec3::Z
    };
    let light = CameraUniform {
        view_proj: mat(light_vp),
        eye: v4(DVec3::ZERO, 0.0),
        forward: v4(-f.light_dir, 0.0),
        up: v4(light_up, 0.0),
        ..main
    };
    (main, light)
}

fn depth_attachment(view: &wgpu::TextureView) -> wgpu::RenderPassDepthStencilAttachment<'_> {
    wgpu::RenderPassDepthStencilAttachment {
        view,
        depth_ops: Some(wgpu::Operations {
            load: wgpu::LoadOp::Clear(1.0),
            store: wgpu::StoreOp::Store,
        }),
        stencil_ops: None,
    }
}
