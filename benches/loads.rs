//! What a per-contact row costs to read and write on this adapter, by storage layout (issue
//! #13, memory per contact): a vec4 row (the solver's `gam` / `nv` slots), the same row read
//! for xyz only, three f32 (a 12 B packed row), a struct of three f32 (stride 12), one f32,
//! four vec4 rows (a 64 B contact record) and, for comparison, the same from a 2D texture.
//! One invocation per row of 2^18 rows (read, scale, write), 40 dispatches per sample, the
//! layouts interleaved over 8 rounds in one process; prints the best ns per row of each.
//! On lavapipe every storage load or store is a loop over the SIMD lanes, so the cost follows
//! the number of load and store instructions, not bytes: packing 16 B rows into 12 B makes
//! each access three.

use bristlecone::gpu::{buffers, BackendChoice, GpuContext};
use std::time::Instant;

const ROWS: u32 = 1 << 18;
const WIDTH: u32 = 1024;

const VEC4_OUT: &str = "var<storage, read_write> b: array<vec4<f32>>";
const F32_OUT: &str = "var<storage, read_write> f: array<f32>";

/// (name, binding 0 declaration, binding 1 declaration, the per-row work).
const LAYOUTS: [(&str, &str, &str, &str); 7] = [
    ("vec4", "var<storage, read> a: array<vec4<f32>>", VEC4_OUT, "b[i] = a[i] * 2.0 + vec4<f32>(1.0);"),
    (
        "vec4 xyz",
        "var<storage, read> a: array<vec4<f32>>",
        VEC4_OUT,
        "b[i] = vec4<f32>(a[i].xyz * 2.0 + vec3<f32>(1.0), 0.0);",
    ),
    (
        "3 x f32",
        "var<storage, read> a: array<f32>",
        F32_OUT,
        "let v = vec3<f32>(a[3u * i], a[3u * i + 1u], a[3u * i + 2u]) * 2.0 + vec3<f32>(1.0);
         f[3u * i] = v.x; f[3u * i + 1u] = v.y; f[3u * i + 2u] = v.z;",
    ),
    (
        "struct 3 x f32",
        "var<storage, read> a: array<P3>",
        "var<storage, read_write> s: array<P3>",
        "let p = a[i]; let v = vec3<f32>(p.x, p.y, p.z) * 2.0 + vec3<f32>(1.0);
         s[i] = P3(v.x, v.y, v.z);",
    ),
    ("f32", "var<storage, read> a: array<f32>", F32_OUT, "f[i] = a[i] * 2.0 + 1.0;"),
    (
        "4 x vec4",
        "var<storage, read> a: array<vec4<f32>>",
        VEC4_OUT,
        "b[i] = a[(4u * i) % ROWS] + a[(4u * i + 1u) % ROWS] + a[(4u * i + 2u) % ROWS] + a[(4u * i + 3u) % ROWS];",
    ),
    (
        "4 x texel",
        "var a: texture_2d<f32>",
        VEC4_OUT,
        "b[i] = ld(4u * i) + ld(4u * i + 1u) + ld(4u * i + 2u) + ld(4u * i + 3u);",
    ),
];

fn shader(decl: &str, out: &str, work: &str) -> String {
    // Texel k of the texture, row-major.
    let texel = if decl.contains("texture") {
        format!(
            "fn ld(k: u32) -> vec4<f32> {{
    let j = k % ROWS;
    return textureLoad(a, vec2<u32>(j % {WIDTH}u, j / {WIDTH}u), 0);
}}"
        )
    } else {
        String::new()
    };
    format!(
        "const ROWS: u32 = {ROWS}u;
struct P3 {{ x: f32, y: f32, z: f32 }}
@group(0) @binding(0) {decl};
@group(0) @binding(1) {out};
{texel}
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {{
    let i = g.x;
    if i < ROWS {{
        {work}
    }}
}}"
    )
}

fn main() {
    let ctx = GpuContext::new(BackendChoice::Auto).expect("adapter");
    println!("adapter: {}", ctx.describe());
    let bytes = ROWS as u64 * 16;
    let a = buffers::storage_zeroed(&ctx, "rows in", bytes).expect("buffer");
    let b = buffers::storage_zeroed(&ctx, "rows out", bytes).expect("buffer");
    let view = texels(&ctx);
    let kernels: Vec<_> = LAYOUTS
        .iter()
        .map(|&(name, decl, out, work)| {
            let input = if decl.contains("texture") {
                wgpu::BindingResource::TextureView(&view)
            } else {
                a.as_entire_binding()
            };
            kernel(&ctx, name, &shader(decl, out, work), input, &b)
        })
        .collect();
    const REPS: u32 = 40;
    let mut best = vec![f64::MAX; LAYOUTS.len()];
    for _ in 0..8 {
        for (k, (pipeline, bind)) in kernels.iter().enumerate() {
            best[k] = best[k].min(ns_per_row(&ctx, pipeline, bind, REPS));
        }
    }
    println!("{ROWS} rows, read + write per row, best of 8 × {REPS} dispatches:");
    for ((name, ..), ns) in LAYOUTS.iter().zip(&best) {
        println!(
            "  {name:>15}: {ns:6.2} ns per row ({:.2}× vec4)",
            ns / best[0]
        );
    }
}

/// The rows as an `rgba32float` texture, WIDTH texels wide.
fn texels(ctx: &GpuContext) -> wgpu::TextureView {
    let texture = ctx.device.create_texture(&wgpu::TextureDescriptor {
        label: Some("rows as texels"),
        size: wgpu::Extent3d {
            width: WIDTH,
            height: ROWS / WIDTH,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: wgpu::TextureFormat::Rgba32Float,
        usage: wgpu::TextureUsages::TEXTURE_BINDING,
        view_formats: &[],
    });
    texture.create_view(&Default::default())
}

/// The layout's pipeline and its bind group (binding 0 the input, 1 the output).
fn kernel(
    ctx: &GpuContext,
    name: &str,
    text: &str,
    input: wgpu::BindingResource,
    out: &wgpu::Buffer,
) -> (wgpu::ComputePipeline, wgpu::BindGroup) {
    let dev = &ctx.device;
    let module = dev.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(name),
        source: wgpu::ShaderSource::Wgsl(text.into()),
    });
    let pipeline = dev.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(name),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let bind = dev.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(name),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: input,
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: out.as_entire_binding(),
            },
        ],
    });
    (pipeline, bind)
}

/// Nanoseconds per row of `reps` dispatches over every row, in one submission.
fn ns_per_row(
    ctx: &GpuContext,
    pipeline: &wgpu::ComputePipeline,
    bind: &wgpu::BindGroup,
    reps: u32,
) -> f64 {
    let mut enc = ctx.device.create_command_encoder(&Default::default());
    {
        let mut pass = enc.begin_compute_pass(&Default::default());
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, bind, &[]);
        for _ in 0..reps {
            pass.dispatch_workgroups(ROWS / 256, 1, 1);
        }
    }
    let t = Instant::now();
    ctx.queue.submit([enc.finish()]);
    ctx.wait();
    t.elapsed().as_secs_f64() * 1e9 / (reps * ROWS) as f64
}
