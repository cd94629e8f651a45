//! The last `keep` checkpoints of a run (`[output] keep`): the newest is always
//! `checkpoint.bin`; before a newer one replaces it, it is kept as `checkpoint_STEP.bin` (a hard
//! link, so no bytes are copied), and once the newer one is written (atomically) the kept ones
//! beyond `keep - 1` are deleted, oldest first. Kept ones from the step of the new checkpoint
//! on belong to a history a resume cut back, and go too.

use std::path::{Path, PathBuf};

use crate::io::{IoError, CHECKPOINT_MAGIC};

/// `checkpoint_STEP.bin` next to `newest`.
fn kept_path(newest: &Path, step: u64) -> PathBuf {
    newest.with_file_name(format!("checkpoint_{step:08}.bin"))
}

/// The step of a kept checkpoint's file name, `checkpoint_STEP.bin`.
pub fn kept_step(name: &str) -> Option<u64> {
    let digits = name.strip_prefix("checkpoint_")?.strip_suffix(".bin")?;
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

/// The step in the header of the checkpoint at `path`, if it is one.
fn header_step(path: &Path) -> Option<u64> {
    use std::io::Read;
    let mut head = [0u8; 20];
    std::fs::File::open(path).ok()?.read_exact(&mut head).ok()?;
    (head[..8] == CHECKPOINT_MAGIC).then(|| u64::from_le_bytes(head[12..20].try_into().unwrap()))
}

/// Before a checkpoint of `step` replaces `newest`: keeps the current one (of another step)
/// under its step's name when more than one is kept.
pub fn set_aside(newest: &Path, keep: u64, step: u64) -> Result<(), IoError> {
    let Some(previous) = header_step(newest).filter(|&p| keep > 1 && p != step) else {
        return Ok(());
    };
    let kept = kept_path(newest, previous);
    match std::fs::remove_file(&kept) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(IoError::os(&kept, e)),
        _ => {}
    }
    if std::fs::hard_link(newest, &kept).is_err() {
        // A file system without hard links: a copy keeps it as well.
        std::fs::copy(newest, &kept).map_err(|e| IoError::os(&kept, e))?;
    }
    Ok(())
}

/// After a checkpoint of `step` was written to `newest`: deletes the kept ones beyond the
/// `keep - 1` newest before it.
pub fn prune(newest: &Path, keep: u64, step: u64) -> Result<(), IoError> {
    let dir = match newest.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let entries = std::fs::read_dir(dir).map_err(|e| IoError::os(dir, e))?;
    let mut kept: Vec<(u64, PathBuf)> = entries
        .flatten()
        .filter_map(|e| Some((kept_step(&e.file_name().to_string_lossy())?, e.path())))
        .collect();
    kept.sort_unstable_by_key(|k| std::cmp::Reverse(k.0));
    let mut left = keep.saturating_sub(1);
    for (s, path) in kept {
        if s < step && left > 0 {
            left -= 1;
            continue;
        }
        std::fs::remove_file(&path).map_err(|e| IoError::os(&path, e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::kept_step;

    #[test]
    fn kept_names_parse_only_steps() {
        assert_eq!(kept_step("checkpoint_00000150.bin"), Some(150));
        assert_eq!(kept_step("checkpoint.bin"), None);
        assert_eq!(kept_step("checkpoint_.bin"), None);
        assert_eq!(kept_step("checkpoint_12a.bin"), None);
        assert_eq!(kept_step(".checkpoint_00000150.bin.tmp"), None);
    }
}
