//! `lugre_patch` in the simulation loop (book: Contact patches): the distributed planar LuGre
//! model on every face–face patch of a step, on the GPU (`shaders/patch_loop.wgsl`; f64
//! twin: [`twin_prepare`], [`twin_advance`]).
//!
//! Per step, recorded by the step between collision and the solve ([`PatchStage::record_prepare`])
//! and after the solve ([`PatchStage::record_advance`]):
//! 1. **slots**: the step's lugre_patch records (feature [`PATCH_FEATURE_DIST`]) in contact
//!    order get slots 0, 1, …; the contact list is sorted by key, so the slots are too.
//! 2. **prepare**: per slot, the patch polygon (the pair's points that precede the record
//!    and share its normal, in the patch frame u, w about the patch centre), its n × n cell
//!    weights under uniform pressure (as [`super::PatchShape::new`]), the cells carried by key
//!    from the last step (a new patch starts at rest, as the warm start), and the implicit
//!    step's affine sums with the rate factors frozen at the last step's twist, per unit
//!    normal load, written into the record's solver segments. The solver turns them into the
//!    block's full 3 × 3 compliance ([`super::couple::distributed_rows`] in f64,
//!    `assemble_dist_patch` on the GPU).
//! 3. **advance**: after the solve, the cells step implicitly under the post-solve twist
//!    with the same frozen rate factors, so the cells' force is the one the rows assumed;
//!    the twist is kept as the next step's frozen twist. A new patch freezes its first
//!    rate factors at the free twist (at twist 0 its first step would be a pure stick that
//!    winds the cells up by dt·v, whose release through σ1 ż then drives the body); a
//!    block that was dead (no normal impulse yet) relaxes its cells to rest. Then `meta` and `cells` are copied
//!    to `prev_meta` and `prev_cells` (the state a checkpoint saves).
//!
//! The cells live in the patch frame of the contact (world-aligned tangent basis of the
//! normal, origin at the patch centre): they translate with the patch, and a spinning box's
//! polygon turns through them (the paper's grid is fixed to the body; for the uniform
//! pressures of box faces the two agree at steady state). Slots are capped
//! ([`PatchStage::capacity`]); patches beyond it are counted and refused at the next readback,
//! never silently dropped.

use super::couple::PATCH_FEATURE_DIST;
use super::cpu::{cell_affine, cell_velocity, kappa};
use super::{LugreParams, Twist};
use crate::collide::ContactRecord;
use crate::gpu::{buffers, GpuContext, GpuError, Kernel, ShaderSource};
use crate::model::rows::{MaterialRow, MODEL_LUGRE_PATCH};
use glam::DVec3;

/// A slot table (header, then key and frozen twist per slot) and its cells, as read back.
pub type SlotState = (Vec<[u32; 4]>, Vec<[f32; 4]>);

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct LoopParams {
    cap: u32,
    n: u32,
    seg_aux: u32,
    seg_state: u32,
    dt: f32,
    materials: u32,
    contact_cap: u32,
    _pad: u32,
}

/// The buffers the stage reads and writes that belong to other stages.
pub struct StageInputs<'a> {
    pub contacts: &'a wgpu::Buffer,
    pub counts: &'a wgpu::Buffer,
    pub vel: &'a wgpu::Buffer,
    pub omega: &'a wgpu::Buffer,
    /// The solver's model table, its rows, `gam` and its aux / state segment offsets
    /// ([`crate::solve::Solve::patch_inputs`]).
    pub models: &'a wgpu::Buffer,
    pub n_models: u32,
    pub gam: &'a wgpu::Buffer,
    pub seg_aux: u32,
    pub seg_state: u32,
    pub contact_cap: u32,
}

/// The carried state: per slot its key, frozen twist and cell size, and its cells.
#[derive(Clone, Debug, PartialEq)]
pub struct PatchCells {
    pub keys: Vec<[u32; 3]>,
    /// (v_x, v_y, ω) of the last step in the patch frame, and the cell size h.
    pub lin_h: Vec<[f64; 4]>,
    /// (z_x, z_y, w) per cell, slot after slot.
    pub cells: Vec<[f64; 3]>,
}

/// The GPU stage.
pub struct PatchStage {
    kernel: Kernel,
    cap: u32,
    n: u32,
    uniform: wgpu::Buffer,
    meta: wgpu::Buffer,
    prev_meta: wgpu::Buffer,
    cells: wgpu::Buffer,
    prev_cells: wgpu::Buffer,
    bind: Option<wgpu::BindGroup>,
}

impl PatchStage {
    /// A stage of `cap` slots of `n × n` cells.
    pub fn new(ctx: &GpuContext, n: u32, cap: u32) -> Result<Self, GpuError> {
        let kernel = Kernel::new(ctx, ShaderSource::by_name("patch_loop").unwrap())?;
        let cap = cap.max(1);
        let meta_bytes = (1 + 2 * cap as u64) * 16;
        let cell_bytes = cap as u64 * (n * n) as u64 * 16;
        Ok(PatchStage {
            kernel,
            cap,
            n,
            uniform: buffers::uniform_from(ctx, "patch loop params", &[0u32; 8]),
            meta: buffers::storage_zeroed(ctx, "patch meta", meta_bytes)?,
            prev_meta: buffers::storage_zeroed(ctx, "patch prev meta", meta_bytes)?,
            cells: buffers::storage_zeroed(ctx, "patch cells", cell_bytes)?,
            prev_cells: buffers::storage_zeroed(ctx, "patch prev cells", cell_bytes)?,
            bind: None,
        })
    }

    /// Slots per step.
    pub fn capacity(&self) -> u32 {
        self.cap
    }

    /// Grid side.
    pub fn grid(&self) -> u32 {
        self.n
    }

    /// Binds the other stages' buffers (again after they are reallocated).
    pub fn bind(&mut self, ctx: &GpuContext, inp: &StageInputs<'_>, dt: f64) {
        let p = LoopParams {
            cap: self.cap,
            n: self.n,
            seg_aux: inp.seg_aux,
            seg_state: inp.seg_state,
            dt: dt as f32,
            materials: inp.n_models.max(1),
            contact_cap: inp.contact_cap,
            _pad: 0,
        };
        ctx.queue
            .write_buffer(&self.uniform, 0, bytemuck::bytes_of(&p));
        self.bind = Some(self.kernel.bind(
            ctx,
            &[
                &self.uniform,
                inp.contacts,
                inp.counts,
                inp.models,
                inp.vel,
                inp.omega,
                inp.gam,
                &self.meta,
                &self.prev_meta,
                &self.cells,
                &self.prev_cells,
            ],
        ));
    }

    /// Slots and prepare: after collision, before the solve.
    pub fn record_prepare(&self, pass: &mut wgpu::ComputePass) {
        let b = self.bind.as_ref().expect("patch stage bound");
        self.kernel.dispatch_groups(pass, "slots", b, 1);
        self.kernel.dispatch_groups(pass, "prepare", b, self.cap);
    }

    /// Advance after the solve, then the state copies.
    pub fn record_advance(&self, enc: &mut wgpu::CommandEncoder) {
        let b = self.bind.as_ref().expect("patch stage bound");
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("patch advance"),
                timestamp_writes: None,
            });
            self.kernel
                .dispatch_groups(&mut pass, "advance", b, self.cap);
        }
        enc.copy_buffer_to_buffer(&self.meta, 0, &self.prev_meta, 0, self.meta.size());
        enc.copy_buffer_to_buffer(&self.cells, 0, &self.prev_cells, 0, self.cells.size());
    }

    /// The buffers that carry state from step to step (for snapshots).
    pub fn state_buffers(&self) -> [&wgpu::Buffer; 2] {
        [&self.prev_meta, &self.prev_cells]
    }

    /// The most patches any step has needed (more than [`Self::capacity`]: some were not
    /// modelled, which the caller must report).
    pub fn needed(&self, ctx: &GpuContext) -> Result<u32, GpuError> {
        Ok(buffers::read_buffer::<[u32; 4]>(ctx, &self.prev_meta, 1)?[0][2])
    }

    /// The carried state (checkpoints).
    pub fn read_state(&self, ctx: &GpuContext) -> Result<SlotState, GpuError> {
        let meta: Vec<[u32; 4]> =
            buffers::read_buffer(ctx, &self.prev_meta, 1 + 2 * self.cap as usize)?;
        let count = meta[0][0] as usize;
        let cells: Vec<[f32; 4]> =
            buffers::read_buffer(ctx, &self.prev_cells, count * (self.n * self.n) as usize)?;
        Ok((meta[..1 + 2 * count].to_vec(), cells))
    }

    /// Restores [`Self::read_state`]'s output (the same grid; at most the capacity).
    pub fn write_state(
        &self,
        ctx: &GpuContext,
        meta: &[[u32; 4]],
        cells: &[[f32; 4]],
    ) -> Result<(), String> {
        let count = meta.first().map_or(0, |m| m[0]) as usize;
        if meta.len() != 1 + 2 * count
            || count > self.cap as usize
            || cells.len() != count * (self.n * self.n) as usize
        {
            return Err(format!(
                "the patch cells ({count} patches, {} cells) do not fit {} slots of {}×{} cells",
                cells.len(),
                self.cap,
                self.n,
                self.n
            ));
        }
        ctx.queue
            .write_buffer(&self.prev_meta, 0, bytemuck::cast_slice(meta));
        ctx.queue
            .write_buffer(&self.prev_cells, 0, bytemuck::cast_slice(cells));
        Ok(())
    }

    /// The current step's slots, as [`Self::read_state`] (tests: after `record_prepare`).
    pub fn read_current(&self, ctx: &GpuContext) -> Result<SlotState, GpuError> {
        let meta: Vec<[u32; 4]> = buffers::read_buffer(ctx, &self.meta, 1 + 2 * self.cap as usize)?;
        let count = meta[0][0] as usize;
        let cells: Vec<[f32; 4]> =
            buffers::read_buffer(ctx, &self.cells, count * (self.n * self.n) as usize)?;
        Ok((meta[..1 + 2 * count].to_vec(), cells))
    }
}

// ---------------------------------------------------------------- f64 twin

/// The pair's LuGre parameters (`pair_params` in the shader): σ0, σ1 in series, σ2 and the
/// extension by min when both materials have `lugre_patch`, else the side that has it;
/// μ_c = the record's μ; Stribeck exponent 2.
pub fn pair_params(models: &[MaterialRow], rec: &ContactRecord) -> LugreParams {
    let m = |k: u32| models[(k as usize).min(models.len() - 1)];
    let (a, b) = (m(rec.ids[3] >> 16), m(rec.ids[3] & 0xffff));
    let on = |r: &MaterialRow| r[0] as u32 == MODEL_LUGRE_PATCH;
    let series = |x: f32, y: f32| if x + y > 0.0 { x * y / (x + y) } else { 0.0 };
    let (s, e, lane0) = if on(&a) && on(&b) {
        (
            [series(a[1], b[1]), series(a[2], b[2]), a[3].min(b[3])],
            [a[4].min(b[4]), a[5].min(b[5])],
            a[0].min(b[0]),
        )
    } else {
        let r = if on(&a) { a } else { b };
        ([r[1], r[2], r[3]], [r[4], r[5]], r[0])
    };
    let ratio = 2.0 * (lane0 as f64 - MODEL_LUGRE_PATCH as f64);
    LugreParams {
        mu_c: rec.ra[3] as f64,
        mu_s: e[0] as f64,
        v_s: e[1] as f64,
        gamma: 2.0,
        sigma0: s[0] as f64,
        sigma1: s[1] as f64,
        sigma2: s[2] as f64,
        elasto_plastic: ratio > 0.0,
        z_ba_ratio: ratio,
        stability: false,
    }
}

fn v3(x: [f32; 4]) -> DVec3 {
    DVec3::new(x[0] as f64, x[1] as f64, x[2] as f64)
}

/// The polygon of record `ci`: the ≤ 8 points before it of its pair with its normal, in
/// the patch frame about the patch centre, sorted by angle about their mean.
pub fn patch_polygon(contacts: &[ContactRecord], ci: usize) -> Vec<[f64; 2]> {
    let c = &contacts[ci];
    let n = v3(c.n_gap);
    let (u, w) = crate::collide::tangent_basis(n);
    let mut q: Vec<[f64; 2]> = Vec::new();
    for p in contacts[..ci].iter().rev() {
        if p.ids[0] != c.ids[0] || p.ids[1] != c.ids[1] || q.len() == 8 {
            break;
        }
        if v3(p.n_gap).dot(n) > 0.9999 {
            let d = v3(p.ra) - v3(c.ra);
            q.push([d.dot(u), d.dot(w)]);
        }
    }
    let k = q.len().max(1) as f64;
    let mean = [0, 1].map(|d| q.iter().map(|p| p[d]).sum::<f64>() / k);
    let ang = |p: &[f64; 2]| (p[1] - mean[1]).atan2(p[0] - mean[0]);
    // Stable insertion sort by angle, as the shader's.
    for i in 1..q.len() {
        let mut m = i;
        while m > 0 && ang(&q[m - 1]) > ang(&q[m]) {
            q.swap(m, m - 1);
            m -= 1;
        }
    }
    q
}

/// Slots of a contact list: the indices of its lugre_patch records, in order.
pub fn twin_slots(contacts: &[ContactRecord]) -> Vec<usize> {
    (0..contacts.len())
        .filter(|&i| contacts[i].ids[2] == PATCH_FEATURE_DIST && contacts[i].ids[3] >> 31 == 0)
        .collect()
}

fn cell_at(i: usize, n: usize, h: f64) -> [f64; 2] {
    [(i % n) as f64, (i / n) as f64].map(|x| (x + 0.5 - 0.5 * n as f64) * h)
}

/// Prepare (see the module docs): the step's carried state and, per slot, the affine sums
/// (S0, Sx, Sy, Srr, Σ w c0_x, Σ w c0_y, Σ w (x c0_y − y c0_x)) per unit normal load.
/// `free`: each slot's free twist (v_x, v_y, ω), a new patch's frozen twist.
pub fn twin_prepare(
    contacts: &[ContactRecord],
    prev: &PatchCells,
    free: &[[f64; 3]],
    models: &[MaterialRow],
    n: usize,
    dt: f64,
) -> (PatchCells, Vec<[f64; 7]>) {
    let nn = n * n;
    let mut out = PatchCells {
        keys: Vec::new(),
        lin_h: Vec::new(),
        cells: Vec::new(),
    };
    let mut sums = Vec::new();
    for ci in twin_slots(contacts) {
        let rec = &contacts[ci];
        let key = [rec.ids[0], rec.ids[1], rec.ids[2]];
        let p = pair_params(models, rec);
        let poly = patch_polygon(contacts, ci);
        let outline = super::Outline::Polygon {
            vertices: poly.clone(),
        };
        let half = outline.half_extent();
        let h = if poly.len() >= 3 {
            (2.0 * half[0]).max(2.0 * half[1]) / n as f64
        } else {
            0.0
        };
        let raw: Vec<f64> = (0..nn)
            .map(|i| {
                if h > 0.0 {
                    super::pressure::coverage(&outline, cell_at(i, n, h), h)
                } else {
                    0.0
                }
            })
            .collect();
        let total: f64 = raw.iter().sum();
        let inv = if total > 0.0 { 1.0 / total } else { 0.0 };
        let found = prev.keys.binary_search(&key).ok();
        let lin = found.map_or(free[out.keys.len()], |k| {
            let l = prev.lin_h[k];
            [l[0], l[1], l[2]]
        });
        let lt = Twist {
            vx: lin[0],
            vy: lin[1],
            omega: lin[2],
        };
        let mut s = [0.0f64; 7];
        for (i, r) in raw.iter().enumerate() {
            let z = found.map_or([0.0; 2], |k| {
                let c = prev.cells[k * nn + i];
                [c[0], c[1]]
            });
            let w = r * inv;
            out.cells.push([z[0], z[1], w]);
            if w == 0.0 {
                continue;
            }
            let c = cell_at(i, n, h);
            let kap = kappa(&p, z, cell_velocity(lt, c));
            let (c0, c1) = cell_affine(&p, z, kap, dt);
            super::cpu::add_cell_sums(&mut s, w, c, c0, c1);
        }
        out.keys.push(key);
        out.lin_h.push([lin[0], lin[1], lin[2], h]);
        sums.push(s);
    }
    (out, sums)
}

/// Advance (see the module docs): the cells' implicit step under each slot's post-solve
/// twist `v` (patch frame: v_x, v_y, ω) with the rate factors frozen at `lin_h`; `v`
/// becomes the next frozen twist. A slot whose block was dead (`live[k]` false: no normal
/// impulse) relaxes its cells to rest.
pub fn twin_advance(
    contacts: &[ContactRecord],
    state: &mut PatchCells,
    v: &[[f64; 3]],
    live: &[bool],
    models: &[MaterialRow],
    n: usize,
    dt: f64,
) {
    let nn = n * n;
    for (k, ci) in twin_slots(contacts).into_iter().enumerate() {
        let p = pair_params(models, &contacts[ci]);
        let [lx, ly, lw, h] = state.lin_h[k];
        let lt = Twist {
            vx: lx,
            vy: ly,
            omega: lw,
        };
        let t = Twist {
            vx: v[k][0],
            vy: v[k][1],
            omega: v[k][2],
        };
        for i in 0..nn {
            let cell = &mut state.cells[k * nn + i];
            if cell[2] == 0.0 {
                continue;
            }
            let c = cell_at(i, n, h);
            let z = [cell[0], cell[1]];
            let a = 1.0 / (1.0 + dt * kappa(&p, z, cell_velocity(lt, c)));
            let vc = cell_velocity(t, c);
            let on = if live[k] { 1.0 } else { 0.0 };
            cell[0] = on * a * (z[0] + dt * vc[0]);
            cell[1] = on * a * (z[1] + dt * vc[1]);
        }
        state.lin_h[k] = [v[k][0], v[k][1], v[k][2], h];
    }
}

/// The stage's GPU state as a [`PatchCells`] (f64).
pub fn cells_from_gpu(meta: &[[u32; 4]], cells: &[[f32; 4]]) -> PatchCells {
    let count = meta.first().map_or(0, |m| m[0]) as usize;
    PatchCells {
        keys: (0..count)
            .map(|k| {
                let m = meta[1 + 2 * k];
                [m[0], m[1], m[2]]
            })
            .collect(),
        lin_h: (0..count)
            .map(|k| meta[2 + 2 * k].map(|x| f32::from_bits(x) as f64))
            .collect(),
        cells: cells
            .iter()
            .map(|c| [c[0] as f64, c[1] as f64, c[2] as f64])
            .collect(),
    }
}

/// The records this stage shares with its shaders have one layout on both sides.
#[cfg(test)]
#[test]
fn records_have_the_shaders_layout() {
    use crate::gpu::layout::{check, rust_words};
    let looped = rust_words!(LoopParams {
        cap,
        n,
        seg_aux,
        seg_state,
        dt,
        materials,
        contact_cap,
        _pad,
    });
    check("patch_loop", "LoopParams", looped);
}
