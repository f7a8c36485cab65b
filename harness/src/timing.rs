//! Timing with CUDA events: warm up, then time each launch on its own and take the median.
//! The timed launches are queued behind a gate (a kernel that waits), so they run back to
//! back and each event pair times the GPU's work, not the host's time to launch it; the
//! caller picks that or the older ungated protocol ([`TimingProtocol`], `--timing`).

use crate::error::CudaContext as _;
use crate::kernels::HARNESS_KERNELS;
use crate::{Gpu, Result};
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{LaunchConfig, PushKernelArg};
use serde::Serialize;
use std::fmt;

#[derive(Clone, Debug, Serialize)]
pub struct Timing {
    pub median_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
    pub iterations: usize,
    pub protocol: TimingProtocol,
}

/// How the timed launches are queued. The gate is the protocol of every run of record;
/// the ungated one is kept to measure what the gate changes (the book's Results chapter,
/// `bench/records/h200-prefill/2026-11-21-stages-1-5/gate/`), and `bench/baselines.py --timing` takes the same names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TimingProtocol {
    /// Every timed launch queued behind the gate before the first runs, so each event
    /// pair times the GPU's work alone.
    #[default]
    Gated,
    /// Each timed launch on an idle stream: the host's time to launch it is timed too.
    Ungated,
}

impl TimingProtocol {
    pub const ALL: [TimingProtocol; 2] = [TimingProtocol::Gated, TimingProtocol::Ungated];

    /// The name the command line, the JSON and `bench/baselines.py` use.
    pub fn name(self) -> &'static str {
        match self {
            TimingProtocol::Gated => "gated",
            TimingProtocol::Ungated => "ungated",
        }
    }

    /// The protocol in words, for reports that record how they were timed.
    pub fn describe(self) -> &'static str {
        match self {
            TimingProtocol::Gated => {
                "the timed launches queued behind a gate kernel, so each event pair times the GPU's work alone"
            }
            TimingProtocol::Ungated => {
                "each timed launch on an idle stream, the host's launch time included"
            }
        }
    }
}

impl fmt::Display for TimingProtocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for TimingProtocol {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        TimingProtocol::ALL
            .into_iter()
            .find(|p| p.name() == s.trim().to_ascii_lowercase())
            .ok_or_else(|| {
                format!("unknown timing protocol `{s}`; flashlab supports gated and ungated")
            })
    }
}

/// How long to spend: warm-up until `WARMUP_MS` of work has run (module load, clocks
/// ramping and caches settle), then enough iterations for about `TARGET_MS`, within
/// [`MIN_ITERS`, `MAX_ITERS`].
pub const WARMUP_MS: f64 = 50.0;
pub const TARGET_MS: f64 = 300.0;
pub const MIN_ITERS: usize = 5;
pub const MAX_ITERS: usize = 200;
/// `FLASHLAB_WARMUP_MS`, else [`WARMUP_MS`]: how much work the warm-up runs. A few seconds
/// of it time a kernel in the state a sustained load leaves the GPU in, its clock held at
/// the power limit (`bench/baselines.py --warmup-ms` is the same for the baselines; book:
/// Results, "The clock under sustained load").
pub fn warmup_ms() -> f64 {
    std::env::var("FLASHLAB_WARMUP_MS")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|ms| ms.is_finite() && *ms >= 0.0)
        .unwrap_or(WARMUP_MS)
}
/// The gate holds the stream this long per timed launch: far more than the host needs to
/// queue one (a few microseconds to tens), so every launch is queued before the first runs.
pub const GATE_US_PER_LAUNCH: i64 = 200;

/// Times `launch` (which queues work on `gpu`'s stream) under `protocol` and returns the
/// median of per-launch event timings.
///
/// Why the gate: recorded on an idle stream, a start event completes at once, and the GPU
/// then waits for the host to launch the kernel: that wait, microseconds (tens, for a
/// Python framework), would be timed as the kernel's. Behind the gate, launch i starts
/// when launch i-1 ends, and its event pair times it alone. PyTorch's baselines are timed
/// the same way (`bench/baselines.py`), so the two sides compare GPU time with GPU time.
pub fn time(
    gpu: &Gpu,
    protocol: TimingProtocol,
    launch: impl FnMut() -> Result<()>,
) -> Result<Timing> {
    time_between(gpu, protocol, || Ok(()), launch)
}

/// [`time`] with `between` queued before each launch, outside its event pair: the decode
/// stages flush the L2 cache there ([`crate::decode`]), so each launch reads its K/V cache
/// from memory as a model's next layer would, not from the L2 the last launch filled.
pub fn time_between(
    gpu: &Gpu,
    protocol: TimingProtocol,
    mut between: impl FnMut() -> Result<()>,
    mut launch: impl FnMut() -> Result<()>,
) -> Result<Timing> {
    let ctx = gpu.context();
    // Timing needs events created with CU_EVENT_DEFAULT; cudarc's default disables timing.
    let event = || {
        ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .during("creating a timing event")
    };
    let (start, stop) = (event()?, event()?);
    // One launch on an idle stream, host launch time included.
    type Queue<'a> = &'a mut dyn FnMut() -> Result<()>;
    let time_one = |between: Queue, launch: Queue| -> Result<f64> {
        between()?;
        start.record(gpu.stream()).during("recording an event")?;
        launch()?;
        stop.record(gpu.stream()).during("recording an event")?;
        stop.synchronize().during("waiting for a timed launch")?;
        Ok(start.elapsed_ms(&stop).during("reading an event timer")? as f64)
    };

    // Warm-up, one launch at a time: its timings (gaps included) only size the run. At most
    // 1000 launches for the default 50 ms (tiny kernels stop there), more in proportion to
    // a longer one.
    let warmup_ms = warmup_ms();
    let max_launches = (1000.0 * (warmup_ms / WARMUP_MS).max(1.0)) as usize;
    let mut warm = 0.0;
    let mut first = f64::INFINITY;
    for _ in 0..max_launches {
        let t = time_one(&mut between, &mut launch)?;
        first = first.min(t);
        warm += t;
        if warm >= warmup_ms {
            break;
        }
    }
    let iterations = ((TARGET_MS / first.max(1e-3)) as usize).clamp(MIN_ITERS, MAX_ITERS);

    if protocol == TimingProtocol::Ungated {
        let samples = (0..iterations)
            .map(|_| time_one(&mut between, &mut launch))
            .collect::<Result<Vec<_>>>()?;
        return Ok(summarize(samples, protocol));
    }
    let pairs = (0..iterations)
        .map(|_| Ok((event()?, event()?)))
        .collect::<Result<Vec<_>>>()?;
    gate(gpu, GATE_US_PER_LAUNCH * iterations as i64)?;
    for (start, stop) in &pairs {
        between()?;
        start.record(gpu.stream()).during("recording an event")?;
        launch()?;
        stop.record(gpu.stream()).during("recording an event")?;
    }
    gpu.synchronize("the timed launches")?;
    let samples = pairs
        .iter()
        .map(|(start, stop)| Ok(start.elapsed_ms(stop).during("reading an event timer")? as f64))
        .collect::<Result<Vec<_>>>()?;
    Ok(summarize(samples, protocol))
}

/// Holds `gpu`'s stream for `us` microseconds (`harness/kernels/spin.cu`). Without the
/// harness's kernels (no nvcc at build time) there is nothing to time either, so this
/// only reports why.
fn gate(gpu: &Gpu, us: i64) -> Result<()> {
    let func = HARNESS_KERNELS.function(gpu, "timing_spin")?;
    let ns = us * 1000;
    let cfg = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (1, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut b = gpu.stream().launch_builder(&func);
    b.arg(&ns);
    // SAFETY: the kernel takes one long long and touches no memory.
    unsafe { b.launch(cfg) }.during("launching the timing gate")?;
    Ok(())
}

fn summarize(mut samples: Vec<f64>, protocol: TimingProtocol) -> Timing {
    samples.sort_by(f64::total_cmp);
    let n = samples.len();
    let median = if n % 2 == 1 {
        samples[n / 2]
    } else {
        0.5 * (samples[n / 2 - 1] + samples[n / 2])
    };
    Timing {
        median_ms: median,
        min_ms: samples[0],
        max_ms: samples[n - 1],
        iterations: n,
        protocol,
    }
}

/// GB/s for `bytes` moved in `ms` milliseconds.
pub fn gb_per_s(bytes: f64, ms: f64) -> f64 {
    bytes / (ms * 1e-3) / 1e9
}

/// TFLOP/s for `flops` done in `ms` milliseconds.
pub fn tflops(flops: f64, ms: f64) -> f64 {
    flops / (ms * 1e-3) / 1e12
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        let t = summarize(vec![5.0, 1.0, 3.0], TimingProtocol::Gated);
        assert_eq!(
            (t.median_ms, t.min_ms, t.max_ms, t.iterations),
            (3.0, 1.0, 5.0, 3)
        );
        let even = summarize(vec![4.0, 1.0, 3.0, 2.0], TimingProtocol::Ungated);
        assert_eq!(even.median_ms, 2.5);
        assert_eq!(even.protocol, TimingProtocol::Ungated);
    }

    #[test]
    fn protocols_parse_by_the_names_they_print() {
        for p in TimingProtocol::ALL {
            assert_eq!(p.name().parse::<TimingProtocol>(), Ok(p));
            assert_eq!(serde_json::to_value(p).unwrap(), p.name());
        }
        assert_eq!(TimingProtocol::default(), TimingProtocol::Gated);
        let err = "async".parse::<TimingProtocol>().unwrap_err();
        assert!(err.contains("gated and ungated"), "{err}");
    }

    #[test]
    fn tflops_of_a_known_time() {
        // 4*16*4096^2*128 FLOPs in 1 ms is 137.4 TFLOP/s.
        let flops = 4.0 * 16.0 * 4096.0f64.powi(2) * 128.0;
        assert!((tflops(flops, 1.0) - 137.438_953_472).abs() < 1e-6);
    }

    #[test]
    fn gb_per_s_of_a_known_time() {
        // 33.5 MB (a decode step of 8k keys) in 16 microseconds is 2097 GB/s.
        assert!((gb_per_s(33_554_432.0, 0.016) - 2097.152).abs() < 1e-9);
    }
}
