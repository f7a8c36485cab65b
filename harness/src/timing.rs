//! Timing with CUDA events: warm up, then time each launch on its own and take the median.

use crate::error::CudaContext as _;
use crate::{Gpu, Result};
use cudarc::driver::sys::CUevent_flags;
use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct Timing {
    pub median_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
    pub iterations: usize,
}

/// How long to spend: warm-up until `WARMUP_MS` of work has run (module load, clocks
/// ramping and caches settle), then enough iterations for about `TARGET_MS`, within
/// [`MIN_ITERS`, `MAX_ITERS`].
pub const WARMUP_MS: f64 = 50.0;
pub const TARGET_MS: f64 = 300.0;
pub const MIN_ITERS: usize = 5;
pub const MAX_ITERS: usize = 200;

/// Times `launch` (which queues work on `gpu`'s stream) and returns the median of
/// per-launch event timings.
pub fn time(gpu: &Gpu, mut launch: impl FnMut() -> Result<()>) -> Result<Timing> {
    let ctx = gpu.context();
    // Timing needs events created with CU_EVENT_DEFAULT; cudarc's default disables timing.
    let event = || {
        ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .during("creating a timing event")
    };
    let (start, stop) = (event()?, event()?);

    let time_one = |launch: &mut dyn FnMut() -> Result<()>| -> Result<f64> {
        start.record(gpu.stream()).during("recording an event")?;
        launch()?;
        stop.record(gpu.stream()).during("recording an event")?;
        stop.synchronize().during("waiting for a timed launch")?;
        Ok(start.elapsed_ms(&stop).during("reading an event timer")? as f64)
    };

    let mut warm = 0.0;
    let mut first = f64::INFINITY;
    for _ in 0..1000 {
        let t = time_one(&mut launch)?;
        first = first.min(t);
        warm += t;
        if warm >= WARMUP_MS {
            break;
        }
    }
    let iterations = ((TARGET_MS / first.max(1e-3)) as usize).clamp(MIN_ITERS, MAX_ITERS);
    let mut samples = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        samples.push(time_one(&mut launch)?);
    }
    Ok(summarize(samples))
}

fn summarize(mut samples: Vec<f64>) -> Timing {
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
    }
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
        let t = summarize(vec![5.0, 1.0, 3.0]);
        assert_eq!(
            (t.median_ms, t.min_ms, t.max_ms, t.iterations),
            (3.0, 1.0, 5.0, 3)
        );
        assert_eq!(summarize(vec![4.0, 1.0, 3.0, 2.0]).median_ms, 2.5);
    }

    #[test]
    fn tflops_of_a_known_time() {
        // 4*16*4096^2*128 FLOPs in 1 ms is 137.4 TFLOP/s.
        let flops = 4.0 * 16.0 * 4096.0f64.powi(2) * 128.0;
        assert!((tflops(flops, 1.0) - 137.438_953_472).abs() < 1e-6);
    }
}
