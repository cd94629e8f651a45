//! The one error type of the output module. Every variant names the file involved, so a
//! message read in a log says which output went wrong and why.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum IoError {
    /// The operating system refused a read or write.
    #[error("{}: {source}", path.display())]
    Os {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// Arrays that must describe the same items have different lengths.
    #[error("{}: array `{array}` has {actual} entries, expected {expected}", path.display())]
    LengthMismatch {
        path: PathBuf,
        array: String,
        expected: usize,
        actual: usize,
    },

    /// A NaN or infinity about to be written. Refused so that a diverged run fails loudly
    /// instead of producing plausible-looking files.
    #[error(
        "{}: array `{array}` has non-finite value {value} at index {index}{}",
        path.display(),
        component.map(|c| format!(" (component {c})")).unwrap_or_default()
    )]
    NonFinite {
        path: PathBuf,
        array: String,
        index: usize,
        component: Option<usize>,
        value: f64,
    },

    /// The caller asked for something this writer cannot represent (bad or duplicate name,
    /// oversized field, ...).
    #[error("{}: {message}", path.display())]
    InvalidInput { path: PathBuf, message: String },

    /// vtkio failed to encode the data set.
    #[error("{}: VTK encoding failed: {message}", path.display())]
    Vtk { path: PathBuf, message: String },

    /// A text file (statistics CSV, ...) is malformed at a given 1-based line.
    #[error("{}:{line}: {message}", path.display())]
    Parse {
        path: PathBuf,
        line: usize,
        message: String,
    },

    #[error("{}: not a Bristlecone checkpoint (file does not start with the magic bytes `BRCLCHK\\0`)", path.display())]
    BadMagic { path: PathBuf },

    #[error("{}: checkpoint format version {found} is not supported; this build reads version(s) {supported:?}", path.display())]
    UnsupportedVersion {
        path: PathBuf,
        found: u32,
        supported: &'static [u32],
    },

    #[error("{}: checkpoint is truncated: {what} needs {needed} byte(s) at offset {offset} but the file has {file_len} byte(s)", path.display())]
    Truncated {
        path: PathBuf,
        what: String,
        offset: u64,
        needed: u64,
        file_len: u64,
    },

    #[error("{}: checkpoint checksum mismatch (stored {stored:#010x}, computed {computed:#010x}); the file is corrupt", path.display())]
    ChecksumMismatch {
        path: PathBuf,
        stored: u32,
        computed: u32,
    },

    /// Structurally invalid checkpoint content that is not plain truncation.
    #[error("{}: malformed checkpoint: {message}", path.display())]
    Corrupt { path: PathBuf, message: String },

    /// A checkpoint lacks a section the engine needs. A [`crate::io::Checkpoint`] does not
    /// remember which file it came from, so this variant carries no path; callers that
    /// know it can add context.
    #[error(
        "checkpoint has no section `{name}` (sections present: {})",
        fmt_names(present)
    )]
    MissingSection { name: String, present: Vec<String> },
}

fn fmt_names(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_string()
    } else {
        names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl IoError {
    pub(crate) fn os(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        IoError::Os {
            path: path.into(),
            source,
        }
    }
}
