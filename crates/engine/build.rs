//! Registers every `shaders/*.wgsl` stage (all but the prelude) so that a new stage file is
//! compiled into the binary and validated by the tests without editing a list by hand.

use std::fmt::Write;

fn main() {
    // Rerun on every build (a missing path is always stale): several checkouts may share one
    // target directory, and the list must be this checkout's. The output is rewritten only
    // when it changes, so the crate is not recompiled for nothing.
    println!("cargo::rerun-if-changed=shaders/.always-rerun");
    let mut names: Vec<String> = std::fs::read_dir("shaders")
        .expect("shaders/ directory")
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            let stem = name.strip_suffix(".wgsl")?.to_string();
            (stem != "prelude").then_some(stem)
        })
        .collect();
    names.sort();
    let mut out = String::from("pub const SHADERS: &[ShaderSource] = &[\n");
    for n in &names {
        // A stage `family_x` also gets `shaders/common/family.wgsl` when that file exists,
        // followed by every `shaders/common/family_*.wgsl` (sorted: e.g. a shape's narrow
        // phase kept in its own file) whose first line, when it is `// stages: a, b`,
        // names the stage (code that reads a binding only some stages declare).
        let family = n.split('_').next().unwrap_or(n);
        let mut commons: Vec<String> = Vec::new();
        if std::path::Path::new(&format!("shaders/common/{family}.wgsl")).exists() {
            commons.push(family.to_string());
        }
        let mut extra: Vec<String> = std::fs::read_dir("shaders/common")
            .map(|d| {
                d.filter_map(|e| {
                    let name = e.ok()?.file_name().into_string().ok()?;
                    let stem = name.strip_suffix(".wgsl")?;
                    let ours = stem.starts_with(&format!("{family}_")) && for_stage(&name, n);
                    ours.then(|| stem.to_string())
                })
                .collect()
            })
            .unwrap_or_default();
        extra.sort();
        commons.extend(extra);
        if commons.is_empty() {
            writeln!(out, "    shader!(\"{n}\"),").unwrap();
        } else {
            let list: Vec<String> = commons.iter().map(|c| format!("\"{c}\"")).collect();
            writeln!(out, "    shader!(\"{n}\", {}),", list.join(", ")).unwrap();
        }
    }
    out.push_str("];\n");
    let path = std::path::Path::new(&std::env::var("OUT_DIR").unwrap()).join("shaders.rs");
    if std::fs::read_to_string(&path).ok().as_deref() != Some(out.as_str()) {
        std::fs::write(path, out).unwrap();
    }
}

/// Whether common file `name` goes to `stage`: unless its first line is `// stages: …`,
/// every stage of the family.
fn for_stage(name: &str, stage: &str) -> bool {
    let text = std::fs::read_to_string(format!("shaders/common/{name}")).unwrap_or_default();
    match text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("// stages:"))
    {
        Some(list) => list.split(',').any(|s| s.trim() == stage),
        None => true,
    }
}
