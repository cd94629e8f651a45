//! Every WGSL stage parses and validates with naga: a broken shader fails `cargo test`
//! even on a machine with no GPU adapter at all.

use bristlecone::gpu::SHADERS;

#[test]
fn every_shader_validates_with_naga() {
    let mut failures = Vec::new();
    for s in SHADERS {
        if let Err(e) = s.validate() {
            failures.push(e.to_string());
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_wgsl_file_is_registered() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/engine/shaders");
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let Some(stem) = name.strip_suffix(".wgsl") else {
            continue;
        };
        if stem == "prelude" {
            continue;
        }
        assert!(
            SHADERS.iter().any(|s| s.name == stem),
            "shaders/{name} is not in gpu::kernel::SHADERS, so it is never validated or built"
        );
    }
}

#[test]
fn a_broken_shader_is_reported_with_its_name_and_line() {
    let bad = bristlecone::gpu::ShaderSource {
        name: "broken",
        common: "",
        body: "fn f() -> f32 { return 1.0 + ; }",
    };
    let msg = bad.validate().unwrap_err().to_string();
    assert!(msg.contains("broken"), "{msg}");
    assert!(msg.contains("shaders/broken.wgsl"), "{msg}");
}

/// A stage asked for twice on one device is compiled once (drivers compile at creation or
/// first dispatch, minutes for the large stages on lavapipe); other constants or another
/// device get their own pipelines.
#[test]
fn a_kernel_is_compiled_once_per_device_and_constants() {
    use bristlecone::gpu::{BackendChoice, GpuContext, Kernel, ShaderSource};
    let ctx = GpuContext::new(BackendChoice::Auto).expect("an adapter (lavapipe without a GPU)");
    let source = ShaderSource::by_name("integrate").unwrap();
    assert_eq!(ctx.kernels_compiled(), 0);
    let first = Kernel::new(&ctx, source).unwrap();
    let again = Kernel::new(&ctx, source).unwrap();
    assert_eq!(ctx.kernels_compiled(), 1);
    assert!(std::ptr::eq(&*first, &*again), "the same compiled kernel");
    let threads: Vec<Kernel> = std::thread::scope(|s| {
        let spawned: Vec<_> = (0..4)
            .map(|_| s.spawn(|| Kernel::new(&ctx, source).unwrap()))
            .collect();
        spawned.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(threads.iter().all(|k| std::ptr::eq(&**k, &*first)));
    assert_eq!(ctx.kernels_compiled(), 1);

    let solve = ShaderSource::by_name("solve_update").unwrap();
    Kernel::with_constants(&ctx, solve, &[("HAS_JOINTS", 0.0)]).unwrap();
    Kernel::with_constants(&ctx, solve, &[("HAS_JOINTS", 1.0)]).unwrap();
    assert_eq!(ctx.kernels_compiled(), 3, "other constants, another kernel");

    let other = GpuContext::new(BackendChoice::Auto).unwrap();
    let there = Kernel::new(&other, source).unwrap();
    assert!(
        !std::ptr::eq(&*there, &*first),
        "another device, its own kernel"
    );
}
