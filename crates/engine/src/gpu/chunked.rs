//! Chunked storage arrays: one buffer bound as several storage bindings, so that a
//! per-contact array is limited by device memory and not by the largest single storage
//! binding (128 MiB on lavapipe: 2·10⁶ contact records).
//!
//! A stage marks a declaration with a trailing `// chunked(K)`:
//!
//! ```wgsl
//! @group(0) @binding(3) var<storage, read_write> gam: array<vec4<f32>>; // chunked(8)
//! ```
//!
//! and reads and writes it only through the generated `gam_at(i)` and `gam_put(i, v)`.
//! [`expand`] (run on every stage text before compiling and validating) replaces the line
//! with K bindings `gam_c0 … gam_c{K−1}` (the declared binding, then
//! `CHUNK_BINDING_BASE + 8 × binding + k`) and the two accessors, which pick chunk
//! `i >> shift` with `shift = CHUNK_LOG2 − log2(element size)`. `CHUNK_LOG2` is a pipeline
//! constant, the log2 of the chunk size in bytes: the largest power of two the adapter
//! allows per binding, or a small value a test sets to make a small scene span every chunk.
//! [`crate::gpu::kernel::CompiledKernel::bind`] binds one buffer to the K slots as consecutive
//! `2^CHUNK_LOG2`-byte ranges (slots past the buffer's end get a small placeholder the
//! shader never indexes). The pipeline constant `NAME_LIVE` is the number of chunks in use
//! (1 until a kernel binds the array past its first chunk): the accessors compile to one
//! plain index, or to L arms (lavapipe executes every arm of a branch on a varying value, so
//! a K-way selection would cost K loads per access).

/// Binding number of chunk k ≥ 1 of the array declared at binding b: base + 8 b + k.
pub const CHUNK_BINDING_BASE: u32 = 100;
/// Most chunks one array may have (binding numbers leave room for 8 per declared binding).
pub const MAX_CHUNKS: u32 = 8;

/// One chunked declaration of a stage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunked {
    pub binding: u32,
    pub name: String,
    pub chunks: u32,
    pub elem_bytes: u32,
}

impl Chunked {
    /// Binding number of chunk `k` (k = 0 keeps the declared number).
    pub fn slot(&self, k: u32) -> u32 {
        if k == 0 {
            self.binding
        } else {
            CHUNK_BINDING_BASE + 8 * self.binding + k
        }
    }
}

/// Size in bytes of the element types chunked arrays use (all powers of two).
fn elem_bytes(ty: &str) -> Option<u32> {
    match ty {
        "u32" | "f32" | "i32" => Some(4),
        "vec2<u32>" | "vec2<f32>" => Some(8),
        "vec4<f32>" | "vec4<u32>" | "vec4<i32>" => Some(16),
        "Contact" => Some(64),
        _ => None,
    }
}

/// Parses `@group(0) @binding(B) var<storage, ACCESS> NAME: array<T>; // chunked(K)`.
fn parse(line: &str) -> Result<Option<(Chunked, String, String)>, String> {
    let Some((decl, tail)) = line.split_once("// chunked(") else {
        return Ok(None);
    };
    let bad = |what: &str| format!("chunked declaration `{}`: {what}", line.trim());
    let chunks: u32 = tail
        .split(')')
        .next()
        .and_then(|k| k.trim().parse().ok())
        .ok_or_else(|| bad("K in `// chunked(K)` is not a number"))?;
    if !(1..=MAX_CHUNKS).contains(&chunks) {
        return Err(bad(&format!("K must be 1 to {MAX_CHUNKS}")));
    }
    let binding: u32 = decl
        .split_once("@binding(")
        .and_then(|(_, r)| r.split(')').next())
        .and_then(|b| b.trim().parse().ok())
        .ok_or_else(|| bad("no @binding(N)"))?;
    let space = decl
        .split_once("var<")
        .and_then(|(_, r)| r.split_once('>'))
        .map(|(s, _)| s.trim().to_string())
        .ok_or_else(|| bad("no var<storage, …>"))?;
    let (name, ty) = decl
        .split_once('>')
        .and_then(|(_, r)| r.split_once(':'))
        .ok_or_else(|| bad("no `name: array<T>`"))?;
    let name = name.trim().to_string();
    let ty = ty
        .trim()
        .trim_end_matches(';')
        .trim()
        .strip_prefix("array<")
        .and_then(|t| t.strip_suffix('>'))
        .ok_or_else(|| bad("the type must be array<T>"))?
        .trim()
        .to_string();
    let elem_bytes = elem_bytes(&ty).ok_or_else(|| bad(&format!("element type {ty}")))?;
    let c = Chunked {
        binding,
        name,
        chunks,
        elem_bytes,
    };
    Ok(Some((c, space, ty)))
}

/// The chunked declarations of a stage text.
pub fn declarations(text: &str) -> Result<Vec<Chunked>, String> {
    let mut out = Vec::new();
    for line in text.lines() {
        if let Some((c, _, _)) = parse(line)? {
            out.push(c);
        }
    }
    Ok(out)
}

/// Replaces every chunked declaration of `text` by its bindings and accessors (see the
/// module documentation); text without one is returned unchanged.
pub fn expand(text: &str) -> Result<String, String> {
    let mut out = String::with_capacity(text.len() + 4096);
    let mut any = false;
    for line in text.lines() {
        match parse(line)? {
            None => {
                out.push_str(line);
                out.push('\n');
            }
            Some((c, space, ty)) => {
                any = true;
                generate(&mut out, &c, &space, &ty);
            }
        }
    }
    if any {
        out.push_str("override CHUNK_LOG2: u32 = 27u;\n");
    }
    Ok(out)
}

fn generate(out: &mut String, c: &Chunked, space: &str, ty: &str) {
    use std::fmt::Write;
    let n = &c.name;
    for k in 0..c.chunks {
        let _ = writeln!(
            out,
            "@group(0) @binding({}) var<{space}> {n}_c{k}: array<{ty}>;",
            c.slot(k)
        );
    }
    // `{n}_LIVE` (a pipeline constant: the chunks in use) selects at compile time: 1 is one
    // plain index; L > 1 keeps the arms 0 .. L − 1 (arm L − 1 is the last `else`).
    let _ = writeln!(out, "override {n}_LIVE: u32 = {}u;", c.chunks);
    let log2 = c.elem_bytes.trailing_zeros();
    let arms = |body: &dyn Fn(String) -> String| {
        let mut a = format!(
            "    if {n}_LIVE == 1u {{\n        {}\n        return{};\n    }}\n",
            body("0".into()).replace("[j]", "[i]"),
            if body("0".into()).starts_with("r =") {
                " r"
            } else {
                ""
            }
        );
        let _ = write!(
            a,
            "    let s = CHUNK_LOG2 - {log2}u;\n    let j = i & ((1u << s) - 1u);\n    let c = i >> s;\n    if c == 0u {{\n        {}\n    }}",
            body("0".into())
        );
        for k in 1..c.chunks {
            let _ = write!(
                a,
                " else if {n}_LIVE == {}u || c == {k}u {{\n        {}\n    }}",
                k + 1,
                body(k.to_string())
            );
        }
        a.push('\n');
        a
    };
    let _ = write!(
        out,
        "fn {n}_at(i: u32) -> {ty} {{\n    var r: {ty};\n{}    return r;\n}}\n",
        arms(&|k| format!("r = {n}_c{k}[j];"))
    );
    if space.contains("read_write") {
        let _ = write!(
            out,
            "fn {n}_put(i: u32, v: {ty}) {{\n{}}}\n",
            arms(&|k| format!("{n}_c{k}[j] = v;"))
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_a_declaration_into_bindings_and_accessors() {
        let text = "@group(0) @binding(3) var<storage, read_write> gam: array<vec4<f32>>; // chunked(2)\nfn f() {}\n";
        let e = expand(text).unwrap();
        assert!(e.contains("@group(0) @binding(3) var<storage, read_write> gam_c0"));
        assert!(e.contains("@group(0) @binding(125) var<storage, read_write> gam_c1"));
        assert!(e.contains("fn gam_at(i: u32) -> vec4<f32>"));
        assert!(e.contains("fn gam_put(i: u32, v: vec4<f32>)"));
        assert!(e.contains("CHUNK_LOG2 - 4u"));
        assert_eq!(
            declarations(text).unwrap(),
            vec![Chunked {
                binding: 3,
                name: "gam".into(),
                chunks: 2,
                elem_bytes: 16
            }]
        );
    }

    #[test]
    fn expanded_text_validates_with_naga() {
        let text =
            "@group(0) @binding(0) var<storage, read_write> a: array<vec4<f32>>; // chunked(3)\n\
            @group(0) @binding(1) var<storage, read> b: array<u32>; // chunked(2)\n\
            @compute @workgroup_size(64)\n\
            fn main(@builtin(global_invocation_id) g: vec3<u32>) {\n\
                a_put(g.x, a_at(g.x + 1u) + vec4<f32>(f32(b_at(g.x))));\n\
            }\n";
        let e = expand(text).unwrap();
        let module = naga::front::wgsl::parse_str(&e).unwrap_or_else(|err| panic!("{err}\n{e}"));
        naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::empty(),
        )
        .validate(&module)
        .unwrap_or_else(|err| panic!("{err:?}\n{e}"));
        // Arm 2 is the last `else` when 3 chunks are live; chunk 0 alone is one plain index.
        assert!(e.contains("else if a_LIVE == 3u || c == 2u"), "{e}");
        assert!(
            e.contains("if a_LIVE == 1u {\n        r = a_c0[i];\n        return r;"),
            "{e}"
        );
    }

    #[test]
    fn read_only_arrays_get_no_writer_and_bad_lines_are_named() {
        let e = expand(
            "@group(0) @binding(1) var<storage, read> contacts: array<Contact>; // chunked(4)\n",
        )
        .unwrap();
        assert!(e.contains("fn contacts_at(i: u32) -> Contact"));
        assert!(!e.contains("contacts_put"));
        assert!(e.contains("CHUNK_LOG2 - 6u"));
        let err = expand(
            "@group(0) @binding(1) var<storage, read> x: array<mat4x4<f32>>; // chunked(4)\n",
        )
        .unwrap_err();
        assert!(err.contains("element type mat4x4<f32>"), "{err}");
        let err = expand("@group(0) @binding(1) var<storage, read> x: array<u32>; // chunked(9)\n")
            .unwrap_err();
        assert!(err.contains("K must be 1 to 8"), "{err}");
    }
}
