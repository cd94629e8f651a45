//! Compute kernels built from the WGSL files in `shaders/`.
//!
//! Each stage file is prefixed with `shaders/prelude.wgsl`. The bind group layout is derived
//! from the module itself (naga reflection), so a stage file is the single source of truth
//! for its bindings and every entry point of a file shares one bind group.

use super::context::{GpuContext, GpuError, WORKGROUP_SIZE};
use std::collections::HashMap;

/// A stage's WGSL source, with the prelude, as compiled into the binary.
#[derive(Clone, Copy, Debug)]
pub struct ShaderSource {
    pub name: &'static str,
    pub body: &'static str,
}

pub const PRELUDE: &str = include_str!("../../shaders/prelude.wgsl");

macro_rules! shader {
    ($name:literal) => {
        ShaderSource {
            name: $name,
            body: include_str!(concat!("../../shaders/", $name, ".wgsl")),
        }
    };
}

/// Every GPU stage. `tests/shaders.rs` validates each with naga, adapter or not.
pub const SHADERS: &[ShaderSource] = &[shader!("copy"), shader!("integrate"), shader!("stats")];

impl ShaderSource {
    pub fn by_name(name: &str) -> Option<ShaderSource> {
        SHADERS.iter().copied().find(|s| s.name == name)
    }

    /// Prelude + stage text, as compiled.
    pub fn full_text(&self) -> String {
        format!("{PRELUDE}\n{}", self.body)
    }

    /// Parses and validates with naga; the error carries naga's annotated report.
    pub fn validate(&self) -> Result<naga::Module, GpuError> {
        let text = self.full_text();
        let module = naga::front::wgsl::parse_str(&text).map_err(|e| GpuError::Shader {
            name: self.name.into(),
            message: e.emit_to_string_with_path(&text, &format!("shaders/{}.wgsl", self.name)),
        })?;
        naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::empty(),
        )
        .validate(&module)
        .map_err(|e| GpuError::Shader {
            name: self.name.into(),
            message: e.emit_to_string_with_path(&text, &format!("shaders/{}.wgsl", self.name)),
        })?;
        Ok(module)
    }
}

/// The compiled pipelines of one shader file, one per entry point.
pub struct Kernel {
    pub name: &'static str,
    layout: wgpu::BindGroupLayout,
    bindings: Vec<u32>,
    pipelines: HashMap<String, wgpu::ComputePipeline>,
}

impl Kernel {
    pub fn new(ctx: &GpuContext, source: ShaderSource) -> Result<Self, GpuError> {
        let module = source.validate()?;
        let mut entries = Vec::new();
        for (_, var) in module.global_variables.iter() {
            let Some(binding) = &var.binding else {
                continue;
            };
            if binding.group != 0 {
                return Err(GpuError::Shader {
                    name: source.name.into(),
                    message: "only bind group 0 is used by the engine".into(),
                });
            }
            let ty = match var.space {
                naga::AddressSpace::Storage { access } => wgpu::BufferBindingType::Storage {
                    read_only: !access.contains(naga::StorageAccess::STORE),
                },
                naga::AddressSpace::Uniform => wgpu::BufferBindingType::Uniform,
                other => {
                    return Err(GpuError::Shader {
                        name: source.name.into(),
                        message: format!("unsupported binding space {other:?}"),
                    })
                }
            };
            entries.push(wgpu::BindGroupLayoutEntry {
                binding: binding.binding,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty,
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            });
        }
        entries.sort_by_key(|e| e.binding);
        let device = &ctx.device;
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some(source.name),
            entries: &entries,
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some(source.name),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let shader = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(source.name),
            source: wgpu::ShaderSource::Wgsl(source.full_text().into()),
        });
        let mut pipelines = HashMap::new();
        for ep in &module.entry_points {
            if ep.stage != naga::ShaderStage::Compute {
                continue;
            }
            let p = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(&format!("{}::{}", source.name, ep.name)),
                layout: Some(&pipeline_layout),
                module: &shader,
                entry_point: Some(&ep.name),
                compilation_options: Default::default(),
                cache: None,
            });
            pipelines.insert(ep.name.clone(), p);
        }
        Ok(Kernel {
            name: source.name,
            layout,
            bindings: entries.iter().map(|e| e.binding).collect(),
            pipelines,
        })
    }

    /// Binds `buffers[i]` to the i-th declared binding (in binding order).
    pub fn bind(&self, ctx: &GpuContext, buffers: &[&wgpu::Buffer]) -> wgpu::BindGroup {
        assert_eq!(
            buffers.len(),
            self.bindings.len(),
            "kernel '{}' declares {} bindings",
            self.name,
            self.bindings.len()
        );
        let entries: Vec<_> = self
            .bindings
            .iter()
            .zip(buffers)
            .map(|(&binding, b)| wgpu::BindGroupEntry {
                binding,
                resource: b.as_entire_binding(),
            })
            .collect();
        ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(self.name),
            layout: &self.layout,
            entries: &entries,
        })
    }

    pub fn pipeline(&self, entry: &str) -> &wgpu::ComputePipeline {
        self.pipelines
            .get(entry)
            .unwrap_or_else(|| panic!("kernel '{}' has no entry point '{entry}'", self.name))
    }

    /// Records a dispatch covering `n` invocations of `WORKGROUP_SIZE`-wide workgroups
    /// (2-D grid past 65535 groups; kernels use `linear_index`).
    pub fn dispatch(
        &self,
        pass: &mut wgpu::ComputePass,
        entry: &str,
        bg: &wgpu::BindGroup,
        n: u32,
    ) {
        let (x, y) = grid(n.div_ceil(WORKGROUP_SIZE));
        if x == 0 {
            return;
        }
        pass.set_pipeline(self.pipeline(entry));
        pass.set_bind_group(0, bg, &[]);
        pass.dispatch_workgroups(x, y, 1);
    }

    /// Records a dispatch of exactly `groups` workgroups (1-D; for per-group kernels).
    pub fn dispatch_groups(
        &self,
        pass: &mut wgpu::ComputePass,
        entry: &str,
        bg: &wgpu::BindGroup,
        groups: u32,
    ) {
        let (x, y) = grid(groups);
        if x == 0 {
            return;
        }
        pass.set_pipeline(self.pipeline(entry));
        pass.set_bind_group(0, bg, &[]);
        pass.dispatch_workgroups(x, y, 1);
    }

    /// Records an indirect dispatch whose group counts a previous kernel wrote.
    pub fn dispatch_indirect(
        &self,
        pass: &mut wgpu::ComputePass,
        entry: &str,
        bg: &wgpu::BindGroup,
        args: &wgpu::Buffer,
        offset: u64,
    ) {
        pass.set_pipeline(self.pipeline(entry));
        pass.set_bind_group(0, bg, &[]);
        pass.dispatch_workgroups_indirect(args, offset);
    }
}

/// Splits a workgroup count into a grid that respects the 65535-per-dimension limit.
pub fn grid(groups: u32) -> (u32, u32) {
    if groups == 0 {
        return (0, 0);
    }
    let x = groups.min(65535);
    (x, groups.div_ceil(x))
}
