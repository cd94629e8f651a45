//! Byte offsets → line/column, and byte offsets → field paths (via toml's spanned `DeTable`).

use std::ops::Range;
use std::path::Path;

use toml::de::{DeTable, DeValue};

use super::SceneError;

/// The error at `span` of `src` in `file` (line and column when the span is known): what
/// every validator of a TOML input (scenes, patch files) reports.
pub fn error_at(
    file: &Path,
    src: &Source,
    span: Option<Range<usize>>,
    field: impl Into<String>,
    msg: impl Into<String>,
) -> SceneError {
    let (line, column) = match span {
        Some(s) => {
            let (l, c) = src.line_col(s.start);
            (Some(l), Some(c))
        }
        None => (None, None),
    };
    SceneError {
        file: file.to_path_buf(),
        line,
        column,
        field: field.into(),
        message: msg.into(),
    }
}

/// Span, field path and message of a toml error: the path of the node at its span, with the
/// name of a missing field appended.
pub fn toml_error_field(
    e: &toml::de::Error,
    index: Option<&PathIndex>,
) -> (Option<Range<usize>>, String, String) {
    let span = e.span();
    let msg = e.message().trim().to_string();
    let mut field = span
        .as_ref()
        .and_then(|s| index.and_then(|i| i.path_at(s)))
        .unwrap_or("")
        .to_string();
    if let Some(name) = msg
        .strip_prefix("missing field `")
        .and_then(|r| r.split('`').next())
    {
        field = if field.is_empty() {
            name.to_string()
        } else {
            format!("{field}.{name}")
        };
    }
    (span, field, msg)
}

/// Line index of a source text.
pub struct Source<'a> {
    text: &'a str,
    line_starts: Vec<usize>,
}

impl<'a> Source<'a> {
    pub fn new(text: &'a str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Self { text, line_starts }
    }

    /// 1-based (line, column); the column counts characters.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self.line_starts.partition_point(|&s| s <= offset).max(1);
        let start = self.line_starts[line - 1];
        let col = self
            .text
            .get(start..offset)
            .map(|s| s.chars().count())
            .unwrap_or(0)
            + 1;
        (line, col)
    }
}

/// Every spanned node of a parsed document with its field path.
pub struct PathIndex {
    nodes: Vec<(Range<usize>, String)>,
    /// Non-finite float literals (`nan`, `inf`) with their span, path and text.
    pub non_finite: Vec<(Range<usize>, String, String)>,
    /// Finite float literals that the GPU's `f32` cannot hold (overflow or flush to zero).
    pub beyond_f32: Vec<(Range<usize>, String, f64)>,
}

impl PathIndex {
    pub fn new(doc: &DeTable<'_>) -> Self {
        let mut idx = PathIndex {
            nodes: Vec::new(),
            non_finite: Vec::new(),
            beyond_f32: Vec::new(),
        };
        idx.table(doc, "");
        idx.non_finite.sort_by_key(|(s, _, _)| s.start);
        idx.beyond_f32.sort_by_key(|(s, _, _)| s.start);
        idx
    }

    fn table(&mut self, t: &DeTable<'_>, prefix: &str) {
        for (k, v) in t.iter() {
            let path = if prefix.is_empty() {
                k.get_ref().to_string()
            } else {
                format!("{prefix}.{}", k.get_ref())
            };
            self.nodes.push((k.span(), path.clone()));
            self.value(v.get_ref(), v.span(), path);
        }
    }

    fn value(&mut self, v: &DeValue<'_>, span: Range<usize>, path: String) {
        match v {
            DeValue::Table(t) => {
                self.nodes.push((span, path.clone()));
                self.table(t, &path);
            }
            DeValue::Array(a) => {
                self.nodes.push((span, path.clone()));
                for (i, item) in a.iter().enumerate() {
                    self.value(item.get_ref(), item.span(), format!("{path}[{i}]"));
                }
            }
            DeValue::Float(f) => {
                let s = f.as_str().to_ascii_lowercase();
                if s.contains("nan") || s.contains("inf") {
                    self.non_finite
                        .push((span.clone(), path.clone(), f.as_str().to_string()));
                } else if let Ok(x) = s.replace('_', "").parse::<f64>() {
                    if !super::num::fits_f32(x) {
                        self.beyond_f32.push((span.clone(), path.clone(), x));
                    }
                }
                self.nodes.push((span, path));
            }
            _ => self.nodes.push((span, path)),
        }
    }

    /// Path of the smallest node containing `span` (or, failing that, its start).
    pub fn path_at(&self, span: &Range<usize>) -> Option<&str> {
        let contains_all = |r: &Range<usize>| r.start <= span.start && span.end <= r.end;
        let contains_start = |r: &Range<usize>| r.start <= span.start && span.start < r.end;
        let best = |f: &dyn Fn(&Range<usize>) -> bool| {
            // Reversed so that, among equal spans, the deepest node (pushed last) wins.
            self.nodes
                .iter()
                .rev()
                .filter(|(r, _)| f(r))
                .min_by_key(|(r, _)| r.end - r.start)
                .map(|(_, p)| p.as_str())
        };
        best(&contains_all).or_else(|| best(&contains_start))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_characters() {
        let src = Source::new("ab\nµx = 1\n\nz");
        assert_eq!(src.line_col(0), (1, 1));
        assert_eq!(src.line_col(2), (1, 3));
        assert_eq!(src.line_col(3), (2, 1));
        // 'µ' is two bytes: byte 5 is the second character of line 2.
        assert_eq!(src.line_col(5), (2, 2));
        assert_eq!(src.line_col(11), (3, 1));
        assert_eq!(src.line_col(12), (4, 1));
        assert_eq!(src.line_col(1000), (4, 2));
    }

    #[test]
    fn paths_of_spans() {
        let text = "[a]\nx = [1.0, nan]\n[[b]]\ny = 1\n[[b]]\nz = { w = 2 }\n";
        let doc = DeTable::parse(text).unwrap();
        let idx = PathIndex::new(doc.get_ref());
        let at = |needle: &str| {
            let s = text.find(needle).unwrap();
            idx.path_at(&(s..s + needle.len())).map(str::to_string)
        };
        assert_eq!(at("x").as_deref(), Some("a.x"));
        assert_eq!(at("nan").as_deref(), Some("a.x[1]"));
        assert_eq!(at("y").as_deref(), Some("b[0].y"));
        assert_eq!(at("w").as_deref(), Some("b[1].z.w"));
        assert_eq!(idx.non_finite.len(), 1);
        assert_eq!(idx.non_finite[0].1, "a.x[1]");
    }
}
