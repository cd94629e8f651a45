//! What a per-contact row costs to read and write on this adapter, by storage layout (issue
//! #13, memory per contact): a vec4 row (the solver's `gam` / `nv` slots), the same row read
//! for xyz only, three f32 (a 12 B packed row), a struct of three f32 (stride 12), one f32,
//! four vec4 rows (a 64 B contact record) and, for comparison, the same from a 2D texture.
//! One dispatch per row of 2^18 rows (read, scale, write), 40 dispatches per sample, the
//! layouts interleaved over 8 rounds in one process; prints the best ns per row of each.
//! On lavapipe every storage load or store is a loop over the SIMD lanes, so the cost follows
//! the number of load and store instructions, not bytes: packing 16 B rows into 12 B makes
//! each access three.

use bristlecone::gpu::{BackendChoice, GpuContext};
use std::time::Instant;

const ROWS: u32 = 1 << 18;
const WIDTH: u32 = 1024;

/// (name, binding 0 declaration, the per-row work).
const LAYOUTS: [(&str, &str, &str); 7] = [
    ("vec4", "var<storage, read> a: array<vec4<f32>>", "b[i] = a[i] * 2.0 + vec4<f32>(1.0);"),
    (
        "vec4 xyz",
        "var<storage, read> a: array<vec4<f32>>",
        "b[i] = vec4<f32>(a[i].xyz * 2.0 + vec3<f32>(1.0), 0.0);",
    ),
    (
        "3 x f32",
        "var<storage, read> a: array<f32>",
        "let v = vec3<f32>(a[3u * i], a[3u * i + 1u], a[3u * i + 2u]) * 2.0 + vec3<f32>(1.0);
         f[3u * i] = v.x; f[3u * i + 1u] = v.y; f[3u * i + 2u] = v.z;",
    ),
    (
        "struct 3 x f32",
        "var<storage, read> a: array<P3>",
        "let p = a[i]; let v = vec3<f32>(p.x, p.y, p.z) * 2.0 + vec3<f32>(1.0);
         s[i] = P3(v.x, v.y, v.z);",
    ),
    ("f32", "var<storage, read> a: array<f32>", "f[i] = a[i] * 2.0 + 1.0;"),
    (
        "4 x vec4",
        "var<storage, read> a: array<vec4<f32>>",
        "b[i] = a[(4u * i) % ROWS] + a[(4u * i + 1u) % ROWS] + a[(4u * i + 2u) % ROWS] + a[(4u * i + 3u) % ROWS];",
    ),
    (
        "4 x texel",
        "var a: texture_2d<f32>",
        "b[i] = ld(4u * i) + ld(4u * i + 1u) + ld(4u * i + 2u) + ld(4u * i + 3u);",
    ),
];

fn shader(decl: &str, work: &str) -> String {
    let out = if work.contains("f[") {
        "var<storage, read_write> f: array<f32>"
    } else if work.contains("s[") {
        "var<storage, read_write> s: array<P3>"
    } else {
        "var<storage, read_write> b: array<vec4<f32>>"
    };
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
    let dev = &ctx.device;
    let buffer = |label| {
        dev.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: ROWS as u64 * 16,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        })
    };
    let (a, b) = (buffer("rows in"), buffer("rows out"));
    let texture = dev.create_texture(&wgpu::TextureDescriptor {
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
    let view = texture.create_view(&Default::default());
    let kernels: Vec<_> = LAYOUTS
        .iter()
        .map(|(name, decl, work)| {
            let module = dev.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(name),
                source: wgpu::ShaderSource::Wgsl(shader(decl, work).into()),
            });
            let pipeline = dev.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(name),
                layout: None,
                module: &module,
                entry_point: Some("main"),
                compilation_options: Default::default(),
                cache: None,
            });
            let input = if decl.contains("texture") {
                wgpu::BindingResource::TextureView(&view)
            } else {
                a.as_entire_binding()
            };
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
                        resource: b.as_entire_binding(),
                    },
                ],
            });
            (pipeline, bind)
        })
        .collect();
    const REPS: u32 = 40;
    let mut best = vec![f64::MAX; LAYOUTS.len()];
    for _ in 0..8 {
        for (k, (pipeline, bind)) in kernels.iter().enumerate() {
            let mut enc = dev.create_command_encoder(&Default::default());
            {
                let mut pass = enc.begin_compute_pass(&Default::default());
                pass.set_pipeline(pipeline);
                pass.set_bind_group(0, bind, &[]);
                for _ in 0..REPS {
                    pass.dispatch_workgroups(ROWS / 256, 1, 1);
                }
            }
            let t = Instant::now();
            ctx.queue.submit([enc.finish()]);
            ctx.wait();
            let ns = t.elapsed().as_secs_f64() * 1e9 / (REPS * ROWS) as f64;
            best[k] = best[k].min(ns);
        }
    }
    println!("{ROWS} rows, read + write per row, best of 8 × {REPS} dispatches:");
    for ((name, _, _), ns) in LAYOUTS.iter().zip(&best) {
        println!(
            "  {name:>15}: {ns:6.2} ns per row ({:.2}× vec4)",
            ns / best[0]
        );
    }
}
