//! Adapter choice and device creation.
//!
//! Hardware adapters are preferred; a software adapter (Mesa lavapipe, llvmpipe) is the
//! fallback so that machines without a GPU run the very same kernels.

use std::fmt;
use std::sync::{Arc, Mutex};

/// Which graphics API to open the GPU through.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BackendChoice {
    /// `WGPU_BACKEND` when set, else every backend this build supports.
    #[default]
    Auto,
    Vulkan,
    Gl,
}

impl BackendChoice {
    /// The backends to try, in turn: `Auto` without `WGPU_BACKEND` tries Vulkan alone first
    /// and creates the GL backend only when Vulkan has no usable adapter, because merely
    /// creating it makes EGL probe for a display driver and log an error on headless machines.
    fn attempts(self) -> Vec<wgpu::Backends> {
        match self {
            BackendChoice::Auto => match wgpu::Backends::from_env() {
                Some(b) => vec![b],
                None => vec![wgpu::Backends::VULKAN, wgpu::Backends::GL],
            },
            BackendChoice::Vulkan => vec![wgpu::Backends::VULKAN],
            BackendChoice::Gl => vec![wgpu::Backends::GL],
        }
    }
}

/// Keeps Mesa's Vulkan device-selection layer from probing the window system. That layer
/// only reorders adapters for programs that take the first one (we rank them ourselves),
/// yet it connects to Wayland to find the display's GPU, and libwayland prints
/// `error: XDG_RUNTIME_DIR is invalid or not set` on every start of a headless machine.
/// A user's own `NODEVICE_SELECT` or `MESA_VK_DEVICE_SELECT` is left alone.
fn quiet_device_select_layer() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let set = |k: &str| std::env::var_os(k).is_some();
        if !set("NODEVICE_SELECT") && !set("MESA_VK_DEVICE_SELECT") {
            // The layer's manifest names this variable in `disable_environment`; the Vulkan
            // loader reads it when the instance is created.
            std::env::set_var("NODEVICE_SELECT", "1");
        }
    });
}

impl std::str::FromStr for BackendChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Ok(Self::Auto),
            "vulkan" | "vk" => Ok(Self::Vulkan),
            "gl" | "gles" | "opengl" => Ok(Self::Gl),
            other => Err(format!(
                "unknown backend '{other}' (expected vulkan, gl or auto)"
            )),
        }
    }
}

/// What the engine needs from a device; requested explicitly so that a kernel that
/// outgrows them fails at start-up, not in the middle of a run.
/// Chunked arrays (`gpu::chunked`) take one binding per chunk: the solver's kernels use up to
/// 24 (lavapipe allows 32, desktop GPUs far more, Metal 31).
pub const MIN_STORAGE_BUFFERS_PER_STAGE: u32 = 24;
/// Requested when the adapter has it (more is never used).
pub const MAX_STORAGE_BUFFERS_PER_STAGE: u32 = 32;
pub const WORKGROUP_SIZE: u32 = 256;

const INSTALL_HINT: &str = "Bristlecone needs a GPU adapter. On a machine without a GPU install \
Mesa's software Vulkan driver (lavapipe): `sudo apt-get install mesa-vulkan-drivers` on \
Debian/Ubuntu, `sudo dnf install mesa-vulkan-drivers` on Fedora. Check with \
`bristlecone info`.";

#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    #[error("no usable GPU adapter for backends {backends}: {detail}. {INSTALL_HINT}")]
    NoAdapter { backends: String, detail: String },
    #[error("could not open device on '{adapter}': {source}")]
    Device {
        adapter: String,
        source: wgpu::RequestDeviceError,
    },
    #[error("shader '{name}': {message}")]
    Shader { name: String, message: String },
    #[error("GPU buffer readback failed: {0}")]
    Readback(String),
    #[error("{what} needs {needed} bytes but the device allows at most {limit} per buffer")]
    TooLarge {
        what: String,
        needed: u64,
        limit: u64,
    },
    /// A CPU stage inside the step failed (the exact LCP solver: ray termination or the pivot
    /// limit); the message names the step and the contacts involved.
    #[error("{0}")]
    Solver(String),
    /// Input the engine cannot take: bodies, shapes, joints or model rows that do not fit
    /// together, a checkpoint's warm-start list of another scene; the message names the
    /// entry. (A `Shader` error is the engine's own fault, never the input's.)
    #[error("{0}")]
    Invalid(String),
    /// The device went away (a driver reset, a GPU fallen off the bus, `Device::destroy`):
    /// nothing more can be read from it, so nothing of the current step may be written.
    #[error("the GPU device was lost ({0}); nothing computed on it since the last checkpoint can be read back")]
    DeviceLost(String),
}

/// An open device with its queue and the facts users want to see.
pub struct GpuContext {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub info: wgpu::AdapterInfo,
    pub limits: wgpu::Limits,
    pub features: wgpu::Features,
    /// Timestamp queries inside compute passes are available (per-stage timing).
    pub timestamps: bool,
    /// log2 of the chunk size (bytes) of chunked arrays (`gpu::chunked`).
    chunk_log2: u32,
    /// Kernels compiled on this device, shared by every stage and simulation that asks for
    /// the same source and constants (see [`crate::gpu::kernel::KernelCache`]).
    pub(crate) kernels: crate::gpu::kernel::KernelCache,
    /// Why the device was lost, once wgpu's device-lost callback has said so.
    lost: Arc<std::sync::Mutex<Option<String>>>,
}

impl fmt::Debug for GpuContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "GpuContext({})", self.describe())
    }
}

fn type_rank(t: wgpu::DeviceType) -> u32 {
    match t {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Cpu => 3,
        wgpu::DeviceType::Other => 4,
    }
}

fn backend_rank(b: wgpu::Backend) -> u32 {
    match b {
        wgpu::Backend::Vulkan | wgpu::Backend::Metal | wgpu::Backend::Dx12 => 0,
        _ => 1,
    }
}

impl GpuContext {
    /// Opens the best adapter for `choice`: hardware first, then software.
    pub fn new(choice: BackendChoice) -> Result<Self, GpuError> {
        Self::open_first(choice, false)
    }

    /// As [`GpuContext::new`], with wgpu's check of indirect dispatch arguments left on (its
    /// default; `benches/dispatch.rs` measures what the check costs).
    pub fn with_indirect_check(choice: BackendChoice) -> Result<Self, GpuError> {
        Self::open_first(choice, true)
    }

    fn open_first(choice: BackendChoice, indirect_check: bool) -> Result<Self, GpuError> {
        quiet_device_select_layer();
        let mut failures = Vec::new();
        for backends in choice.attempts() {
            match Self::open(backends, indirect_check) {
                Err(GpuError::NoAdapter { backends, detail }) => failures.push((backends, detail)),
                done => return done,
            }
        }
        if failures.len() == 1 {
            let (backends, detail) = failures.remove(0);
            return Err(GpuError::NoAdapter { backends, detail });
        }
        let (names, details): (Vec<String>, Vec<String>) = failures
            .into_iter()
            .map(|(b, d)| (b.clone(), format!("{b}: {d}")))
            .unzip();
        Err(GpuError::NoAdapter {
            backends: names.join(", then "),
            detail: details.join("; "),
        })
    }

    /// Opens the best adapter among `backends`.
    fn open(backends: wgpu::Backends, indirect_check: bool) -> Result<Self, GpuError> {
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
        desc.backends = backends;
        // wgpu's indirect-call validation runs an extra compute pass before every indirect
        // dispatch to clamp arguments past the per-dimension limit; ours are written clamped
        // by our own kernels (`set_args`, collide_grid `indirect_args`), and on lavapipe the
        // check cost ~0.06 ms per dispatch, a fifth of a solver sweep. Without it D3D12 would
        // read `num_workgroups` as 0: that backend is not built (Cargo features), and the
        // flag stays where it could be.
        if !indirect_check && !backends.contains(wgpu::Backends::DX12) {
            desc.flags
                .remove(wgpu::InstanceFlags::VALIDATION_INDIRECT_CALL);
        }
        let instance = wgpu::Instance::new(desc);
        let mut adapters = pollster::block_on(instance.enumerate_adapters(backends));
        if adapters.is_empty() {
            return Err(GpuError::NoAdapter {
                backends: format!("{backends:?}"),
                detail: "none found".into(),
            });
        }
        adapters.sort_by_key(|a| {
            let i = a.get_info();
            (type_rank(i.device_type), backend_rank(i.backend))
        });
        let mut rejected = Vec::new();
        for adapter in adapters {
            let info = adapter.get_info();
            let have = adapter.limits();
            if have.max_storage_buffers_per_shader_stage < MIN_STORAGE_BUFFERS_PER_STAGE
                || have.max_compute_invocations_per_workgroup < WORKGROUP_SIZE
                || !adapter
                    .get_downlevel_capabilities()
                    .flags
                    .contains(wgpu::DownlevelFlags::COMPUTE_SHADERS)
            {
                rejected.push(format!(
                    "{} ({:?}): too few storage buffers per stage or no compute",
                    info.name, info.backend
                ));
                continue;
            }
            let limits = wgpu::Limits {
                max_storage_buffers_per_shader_stage: have
                    .max_storage_buffers_per_shader_stage
                    .min(MAX_STORAGE_BUFFERS_PER_STAGE),
                max_storage_buffer_binding_size: have.max_storage_buffer_binding_size,
                max_buffer_size: have.max_buffer_size,
                max_compute_invocations_per_workgroup: WORKGROUP_SIZE,
                max_compute_workgroup_size_x: WORKGROUP_SIZE,
                max_compute_workgroup_storage_size: have
                    .max_compute_workgroup_storage_size
                    .min(16384),
                max_bind_groups: 4,
                // Storage + uniform buffers together (solve_fused binds 29 + 1).
                max_buffers_and_acceleration_structures_per_shader_stage: have
                    .max_buffers_and_acceleration_structures_per_shader_stage
                    .min(MAX_STORAGE_BUFFERS_PER_STAGE + 8),
                ..wgpu::Limits::downlevel_defaults()
            };
            let timestamps = adapter.features().contains(
                wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES,
            );
            let features = if timestamps {
                wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES
            } else {
                wgpu::Features::empty()
            };
            let request = adapter.request_device(&wgpu::DeviceDescriptor {
                label: Some("bristlecone"),
                required_features: features,
                required_limits: limits.clone(),
                experimental_features: wgpu::ExperimentalFeatures::disabled(),
                memory_hints: wgpu::MemoryHints::Performance,
                trace: wgpu::Trace::Off,
            });
            match pollster::block_on(request) {
                Ok((device, queue)) => {
                    let chunk_log2 = chunk_log2_for(limits.max_storage_buffer_binding_size);
                    let lost = Arc::new(std::sync::Mutex::new(None));
                    let said = lost.clone();
                    device.set_device_lost_callback(move |reason, message| {
                        let why = match message.trim() {
                            "" => format!("{reason:?}"),
                            m => format!("{reason:?}: {m}"),
                        };
                        *said.lock().unwrap_or_else(|e| e.into_inner()) = Some(why);
                    });
                    return Ok(GpuContext {
                        device,
                        queue,
                        info,
                        limits,
                        features,
                        timestamps,
                        chunk_log2,
                        kernels: Default::default(),
                        lost,
                    });
                }
                Err(e) => rejected.push(format!("{} ({:?}): {e}", info.name, info.backend)),
            }
        }
        Err(GpuError::NoAdapter {
            backends: format!("{backends:?}"),
            detail: rejected.join("; "),
        })
    }

    /// Kernels compiled on this device so far: each distinct source text and set of
    /// constants once, however many stages, simulations or threads asked for it.
    pub fn kernels_compiled(&self) -> usize {
        self.kernels.len()
    }

    /// One line: adapter name, backend, device type.
    pub fn describe(&self) -> String {
        format!(
            "{} ({:?}, {:?}, driver {} {})",
            self.info.name,
            self.info.backend,
            self.info.device_type,
            self.info.driver,
            self.info.driver_info
        )
    }

    /// Whether the adapter bounds shader loops: llvmpipe (lavapipe), the CPU adapter this
    /// project runs on without a GPU, silently ends every loop of an invocation once that
    /// invocation has run 65 535 iterations in all, so stages split long loops over dispatches
    /// or refuse what they cannot split.
    pub fn loop_limited(&self) -> bool {
        self.info.device_type == wgpu::DeviceType::Cpu
    }

    /// Largest single storage buffer binding, in bytes.
    pub fn max_binding(&self) -> u64 {
        self.limits.max_storage_buffer_binding_size
    }

    /// Checks buffers against a smaller storage binding than the device allows (for tests:
    /// a small scene then reaches the limit). The device keeps its own limits.
    pub fn lower_binding_limit(&mut self, bytes: u64) {
        let limit = &mut self.limits.max_storage_buffer_binding_size;
        *limit = (*limit).min(bytes);
        self.chunk_log2 = self.chunk_log2.min(chunk_log2_for(*limit));
    }

    /// log2 of the bytes per chunk of a chunked array (`gpu::chunked`): the largest power of
    /// two one binding allows, unless [`GpuContext::set_chunk_log2`] chose less.
    pub fn chunk_log2(&self) -> u32 {
        self.chunk_log2
    }

    /// Smaller chunks (for tests: a small scene then spans every chunk). Applies to kernels
    /// created afterwards; at least 2^12 bytes, at most what a binding allows.
    pub fn set_chunk_log2(&mut self, log2: u32) {
        self.chunk_log2 = log2.clamp(12, chunk_log2_for(self.max_binding()));
    }

    /// Most bytes one chunked array of `chunks` chunks may hold: its chunks' span, within
    /// the largest buffer (the chunks are ranges of one buffer; on an H200, 4 chunks of
    /// 1 GiB span 4096 MiB but a buffer holds at most 4094).
    pub fn chunked_capacity(&self, chunks: u32) -> u64 {
        chunked_span(chunks, self.chunk_log2, self.limits.max_buffer_size)
    }

    /// Bytes of one chunked array of `chunks` chunks, checked against the chunk and buffer
    /// limits (the error names `what`).
    pub fn check_chunked(&self, what: &str, bytes: u64, chunks: u32) -> Result<(), GpuError> {
        let limit = self.chunked_capacity(chunks);
        if bytes > limit {
            return Err(GpuError::TooLarge {
                what: what.into(),
                needed: bytes,
                limit,
            });
        }
        Ok(())
    }

    /// Why the device was lost, once it was (wgpu reports a loss at its next poll).
    pub fn lost(&self) -> Option<String> {
        self.lost.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Blocks until all submitted work has finished.
    pub fn wait(&self) {
        let _ = self.device.poll(wgpu::PollType::wait_indefinitely());
    }
}

/// Bytes `chunks` chunks of 2^`chunk_log2` bytes span within a buffer of at most
/// `max_buffer` bytes.
pub fn chunked_span(chunks: u32, chunk_log2: u32, max_buffer: u64) -> u64 {
    ((chunks as u64) << chunk_log2).min(max_buffer)
}

/// log2 of the largest power of two ≤ the binding limit (at most 2^31: indices stay u32).
fn chunk_log2_for(max_binding: u64) -> u32 {
    (63 - max_binding.max(4096).leading_zeros()).min(31)
}

/// The contexts a test binary shares: each thread keeps the one it was given, and a thread
/// that asks while every context is in use by another thread opens a new one, up to one per
/// core. A software adapter (lavapipe) runs each device's submissions, and compiles each
/// pipeline at its first dispatch, on that device's one queue thread, so test threads on one
/// device take turns on one core; a device per concurrent thread keeps every core busy. A
/// pipeline two devices both need is compiled twice. Without an adapter this fails loudly with
/// the install hint: a GPU test never skips silently.
pub fn shared_context() -> Arc<GpuContext> {
    thread_local! {
        static MINE: std::cell::OnceCell<Arc<GpuContext>> = const { std::cell::OnceCell::new() };
    }
    MINE.with(|mine| mine.get_or_init(lease_context).clone())
}

/// The pooled context with the fewest holders (a thread's own reference counts as one),
/// or a new one while every context is held and the pool is smaller than the core count.
fn lease_context() -> Arc<GpuContext> {
    static POOL: Mutex<Vec<Arc<GpuContext>>> = Mutex::new(Vec::new());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
    let least = pool
        .iter()
        .min_by_key(|ctx| Arc::strong_count(ctx))
        .cloned();
    match least {
        Some(ctx) if Arc::strong_count(&ctx) <= 2 || pool.len() >= cores => ctx,
        _ => {
            let ctx = match GpuContext::new(BackendChoice::Auto) {
                Ok(ctx) => Arc::new(ctx),
                Err(e) => panic!("{e}"),
            };
            pool.push(ctx.clone());
            ctx
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The limits an H200 reported (2047 MiB per binding, 4094 MiB per buffer): four 1 GiB
    /// chunks would span one buffer past its end, so the span stops at the buffer limit
    /// (10⁷ spheres were refused for that 2 MiB).
    #[test]
    fn chunked_span_stops_at_the_buffer_limit() {
        let log2 = chunk_log2_for(2047 << 20);
        assert_eq!(log2, 30);
        assert_eq!(chunked_span(4, log2, 4094 << 20), 4094 << 20);
        assert_eq!(chunked_span(2, log2, 4094 << 20), 2 << 30);
        // lavapipe: 128 MiB bindings, 2047 MiB buffers.
        assert_eq!(
            chunked_span(8, chunk_log2_for(128 << 20), 2047 << 20),
            1 << 30
        );
    }
}
