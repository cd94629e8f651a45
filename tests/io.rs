//! Output module: atomic writes, VTK frames + ParaView index, stats CSV, checkpoints.

use std::fs;
use std::io;
use std::path::Path;

use bristlecone::io::*;
use vtkio::model::{Attribute, DataSet, IOBuffer, Piece, VertexNumbers, Vtk};

fn dir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn entries(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    v.sort();
    v
}

// ---------------------------------------------------------------- atomic

#[test]
fn atomic_write_replaces_file() {
    let d = dir();
    let p = d.path().join("a.txt");
    write_atomic(&p, |w| w.write_all(b"old")).unwrap();
    write_atomic(&p, |w| w.write_all(b"new")).unwrap();
    assert_eq!(fs::read(&p).unwrap(), b"new");
    assert_eq!(entries(d.path()), ["a.txt"]);
}

#[test]
fn failing_writer_leaves_old_file_and_no_temp() {
    let d = dir();
    let p = d.path().join("a.txt");
    write_atomic(&p, |w| w.write_all(b"old")).unwrap();
    let err = write_atomic(&p, |w| {
        w.write_all(b"partial new content")?;
        Err(io::Error::other("boom"))
    })
    .unwrap_err();
    assert_eq!(err.to_string(), "boom");
    assert_eq!(fs::read(&p).unwrap(), b"old");
    assert_eq!(entries(d.path()), ["a.txt"]);

    // Also when there was no file before.
    let q = d.path().join("b.txt");
    assert!(write_atomic(&q, |_| Err(io::Error::other("boom"))).is_err());
    assert_eq!(entries(d.path()), ["a.txt"]);
}

// ---------------------------------------------------------------- vtk

struct Particles {
    pos: Vec<[f32; 3]>,
    rad: Vec<f32>,
    vel: Vec<[f32; 3]>,
    ang: Vec<[f32; 3]>,
    ids: Vec<u32>,
    pressure: Vec<f32>,
    force: Vec<[f32; 3]>,
}

fn particles(n: usize) -> Particles {
    let f = |i: usize, k: f32| [i as f32 * k, -(i as f32) * 0.5, 0.25 + k];
    Particles {
        pos: (0..n).map(|i| f(i, 1.0)).collect(),
        rad: (0..n).map(|i| 0.01 + i as f32 * 1e-3).collect(),
        vel: (0..n).map(|i| f(i, 0.1)).collect(),
        ang: (0..n).map(|i| f(i, -2.0)).collect(),
        ids: (0..n as u32).map(|i| 1000 + i).collect(),
        pressure: (0..n).map(|i| i as f32 * 3.0).collect(),
        force: (0..n).map(|i| f(i, 7.0)).collect(),
    }
}

fn frame(p: &Particles) -> ParticleFrame<'_> {
    ParticleFrame {
        step: 42,
        time: 0.125,
        positions: &p.pos,
        radii: &p.rad,
        velocities: &p.vel,
        angular_velocities: &p.ang,
        ids: &p.ids,
        scalars: vec![("pressure", &p.pressure)],
        vectors: vec![("force", &p.force)],
    }
}

fn poly_piece(vtk: Vtk) -> vtkio::model::PolyDataPiece {
    match vtk.data {
        DataSet::PolyData { mut pieces, .. } => match pieces.remove(0) {
            Piece::Inline(p) => *p,
            other => panic!("unexpected piece {other:?}"),
        },
        other => panic!("not poly data: {other:?}"),
    }
}

fn array(attrs: &[Attribute], name: &str) -> IOBuffer {
    attrs
        .iter()
        .find_map(|a| match a {
            Attribute::DataArray(d) if d.name == name => Some(d.data.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no array {name}"))
}

#[test]
fn particles_read_back_with_vtkio() {
    let d = dir();
    let p = particles(5);
    let path = d.path().join("particles_000042.vtp");
    write_particles(&path, &frame(&p)).unwrap();

    let piece = poly_piece(Vtk::import(&path).unwrap());
    assert_eq!(piece.num_points(), 5);
    assert_eq!(piece.num_verts(), 5);
    let pts: Vec<f32> = piece.points.cast_into().unwrap();
    assert_eq!(&pts[6..9], &p.pos[2]);
    match piece.verts.unwrap() {
        VertexNumbers::XML {
            connectivity,
            offsets,
        } => {
            assert_eq!(connectivity, [0, 1, 2, 3, 4]);
            assert_eq!(offsets, [1, 2, 3, 4, 5]);
        }
        other => panic!("{other:?}"),
    }

    let names: Vec<&str> = piece
        .data
        .point
        .iter()
        .map(|a| match a {
            Attribute::DataArray(d) => d.name.as_str(),
            Attribute::Field { name, .. } => name.as_str(),
        })
        .collect();
    assert_eq!(
        names,
        [
            "radius",
            "velocity",
            "angular_velocity",
            "id",
            "pressure",
            "force"
        ]
    );
    let pt = &piece.data.point;
    assert_eq!(array(pt, "radius").cast_into::<f32>().unwrap(), p.rad);
    let vel: Vec<f32> = array(pt, "velocity").cast_into().unwrap();
    assert_eq!(&vel[12..15], &p.vel[4]);
    assert_eq!(array(pt, "id"), IOBuffer::U32(p.ids.clone()));
    assert_eq!(
        array(pt, "pressure").cast_into::<f32>().unwrap(),
        p.pressure
    );
    let force: Vec<f32> = array(pt, "force").cast_into().unwrap();
    assert_eq!(&force[3..6], &p.force[1]);
}

#[test]
fn vtp_is_byte_identical_for_identical_input() {
    let d = dir();
    let p = particles(100);
    let (a, b) = (d.path().join("a.vtp"), d.path().join("b.vtp"));
    write_particles(&a, &frame(&p)).unwrap();
    write_particles(&b, &frame(&p)).unwrap();
    assert_eq!(fs::read(&a).unwrap(), fs::read(&b).unwrap());

    let mut q = particles(100);
    q.vel[50][1] = f32::from_bits(q.vel[50][1].to_bits() + 1);
    write_particles(&b, &frame(&q)).unwrap();
    assert_ne!(fs::read(&a).unwrap(), fs::read(&b).unwrap());
}

#[test]
fn empty_frame_is_written_and_read() {
    let d = dir();
    let p = particles(0);
    let path = d.path().join("empty.vtp");
    write_particles(&path, &frame(&p)).unwrap();
    let piece = poly_piece(Vtk::import(&path).unwrap());
    assert_eq!(piece.num_points(), 0);
}

#[test]
fn mismatched_lengths_are_rejected_and_nothing_written() {
    let d = dir();
    let path = d.path().join("x.vtp");
    let mut p = particles(4);
    p.rad.pop();
    let err = write_particles(&path, &frame(&p)).unwrap_err();
    assert!(
        matches!(&err, IoError::LengthMismatch { array, expected: 4, actual: 3, .. } if array == "radius"),
        "{err}"
    );
    assert!(err.to_string().contains("x.vtp"), "{err}");

    let mut p = particles(4);
    p.force.push([0.0; 3]);
    let err = write_particles(&path, &frame(&p)).unwrap_err();
    assert!(matches!(&err, IoError::LengthMismatch { array, .. } if array == "force"));
    assert!(entries(d.path()).is_empty());
}

#[test]
fn non_finite_values_are_refused_with_array_and_index() {
    let d = dir();
    let path = d.path().join("x.vtp");
    let mut p = particles(10);
    p.vel[7][2] = f32::NAN;
    p.vel[8][0] = f32::INFINITY;
    let err = write_particles(&path, &frame(&p)).unwrap_err();
    match &err {
        IoError::NonFinite {
            array,
            index,
            component,
            value,
            ..
        } => {
            assert_eq!(
                (array.as_str(), *index, *component),
                ("velocity", 7, Some(2))
            );
            assert!(value.is_nan());
        }
        other => panic!("{other}"),
    }
    let msg = err.to_string();
    assert!(msg.contains("velocity") && msg.contains("index 7"), "{msg}");

    let mut p = particles(10);
    p.pressure[3] = f32::NEG_INFINITY;
    let err = write_particles(&path, &frame(&p)).unwrap_err();
    assert!(
        matches!(&err, IoError::NonFinite { array, index: 3, component: None, .. } if array == "pressure"),
        "{err}"
    );

    let mut p = particles(10);
    p.pos[0][0] = f32::NAN;
    let err = write_particles(&path, &frame(&p)).unwrap_err();
    assert!(matches!(&err, IoError::NonFinite { array, index: 0, .. } if array == "position"));
    assert!(entries(d.path()).is_empty());
}

#[test]
fn bad_extra_array_names_are_rejected() {
    let d = dir();
    let path = d.path().join("x.vtp");
    let p = particles(2);
    for name in ["radius", "", "a<b"] {
        let mut f = frame(&p);
        f.scalars.push((name, &p.pressure));
        assert!(
            matches!(
                write_particles(&path, &f),
                Err(IoError::InvalidInput { .. })
            ),
            "{name:?}"
        );
    }
    let mut f = frame(&p);
    f.vectors.push(("pressure", &p.force));
    assert!(matches!(
        write_particles(&path, &f),
        Err(IoError::InvalidInput { .. })
    ));
}

#[test]
fn contacts_read_back_with_vtkio() {
    let d = dir();
    let points = [[0.0, 0.0, 0.0], [1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
    let normals = [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
    let gaps = [-1e-4, 0.0, 2e-3];
    let forces = [[0.0, 0.0, 3.0], [4.0, 0.0, 0.0], [0.0, 0.0, 0.0]];
    let body_a = [0, 1, 2];
    let body_b = [5, 6, 7];
    let features = [0, 9, 13];
    let mut c = ContactFrame {
        points: &points,
        normals: &normals,
        gaps: &gaps,
        forces: Some(&forces),
        body_a: &body_a,
        body_b: &body_b,
        features: &features,
    };
    let path = d.path().join("contacts.vtp");
    write_contacts(&path, &c).unwrap();
    let piece = poly_piece(Vtk::import(&path).unwrap());
    assert_eq!(piece.num_points(), 3);
    let pt = &piece.data.point;
    assert_eq!(array(pt, "gap").cast_into::<f32>().unwrap(), gaps);
    assert_eq!(array(pt, "body_b"), IOBuffer::U32(body_b.to_vec()));
    assert_eq!(array(pt, "feature"), IOBuffer::U32(features.to_vec()));
    assert_eq!(
        array(pt, "force_magnitude").cast_into::<f32>().unwrap(),
        [3.0, 4.0, 0.0]
    );
    let n: Vec<f32> = array(pt, "normal").cast_into().unwrap();
    assert_eq!(&n[3..6], &normals[1]);

    c.forces = None;
    write_contacts(&path, &c).unwrap();
    let piece = poly_piece(Vtk::import(&path).unwrap());
    assert_eq!(piece.data.point.len(), 5);

    let short = [0u32; 2];
    c.body_a = &short;
    assert!(matches!(
        write_contacts(&path, &c),
        Err(IoError::LengthMismatch { array, .. }) if array == "body_a"
    ));
}

// ---------------------------------------------------------------- pvd

#[test]
fn collection_is_rewritten_after_each_frame_and_reads_back() {
    let d = dir();
    let pvd = d.path().join("particles.pvd");
    let mut c = Collection::new(&pvd);
    c.add(0.0, "particles_000000.vtp").unwrap();
    let first = fs::read_to_string(&pvd).unwrap();
    assert!(first.contains("type=\"Collection\""));
    assert!(first.contains("timestep=\"0\" group=\"\" part=\"0\" file=\"particles_000000.vtp\""));
    c.add(0.1, "particles_000010.vtp").unwrap();
    c.add(0.2, "particles_000020.vtp").unwrap();
    assert_eq!(entries(d.path()), ["particles.pvd"]);

    let mut back = Collection::read(&pvd).unwrap();
    assert_eq!(back.entries(), c.entries());
    back.retain_until(0.1);
    assert_eq!(back.entries().len(), 2);
    back.add(0.15, "particles_000015.vtp").unwrap();
    assert_eq!(Collection::read(&pvd).unwrap().entries()[2].0, 0.15);

    assert!(c.add(f64::NAN, "x.vtp").is_err());
    assert!(c.add(1.0, "a\"b.vtp").is_err());
}

// ---------------------------------------------------------------- stats

fn row(step: u64) -> StatsRow {
    let s = step as f64;
    StatsRow {
        step,
        time: s * 1e-4,
        kinetic_energy: 0.5 * s + 0.1,
        momentum: [s, -s * 1e-20, 1.0 / 3.0],
        angular_momentum: [0.0, -0.0, 12345678.9],
        contacts: step * 7,
        iterations: 50,
        residual: 1e-30 * (s + 1.0),
        max_penetration: 2.5e-6,
        outer_iterations: 2,
        painleve: 1,
        wall_ms: 0.731,
    }
}

#[test]
fn stats_round_trip_exactly() {
    let d = dir();
    let path = d.path().join("stats.csv");
    let mut w = StatsWriter::create(&path).unwrap();
    let rows: Vec<StatsRow> = (0..20).map(row).collect();
    for r in &rows {
        w.append(r).unwrap();
    }
    w.flush().unwrap();
    assert_eq!(read_stats(&path).unwrap(), rows);
    w.finish().unwrap();

    let text = fs::read_to_string(&path).unwrap();
    assert!(text.starts_with(STATS_HEADER));
    assert!(text.ends_with('\n'));
    assert_eq!(text.lines().count(), 21);
    // Second row: shortest round-trip forms, scientific only for tiny/huge values.
    assert_eq!(
        text.lines().nth(2).unwrap(),
        "1,0.0001,0.6,1,-1e-20,0.3333333333333333,0,-0,12345678.9,7,50,2e-30,2.5e-6,2,1,0.731"
    );
}

#[test]
fn stats_rows_reach_file_only_as_whole_lines() {
    let d = dir();
    let path = d.path().join("stats.csv");
    let mut w = StatsWriter::create(&path).unwrap();
    w.append(&row(1)).unwrap();
    // Not flushed yet: the file holds the header only, never a partial row.
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        format!("{STATS_HEADER}\n")
    );
    w.flush().unwrap();
    assert_eq!(read_stats(&path).unwrap(), [row(1)]);
    drop(w); // drop flushes what is pending
}

#[test]
fn stats_resume_truncates_after_step_and_continues() {
    let d = dir();
    let path = d.path().join("stats.csv");
    let mut w = StatsWriter::create(&path).unwrap();
    for s in 0..10 {
        w.append(&row(s)).unwrap();
    }
    w.finish().unwrap();
    // Simulate a crash mid-line.
    let mut text = fs::read_to_string(&path).unwrap();
    text.push_str("10,0.001,5");
    fs::write(&path, &text).unwrap();

    let mut w = StatsWriter::append_to(&path, 5).unwrap();
    for s in 6..8 {
        w.append(&row(s)).unwrap();
    }
    w.finish().unwrap();
    let steps: Vec<u64> = read_stats(&path).unwrap().iter().map(|r| r.step).collect();
    assert_eq!(steps, [0, 1, 2, 3, 4, 5, 6, 7]);
    assert_eq!(entries(d.path()), ["stats.csv"]);
}

#[test]
fn stats_malformed_input_names_file_and_line() {
    let d = dir();
    let path = d.path().join("stats.csv");
    let good = row(3).to_csv_line();
    let bad = good.replacen(",50,", ",fifty,", 1);
    fs::write(&path, format!("{STATS_HEADER}\n{good}{bad}")).unwrap();
    let err = read_stats(&path).unwrap_err();
    assert!(matches!(err, IoError::Parse { line: 3, .. }), "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("stats.csv:3") && msg.contains("iterations"),
        "{msg}"
    );

    fs::write(&path, format!("{STATS_HEADER}\n1,2,3\n")).unwrap();
    let err = read_stats(&path).unwrap_err();
    assert!(err.to_string().contains("stats.csv:2"), "{err}");

    fs::write(&path, "step,time\n").unwrap();
    let err = read_stats(&path).unwrap_err();
    assert!(matches!(err, IoError::Parse { line: 1, .. }), "{err}");
    assert!(StatsWriter::append_to(&path, 0).is_err());
}

// ---------------------------------------------------------------- checkpoint

fn checkpoint() -> Checkpoint {
    Checkpoint {
        step: 123_456,
        time: 12.345_678_9,
        scene_hash: hash_bytes(b"[scene]\ngravity = [0, 0, -9.81]\n"),
        sections: vec![
            (
                "positions".into(),
                (0..=255u8).cycle().take(10_000).collect(),
            ),
            ("empty".into(), Vec::new()),
            ("rng".into(), 0xdead_beef_u64.to_le_bytes().to_vec()),
        ],
    }
}

fn write_raw(d: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let p = d.join(name);
    fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn checkpoint_round_trips_bit_identically() {
    let d = dir();
    let path = d.path().join("ckpt.bin");
    let mut c = checkpoint();
    c.time = f64::from_bits(0x7ff8_0000_0000_1234); // even a NaN payload survives
    write_checkpoint(&path, &c).unwrap();
    let back = read_checkpoint(&path).unwrap();
    assert_eq!(back.time.to_bits(), c.time.to_bits());
    assert_eq!((back.step, back.scene_hash), (c.step, c.scene_hash));
    assert_eq!(back.sections, c.sections);
    assert_eq!(back.section("rng").unwrap(), &c.sections[2].1[..]);
    assert_eq!(back.section("empty").unwrap(), b"");

    let bytes = fs::read(&path).unwrap();
    assert_eq!(&bytes[..8], b"BRCLCHK\0");
    assert_eq!(&bytes[8..12], &1u32.to_le_bytes());
    assert_eq!(&bytes[12..20], &123_456u64.to_le_bytes());
    // Deterministic bytes.
    write_checkpoint(&path, &c).unwrap();
    assert_eq!(fs::read(&path).unwrap(), bytes);
    assert_eq!(entries(d.path()), ["ckpt.bin"]);
}

#[test]
fn checkpoint_missing_section_is_named() {
    let err = checkpoint().section("velocities").unwrap_err();
    let msg = err.to_string();
    assert!(matches!(&err, IoError::MissingSection { name, .. } if name == "velocities"));
    assert!(
        msg.contains("`velocities`") && msg.contains("`positions`"),
        "{msg}"
    );
}

#[test]
fn checkpoint_bad_magic() {
    let d = dir();
    for (name, bytes) in [
        (
            "text.bin",
            &b"[scene]\nthis is a scene file, not a checkpoint\n"[..],
        ),
        ("short.bin", &b"XY"[..]),
        ("empty.bin", &b""[..]),
    ] {
        let p = write_raw(d.path(), name, bytes);
        let err = read_checkpoint(&p).unwrap_err();
        if name == "empty.bin" {
            // An empty file is a prefix of anything: reported as truncated.
            assert!(matches!(err, IoError::Truncated { .. }), "{err}");
        } else {
            assert!(matches!(err, IoError::BadMagic { .. }), "{err}");
            assert!(err.to_string().contains("not a Bristlecone checkpoint"));
            assert!(err.to_string().contains(name));
        }
    }
}

#[test]
fn checkpoint_unsupported_version_lists_supported() {
    let d = dir();
    let path = d.path().join("ckpt.bin");
    write_checkpoint(&path, &checkpoint()).unwrap();
    let mut bytes = fs::read(&path).unwrap();
    bytes[8..12].copy_from_slice(&7u32.to_le_bytes());
    let p = write_raw(d.path(), "v7.bin", &bytes);
    let err = read_checkpoint(&p).unwrap_err();
    assert!(
        matches!(err, IoError::UnsupportedVersion { found: 7, .. }),
        "{err}"
    );
    let msg = err.to_string();
    assert!(msg.contains("version 7") && msg.contains("[1]"), "{msg}");
}

#[test]
fn checkpoint_truncated_at_every_length() {
    let d = dir();
    let path = d.path().join("ckpt.bin");
    let mut c = checkpoint();
    c.sections[0].1.truncate(40); // keep the sweep cheap
    write_checkpoint(&path, &c).unwrap();
    let bytes = fs::read(&path).unwrap();
    for len in 1..bytes.len() {
        let p = write_raw(d.path(), "cut.bin", &bytes[..len]);
        let err = read_checkpoint(&p).unwrap_err();
        assert!(matches!(err, IoError::Truncated { .. }), "len {len}: {err}");
    }
    let p = write_raw(d.path(), "cut.bin", &bytes[..bytes.len() - 30]);
    let msg = read_checkpoint(&p).unwrap_err().to_string();
    assert!(
        msg.contains("truncated") && msg.contains("cut.bin"),
        "{msg}"
    );
}

#[test]
fn checkpoint_corruption_is_detected() {
    let d = dir();
    let path = d.path().join("ckpt.bin");
    write_checkpoint(&path, &checkpoint()).unwrap();
    let bytes = fs::read(&path).unwrap();
    // Flip one bit in section data, in the header, and in the checksum itself.
    for pos in [bytes.len() / 2, 20, bytes.len() - 1] {
        let mut b = bytes.clone();
        b[pos] ^= 0x10;
        let p = write_raw(d.path(), "bad.bin", &b);
        let err = read_checkpoint(&p).unwrap_err();
        assert!(
            matches!(err, IoError::ChecksumMismatch { .. }),
            "pos {pos}: {err}"
        );
        assert!(err.to_string().contains("checksum mismatch"));
    }
    let mut b = bytes.clone();
    b.push(0);
    let p = write_raw(d.path(), "long.bin", &b);
    assert!(matches!(read_checkpoint(&p), Err(IoError::Corrupt { .. })));
}

#[test]
fn checkpoint_rejects_duplicate_sections_and_missing_files() {
    let d = dir();
    let path = d.path().join("ckpt.bin");
    let mut c = checkpoint();
    c.sections.push(("rng".into(), vec![1]));
    assert!(matches!(
        write_checkpoint(&path, &c),
        Err(IoError::InvalidInput { .. })
    ));
    assert!(!path.exists());
    let err = read_checkpoint(&path).unwrap_err();
    assert!(matches!(err, IoError::Os { .. }));
    assert!(err.to_string().contains("ckpt.bin"));
}

#[test]
fn hash_bytes_is_fnv1a_64() {
    assert_eq!(hash_bytes(b""), 0xcbf2_9ce4_8422_2325);
    assert_eq!(hash_bytes(b"a"), 0xaf63_dc4c_8601_ec8c);
    assert_ne!(hash_bytes(b"ab"), hash_bytes(b"ba"));
}

/// A checkpoint path that names a device or a directory is refused before anything is read
/// (`/dev/zero` once grew the process until the allocator aborted), naming the path.
#[test]
fn a_checkpoint_that_is_not_a_regular_file_is_refused_before_reading() {
    let d = dir();
    for path in [Path::new("/dev/zero"), d.path()] {
        let e = read_checkpoint(path).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
        assert!(e.contains(&path.display().to_string()), "{e}");
    }
}

/// A checkpoint larger than the memory the machine has free cannot be restored: it is
/// refused from its size (here a sparse file of 1 TiB, which takes no disk), not read.
#[test]
fn a_checkpoint_larger_than_free_memory_is_refused_from_its_size() {
    let d = dir();
    let path = d.path().join("checkpoint.bin");
    fs::File::create(&path).unwrap().set_len(1 << 40).unwrap();
    let e = read_checkpoint(&path).unwrap_err().to_string();
    assert!(e.contains("1 TiB") && e.contains("may hold at most"), "{e}");
}
