//! What one compute dispatch costs on this adapter, whatever its work: 2000 dispatches of a
//! one-workgroup copy in one pass (direct; indirect with zero groups; alternating two
//! pipelines and bind groups, as a solver sweep does; one pass each), best of 3. On lavapipe
//! this is the floor under a sweep of 4 dispatches (see benches/fused.rs).
//! Twice, in one process: on the context every stage uses (wgpu's check of indirect
//! arguments off, see `GpuContext::open`) and on one with that check on (wgpu's default).

use bristlecone::gpu::{buffers, BackendChoice, GpuContext, Kernel, ShaderSource};
use std::time::Instant;

fn main() {
    // One context at a time (each holds lavapipe's worker threads), ours twice around wgpu's.
    for checked in [false, true, false] {
        let ctx = if checked {
            println!("indirect check on (wgpu's default):");
            GpuContext::with_indirect_check(BackendChoice::Auto)
        } else {
            println!("indirect check off (every stage's context):");
            GpuContext::new(BackendChoice::Auto)
        };
        run(&ctx.expect("GPU adapter"));
    }
}

fn run(ctx: &GpuContext) {
    let k = Kernel::new(ctx, ShaderSource::by_name("copy").unwrap()).unwrap();
    let k2 = Kernel::new(ctx, ShaderSource::by_name("copy").unwrap()).unwrap();
    let n = 256u32;
    let params = buffers::uniform_from(ctx, "p", &[n, 0, 0, 0]);
    let src = buffers::storage_zeroed(ctx, "s", n as u64 * 16).unwrap();
    let dst = buffers::storage_zeroed(ctx, "d", n as u64 * 16).unwrap();
    let dst2 = buffers::storage_zeroed(ctx, "d2", n as u64 * 16).unwrap();
    let zero = buffers::storage_zeroed(ctx, "z", 16).unwrap();
    let bg = k.bind(ctx, &[&params, &src, &dst]);
    let bg2 = k2.bind(ctx, &[&params, &dst, &dst2]);
    let reps = 2000;
    for mode in [
        "direct1",
        "indirect0",
        "alternate1",
        "alternate_indirect0",
        "direct1",
        "sepass",
    ] {
        let mut best = f64::MAX;
        for _ in 0..3 {
            let mut enc = ctx.device.create_command_encoder(&Default::default());
            if mode == "sepass" {
                for _ in 0..reps {
                    let mut pass = enc.begin_compute_pass(&Default::default());
                    k.dispatch(&mut pass, "copy", &bg, n);
                }
            } else {
                let mut pass = enc.begin_compute_pass(&Default::default());
                for i in 0..reps {
                    match mode {
                        "direct1" => k.dispatch(&mut pass, "copy", &bg, n),
                        "indirect0" => k.dispatch_indirect(&mut pass, "copy", &bg, &zero, 0),
                        "alternate1" => {
                            if i % 2 == 0 {
                                k.dispatch(&mut pass, "copy", &bg, n)
                            } else {
                                k2.dispatch(&mut pass, "copy", &bg2, n)
                            }
                        }
                        _ => {
                            if i % 2 == 0 {
                                k.dispatch_indirect(&mut pass, "copy", &bg, &zero, 0)
                            } else {
                                k2.dispatch_indirect(&mut pass, "copy", &bg2, &zero, 0)
                            }
                        }
                    }
                }
            }
            let cb = enc.finish();
            let t = Instant::now();
            ctx.queue.submit([cb]);
            ctx.wait();
            let e = t.elapsed().as_secs_f64();
            best = best.min(e);
        }
        println!("  {mode}: {:.1} us per dispatch", best / reps as f64 * 1e6);
    }
}
