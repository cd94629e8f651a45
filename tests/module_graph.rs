//! The module graph inside each crate of the workspace: Cargo forbids cycles between crates,
//! this check finds them between the top-level modules of one crate (a module `m` is
//! `src/m.rs` and everything under `src/m/`; it uses module `n` where its code names
//! `crate::n` or reaches the crate root through `super::`). A cycle is a strongly connected
//! component of more than one module (Tarjan 1972).
//!
//! The cycles the split into crates has not broken yet are listed in [`KNOWN_CYCLES`]: a new
//! cycle, or a module joining a listed one, fails; so does a listed cycle that is gone (take
//! it off the list, it may not come back).
//!
//! Cargo forbids cycles between the crates, not a dependency that goes the wrong way: the
//! checks below keep the two crates under the engine free of the GPU stack. The vocabulary
//! (`crates/model`, re-exported by the engine as `model`) lists only pure dependencies
//! ([`VOCABULARY_DEPENDENCIES`]) and its code names no engine module, no other crate of the
//! workspace and not `wgpu`. The CPU implementations (`crates/cpu`, re-exported by the engine
//! as `reference`, `shapes`, ...) list none of [`CPU_FORBIDDEN_DEPENDENCIES`] and their code
//! names neither the engine crate nor `wgpu`. The scene loader (`crates/scene`) stands on the
//! same two crates and is held to the same rule, so that a scene can be read and validated
//! where no GPU stack is built.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module graph: module name -> the modules of the same crate it uses.
type Graph = BTreeMap<String, BTreeSet<String>>;

/// Cycles still present, per crate source folder (relative to the workspace root): none. A
/// cycle that cannot be cut at once goes here with why, so that it cannot grow unseen.
const KNOWN_CYCLES: &[(&str, &[&str])] = &[];

/// The engine's vocabulary crate: the models, their parameters and the row math, below every
/// GPU stage and CPU implementation.
const VOCABULARY: &str = "crates/model/src";

/// The other top-level engine modules the vocabulary may use: none, so that it can move into
/// its own crate with no dependency on the engine.
const VOCABULARY_USES: &[&str] = &[];

/// The vocabulary's dependencies, all pure: glam (a joint's anchors and frames, the periodic
/// images) and bytemuck (the records the GPU reads as they are).
const VOCABULARY_DEPENDENCIES: &[&str] = &["bytemuck", "glam"];

/// What the vocabulary's code may not name: the GPU API and the crates above it.
const VOCABULARY_FORBIDDEN_NAMES: &[&str] = &["wgpu", "bristlecone_engine", "bristlecone_cpu"];

/// The CPU implementations' crate, below the engine.
const CPU: &str = "crates/cpu/src";

/// What the CPU implementations' manifest may not list: the GPU stack and the engine.
const CPU_FORBIDDEN_DEPENDENCIES: &[&str] = &["wgpu", "naga", "pollster", "bristlecone-engine"];

/// What the CPU implementations' code may not name: the engine crate and the GPU API.
const CPU_FORBIDDEN_NAMES: &[&str] = &["wgpu", "bristlecone_engine"];

/// The scene loader's crate: TOML to a validated `Scene`, over the vocabulary and the CPU
/// implementations (hull and clump mass properties, the box tests of its checks).
const SCENE: &str = "crates/scene/src";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The source folders of the workspace's crates: the app's `src/` and every `crates/*/src`.
fn crate_sources() -> Vec<PathBuf> {
    let mut dirs = vec![root().join("src")];
    for entry in std::fs::read_dir(root().join("crates")).unwrap() {
        let src = entry.unwrap().path().join("src");
        if src.is_dir() {
            dirs.push(src);
        }
    }
    dirs.sort();
    dirs
}

/// Every `.rs` file under `dir` with its depth below the crate root (`src/m.rs` and
/// `src/m/mod.rs` are 1, `src/m/n.rs` is 2).
fn rust_files(dir: &Path, depth: usize, out: &mut Vec<(PathBuf, usize)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, depth + 1, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let is_mod = path.file_name().is_some_and(|n| n == "mod.rs");
            out.push((path, if is_mod { depth } else { depth + 1 }));
        }
    }
}

/// The top-level modules that `text` (one file `depth` modules below the root) names: the
/// first segment after `crate::` (each item of a `crate::{a, b::c}` group) and after as many
/// `super::` as reach the root. Line comments are left out: a doc mention is not a use.
fn used_modules(text: &str, depth: usize) -> BTreeSet<String> {
    let code = without_comments(text);
    let mut prefixes = vec!["crate::".to_string()];
    if depth > 0 {
        prefixes.push("super::".repeat(depth));
    }
    let mut used = BTreeSet::new();
    for prefix in &prefixes {
        for (at, _) in code.match_indices(prefix.as_str()) {
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let rest = &code[at + prefix.len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let group = &group[..group.find('}').unwrap_or(group.len())];
                used.extend(group.split(',').filter_map(|item| first_ident(item.trim())));
            } else {
                used.extend(first_ident(rest));
            }
        }
    }
    used
}

fn first_ident(text: &str) -> Option<String> {
    let ident: String = text
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!ident.is_empty() && ident != "self" && ident != "super").then_some(ident)
}

/// The graph of one crate's source folder.
fn module_graph(src: &Path) -> Graph {
    let mut files = Vec::new();
    rust_files(src, 0, &mut files);
    let mut graph = Graph::new();
    for (path, depth) in files {
        let rel = path.strip_prefix(src).unwrap();
        let first = rel.iter().next().unwrap().to_string_lossy().into_owned();
        let module = first.strip_suffix(".rs").unwrap_or(&first).to_string();
        if module == "lib" || module == "main" {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let used = used_modules(&text, depth);
        graph.entry(module.clone()).or_default().extend(used);
    }
    // Only edges between modules of this crate (not `crate::Type` at the root, not itself).
    let modules: BTreeSet<String> = graph.keys().cloned().collect();
    for (module, used) in graph.iter_mut() {
        used.retain(|n| n != module && modules.contains(n));
    }
    graph
}

/// The strongly connected components of more than one module (Tarjan's algorithm), each
/// sorted, in sorted order.
fn cycles(graph: &Graph) -> Vec<Vec<String>> {
    struct Tarjan<'a> {
        graph: &'a Graph,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        found: Vec<Vec<String>>,
    }
    impl<'a> Tarjan<'a> {
        fn visit(&mut self, v: &'a str) {
            let i = self.index.len();
            self.index.insert(v, i);
            self.low.insert(v, i);
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in self.graph.get(v).into_iter().flatten() {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.on_stack.contains(w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = Vec::new();
                loop {
                    let w = self.stack.pop().unwrap();
                    self.on_stack.remove(w);
                    component.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut t = Tarjan {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !t.index.contains_key(v.as_str()) {
            t.visit(v);
        }
    }
    t.found.sort();
    t.found
}

/// For each module of a cycle, the modules of the same cycle it uses (what to cut).
fn describe(graph: &Graph, cycle: &[String]) -> String {
    cycle
        .iter()
        .map(|m| {
            let inside: Vec<&str> = graph[m]
                .iter()
                .filter(|n| cycle.contains(n))
                .map(String::as_str)
                .collect();
            format!("  {m} -> {}", inside.join(", "))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn no_module_cycle_inside_a_crate_beyond_the_known_ones() {
    let mut failures = Vec::new();
    for src in crate_sources() {
        let rel = src
            .strip_prefix(root())
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let graph = module_graph(&src);
        assert!(graph.len() > 1, "{rel}: no modules found");
        let found = cycles(&graph);
        let known: Vec<Vec<String>> = KNOWN_CYCLES
            .iter()
            .filter(|(dir, _)| *dir == rel)
            .map(|(_, c)| c.iter().map(|m| m.to_string()).collect())
            .collect();
        for cycle in &found {
            if !known.contains(cycle) {
                failures.push(format!(
                    "{rel}: module cycle {cycle:?} (not in KNOWN_CYCLES):\n{}",
                    describe(&graph, cycle)
                ));
            }
        }
        for cycle in &known {
            if !found.contains(cycle) {
                failures.push(format!(
                    "{rel}: the known cycle {cycle:?} is gone or changed: update KNOWN_CYCLES"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// What the vocabulary's code (line comments left out) names that it may not: another
/// top-level engine module, `wgpu` or a crate above it; one line per file and name.
fn vocabulary_violations(
    files: &[(PathBuf, usize, String)],
    engine_modules: &BTreeSet<String>,
) -> Vec<String> {
    let mut found = Vec::new();
    for (path, depth, text) in files {
        let code = without_comments(text);
        let used = used_modules(text, *depth);
        for m in used.iter().filter(|m| engine_modules.contains(*m)) {
            if m != "model" && !VOCABULARY_USES.contains(&m.as_str()) {
                found.push(format!("{}: uses crate::{m}", path.display()));
            }
        }
        found.extend(forbidden_names(path, &code, VOCABULARY_FORBIDDEN_NAMES));
    }
    found
}

/// Code with its line comments left out: a doc mention is not a use.
fn without_comments(text: &str) -> String {
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// One line per name of `names` that `code` (of the file at `path`) contains.
fn forbidden_names(path: &Path, code: &str, names: &[&str]) -> Vec<String> {
    names
        .iter()
        .filter(|n| code.contains(*n))
        .map(|n| format!("{}: names {n}", path.display()))
        .collect()
}

/// The crates a manifest lists in its dependency tables (`[dependencies]`,
/// `[dev-dependencies]`, `[build-dependencies]`, target-specific ones too).
fn manifest_dependencies(manifest: &str) -> Vec<String> {
    let mut in_table = false;
    let mut found = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_table = line.trim_end_matches(']').ends_with("dependencies");
        } else if in_table && !line.is_empty() && !line.starts_with('#') {
            let name = line.split(['=', '.', ' ']).next().unwrap_or("");
            found.push(name.trim_matches('"').to_string());
        }
    }
    found
}

/// Every `.rs` file under a crate's source folder with its depth and text.
fn crate_files(src: &str) -> Vec<(PathBuf, usize, String)> {
    let mut listed = Vec::new();
    rust_files(&root().join(src), 1, &mut listed);
    assert!(listed.len() > 1, "{src}: no files found");
    listed
        .into_iter()
        .map(|(path, depth)| {
            let text = std::fs::read_to_string(&path).unwrap();
            (path, depth, text)
        })
        .collect()
}

#[test]
fn the_vocabulary_uses_no_other_engine_module_and_no_wgpu() {
    let src = root().join("crates/engine/src");
    let engine_modules: BTreeSet<String> = module_graph(&src).into_keys().collect();
    let files = crate_files(VOCABULARY);
    let manifest = std::fs::read_to_string(root().join("crates/model/Cargo.toml")).unwrap();
    let dependencies = manifest_dependencies(&manifest);
    let extra: Vec<&String> = dependencies
        .iter()
        .filter(|d| !VOCABULARY_DEPENDENCIES.contains(&d.as_str()))
        .collect();
    assert!(
        extra.is_empty(),
        "crates/model/Cargo.toml may list only {VOCABULARY_DEPENDENCIES:?}, not {extra:?}"
    );
    let found = vocabulary_violations(&files, &engine_modules);
    assert!(
        found.is_empty(),
        "{VOCABULARY} must stay below the engine:\n{}",
        found.join("\n")
    );
    // The check itself: a stray use, grouped or through `super::`, and a wgpu type are found.
    let modules: BTreeSet<String> = ["model", "solve", "gpu"].map(String::from).into();
    let stray = [
        (
            PathBuf::from("a.rs"),
            2,
            "use crate::{model::rows, solve::Contact};".to_string(),
        ),
        (
            PathBuf::from("b.rs"),
            2,
            "fn f(_: super::super::gpu::Kernel) {}".to_string(),
        ),
        (
            PathBuf::from("c.rs"),
            1,
            "fn g(_: &wgpu::Buffer) {} // crate::solve".to_string(),
        ),
        (
            PathBuf::from("d.rs"),
            1,
            "use bristlecone_cpu::shapes;".to_string(),
        ),
    ];
    assert_eq!(
        vocabulary_violations(&stray, &modules),
        [
            "a.rs: uses crate::solve",
            "b.rs: uses crate::gpu",
            "c.rs: names wgpu",
            "d.rs: names bristlecone_cpu"
        ]
    );
}

/// What the CPU implementations' code (line comments left out) names that it may not.
fn cpu_violations(files: &[(PathBuf, usize, String)]) -> Vec<String> {
    files
        .iter()
        .flat_map(|(path, _, text)| {
            forbidden_names(path, &without_comments(text), CPU_FORBIDDEN_NAMES)
        })
        .collect()
}

/// Checks a crate below the engine: its manifest lists `needed` and none of
/// [`CPU_FORBIDDEN_DEPENDENCIES`], and its code (line comments left out) names neither the
/// engine crate nor `wgpu`.
fn assert_below_the_engine(manifest: &str, src: &str, needed: &[&str]) {
    let text = std::fs::read_to_string(root().join(manifest)).unwrap();
    let dependencies = manifest_dependencies(&text);
    for needed in needed {
        assert!(
            dependencies.iter().any(|d| d == needed),
            "{manifest}: {needed} not found in {dependencies:?}"
        );
    }
    let listed: Vec<&String> = dependencies
        .iter()
        .filter(|d| CPU_FORBIDDEN_DEPENDENCIES.contains(&d.as_str()))
        .collect();
    assert!(
        listed.is_empty(),
        "{manifest} may not list {listed:?} (this crate is below the engine)"
    );
    let found = cpu_violations(&crate_files(src));
    assert!(
        found.is_empty(),
        "{src} must stay below the engine:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_cpu_crate_names_no_engine_and_no_gpu_stack() {
    assert_below_the_engine("crates/cpu/Cargo.toml", CPU, &["bristlecone-model"]);
    // The checks themselves: a stray dependency in any table, an engine path, a wgpu type.
    let manifest = "[dependencies]\nglam.workspace = true\n\n[dev-dependencies]\n\
                    bristlecone-engine = { path = \"../engine\" }\n";
    assert_eq!(
        manifest_dependencies(manifest),
        ["glam", "bristlecone-engine"]
    );
    let stray = [
        (
            PathBuf::from("a.rs"),
            1,
            "use bristlecone_engine::gpu::GpuContext;".to_string(),
        ),
        (
            PathBuf::from("b.rs"),
            2,
            "fn g(_: &wgpu::Buffer) {} // bristlecone_engine".to_string(),
        ),
    ];
    assert_eq!(
        cpu_violations(&stray),
        ["a.rs: names bristlecone_engine", "b.rs: names wgpu"]
    );
}

#[test]
fn the_scene_crate_stands_on_model_and_cpu_without_the_gpu_stack() {
    assert_below_the_engine(
        "crates/scene/Cargo.toml",
        SCENE,
        &["bristlecone-model", "bristlecone-cpu"],
    );
}

#[test]
fn the_check_finds_a_cycle_through_crate_and_super_paths() {
    let graph_of = |files: &[(&str, usize, &str)]| {
        let mut graph = Graph::new();
        for (module, depth, text) in files {
            let mut used = used_modules(text, *depth);
            used.remove(*module);
            graph.insert(module.to_string(), used);
        }
        graph
    };
    // a -> b by a grouped `crate::` path, b -> c by `super::super::` two levels down, c -> a.
    let cyclic = graph_of(&[
        ("a", 1, "use crate::{b::Thing, self};"),
        ("b", 2, "fn f() { super::super::c::g() }"),
        ("c", 1, "use crate::a; // crate::d is only mentioned"),
        ("d", 1, ""),
    ]);
    assert_eq!(cycles(&cyclic), vec![vec!["a", "b", "c"]]);
    // Without c -> a, no cycle; a comment naming a module is not an edge.
    let acyclic = graph_of(&[
        ("a", 1, "use crate::{b::Thing, self};"),
        ("b", 2, "fn f() { super::super::c::g() }"),
        ("c", 1, "// uses crate::a"),
    ]);
    assert!(cycles(&acyclic).is_empty());
}
