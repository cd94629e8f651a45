//! GPU plumbing: device, kernels, buffers.

pub mod bandwidth;
pub mod buffers;
pub mod chunked;
pub mod context;
pub mod kernel;
#[cfg(test)]
pub(crate) mod layout;

pub use context::{shared_context, BackendChoice, GpuContext, GpuError, WORKGROUP_SIZE};
pub use kernel::{Kernel, ShaderSource, SHADERS};
