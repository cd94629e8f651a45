//! The manual's own checks (README.md and the book in `docs/src`), all on the CPU:
//!
//! * every ```` ```toml ```` block that is a complete scene loads with the scene loader and
//!   its `[render]` table with the renderer's (what `bristlecone validate` runs); a block
//!   marked ```` ```toml,fragment=NAME ```` is merged into `assets/scenes/NAME.toml` (tables
//!   merged key by key, arrays of tables appended) and the result must load;
//! * every relative link and image resolves to a file, and a `#anchor` to a heading of it;
//! * the Scene reference lists exactly the keys the loader accepts, table by table: the keys
//!   are read from the loader itself (each table is probed with an unknown key, and the
//!   loader's `deny_unknown_fields` error lists every field it knows), so a key added to or
//!   renamed in the format fails here until its row is written;
//! * the Scene reference's `[solver]` defaults are `model::defaults`, and a scene without
//!   `[solver]` gets the engine's `SolverSettings::default()`;
//! * every `bristlecone COMMAND` of the Command line page answers `--help`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md, every page of the book, and the measurement log the book includes.
fn manual_files() -> Vec<PathBuf> {
    let mut files = vec![
        root().join("README.md"),
        root().join("benches/results/LOG.md"),
    ];
    let mut dirs = vec![root().join("docs/src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files.sort();
    assert!(files.len() > 10, "the book's pages are missing: {files:?}");
    files
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn parser(text: &str) -> Parser<'_> {
    Parser::new_ext(text, Options::ENABLE_TABLES)
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset].matches('\n').count() + 1
}

/// A fenced code block: its info string, text and 1-based line.
struct Block {
    info: String,
    text: String,
    line: usize,
}

fn code_blocks(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut open: Option<Block> = None;
    for (event, range) in parser(text).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) => {
                open = Some(Block {
                    info: info.to_string(),
                    text: String::new(),
                    line: line_of(text, range.start),
                })
            }
            Event::Text(t) => {
                if let Some(b) = open.as_mut() {
                    b.text.push_str(&t);
                }
            }
            Event::End(TagEnd::CodeBlock) => blocks.extend(open.take()),
            _ => {}
        }
    }
    blocks
}

/// The scene text a snippet stands for, or why it has none.
fn snippet_scene(block: &Block) -> Result<String, String> {
    let Some(name) = block.info.strip_prefix("toml,fragment=") else {
        return Ok(block.text.clone());
    };
    let base_path = root().join("assets/scenes").join(format!("{name}.toml"));
    let mut base: toml::Table = read(&base_path)
        .parse()
        .map_err(|e| format!("{}: {e}", base_path.display()))?;
    let fragment: toml::Table = block
        .text
        .parse()
        .map_err(|e| format!("the fragment is not TOML: {e}"))?;
    merge(&mut base, fragment);
    toml::to_string(&base).map_err(|e| e.to_string())
}

/// Tables merged key by key, arrays of tables appended, anything else replaced.
fn merge(base: &mut toml::Table, fragment: toml::Table) {
    for (key, value) in fragment {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(b)), toml::Value::Table(f)) => merge(b, f),
            (Some(toml::Value::Array(b)), toml::Value::Array(f))
                if f.iter().all(toml::Value::is_table) =>
            {
                b.extend(f)
            }
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

/// What `bristlecone validate` checks, for scene text saved in `assets/scenes/` (so that
/// mesh paths such as `../meshes/hopper.obj` resolve as in the shipped scenes).
fn validate(text: &str) -> Result<(), String> {
    let file = root().join("assets/scenes/doc_snippet.toml");
    bristlecone::scene::parse_str(text, &file).map_err(|e| e.to_string())?;
    bristlecone::render::settings::read_table(text, &file).map_err(|e| e.to_string())?;
    Ok(())
}

#[test]
fn every_toml_snippet_is_a_valid_scene_or_a_valid_fragment() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for file in manual_files() {
        for block in code_blocks(&read(&file)) {
            if block.info != "toml" && !block.info.starts_with("toml,") {
                continue;
            }
            if block.info != "toml" && !block.info.starts_with("toml,fragment=") {
                failures.push(format!(
                    "{}:{}: unknown info string `{}` (use toml or toml,fragment=SCENE)",
                    file.display(),
                    block.line,
                    block.info
                ));
                continue;
            }
            checked += 1;
            if let Err(e) = snippet_scene(&block).and_then(|scene| validate(&scene)) {
                failures.push(format!("{}:{}: {e}", file.display(), block.line));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "invalid snippets:\n{}",
        failures.join("\n")
    );
    // README's scene, Getting started's scene and fragment, the Joints example.
    assert!(checked >= 4, "only {checked} toml snippets found");
}

/// A bad snippet is caught: the validator is not a formality.
#[test]
fn a_snippet_with_a_misspelt_key_is_refused() {
    let block = Block {
        info: "toml,fragment=hopper".into(),
        text: "[simulation]\ntime_step = 1e-3\n".into(),
        line: 1,
    };
    let err = snippet_scene(&block)
        .and_then(|s| validate(&s))
        .unwrap_err();
    assert!(err.contains("time_step"), "{err}");
}

/// The anchors of a Markdown file's headings, as mdBook and GitHub make them: lower case,
/// letters, digits, `_` and `-` kept, spaces to `-`, the rest dropped; repeats get `-1`, ….
fn anchors(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut heading: Option<String> = None;
    for event in parser(text) {
        match event {
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                let h = heading.take().unwrap_or_default();
                let id: String = h
                    .chars()
                    .filter_map(|c| {
                        if c.is_alphanumeric() || c == '_' || c == '-' {
                            Some(c.to_lowercase().next().unwrap_or(c))
                        } else if c.is_whitespace() {
                            Some('-')
                        } else {
                            None
                        }
                    })
                    .collect();
                let n = seen.entry(id.clone()).or_insert(0);
                out.insert(if *n == 0 {
                    id.clone()
                } else {
                    format!("{id}-{n}")
                });
                *n += 1;
            }
            _ => {}
        }
    }
    out
}

/// Every link and image target in a Markdown text, with its line.
fn links(text: &str) -> Vec<(String, usize)> {
    parser(text)
        .into_offset_iter()
        .filter_map(|(event, range)| match event {
            Event::Start(Tag::Link { dest_url, .. })
            | Event::Start(Tag::Image { dest_url, .. }) => {
                Some((dest_url.to_string(), line_of(text, range.start)))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn every_relative_link_resolves_to_a_file_and_heading() {
    let mut checked = 0;
    let mut broken = Vec::new();
    for file in manual_files() {
        let text = read(&file);
        for (target, line) in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, anchor) = match target.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (target.as_str(), None),
            };
            let resolved = if path.is_empty() {
                file.clone()
            } else {
                file.parent().unwrap().join(path)
            };
            let at = format!("{}:{line}: `{target}`", file.display());
            if !resolved.is_file() {
                broken.push(format!("{at}: no file {}", resolved.display()));
                continue;
            }
            if let Some(anchor) = anchor {
                if !anchors(&read(&resolved)).contains(anchor) {
                    broken.push(format!("{at}: no heading with anchor #{anchor}"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    assert!(checked > 50, "only {checked} relative links found");
}

/// mdBook's `{{#include PATH}}` directives name existing files.
#[test]
fn every_include_names_a_file() {
    let mut checked = 0;
    for file in manual_files() {
        let text = read(&file);
        const DIRECTIVE: &str = "{{#include ";
        for (at, _) in text.match_indices(DIRECTIVE) {
            let rest = &text[at + DIRECTIVE.len()..];
            // `PATH` or `PATH:ANCHOR` / `PATH:LINES`, up to the closing braces.
            let path = rest.split("}}").next().unwrap().trim();
            let path = path.split(':').next().unwrap();
            let resolved = file.parent().unwrap().join(path);
            assert!(resolved.is_file(), "{}: no file {path}", file.display());
            checked += 1;
        }
    }
    assert!(checked >= 1, "the measurement history include is missing");
}

#[test]
fn the_link_check_sees_a_missing_heading() {
    let text = "# Title\n\n## A section: with `code`\n";
    let set = anchors(text);
    assert!(set.contains("a-section-with-code"), "{set:?}");
    assert!(!set.contains("a-section"), "{set:?}");
}

// ---------------------------------------------------------------------------------------
// The scene reference against the loader.

/// The sections of `docs/src/scene-reference.md` (their heading text, code spans as text)
/// and the probe that makes the loader name the keys of that table. `{}` is where the
/// unknown key goes.
const SECTIONS: &[(&str, &str)] = &[
    ("", "{}\n[simulation]\ndt = 1e-3\nsteps = 1\n"),
    ("[simulation]", "[simulation]\n{}\n"),
    ("[solver]", "[solver]\n{}\n"),
    ("[[material]]", "[[material]]\n{}\n"),
    (
        "[[material]] model",
        "[simulation]\ndt = 1e-3\nsteps = 1\n[[material]]\nname = \"a\"\ndensity = 1.0\n\
friction = 0.1\nmodel = { kind = \"coulomb\", {} }\n",
    ),
    ("[[body]]", "[[body]]\n{}\n"),
    ("schedule entries", "[[body]]\nschedule = [{ {} }]\n"),
    ("[[generator]]", "[[generator]]\n{}\n"),
    ("[[generator]] region", "[[generator]]\nregion = { {} }\n"),
    (
        "[[generator]] template",
        "[[generator]]\ntemplate = { {} }\n",
    ),
    ("[[inflow]]", "[[inflow]]\n{}\n"),
    ("[[outflow]]", "[[outflow]]\n{}\n"),
    ("[[boundary]]", "[[boundary]]\n{}\n"),
    ("[[joint]]", "[[joint]]\n{}\n"),
    ("[[measure]]", "[[measure]]\n{}\n"),
    ("[periodic]", "[periodic]\n{}\n"),
    ("[periodic] shear", "[periodic]\nshear = { {} }\n"),
    ("[output]", "[output]\n{}\n"),
    (
        "[render]",
        "[simulation]\ndt = 1e-3\nsteps = 1\n[[material]]\nname = \"a\"\ndensity = 1.0\n\
friction = 0.1\n[[body]]\nradius = 0.1\nposition = [0.0, 0.0, 0.0]\n[render]\n{}\n",
    ),
];

const PROBE: &str = "zz_not_a_key";

/// The field names serde lists in its unknown-field error: "unknown field `x`, expected
/// one of `a`, `b`" (or "expected `a`").
fn expected_fields(message: &str) -> BTreeSet<String> {
    let (_, list) = message
        .split_once("expected")
        .unwrap_or_else(|| panic!("not an unknown-field error: {message}"));
    list.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// The keys the loader accepts in the table a probe reaches.
fn loader_keys(probe: &str) -> BTreeSet<String> {
    let text = probe.replace("{}", &format!("{PROBE} = 1"));
    let err = validate(&text).expect_err(&format!("the probe was accepted:\n{text}"));
    assert!(
        err.contains(PROBE),
        "the probe's error is not about it: {err}\n{text}"
    );
    let keys = expected_fields(&err);
    assert!(!keys.is_empty(), "no keys listed: {err}");
    keys
}

/// The keys in the first column of each table of the reference, by section heading (the
/// rows before the first `##` heading belong to section "").
fn documented_keys(text: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut section = String::new();
    let mut heading: Option<String> = None;
    let (mut in_head, mut cell, mut in_row) = (false, 0usize, false);
    for event in parser(text) {
        match event {
            Event::Start(Tag::Heading { level, .. }) if level >= HeadingLevel::H2 => {
                heading = Some(String::new())
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some(h) = heading.take() {
                    section = h;
                }
            }
            Event::Text(t) if heading.is_some() => heading.as_mut().unwrap().push_str(&t),
            Event::Code(t) if heading.is_some() => heading.as_mut().unwrap().push_str(&t),
            Event::Start(Tag::TableHead) => in_head = true,
            Event::End(TagEnd::TableHead) => in_head = false,
            Event::Start(Tag::TableRow) => (in_row, cell) = (true, 0),
            Event::End(TagEnd::TableRow) => in_row = false,
            Event::End(TagEnd::TableCell) => cell += 1,
            Event::Code(t) if in_row && !in_head && cell == 0 => {
                out.entry(section.clone())
                    .or_default()
                    .insert(t.to_string());
            }
            _ => {}
        }
    }
    out
}

fn reference_mismatches(page: &str) -> Vec<String> {
    let documented = documented_keys(page);
    let mut problems = Vec::new();
    for (section, probe) in SECTIONS {
        let code = loader_keys(probe);
        let docs = documented.get(*section).cloned().unwrap_or_default();
        let name = if section.is_empty() {
            "top level"
        } else {
            section
        };
        for key in code.difference(&docs) {
            problems.push(format!("{name}: `{key}` is accepted but not documented"));
        }
        for key in docs.difference(&code) {
            problems.push(format!("{name}: `{key}` is documented but not accepted"));
        }
    }
    problems
}

#[test]
fn the_scene_reference_lists_exactly_the_loaders_keys() {
    let page = read(&root().join("docs/src/scene-reference.md"));
    let problems = reference_mismatches(&page);
    assert!(
        problems.is_empty(),
        "docs/src/scene-reference.md:\n{}",
        problems.join("\n")
    );
}

/// The comparison fails both ways: a row removed from the page, and a row for a key the
/// loader does not know.
#[test]
fn the_reference_check_sees_a_missing_and_an_unknown_key() {
    let page = read(&root().join("docs/src/scene-reference.md"));
    let row = "| `gravity` | [float; 3] | m/s² | `[0, 0, -9.81]` | | |\n";
    assert!(
        page.contains(row),
        "the gravity row moved: update this test"
    );
    let problems = reference_mismatches(&page.replace(row, ""));
    assert_eq!(
        problems,
        ["[simulation]: `gravity` is accepted but not documented"]
    );
    let renamed = page.replace(row, &row.replace("`gravity`", "`gravitation`"));
    let problems = reference_mismatches(&renamed);
    assert_eq!(
        problems,
        [
            "[simulation]: `gravity` is accepted but not documented",
            "[simulation]: `gravitation` is documented but not accepted",
        ]
    );
}

// ---------------------------------------------------------------------------------------
// Command lines.

#[test]
fn every_command_of_the_command_line_page_answers_help() {
    let page = read(&root().join("docs/src/cli.md"));
    let mut commands = BTreeSet::new();
    for block in code_blocks(&page) {
        for line in block.text.lines() {
            if let Some(rest) = line.strip_prefix("bristlecone ") {
                commands.insert(rest.split_whitespace().next().unwrap().to_string());
            }
        }
    }
    let expected = [
        "bench", "info", "patch", "plot", "render", "run", "validate",
    ];
    assert_eq!(
        commands.iter().map(String::as_str).collect::<Vec<_>>(),
        expected
    );
    for command in &commands {
        let out = Command::new(env!("CARGO_BIN_EXE_bristlecone"))
            .args([command.as_str(), "--help"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "bristlecone {command} --help: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The `default` cell of each row of one table section of the Scene reference, by key.
fn documented_defaults(page: &str, section: &str) -> BTreeMap<String, String> {
    let start = page
        .find(&format!("## `{section}`"))
        .unwrap_or_else(|| panic!("no {section} section"));
    let rest = &page[start..];
    let body = &rest[..rest[3..].find("\n## ").map_or(rest.len(), |e| e + 3)];
    body.lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let key = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
            Some((key.to_string(), cells.get(4)?.to_string()))
        })
        .collect()
}

/// The number a default cell starts with (`1e-4 × smallest radius` → 1e-4).
fn leading_number(cell: &str) -> f64 {
    let word = cell.split_whitespace().next().unwrap_or("");
    word.trim_matches('`')
        .parse()
        .unwrap_or_else(|_| panic!("`{cell}` does not start with a number"))
}

/// The Scene reference states the defaults of `model::defaults`, the one table both the
/// scene loader and the engine read.
#[test]
fn the_scene_reference_states_the_solver_defaults_of_the_code() {
    use bristlecone::model::defaults as d;
    let page = read(&root().join("docs/src/scene-reference.md"));
    let cells = documented_defaults(&page, "[solver]");
    let number = |key: &str| leading_number(&cells[key]);
    assert_eq!(number("max_iterations"), d::MAX_ITERATIONS as f64);
    assert_eq!(number("tolerance"), d::TOLERANCE);
    assert_eq!(number("omega"), d::OMEGA);
    assert!(cells["omega"].contains(&format!("gauss_seidel: {:.1}", d::GAUSS_SEIDEL_OMEGA)));
    assert_eq!(number("recovery_speed"), d::RECOVERY_SPEED);
    assert_eq!(number("slop"), d::SLOP_PER_RADIUS);
    assert_eq!(number("stabilisation"), d::STABILISATION);
    assert_eq!(number("max_outer"), d::MAX_OUTER as f64);
    assert_eq!(number("envelope"), d::ENVELOPE_PER_RADIUS);
    assert_eq!(number("compliance"), d::COMPLIANCE);
    assert_eq!(number("friction_directions"), d::FRICTION_DIRECTIONS as f64);
    assert_eq!(cells["warm_start"], format!("`{}`", d::WARM_START));
}

/// A scene that leaves `[solver]` out solves with the engine's own defaults (but for the
/// slop, which the scene scales by the smallest radius and the engine cannot).
#[test]
fn a_scene_without_a_solver_section_gets_the_engines_default_solver() {
    use bristlecone::solve::SolverSettings;
    let file = root().join("assets/scenes/default.toml");
    let mut table: toml::Table = read(&file).parse().expect("default scene is TOML");
    assert!(
        table.remove("solver").is_some(),
        "the default scene sets [solver]"
    );
    let text = toml::to_string(&table).expect("serialises");
    let scene = bristlecone::scene::parse_str(&text, &file).expect("loads without [solver]");
    let from_scene = bristlecone::setup::solver_settings(&scene);
    assert_eq!(
        from_scene,
        SolverSettings {
            slop: from_scene.slop,
            ..SolverSettings::default()
        }
    );
    assert!(from_scene.slop > 0.0);
}

/// The scene reference's `kind` row lists exactly the registry's friction models.
#[test]
fn the_scene_reference_lists_every_friction_model() {
    let page = read(&root().join("docs/src/scene-reference.md"));
    let row = page
        .lines()
        .find(|l| l.starts_with("| `kind` | string, required | | | `\"coulomb\"`"))
        .expect("the friction model's `kind` row");
    let listed: BTreeSet<&str> = row
        .split('`')
        .filter_map(|s| s.strip_prefix('"')?.strip_suffix('"'))
        .collect();
    let laws: BTreeSet<&str> = bristlecone::model::friction::LAWS
        .iter()
        .map(|l| l.kind())
        .collect();
    assert_eq!(listed, laws);
}
