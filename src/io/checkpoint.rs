//! Binary, versioned checkpoints.
//!
//! Layout (all integers little-endian):
//! ```text
//! magic        8 bytes  b"BRCLCHK\0"
//! version      u32      = 1
//! step         u64
//! time         u64      f64 bit pattern (exact, NaN payloads included)
//! scene_hash   u64
//! n_sections   u32
//! n_sections × { name_len u32, name (UTF-8), byte_len u64, bytes }
//! checksum     u32      CRC-32 (IEEE) of every byte before it
//! ```
//! Sections hold raw bytes (GPU buffer contents etc.), so restoring them restores the
//! engine state bit for bit.

use std::io::{self, Write};
use std::path::Path;

use super::{write_atomic, IoError};

pub const CHECKPOINT_MAGIC: [u8; 8] = *b"BRCLCHK\0";
pub const CHECKPOINT_VERSION: u32 = 1;
pub const SUPPORTED_CHECKPOINT_VERSIONS: &[u32] = &[1];

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Checkpoint {
    pub step: u64,
    pub time: f64,
    /// Fingerprint of the scene the run was started from (see [`hash_bytes`]), so a
    /// restart against a different scene can be refused.
    pub scene_hash: u64,
    /// Named raw byte sections, in write order.
    pub sections: Vec<(String, Vec<u8>)>,
}

impl Checkpoint {
    /// The bytes of section `name`; the error lists the sections that are present.
    pub fn section(&self, name: &str) -> Result<&[u8], IoError> {
        self.sections
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, b)| b.as_slice())
            .ok_or_else(|| IoError::MissingSection {
                name: name.to_string(),
                present: self.sections.iter().map(|(n, _)| n.clone()).collect(),
            })
    }
}

impl bristlecone_engine::step::CheckpointSections for Checkpoint {
    fn section_bytes(&self, name: &str) -> Result<&[u8], String> {
        self.section(name).map_err(|e| e.to_string())
    }

    fn has_section(&self, name: &str) -> bool {
        self.sections.iter().any(|(n, _)| n == name)
    }
}

/// FNV-1a 64-bit: a stable fingerprint of the scene text (not a checksum for corruption).
pub fn hash_bytes(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Writes the checkpoint atomically: a crash mid-write keeps the previous checkpoint.
pub fn write_checkpoint(path: &Path, c: &Checkpoint) -> Result<(), IoError> {
    for (i, (name, _)) in c.sections.iter().enumerate() {
        if c.sections[..i].iter().any(|(n, _)| n == name) {
            return Err(IoError::InvalidInput {
                path: path.to_path_buf(),
                message: format!("checkpoint section `{name}` appears twice"),
            });
        }
        if u32::try_from(name.len()).is_err() {
            return Err(IoError::InvalidInput {
                path: path.to_path_buf(),
                message: "checkpoint section name longer than 4 GiB".into(),
            });
        }
    }
    let n_sections = u32::try_from(c.sections.len()).map_err(|_| IoError::InvalidInput {
        path: path.to_path_buf(),
        message: format!("{} checkpoint sections (at most 2^32-1)", c.sections.len()),
    })?;

    write_atomic(path, |w| {
        let mut w = CrcWriter {
            inner: w,
            crc: CRC_INIT,
        };
        w.write_all(&CHECKPOINT_MAGIC)?;
        w.write_all(&CHECKPOINT_VERSION.to_le_bytes())?;
        w.write_all(&c.step.to_le_bytes())?;
        w.write_all(&c.time.to_bits().to_le_bytes())?;
        w.write_all(&c.scene_hash.to_le_bytes())?;
        w.write_all(&n_sections.to_le_bytes())?;
        for (name, bytes) in &c.sections {
            w.write_all(&(name.len() as u32).to_le_bytes())?;
            w.write_all(name.as_bytes())?;
            w.write_all(&(bytes.len() as u64).to_le_bytes())?;
            w.write_all(bytes)?;
        }
        let crc = !w.crc;
        w.inner.write_all(&crc.to_le_bytes())
    })
    .map_err(|e| IoError::os(path, e))
}

/// Reads and fully validates a checkpoint: magic, version, structure, checksum.
pub fn read_checkpoint(path: &Path) -> Result<Checkpoint, IoError> {
    let data = std::fs::read(path).map_err(|e| IoError::os(path, e))?;
    let mut r = Reader {
        path,
        data: &data,
        pos: 0,
    };

    // Magic first, judged on whatever prefix exists, so a short unrelated file is
    // reported as "not a checkpoint" rather than "truncated".
    let prefix = &data[..data.len().min(CHECKPOINT_MAGIC.len())];
    if prefix != &CHECKPOINT_MAGIC[..prefix.len()] {
        return Err(IoError::BadMagic {
            path: path.to_path_buf(),
        });
    }
    r.take(CHECKPOINT_MAGIC.len(), "magic")?;
    let version = r.u32("format version")?;
    if !SUPPORTED_CHECKPOINT_VERSIONS.contains(&version) {
        return Err(IoError::UnsupportedVersion {
            path: path.to_path_buf(),
            found: version,
            supported: SUPPORTED_CHECKPOINT_VERSIONS,
        });
    }
    let step = r.u64("header (step)")?;
    let time = f64::from_bits(r.u64("header (time)")?);
    let scene_hash = r.u64("header (scene hash)")?;
    let n_sections = r.u32("header (section count)")?;

    let mut sections = Vec::new();
    for i in 0..n_sections {
        let name_len = r.u32(&format!("section {i} name length"))? as usize;
        let name = r.take(name_len, &format!("section {i} name"))?;
        let name = String::from_utf8(name.to_vec()).map_err(|_| IoError::Corrupt {
            path: path.to_path_buf(),
            message: format!("section {i} name is not UTF-8"),
        })?;
        let len = r.u64(&format!("section `{name}` length"))?;
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        let bytes = r.take(len, &format!("section `{name}` data"))?.to_vec();
        sections.push((name, bytes));
    }

    let body_end = r.pos;
    let stored = r.u32("checksum")?;
    if r.pos != data.len() {
        return Err(IoError::Corrupt {
            path: path.to_path_buf(),
            message: format!(
                "{} unexpected byte(s) after the checksum",
                data.len() - r.pos
            ),
        });
    }
    let computed = crc32(&data[..body_end]);
    if stored != computed {
        return Err(IoError::ChecksumMismatch {
            path: path.to_path_buf(),
            stored,
            computed,
        });
    }
    Ok(Checkpoint {
        step,
        time,
        scene_hash,
        sections,
    })
}

/// Bounds-checked little-endian cursor; running past the end is a `Truncated` error.
struct Reader<'a> {
    path: &'a Path,
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], IoError> {
        match self.pos.checked_add(n) {
            Some(end) if end <= self.data.len() => {
                let s = &self.data[self.pos..end];
                self.pos = end;
                Ok(s)
            }
            _ => Err(IoError::Truncated {
                path: self.path.to_path_buf(),
                what: what.to_string(),
                offset: self.pos as u64,
                needed: n as u64,
                file_len: self.data.len() as u64,
            }),
        }
    }

    fn u32(&mut self, what: &str) -> Result<u32, IoError> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes(b.try_into().unwrap()))
    }

    fn u64(&mut self, what: &str) -> Result<u64, IoError> {
        let b = self.take(8, what)?;
        Ok(u64::from_le_bytes(b.try_into().unwrap()))
    }
}

// CRC-32/ISO-HDLC (the zlib/PNG CRC), table-driven. Hand-written to avoid a dependency;
// `crc32fast` computes the same value faster and could replace it without a format change.
const CRC_INIT: u32 = 0xffff_ffff;

const CRC_TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                0xedb8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        table[i] = c;
        i += 1;
    }
    table
};

fn crc32_update(mut crc: u32, bytes: &[u8]) -> u32 {
    for &b in bytes {
        crc = CRC_TABLE[((crc ^ b as u32) & 0xff) as usize] ^ (crc >> 8);
    }
    crc
}

fn crc32(bytes: &[u8]) -> u32 {
    !crc32_update(CRC_INIT, bytes)
}

/// Checksums everything written through it.
struct CrcWriter<'w> {
    inner: &'w mut dyn Write,
    crc: u32,
}

impl Write for CrcWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.crc = crc32_update(self.crc, &buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_check_value() {
        // The standard check value of CRC-32/ISO-HDLC.
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
    }

    #[test]
    fn fnv1a_reference_values() {
        assert_eq!(hash_bytes(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(hash_bytes(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(hash_bytes(b"foobar"), 0x8594_4171_f739_67e8);
    }
}
