//! The runner of every test binary whose tests find out only as they run whether this
//! machine lets them check what they are for ([`crate::testing`] re-exports it all).
//!
//! A test that did not check what it is for is reported as *ignored*, with its reason,
//! never as passed. Those binaries are built with `libtest-mimic` (`harness = false` in
//! their `[[test]]` section, and a `main` that calls [`run`]): each test is a [`Trial`]
//! made by [`trial`] from a function that returns [`Checked`], `Ok(())` when it checked
//! what it is for and `Err(Skipped)` with the reason when it could not. libtest-mimic
//! prints that as `ignored (reason)` and counts it among the ignored of its closing
//! `test result:` line, the same line libtest prints.
//!
//! A test that needs a GPU ([`Needs`]) is ignored up front where this machine cannot give
//! it one (no GPU, or one that cannot run its stage), as an `#[ignore]`d test is: `cargo
//! test` shows it as ignored, `cargo test -- --include-ignored` runs it, and it then says
//! why it checked nothing. Where the GPU can run it, a plain `cargo test` runs it.
//! Filters, `--list`, `--exact`, `--skip` and `--test-threads` work as in libtest;
//! `--nocapture` is accepted and changes nothing (libtest-mimic never captures output).

use crate::{Error, Gpu, StageInfo};
use libtest_mimic::{Arguments, Completion, Trial};
use std::sync::{Mutex, OnceLock};

/// Panics with every failure of a stage's test, one a line, so one run shows all that is
/// wrong.
pub(crate) fn assert_no_failures(info: &StageInfo, failures: &[String]) {
    assert!(
        failures.is_empty(),
        "stage {} failed on:\n{}",
        info.label(),
        failures.join("\n")
    );
}

/// Why a test could not check what it is for on this machine: it is reported as ignored,
/// with this reason.
#[derive(Clone, Debug, PartialEq)]
pub struct Skipped(pub String);

impl Skipped {
    pub fn because(reason: impl std::fmt::Display) -> Skipped {
        Skipped(reason.to_string())
    }
}

/// What a test returns: `Ok(())` when it checked what it is for (a failed check panics),
/// `Err` with the reason when it could not.
pub type Checked = Result<(), Skipped>;

/// What a test needs of the machine. A test whose needs this machine does not meet is
/// ignored up front (so `cargo test` shows it as ignored, and `--include-ignored` runs it,
/// to say why it checks nothing).
#[derive(Clone, Copy)]
pub enum Needs {
    /// The CPU alone: the test always runs (and may still find, as it runs, that it
    /// cannot check anything here, and say so).
    Cpu,
    /// An NVIDIA GPU.
    Gpu,
    /// A GPU that can run this stage: a Hopper GPU for the sm_90a stages.
    Stage(&'static StageInfo),
}

/// A GPU's name and compute capability, or why there is none.
type Probe = Result<(String, (u32, u32)), String>;

/// The GPU as found once per test binary.
fn probed_gpu() -> &'static Probe {
    static PROBE: OnceLock<Probe> = OnceLock::new();
    PROBE.get_or_init(|| {
        Gpu::open()
            .map(|gpu| (gpu.name.clone(), gpu.compute_capability))
            .map_err(|e| e.to_string())
    })
}

impl Needs {
    /// Why this machine does not meet these needs; `None` where it does.
    pub fn unmet(self) -> Option<String> {
        let gpu = match self {
            Needs::Cpu => return None,
            Needs::Gpu | Needs::Stage(_) => match probed_gpu() {
                Ok(gpu) => gpu,
                Err(e) => return Some(e.clone()),
            },
        };
        match self {
            Needs::Stage(info) if !info.gpu.runs_on(gpu.1) => Some(
                Error::WrongGpu {
                    stage: info.label(),
                    gpu: gpu.0.clone(),
                    needs: info.gpu.needs(),
                    have_major: gpu.1.0,
                    have_minor: gpu.1.1,
                }
                .to_string(),
            ),
            _ => None,
        }
    }
}

/// The reasons of the tests [`trial`] has ignored up front, for [`run`] to print once.
static IGNORED_UP_FRONT: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// What a test function may return: `()` (a test that always checks what it is for) or
/// [`Checked`].
pub trait IntoChecked {
    fn into_checked(self) -> Checked;
}

impl IntoChecked for () {
    fn into_checked(self) -> Checked {
        Ok(())
    }
}

impl IntoChecked for Checked {
    fn into_checked(self) -> Checked {
        self
    }
}

/// One test of a `harness = false` test binary: `test` runs unless `needs` are unmet
/// here, when it is ignored up front (and `--include-ignored` runs it all the same). A
/// panic in `test` fails it, as in libtest; `Err(Skipped)` reports it ignored with the
/// reason.
pub fn trial<R: IntoChecked>(
    name: impl Into<String>,
    needs: Needs,
    test: impl FnOnce() -> R + Send + 'static,
) -> Trial {
    let unmet = needs.unmet();
    let ignored = unmet.is_some();
    if let Some(reason) = unmet {
        let mut reasons = IGNORED_UP_FRONT.lock().unwrap_or_else(|e| e.into_inner());
        if !reasons.contains(&reason) {
            reasons.push(reason);
        }
    }
    Trial::ignorable_test(name, move || {
        Ok(match test().into_checked() {
            Ok(()) => Completion::Completed,
            Err(Skipped(reason)) => Completion::ignored_with(reason),
        })
    })
    .with_ignored_flag(ignored)
}

/// The `main` of a `harness = false` test binary: parses libtest's arguments, runs the
/// trials and exits with libtest's status. Before the run it says why the tests ignored
/// up front are ignored (libtest-mimic's own line for them says only `ignored`).
pub fn run(trials: Vec<Trial>) -> std::process::ExitCode {
    let args = Arguments::from_args();
    if !args.list && !args.ignored && !args.include_ignored {
        let reasons = IGNORED_UP_FRONT.lock().unwrap_or_else(|e| e.into_inner());
        for reason in reasons.iter() {
            eprintln!(
                "the tests below that need a GPU are ignored here: {reason}\n(`cargo test -- --include-ignored` runs them, and each then says why it checks nothing)"
            );
        }
    }
    libtest_mimic::run(&args, trials).exit_code()
}

/// The `main` of a `harness = false` test binary whose tests are functions:
/// `harness::test_main!(Needs::Cpu => [a, b], Needs::Gpu => [c]);` runs each as a
/// [`trial`] named after it, with those needs.
#[macro_export]
macro_rules! test_main {
    ($($needs:expr => [$($test:ident),* $(,)?]),* $(,)?) => {
        fn main() -> ::std::process::ExitCode {
            $crate::testing::run(vec![
                $($($crate::testing::trial(stringify!($test), $needs, $test),)*)*
            ])
        }
    };
}

/// `f`'s panic payload, or `Err` with its value where it did not panic, for a test of a
/// check that must fail. libtest-mimic never captures output, so the panic is kept off
/// stderr here, where it would read as a failure (other threads' panics still print).
pub fn expect_panic<R>(
    f: impl FnOnce() -> R + std::panic::UnwindSafe,
) -> Result<Box<dyn std::any::Any + Send>, R> {
    use std::cell::Cell;
    thread_local! {
        static QUIET: Cell<bool> = const { Cell::new(false) };
    }
    static HOOK: OnceLock<()> = OnceLock::new();
    HOOK.get_or_init(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(Cell::get) {
                previous(info);
            }
        }));
    });
    QUIET.with(|q| q.set(true));
    let result = std::panic::catch_unwind(f);
    QUIET.with(|q| q.set(false));
    match result {
        Ok(value) => Err(value),
        Err(payload) => Ok(payload),
    }
}

/// The GPU, for a test of a stage's kernels; `Err` with the reason where there is none or
/// it cannot run the stage (a Hopper stage on any other GPU). These are the only reasons
/// a stage's GPU test may give for checking nothing: kernels that were not compiled, a
/// launch refused, or a wrong result fail it.
pub fn gpu_for(info: &StageInfo) -> Result<Gpu, Skipped> {
    let gpu = Gpu::open().map_err(Skipped::because)?;
    gpu.check_stage(info).map_err(Skipped::because)?;
    Ok(gpu)
}

/// Runs probe kernel `name` of a stage (one that records what an instruction does, for a
/// test to hold layout-viz's model to it): one block of `threads`, its arguments one
/// zeroed f32 buffer per length of `lens`, returned in that order after the launch.
pub fn run_probe(
    info: &StageInfo,
    name: &str,
    threads: u32,
    lens: &[usize],
) -> Result<Vec<Vec<f32>>, Skipped> {
    use cudarc::driver::{LaunchConfig, PushKernelArg};
    let gpu = gpu_for(info)?;
    // A GPU that can run the stage but a probe that is not there is a failure, not a skip.
    let function = info
        .kernels
        .function(&gpu, name)
        .unwrap_or_else(|e| panic!("probe kernel {name}: {e}"));
    let stream = gpu.stream();
    let mut buffers = lens
        .iter()
        .map(|&n| stream.alloc_zeros::<f32>(n))
        .collect::<Result<Vec<_>, _>>()
        .expect("allocating a probe's outputs");
    let cfg = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut launch = stream.launch_builder(&function);
    for buffer in &mut buffers {
        launch.arg(buffer);
    }
    // SAFETY: a probe takes one f32 pointer per output, each buffer as long as it writes.
    unsafe { launch.launch(cfg) }.expect("launching the probe");
    stream.synchronize().expect("running the probe");
    Ok(buffers
        .iter()
        .map(|b| stream.clone_dtoh(b).expect("copying a probe's output back"))
        .collect())
}
