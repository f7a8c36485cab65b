//! What the README's first command, `just stage 3`, meets on a machine without a GPU (CI):
//! the NoGpu error and exit 2, never a panic. Its own binary (`harness = false`), so that
//! on a machine with a GPU the test is reported ignored rather than passed.

use harness::testing::{Checked, Needs, Skipped};

harness::test_main!(Needs::Cpu => [stage_without_a_gpu_says_so_and_exits_2]);

fn stage_without_a_gpu_says_so_and_exits_2() -> Checked {
    // The one reason to check nothing: a GPU is present, and this is the no-GPU path.
    if let Ok(gpu) = harness::Gpu::open() {
        return Err(Skipped(format!(
            "a GPU is present ({}): this checks what a machine without one answers",
            gpu.name
        )));
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args(["stage", "3", "--seqlen", "128", "--no-time"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("flashlab: no NVIDIA GPU found"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    Ok(())
}
