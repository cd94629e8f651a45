//! Rust ↔ WGSL agreement, checked with naga's reading of the shaders: every record and
//! uniform the CPU writes or reads has one byte layout on both sides (word by word: `f32`,
//! `u32`, `i32` or padding), and every id both sides name (shapes, motions, joint bits, patch
//! features, workgroup and colour counts) has one value. A lane written as `f32` on one side
//! and read as `u32` on the other, a field added to one side only, or an id renumbered in one
//! place fails here instead of corrupting a step. The ids are compared in
//! `crate::step::shared_ids`, above the stages that declare them; this file reads them.

use super::kernel::ShaderSource;
use naga::{Module, Scalar, ScalarKind, TypeInner};

/// What one 4-byte word of a record holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Word {
    F32,
    U32,
    I32,
    Pad,
}

/// The words of a Rust field type, in memory order.
pub(crate) trait Words {
    fn words(out: &mut Vec<Word>);
}

impl Words for f32 {
    fn words(out: &mut Vec<Word>) {
        out.push(Word::F32);
    }
}

impl Words for u32 {
    fn words(out: &mut Vec<Word>) {
        out.push(Word::U32);
    }
}

impl Words for i32 {
    fn words(out: &mut Vec<Word>) {
        out.push(Word::I32);
    }
}

impl<T: Words, const N: usize> Words for [T; N] {
    fn words(out: &mut Vec<Word>) {
        for _ in 0..N {
            T::words(out);
        }
    }
}

pub(crate) fn words_of<T: Words>(_: &T) -> Vec<Word> {
    let mut out = Vec::new();
    T::words(&mut out);
    out
}

/// A `#[repr(C)]` struct's size and words, for [`check`]. Every field must be named: the
/// destructuring pattern stops the build when a field is added to the struct and not here.
/// Fields whose name starts with `_pad` are padding.
macro_rules! rust_words {
    ($ty:ident { $($field:ident),+ $(,)? }) => {{
        use $crate::gpu::layout::{words_of, Word};
        let value: $ty = bytemuck::Zeroable::zeroed();
        let size = std::mem::size_of::<$ty>();
        let mut words = vec![None; size / 4];
        $(
            let at = std::mem::offset_of!($ty, $field) / 4;
            let pad = stringify!($field).starts_with("_pad");
            for (k, w) in words_of(&value.$field).into_iter().enumerate() {
                assert!(words[at + k].is_none(), "{} overlaps", stringify!($field));
                words[at + k] = Some(if pad { Word::Pad } else { w });
            }
        )+
        let $ty { $($field: _),+ } = value;
        (size, words.into_iter().map(|w| w.unwrap_or(Word::Pad)).collect::<Vec<Word>>())
    }};
}
pub(crate) use rust_words;

fn scalar_word(s: Scalar) -> Word {
    assert_eq!(s.width, 4, "only 4-byte scalars are shared");
    match s.kind {
        ScalarKind::Float => Word::F32,
        ScalarKind::Uint => Word::U32,
        ScalarKind::Sint => Word::I32,
        other => panic!("{other:?} is not a shared scalar"),
    }
}

/// Writes the words of type `ty` at byte `at` of `out` (members named `_pad…` as padding).
fn wgsl_words(module: &Module, ty: naga::Handle<naga::Type>, at: u32, out: &mut [Word]) {
    let mut put = |k: u32, w: Word| out[(at / 4 + k) as usize] = w;
    match module.types[ty].inner {
        TypeInner::Scalar(s) | TypeInner::Atomic(s) => put(0, scalar_word(s)),
        TypeInner::Vector { size, scalar } => {
            for k in 0..size as u32 {
                put(k, scalar_word(scalar));
            }
        }
        TypeInner::Array {
            base,
            size: naga::ArraySize::Constant(n),
            stride,
        } => {
            for k in 0..n.get() {
                wgsl_words(module, base, at + k * stride, out);
            }
        }
        TypeInner::Struct { ref members, .. } => {
            for m in members {
                wgsl_words(module, m.ty, at + m.offset, out);
                if m.name.as_deref().is_some_and(|n| n.starts_with("_pad")) {
                    let end = at + m.offset + module.types[m.ty].inner.size(module.to_ctx());
                    out[((at + m.offset) / 4) as usize..(end / 4) as usize].fill(Word::Pad);
                }
            }
        }
        ref other => panic!("{other:?} is not a shared type"),
    }
}

/// The struct `name` of stage `stage` as naga lays it out: its span and words.
fn wgsl_struct(stage: &str, name: &str) -> (usize, Vec<Word>) {
    let source = ShaderSource::by_name(stage).unwrap_or_else(|| panic!("no stage {stage}"));
    let module = source.validate().unwrap();
    let (ty, span) = module
        .types
        .iter()
        .find_map(|(h, t)| match t.inner {
            TypeInner::Struct { span, .. } if t.name.as_deref() == Some(name) => Some((h, span)),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{stage}.wgsl has no struct {name}"));
    let mut words = vec![Word::Pad; span as usize / 4];
    wgsl_words(&module, ty, 0, &mut words);
    (span as usize, words)
}

/// Fails unless the struct `wgsl` of stage `stage` has the Rust struct's size and words.
pub(crate) fn check(stage: &str, wgsl: &str, rust: (usize, Vec<Word>)) {
    let (span, words) = wgsl_struct(stage, wgsl);
    assert_eq!(
        span, rust.0,
        "{wgsl} in {stage}.wgsl: {span} bytes, Rust {}",
        rust.0
    );
    for (k, (w, r)) in words.iter().zip(&rust.1).enumerate() {
        assert_eq!(
            w,
            r,
            "{wgsl} in {stage}.wgsl: word {k} (byte {}) is {w:?}, Rust {r:?}",
            4 * k
        );
    }
}

/// The `u32` constants stage `stage` declares, by name.
pub(crate) fn wgsl_constants(source: &ShaderSource) -> Vec<(String, u32)> {
    let module = source.validate().unwrap();
    module
        .constants
        .iter()
        .filter_map(|(_, c)| {
            let value = match module.global_expressions[c.init] {
                naga::Expression::Literal(naga::Literal::U32(v)) => v,
                naga::Expression::Literal(naga::Literal::I32(v)) => v as u32,
                _ => return None,
            };
            Some((c.name.clone()?, value))
        })
        .collect()
}
