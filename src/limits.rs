//! Whether a scene fits the device and the machine, decided before anything is allocated:
//! `validate` prints the estimate, `run` refuses a scene that cannot fit, with the numbers.
//!
//! The contact arrays grow with the contacts and are chunked (`gpu::chunked`): one buffer
//! bound as several storage bindings, so they are limited by device memory. The arrays
//! estimated here are bound whole, as one storage binding each, and are refused past it
//! rather than chunked: the per-body arrays, the collision grid's row offsets (boundaries ×
//! grains), and the per-shape arrays the narrow phases read — shape records with clump
//! members and hull vertices, planes and edges (`collide_pairs`), mesh vertices, normals,
//! topology and bins (`collide_walls`). Those are read in the innermost loops of the
//! narrow phases, for every vertex of a hull or triangle of a mesh bin; a chunked accessor
//! there is a branch per chunk in use on every read, and lavapipe executes every arm of a
//! branch on a varying index, so a scene past one chunk would pay for all of them on every
//! pair. The limits this leaves at 128 MiB per binding are far above what such a device
//! simulates in useful time: about 800 000 mesh triangles, 30 000 random hull grains,
//! 130 000 clumps of 64 spheres, 4 million bodies.

use crate::collide::{self, Collide};
use crate::gpu::GpuContext;
use crate::input::human_bytes;
use crate::scene::{BodyShape, BoundaryShape, Scene};
use crate::setup;

/// The device limits a scene is checked against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceLimits {
    /// Largest storage binding, bytes.
    pub max_binding: u64,
    /// Largest buffer, bytes.
    pub max_buffer: u64,
    /// The device's memory is the machine's (a CPU adapter such as lavapipe): its buffers
    /// count against the host's available memory.
    pub host_memory: bool,
}

impl DeviceLimits {
    /// What lavapipe (and many GPUs: WebGPU's default binding size) allows: `validate`,
    /// which opens no device, checks against these.
    pub const COMMON: DeviceLimits = DeviceLimits {
        max_binding: 128 << 20,
        max_buffer: 2047 << 20,
        host_memory: true,
    };

    /// The limits of an open device.
    pub fn of(ctx: &GpuContext) -> Self {
        DeviceLimits {
            max_binding: ctx.max_binding(),
            max_buffer: ctx.limits.max_buffer_size,
            host_memory: ctx.info.device_type == wgpu::DeviceType::Cpu,
        }
    }

    fn per_binding(&self) -> u64 {
        self.max_binding.min(self.max_buffer)
    }
}

/// One array bound whole: its buffer label, size and what in the scene makes it that large.
#[derive(Clone, Debug, PartialEq)]
pub struct BoundArray {
    pub label: &'static str,
    pub bytes: u64,
    pub cause: String,
}

/// Memory a scene needs at its start (contacts at their starting capacity: they grow on
/// demand, each growth checked against the chunked arrays' limits).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MemoryEstimate {
    /// The arrays that can outgrow one storage binding.
    pub arrays: Vec<BoundArray>,
    /// GPU bytes by class.
    pub bodies: u64,
    pub shapes: u64,
    pub grid: u64,
    pub contacts: u64,
    pub solver: u64,
    /// Host bytes: the scene's bodies, the state uploaded from it and the shape data.
    pub host: u64,
}

impl MemoryEstimate {
    pub fn gpu_total(&self) -> u64 {
        self.bodies + self.shapes + self.grid + self.contacts + self.solver
    }

    /// Two lines for `validate`.
    pub fn describe(&self) -> String {
        let h = human_bytes;
        format!(
            "memory: GPU {} (bodies {}, shapes and meshes {}, collision grid {}, contacts at \
             the starting capacity {}, solver {}); host {}\nlargest single array: {}",
            h(self.gpu_total()),
            h(self.bodies),
            h(self.shapes),
            h(self.grid),
            h(self.contacts),
            h(self.solver),
            h(self.host),
            self.arrays
                .iter()
                .max_by_key(|a| a.bytes)
                .map(|a| format!("{} {} ({})", a.label, h(a.bytes), a.cause))
                .unwrap_or_default()
        )
    }
}

/// What makes the per-shape arrays large: the mesh files with their triangle counts, the
/// hull grains and the clumps with their spheres.
fn shape_causes(scene: &Scene) -> (String, String) {
    let meshes: Vec<String> = scene
        .boundaries
        .iter()
        .filter_map(|b| match &b.shape {
            BoundaryShape::Mesh {
                source, triangles, ..
            } => Some(format!(
                "boundary `{}`, mesh file `{}` with {} triangles (and its bins: cells of the \
                 largest grain's reach over the mesh's bounding box)",
                b.name,
                source.display(),
                triangles.len()
            )),
            _ => None,
        })
        .collect();
    let (mut hulls, mut hull_vertices, mut clumps, mut spheres, mut other) = (0, 0, 0, 0, 0);
    for b in &scene.bodies {
        match &b.shape {
            BodyShape::Convex(c) => {
                hulls += 1;
                hull_vertices += c.vertices.len();
            }
            BodyShape::Clump(c) => {
                clumps += 1;
                spheres += c.members.len();
            }
            BodyShape::Sphere { .. } => {}
            _ => other += 1,
        }
    }
    let mut grains = Vec::new();
    if hulls > 0 {
        grains.push(format!("{hulls} hull grains with {hull_vertices} vertices"));
    }
    if clumps > 0 {
        grains.push(format!("{clumps} clumps with {spheres} spheres"));
    }
    if other > 0 {
        grains.push(format!("{other} box, capsule or cylinder grains"));
    }
    if grains.is_empty() {
        grains.push(format!("{} boundaries", scene.boundaries.len()));
    }
    (meshes.join("; "), grains.join(", "))
}

/// The scene's memory at its start, without a device.
pub fn estimate(scene: &Scene) -> MemoryEstimate {
    let settings = setup::step_settings(scene);
    // A scene always collides (setup gives every scene a contact stage).
    let Some(contact) = settings.contact.as_ref() else {
        return MemoryEstimate::default();
    };
    let state = setup::build_bodies(scene);
    let n = state.len() as u64;
    let nb = setup::boundary_count(scene) as u64;
    let ng = n - nb;
    let rmax = state.pos[nb as usize..]
        .iter()
        .map(|p| p[3])
        .fold(0.0f32, f32::max);
    let [records, mesh_floats, mesh_ints] =
        collide::shape_array_bytes(&contact.shapes, rmax + contact.collide.envelope);
    let (meshes, grains) = shape_causes(scene);
    let bodies_cause = format!("{n} bodies");
    let gauss = contact.solver.kind == crate::solve::SolverKind::GaussSeidel;
    // Gauss–Seidel keeps the previous sweep's Δv beside each body's (its momentum).
    let dv_bytes = 4 * crate::solve::gauss::dv_words_per_body(contact.solver.kind);
    let capacity = Collide::default_capacity(&state);
    let mut arrays = vec![
        BoundArray {
            label: "pos (and the other 7 per-body arrays)",
            bytes: n * 16,
            cause: bodies_cause.clone(),
        },
        BoundArray {
            label: "solve dv",
            bytes: n * dv_bytes,
            cause: bodies_cause,
        },
        BoundArray {
            label: "collide row offsets",
            bytes: ((nb + 1) * ng + 1) * 4,
            cause: format!("({nb} boundaries + 1) × {ng} grains"),
        },
        BoundArray {
            label: "boundary shapes",
            bytes: records,
            cause: grains,
        },
        BoundArray {
            label: "mesh floats",
            bytes: mesh_floats,
            cause: meshes.clone(),
        },
        BoundArray {
            label: "mesh ints",
            bytes: mesh_ints,
            cause: meshes,
        },
    ];
    let mut per_contact_gauss = 0;
    if gauss {
        use crate::solve::gauss::{COLOUR_BYTES_PER_CONSTRAINT, PREVIOUS_BYTES_PER_CONSTRAINT};
        arrays.push(BoundArray {
            label: "solve previous sweep",
            bytes: capacity * PREVIOUS_BYTES_PER_CONSTRAINT,
            cause: format!("room for {capacity} contacts (kind = \"gauss_seidel\")"),
        });
        // And a sixteenth of a word of the hubs' list per constraint, rounded up.
        per_contact_gauss = COLOUR_BYTES_PER_CONSTRAINT + 1 + PREVIOUS_BYTES_PER_CONSTRAINT;
    }
    let slab_bytes = if gauss && contact.solver.coarse_slab > 0.0 {
        let bytes = crate::solve::slab_state_bytes(n, capacity);
        arrays.push(BoundArray {
            label: "slab state",
            bytes,
            cause: format!("{n} bodies and room for {capacity} contacts (coarse_slab)"),
        });
        bytes
    } else {
        0
    };
    let layout = crate::solve::Layout::plain(contact.solver.kind);
    let (seg, nv_seg) = layout.segments();
    let per_contact = collide::BYTES_PER_CONTACT + (seg + nv_seg) * 16 + 16 + 8 + per_contact_gauss;
    let table = (2 * ng).next_power_of_two().max(1024);
    let shapes = records + mesh_floats + mesh_ints;
    MemoryEstimate {
        bodies: n * 128,
        shapes,
        grid: (table + 2) * 4 + ng * 24 + ((nb + 1) * ng + 1) * 4 + n * 8,
        contacts: capacity * per_contact,
        solver: n * (crate::solve::BYTES_PER_BODY + dv_bytes) + slab_bytes,
        host: n * (std::mem::size_of::<crate::scene::BodyDesc>() as u64 + 128) + 2 * shapes,
        arrays,
    }
}

/// Refuses an estimate with an array past one storage binding of `limits`.
pub fn check_device(est: &MemoryEstimate, limits: &DeviceLimits) -> Result<(), String> {
    let limit = limits.per_binding();
    match est.arrays.iter().find(|a| a.bytes > limit) {
        None => Ok(()),
        Some(a) => Err(format!(
            "the scene does not fit the device: {} needs {} ({} bytes) in one storage binding, \
             the device allows {} ({} bytes); it comes from {}",
            a.label,
            human_bytes(a.bytes),
            a.bytes,
            human_bytes(limit),
            limit,
            a.cause
        )),
    }
}

/// Refuses an estimate that needs more of the machine's memory than `available` bytes
/// (the device's buffers too when the device is the CPU).
pub fn check_host(
    est: &MemoryEstimate,
    limits: &DeviceLimits,
    available: u64,
) -> Result<(), String> {
    let gpu = if limits.host_memory {
        est.gpu_total()
    } else {
        0
    };
    let need = est.host + gpu;
    if need <= available {
        return Ok(());
    }
    let device = if limits.host_memory {
        format!(" and the CPU device's buffers {}", human_bytes(gpu))
    } else {
        String::new()
    };
    Err(format!(
        "the scene does not fit this machine's memory: it needs about {} (host data {}{device}) \
         and {} is available",
        human_bytes(need),
        human_bytes(est.host),
        human_bytes(available)
    ))
}

/// Past this no device binds an array: Vulkan's `maxStorageBufferRange` is a 32-bit count
/// of bytes.
pub const ANY_DEVICE_BINDING: u64 = u32::MAX as u64;

/// What `validate` prints after the scene's summary: the estimate, and a warning for each
/// limit that [`DeviceLimits::COMMON`] or this machine's available memory would refuse at
/// `run` (a larger device may hold the scene). Errs when no device can bind an array.
pub fn validate_lines(scene: &Scene) -> Result<Vec<String>, String> {
    let est = estimate(scene);
    let any = DeviceLimits {
        max_binding: ANY_DEVICE_BINDING,
        max_buffer: ANY_DEVICE_BINDING,
        host_memory: false,
    };
    check_device(&est, &any)?;
    let mut lines = vec![est.describe()];
    let common = DeviceLimits::COMMON;
    if let Err(e) = check_device(&est, &common) {
        lines.push(format!(
            "warning: {e}: `run` refuses it on devices with {} storage bindings such as \
             lavapipe (`bristlecone info` shows this device's limit)",
            human_bytes(common.max_binding)
        ));
    }
    if let Some(available) = memory_available() {
        if let Err(e) = check_host(&est, &common, available) {
            lines.push(format!("warning: {e}"));
        }
    }
    Ok(lines)
}

/// `MemAvailable` of /proc/meminfo, bytes (None where there is no such file).
pub fn memory_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_meminfo(&text)
}

fn parse_meminfo(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The checks `run` makes before it allocates: the device's binding limit and the
/// machine's available memory.
pub fn check_run(scene: &Scene, ctx: &GpuContext) -> Result<(), crate::gpu::GpuError> {
    let est = estimate(scene);
    let limits = DeviceLimits::of(ctx);
    check_device(&est, &limits).map_err(crate::gpu::GpuError::Invalid)?;
    if let Some(available) = memory_available() {
        check_host(&est, &limits, available).map_err(crate::gpu::GpuError::Invalid)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_gives_the_available_bytes() {
        let text = "MemTotal:       24000000 kB\nMemFree:  100 kB\nMemAvailable:   2048 kB\n";
        assert_eq!(parse_meminfo(text), Some(2048 * 1024));
        assert_eq!(parse_meminfo("MemTotal: 1 kB\n"), None);
    }

    #[test]
    fn a_cpu_device_counts_its_buffers_against_the_host() {
        let est = MemoryEstimate {
            bodies: 600,
            host: 500,
            ..Default::default()
        };
        let cpu = DeviceLimits::COMMON;
        let gpu = DeviceLimits {
            host_memory: false,
            ..cpu
        };
        assert!(check_host(&est, &gpu, 1000).is_ok());
        let e = check_host(&est, &cpu, 1000).unwrap_err();
        assert!(
            e.contains("1.1 KiB") && e.contains("1000 B is available"),
            "{e}"
        );
    }
}
