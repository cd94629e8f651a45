//! Buffer helpers: typed creation, upload and blocking readback.

use super::context::{GpuContext, GpuError};
use wgpu::util::DeviceExt;

pub const STORAGE: wgpu::BufferUsages = wgpu::BufferUsages::STORAGE
    .union(wgpu::BufferUsages::COPY_SRC)
    .union(wgpu::BufferUsages::COPY_DST);

/// A storage buffer holding `data` (at least 16 bytes: zero-sized bindings are invalid),
/// refused when it is larger than one storage binding may be (wgpu would otherwise stop
/// the process when the buffer is bound).
pub fn storage_from<T: bytemuck::Pod>(
    ctx: &GpuContext,
    label: &str,
    data: &[T],
) -> Result<wgpu::Buffer, GpuError> {
    let bytes: &[u8] = bytemuck::cast_slice(data);
    check_binding(ctx, label, bytes.len() as u64)?;
    let mut padded = Vec::new();
    let contents = if bytes.len() < 16 {
        padded.extend_from_slice(bytes);
        padded.resize(16, 0);
        &padded
    } else {
        bytes
    };
    Ok(ctx
        .device
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents,
            usage: STORAGE,
        }))
}

/// Refuses `bytes` for one storage binding past the device's binding or buffer limit.
pub fn check_binding(ctx: &GpuContext, label: &str, bytes: u64) -> Result<(), GpuError> {
    let limit = ctx.max_binding().min(ctx.limits.max_buffer_size);
    if bytes > limit {
        return Err(GpuError::TooLarge {
            what: label.into(),
            needed: bytes,
            limit,
        });
    }
    Ok(())
}

/// A zeroed storage buffer of `bytes` bytes (rounded up to 16), checked against the limit.
pub fn storage_zeroed(ctx: &GpuContext, label: &str, bytes: u64) -> Result<wgpu::Buffer, GpuError> {
    zeroed(ctx, label, bytes, wgpu::BufferUsages::empty())
}

/// [`storage_zeroed`] for scalars that some stages write as storage and others bind
/// read-only as a uniform (on lavapipe a uniform load is one load per SIMD group, a storage
/// load one per lane).
pub fn scalars_zeroed(ctx: &GpuContext, label: &str, bytes: u64) -> Result<wgpu::Buffer, GpuError> {
    zeroed(ctx, label, bytes, wgpu::BufferUsages::UNIFORM)
}

fn zeroed(
    ctx: &GpuContext,
    label: &str,
    bytes: u64,
    extra: wgpu::BufferUsages,
) -> Result<wgpu::Buffer, GpuError> {
    let size = bytes.max(16).next_multiple_of(16);
    check_binding(ctx, label, size)?;
    Ok(ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size,
        usage: STORAGE | wgpu::BufferUsages::INDIRECT | extra,
        mapped_at_creation: false,
    }))
}

/// A zeroed storage buffer of `bytes` bytes (rounded up to 16) for an array a stage declares
/// `// chunked(chunks)` (`gpu::chunked`): limited by chunks × chunk size, not by one binding.
pub fn storage_chunked(
    ctx: &GpuContext,
    label: &str,
    bytes: u64,
    chunks: u32,
) -> Result<wgpu::Buffer, GpuError> {
    let size = bytes.max(16).next_multiple_of(16);
    ctx.check_chunked(label, size, chunks)?;
    Ok(ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size,
        usage: STORAGE,
        mapped_at_creation: false,
    }))
}

/// A uniform buffer initialised with `value`.
pub fn uniform_from<T: bytemuck::Pod>(ctx: &GpuContext, label: &str, value: &T) -> wgpu::Buffer {
    ctx.device
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents: bytemuck::bytes_of(value),
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        })
}

/// Reads `count` elements of `T` from the start of `buffer` (blocking).
pub fn read_buffer<T: bytemuck::Pod>(
    ctx: &GpuContext,
    buffer: &wgpu::Buffer,
    count: usize,
) -> Result<Vec<T>, GpuError> {
    read_buffer_at(ctx, buffer, 0, count)
}

/// Reads `count` elements of `T` from `buffer`, starting `offset` bytes in (a multiple of 4).
pub fn read_buffer_at<T: bytemuck::Pod>(
    ctx: &GpuContext,
    buffer: &wgpu::Buffer,
    offset: u64,
    count: usize,
) -> Result<Vec<T>, GpuError> {
    let bytes = (count * std::mem::size_of::<T>()) as u64;
    if bytes == 0 {
        return Ok(Vec::new());
    }
    let staging = ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("readback"),
        size: bytes.next_multiple_of(4),
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut enc = ctx.device.create_command_encoder(&Default::default());
    enc.copy_buffer_to_buffer(buffer, offset, &staging, 0, bytes.next_multiple_of(4));
    ctx.queue.submit([enc.finish()]);
    map_and_read(ctx, &staging, count)
}

/// Maps a MAP_READ buffer and copies out `count` elements.
pub fn map_and_read<T: bytemuck::Pod>(
    ctx: &GpuContext,
    staging: &wgpu::Buffer,
    count: usize,
) -> Result<Vec<T>, GpuError> {
    let bytes = (count * std::mem::size_of::<T>()) as u64;
    let slice = staging.slice(0..bytes.next_multiple_of(4));
    let (tx, rx) = std::sync::mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    ctx.device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| GpuError::Readback(e.to_string()))?;
    rx.recv()
        .map_err(|e| GpuError::Readback(e.to_string()))?
        .map_err(|e| GpuError::Readback(e.to_string()))?;
    let out = {
        let view = slice
            .get_mapped_range()
            .map_err(|e| GpuError::Readback(e.to_string()))?;
        bytemuck::pod_collect_to_vec::<u8, T>(&view[..bytes as usize])
    };
    staging.unmap();
    Ok(out)
}
