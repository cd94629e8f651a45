//! A GPU device lost during a run (a driver reset, a GPU fallen off the bus; provoked here
//! with `Device::destroy`) ends the run with an error that says so, writes nothing computed
//! after the loss, and leaves the last checkpoint readable and resumable.

use bristlecone::gpu::{shared_context, BackendChoice, GpuContext};
use bristlecone::io;
use bristlecone::run::{run_scene, Progress, RunError, RunOptions, Silent};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Destroys the device once the run has reached `at`.
struct DestroyDeviceAt {
    ctx: Arc<GpuContext>,
    at: u64,
}

impl Progress for DestroyDeviceAt {
    fn advance(&mut self, step: u64) {
        if step >= self.at {
            self.ctx.device.destroy();
        }
    }
}

#[test]
fn a_lost_device_ends_the_run_with_a_clear_error_and_the_last_checkpoint_intact() {
    let scene = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/scenes/small_pour.toml");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let opts = RunOptions {
        out_dir: Some(out.clone()),
        ..Default::default()
    };
    // A device of its own: a destroyed shared one would fail every later test of the suite.
    let ctx = Arc::new(GpuContext::new(BackendChoice::Auto).expect("an adapter"));
    // The fixture checkpoints at step 60 (of 120): the device goes right after it.
    let mut destroy = DestroyDeviceAt {
        ctx: ctx.clone(),
        at: 60,
    };
    let stop = AtomicBool::new(false);
    let e = run_scene(ctx, &scene, &opts, &stop, &mut destroy).expect_err("the device is lost");
    assert!(matches!(e, RunError::DeviceLost { .. }), "{e:?}");
    let shown = e.to_string();
    assert!(shown.contains("GPU device was lost"), "{shown}");
    assert!(
        shown.contains("checkpoint.bin (step 60), is intact") && shown.contains("--resume"),
        "{shown}"
    );
    let ck = io::read_checkpoint(&out.join("checkpoint.bin")).expect("the checkpoint reads");
    assert_eq!(ck.step, 60);
    let record = bristlecone::run::owner::RunRecord::read(&out)
        .unwrap()
        .unwrap();
    assert_eq!(record.checkpoint_step, Some(60));
    assert!(!out.join("run.lock").exists(), "the lock outlived the run");

    let resume = RunOptions {
        out_dir: Some(out.clone()),
        resume: Some(out.join("checkpoint.bin")),
        ..Default::default()
    };
    let r = run_scene(shared_context(), &scene, &resume, &stop, &mut Silent).expect("resumes");
    assert_eq!((r.first_step, r.steps_done), (60, 120));
    let last = io::read_stats(out.join("stats.csv")).unwrap();
    assert_eq!(last.last().map(|row| row.step), Some(120));
}
