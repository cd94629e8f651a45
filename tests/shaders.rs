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
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
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
