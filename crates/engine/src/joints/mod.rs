//! Stage: joints (book: Joints) — bilateral constraints, limits and motors as row blocks of the
//! same CCP problem as the contacts (Peiret et al.; Negrut et al. 2017: rows G_j with
//! b_j = g_j/dt + ∂g_j/∂t + G_jᵀ v* and no projection). CPU twin: [`crate::reference::joints`].
//!
//! A [`Joint`] expands into row blocks ([`Block`], 1–3 rows each, see
//! `src/model/rows`, "Joints"). Every step, after collision, `joints_write` writes one
//! constraint record per block at `contacts[n_contacts + j]` and its offset into the
//! solver's `rhs`, so the solver's assembly, Jacobi/APGD sweeps, warm start (key
//! (WORLD, 0, block)) and checkpoints handle them like contacts. The per-body gather uses a
//! static second list (`jcsr`), built once here, since the joint graph never changes.

/// The joint descriptions, their row blocks and record flags are the vocabulary's
/// (`crate::model::joint`).
pub use crate::model::joint::{
    block_lists, blocks_of, reactions, Block, BlockKind, Joint, JointKind, JointReaction, Motor,
    MotorTarget, JOINT_ANGULAR, JOINT_BIT, PROJ_BOX, PROJ_LOWER, WORLD,
};

use crate::gpu::{buffers, GpuContext, GpuError, Kernel, ShaderSource};

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    blocks: u32,
    /// Constraints (contacts + joint blocks) the solver's arrays hold.
    capacity: u32,
    _pad0: [u32; 2],
    dt: f32,
    recovery_speed: f32,
    _pad1: [f32; 2],
}

/// The GPU joint stage: static blocks, recorded once per step after collision.
pub struct Joints {
    kernel: Kernel,
    params: wgpu::Buffer,
    blocks: wgpu::Buffer,
    pub joints: Vec<Joint>,
    n_blocks: u32,
    /// Per-body block lists for the solver's gather ([`block_lists`]).
    pub lists: Vec<u32>,
}

impl Joints {
    pub fn new(
        ctx: &GpuContext,
        joints: &[Joint],
        n_bodies: usize,
        dt: f32,
        recovery_speed: f32,
    ) -> Result<Self, GpuError> {
        let (blocks, _) = blocks_of(joints);
        let kernel = Kernel::new(ctx, ShaderSource::by_name("joints_write").unwrap())?;
        let n_blocks = blocks.len() as u32;
        let lists = block_lists(n_bodies, &blocks);
        let mut data = blocks;
        if data.is_empty() {
            data.push(Block::default());
        }
        let params = buffers::uniform_from(
            ctx,
            "joint params",
            &Params {
                blocks: n_blocks,
                dt,
                recovery_speed,
                ..bytemuck::Zeroable::zeroed()
            },
        );
        Ok(Joints {
            kernel,
            params,
            blocks: buffers::storage_from(ctx, "joint blocks", &data)?,
            joints: joints.to_vec(),
            n_blocks,
            lists,
        })
    }

    pub fn n_blocks(&self) -> u32 {
        self.n_blocks
    }

    /// Sets the constraint capacity, time step and recovery speed.
    pub fn set_params(&self, ctx: &GpuContext, capacity: u32, dt: f32, recovery_speed: f32) {
        let p = Params {
            blocks: self.n_blocks,
            capacity,
            dt,
            recovery_speed,
            ..bytemuck::Zeroable::zeroed()
        };
        ctx.queue
            .write_buffer(&self.params, 0, bytemuck::bytes_of(&p));
    }

    /// Records the block records and offsets after collision (`counts[0]` contacts).
    #[allow(clippy::too_many_arguments)]
    pub fn record(
        &self,
        ctx: &GpuContext,
        enc: &mut wgpu::CommandEncoder,
        pos: &wgpu::Buffer,
        rot: &wgpu::Buffer,
        counts: &wgpu::Buffer,
        contacts: &wgpu::Buffer,
        rhs: &wgpu::Buffer,
    ) {
        let bind = self.kernel.bind(
            ctx,
            &[&self.params, &self.blocks, pos, rot, counts, contacts, rhs],
        );
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("joints"),
            timestamp_writes: None,
        });
        self.kernel
            .dispatch(&mut pass, "write", &bind, self.n_blocks.max(1));
    }
}

/// The records this stage shares with its shaders have one layout on both sides.
#[cfg(test)]
#[test]
fn records_have_the_shaders_layout() {
    use crate::gpu::layout::{check, rust_words};
    check(
        "joints_write",
        "JointParams",
        rust_words!(Params {
            blocks,
            capacity,
            _pad0,
            dt,
            recovery_speed,
            _pad1
        }),
    );
}
