//! Input files read with a size cap: a scene, patch or mesh path that names a device
//! (`/dev/zero`), a directory or a file far larger than any such input is refused before
//! it is read, instead of growing the process until the allocator aborts.
//!
//! The caps are far above what the engine can simulate: a 64 MiB scene holds about a
//! million explicit `[[body]]` tables (the generators make larger scenes from a few
//! lines), and a 2 GiB binary STL holds 40 million triangles, 50 times more than one
//! storage binding of mesh data holds on a 128 MiB-binding device.

use std::io::{Error, ErrorKind, Read};
use std::path::Path;

/// Largest scene or patch file (TOML), in bytes.
pub const TEXT_CAP: u64 = 64 << 20;
/// Largest mesh file (OBJ or STL), in bytes.
pub const MESH_CAP: u64 = 2 << 30;

/// `n` bytes in the largest binary unit that keeps it readable (`64 MiB`, `1.5 GiB`).
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 || v.fract() == 0.0 {
        format!("{v:.0} {}", UNITS[u])
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// Refuses `path` unless it is a regular file of at most `cap` bytes; `what` names the
/// kind of file in the message ("scene file"). Returns the size.
pub fn check_size(path: &Path, cap: u64, what: &str) -> Result<u64, Error> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "{} is not a regular file (a {what} must be one)",
                path.display()
            ),
        ));
    }
    if meta.len() > cap {
        return Err(too_large(path, meta.len(), cap, what));
    }
    Ok(meta.len())
}

fn too_large(path: &Path, size: u64, cap: u64, what: &str) -> Error {
    Error::new(
        ErrorKind::InvalidInput,
        format!(
            "{} is {} ({size} bytes): a {what} may hold at most {}",
            path.display(),
            human_bytes(size),
            human_bytes(cap)
        ),
    )
}

/// Reads `path` as UTF-8 text after [`check_size`], never more than `cap + 1` bytes (a file
/// that grows while it is read is refused too).
pub fn read_text(path: &Path, cap: u64, what: &str) -> Result<String, Error> {
    let bytes = read_bytes(path, cap, what)?;
    String::from_utf8(bytes).map_err(|e| {
        Error::new(
            ErrorKind::InvalidData,
            format!("{} is not UTF-8 text: {e}", path.display()),
        )
    })
}

/// Reads `path` after [`check_size`], never more than `cap + 1` bytes (a file that grows
/// while it is read is refused too).
pub fn read_bytes(path: &Path, cap: u64, what: &str) -> Result<Vec<u8>, Error> {
    let size = check_size(path, cap, what)?;
    let mut bytes = Vec::with_capacity(size as usize);
    std::fs::File::open(path)?
        .take(cap + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(too_large(path, bytes.len() as u64, cap, what));
    }
    Ok(bytes)
}

/// [`read_text`] with the cap of scene and patch files.
pub fn read_toml(path: &Path, what: &str) -> Result<String, Error> {
    read_text(path, TEXT_CAP, what)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_and_directories_are_refused_before_reading() {
        let e = read_toml(Path::new("/dev/zero"), "scene file").unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let e = read_toml(dir.path(), "scene file").unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
    }

    #[test]
    fn files_over_the_cap_are_refused_with_both_sizes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.toml");
        std::fs::write(&path, vec![b'#'; 5000]).unwrap();
        let e = read_text(&path, 4096, "scene file")
            .unwrap_err()
            .to_string();
        assert!(e.contains("4.9 KiB") && e.contains("at most 4 KiB"), "{e}");
        assert_eq!(read_text(&path, 5000, "scene file").unwrap().len(), 5000);
    }

    #[test]
    fn sizes_read_in_binary_units() {
        assert_eq!(human_bytes(64 << 20), "64 MiB");
        assert_eq!(human_bytes(3 << 29), "1.5 GiB");
        assert_eq!(human_bytes(100), "100 B");
    }
}
