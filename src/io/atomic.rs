//! Crash-safe file replacement: write a sibling temp file, fsync, rename over the target.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// The temporary sibling used while `path` is being written: `dir/.name.tmp`.
///
/// Same directory so the final `rename` stays on one filesystem and is atomic.
pub fn temp_path(path: &Path) -> io::Result<PathBuf> {
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} has no file name", path.display()),
        )
    })?;
    let mut tmp = std::ffi::OsString::from(".");
    tmp.push(name);
    tmp.push(".tmp");
    Ok(path.with_file_name(tmp))
}

/// Writes `path` atomically: `f` writes into `.name.tmp` next to it, which is flushed,
/// fsynced and renamed over `path`. On any error the temp file is removed and an existing
/// `path` is left untouched. The temp name is fixed, so one writer per path at a time.
pub fn write_atomic(
    path: &Path,
    f: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let tmp = temp_path(path)?;
    let result = write_then_rename(path, &tmp, f);
    if result.is_err() {
        // Best effort: the original error is the one worth reporting.
        let _ = fs::remove_file(&tmp);
    }
    result
}

fn write_then_rename(
    path: &Path,
    tmp: &Path,
    f: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(tmp)?;
    let mut w = BufWriter::new(file);
    f(&mut w)?;
    let file = w.into_inner().map_err(|e| e.into_error())?;
    file.sync_all()?;
    drop(file);
    fs::rename(tmp, path)?;
    sync_parent_dir(path);
    Ok(())
}

/// Makes the rename itself durable. Not possible on every platform (or filesystem), and
/// the data is already safe by then, so failures are ignored.
fn sync_parent_dir(path: &Path) {
    #[cfg(unix)]
    {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
    #[cfg(not(unix))]
    let _ = path;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_path_is_hidden_sibling() {
        let p = temp_path(Path::new("out/frame_0001.vtp")).unwrap();
        assert_eq!(p, Path::new("out/.frame_0001.vtp.tmp"));
        assert!(temp_path(Path::new("/")).is_err());
    }
}
