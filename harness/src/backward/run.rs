//! One backward run: validate, run the forward for O and the LSE, poison the gradients
//! with NaN, run the backward, check, time the backward alone.

use super::check::{BackwardCheck, BackwardTensors, check_gradients};
use super::{BackwardArgs, BwdParams, SEMAPHORE_ROWS, backward_flops, dq_accum_elements};
use crate::error::CudaContext as _;
use crate::inputs::HostInputs;
use crate::run::{DeviceTimeline, ensure_fits, poisoned, upload};
use crate::timeline::{TimelineBuffer, TimelineRequest};
use crate::timing::{Timing, TimingProtocol, tflops, time};
use crate::{AttnParams, BackwardStage, Gpu, LaunchArgs, Problem, Result, Stage};
use cudarc::driver::{CudaSlice, DevicePtr};
use serde::Serialize;

#[derive(Clone, Debug)]
pub struct BackwardOptions {
    /// Input seed; `None` draws a fresh one (printed, so a failure can be replayed).
    pub seed: Option<u64>,
    pub check: bool,
    /// How to time the backward; `None` does not time it.
    pub timing: Option<TimingProtocol>,
    /// dQ's additions in a fixed order (key block by key block), so that the same inputs
    /// give the same bits on every run; off, they land in whatever order the blocks reach
    /// them.
    pub deterministic: bool,
    /// Runs the stage's timeline kernel (the main kernel's recording build) instead of its
    /// timed one, recording the blocks asked for into a buffer that comes back in
    /// [`BackwardOutputs::timeline`] ([`crate::timeline`]); the forward before it, and the
    /// backward's preprocess and postprocess, run as always. `None` for the timed kernels.
    pub timeline: Option<TimelineRequest>,
}

impl Default for BackwardOptions {
    fn default() -> Self {
        BackwardOptions {
            seed: None,
            check: true,
            timing: Some(TimingProtocol::Gated),
            deterministic: false,
            timeline: None,
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct BackwardReport {
    pub stage: u32,
    pub slug: &'static str,
    /// The forward stage that computed O and the LSE.
    pub forward_stage: u32,
    pub problem: Problem,
    pub seed: u64,
    pub deterministic: bool,
    pub check: Option<BackwardCheck>,
    /// The backward's kernels alone (preprocess, main, postprocess), not the forward.
    pub timing: Option<Timing>,
    /// With [`super::backward_flops`]: 2.5 times the forward's FLOPs.
    pub tflops: Option<f64>,
}

/// Everything the run saw and produced, for `--save` and the determinism test.
pub struct BackwardOutputs {
    pub inputs: HostInputs,
    pub d_o: Vec<u16>,
    pub o: Vec<u16>,
    pub lse: Vec<f32>,
    pub dq: Vec<u16>,
    pub dk: Vec<u16>,
    pub dv: Vec<u16>,
    /// What the timeline kernel recorded, when [`BackwardOptions::timeline`] asked for it:
    /// the last launch's events (with timing, a warm launch's).
    pub timeline: Option<TimelineBuffer>,
}

/// A backward stage and a problem it takes, checked before any GPU is touched.
#[derive(Clone, Copy)]
pub struct BackwardRun<'a> {
    stage: &'a dyn BackwardStage,
    problem: Problem,
}

impl<'a> BackwardRun<'a> {
    /// Refuses a bad problem, and head dims and dtypes the stage (or the forward it reads)
    /// was not written for, naming what it supports.
    pub fn new(stage: &'a dyn BackwardStage, problem: &Problem) -> Result<BackwardRun<'a>> {
        problem.validate()?;
        let (d, dtype) = (problem.shape.head_dim, problem.dtype);
        stage.info().check_kernel_variant(d, dtype)?;
        stage.forward().info().check_kernel_variant(d, dtype)?;
        Ok(BackwardRun {
            stage,
            problem: *problem,
        })
    }

    pub fn problem(&self) -> &Problem {
        &self.problem
    }

    pub fn run(
        &self,
        gpu: &Gpu,
        opts: &BackwardOptions,
    ) -> Result<(BackwardReport, BackwardOutputs)> {
        run_checked(self.stage, gpu, &self.problem, opts)
    }
}

/// dO's seed, drawn from the run's like K's and V's are (`HostInputs::generate`).
fn d_o_seed(seed: u64) -> u64 {
    seed ^ 0x644f
}

fn run_checked(
    stage: &dyn BackwardStage,
    gpu: &Gpu,
    problem: &Problem,
    opts: &BackwardOptions,
) -> Result<(BackwardReport, BackwardOutputs)> {
    let (info, forward) = (stage.info(), stage.forward());
    if let Some(request) = &opts.timeline {
        crate::timeline::check_request(info, problem, request)?;
    }
    gpu.check_stage(info)?;
    gpu.check_stage(forward.info())?;
    let s = &problem.shape;

    let seed = opts.seed.unwrap_or_else(crate::inputs::fresh_seed);
    let inputs = HostInputs::generate(problem, seed);
    let d_o_host = crate::inputs::normal_bits(s.q_len(), problem.dtype, d_o_seed(seed));
    let semaphores = s.batch * s.heads * s.seqlen_q.div_ceil(SEMAPHORE_ROWS);
    let dq_accum_len = dq_accum_elements(problem);
    let fwd_scratch = forward.scratch_elements(problem).max(1);
    let timeline_shape = opts
        .timeline
        .map(|r| (r.blocks, crate::timeline::backward_stride_for(problem)));
    let timeline_bytes = timeline_shape.map_or(0, |(b, s)| TimelineBuffer::bytes_for(b, s));
    // Q, O, dO, dQ; K, V, dK, dV (16-bit); LSE and D, dQ's fp32 accumulator, the counters.
    let needed = 4 * s.q_len() * 2
        + 4 * s.kv_len() * 2
        + 2 * s.lse_len() * 4
        + dq_accum_len * 4
        + semaphores * 4
        + fwd_scratch * 4
        + timeline_bytes;
    ensure_fits(gpu, needed, || {
        format!("for stage {} on {problem}", info.label())
    })?;

    let stream = gpu.stream();
    let (q, k, v, d_o) = (
        upload(gpu, &inputs.q, "Q")?,
        upload(gpu, &inputs.k, "K")?,
        upload(gpu, &inputs.v, "V")?,
        upload(gpu, &d_o_host, "dO")?,
    );
    let nan = problem.dtype.to_bits(f32::NAN);
    let o = poisoned(gpu, s.q_len(), nan, "O")?;
    let lse = poisoned(gpu, s.lse_len(), f32::NAN, "LSE")?;
    let dq = poisoned(gpu, s.q_len(), nan, "dQ")?;
    let dk = poisoned(gpu, s.kv_len(), nan, "dK")?;
    let dv = poisoned(gpu, s.kv_len(), nan, "dV")?;
    // Poisoned too: the preprocess must zero the accumulator and counters on every launch.
    let dq_accum = poisoned(gpu, dq_accum_len, f32::NAN, "dQ's accumulator")?;
    let delta = poisoned(gpu, s.lse_len(), f32::NAN, "D")?;
    let semaphore = poisoned(gpu, semaphores, -1i32, "the dQ counters")?;
    let fwd_scratch: CudaSlice<f32> = stream.alloc_zeros(fwd_scratch).allocating(
        gpu.context(),
        fwd_scratch * 4,
        "allocating the forward's workspace",
    )?;
    let timeline = timeline_shape
        .map(|(blocks, stride)| DeviceTimeline::alloc(gpu, blocks, stride))
        .transpose()?;

    let mut fwd = AttnParams::for_problem(problem)?;
    fwd.q = q.device_ptr(stream).0;
    fwd.k = k.device_ptr(stream).0;
    fwd.v = v.device_ptr(stream).0;
    fwd.o = o.device_ptr(stream).0;
    fwd.lse = lse.device_ptr(stream).0;
    fwd.scratch = fwd_scratch.device_ptr(stream).0;
    // The forward runs its timed kernel: its parameters carry no timeline.
    let forward_args = LaunchArgs {
        problem: *problem,
        params: fwd,
        fp8_scales: reference::fp8_attention::Granularity::PerHead,
    };
    forward.prepare(gpu, &forward_args)?;
    forward.launch(gpu, &forward_args)?;
    gpu.synchronize(&format!("the forward, stage {}", forward.info().label()))?;

    // The backward's main kernel records, where a timeline was asked for: its launch picks
    // the timeline kernel when `fwd.timeline` is set (`BackwardStage::launch_backward`).
    if let Some(t) = &timeline {
        t.point(gpu, &mut fwd);
    }
    let args = BackwardArgs {
        problem: *problem,
        params: BwdParams {
            fwd,
            d_o: d_o.device_ptr(stream).0,
            dq: dq.device_ptr(stream).0,
            dk: dk.device_ptr(stream).0,
            dv: dv.device_ptr(stream).0,
            dq_accum: dq_accum.device_ptr(stream).0,
            delta: delta.device_ptr(stream).0,
            dq_semaphore: semaphore.device_ptr(stream).0,
            deterministic: i32::from(opts.deterministic),
        },
    };
    stage.launch_backward(gpu, &args)?;
    gpu.synchronize(&format!("stage {}", info.label()))?;
    let back = |buf: &CudaSlice<u16>, what: &str| {
        stream
            .clone_dtoh(buf)
            .during(format!("copying {what} back"))
    };
    let outputs = BackwardOutputs {
        d_o: d_o_host,
        o: back(&o, "O")?,
        lse: stream.clone_dtoh(&lse).during("copying LSE back")?,
        dq: back(&dq, "dQ")?,
        dk: back(&dk, "dK")?,
        dv: back(&dv, "dV")?,
        inputs,
        timeline: None,
    };

    let check = opts.check.then(|| {
        let t = BackwardTensors {
            q: &outputs.inputs.q,
            k: &outputs.inputs.k,
            v: &outputs.inputs.v,
            o: &outputs.o,
            lse: &outputs.lse,
            d_o: &outputs.d_o,
            dq: &outputs.dq,
            dk: &outputs.dk,
            dv: &outputs.dv,
        };
        check_gradients(problem, seed, &t)
    });
    let timing = match opts.timing {
        Some(protocol) => {
            let t = time(gpu, protocol, || stage.launch_backward(gpu, &args))?;
            gpu.synchronize(&format!("timing stage {}", info.label()))?;
            Some(t)
        }
        None => None,
    };
    let timeline = timeline.map(|t| t.read_back(gpu)).transpose()?;
    let report = BackwardReport {
        stage: info.number,
        slug: info.slug,
        forward_stage: forward.info().number,
        problem: *problem,
        seed,
        deterministic: opts.deterministic,
        tflops: timing
            .as_ref()
            .map(|t| tflops(backward_flops(problem), t.median_ms)),
        check,
        timing,
    };
    Ok((
        report,
        BackwardOutputs {
            timeline,
            ..outputs
        },
    ))
}

/// Checks and runs `stage` on `problem` for callers that hold any stage: a prefill or
/// decode stage is refused by name.
pub fn run_backward_stage(
    stage: &dyn Stage,
    gpu: &Gpu,
    problem: &Problem,
    opts: &BackwardOptions,
) -> Result<(BackwardReport, BackwardOutputs)> {
    BackwardRun::new(stage.workload().backward()?, problem)?.run(gpu, opts)
}
