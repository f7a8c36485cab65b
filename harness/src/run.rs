//! One run of a stage: validate, poison outputs with NaN, launch, check, time. The pieces
//! the decode run ([`crate::decode::run`]) shares with this one are at the end: the memory
//! check before allocating, the uploads and the NaN-poisoned outputs.

use crate::check::{CheckReport, check_outputs_emulating};
use crate::error::CudaContext as _;
use crate::inputs::HostInputs;
use crate::timeline::{TimelineBuffer, TimelineRequest};
use crate::timing::{Timing, TimingProtocol, tflops, time};
use crate::{AttnParams, Error, Gpu, LaunchArgs, PrefillStage, Problem, Result, Stage};
use cudarc::driver::{CudaSlice, DevicePtr, DeviceRepr};
use reference::fp8_attention::Granularity;
use serde::Serialize;
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Input seed; `None` draws a fresh one (printed, so a failure can be replayed).
    pub seed: Option<u64>,
    pub check: bool,
    /// How to time the stage; `None` does not time it.
    pub timing: Option<TimingProtocol>,
    /// Reshapes the random inputs before the run (`inputs::steep_score_jump`, say), for
    /// tests of input-dependent paths; `None` for the plain normal inputs.
    pub adjust_inputs: Option<fn(&Problem, &mut HostInputs)>,
    /// Runs the stage's timeline kernels instead of its timed ones, recording the blocks
    /// asked for into a buffer that comes back in [`Outputs::timeline`]
    /// ([`crate::timeline`]); `None` for the timed kernels.
    pub timeline: Option<TimelineRequest>,
    /// The FP8 stages' scales: one per (batch, head) (the default, FlashAttention-3's) or one
    /// per tensor. Any other stage refuses anything but the default.
    pub fp8_scales: Granularity,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            seed: None,
            check: true,
            timing: Some(TimingProtocol::Gated),
            adjust_inputs: None,
            timeline: None,
            fp8_scales: Granularity::PerHead,
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct RunReport {
    pub stage: u32,
    pub slug: &'static str,
    pub problem: Problem,
    pub seed: u64,
    pub check: Option<CheckReport>,
    pub timing: Option<Timing>,
    pub tflops: Option<f64>,
    /// The time of the stage's preparation alone ([`PrefillStage::prepare`]), not counted in
    /// `timing`: the FP8 stages' quantization. `None` for a stage without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prepare: Option<Timing>,
}

/// The outputs of the last launch, for `--save`.
pub struct Outputs {
    pub inputs: HostInputs,
    pub o: Vec<u16>,
    pub lse: Vec<f32>,
    /// What the timeline kernels recorded, when [`RunOptions::timeline`] asked for it: the
    /// last launch's events (with timing, a warm launch's).
    pub timeline: Option<TimelineBuffer>,
}

/// A prefill stage and a problem it takes, checked once ([`PrefillRun::new`]), before any
/// GPU is touched: a bad problem is named as such even where there is no GPU.
#[derive(Clone, Copy)]
pub struct PrefillRun<'a> {
    stage: &'a dyn PrefillStage,
    problem: Problem,
}

impl<'a> PrefillRun<'a> {
    /// Refuses a bad problem, and head dims and dtypes the stage was not written for,
    /// naming what it supports.
    pub fn new(stage: &'a dyn PrefillStage, problem: &Problem) -> Result<PrefillRun<'a>> {
        problem.validate()?;
        stage
            .info()
            .check_kernel_variant(problem.shape.head_dim, problem.dtype)?;
        Ok(PrefillRun {
            stage,
            problem: *problem,
        })
    }

    pub fn stage(&self) -> &'a dyn PrefillStage {
        self.stage
    }

    pub fn problem(&self) -> &Problem {
        &self.problem
    }

    /// Runs it on `gpu`: the whole protocol every prefill stage goes through.
    pub fn run(&self, gpu: &Gpu, opts: &RunOptions) -> Result<(RunReport, Outputs)> {
        run_checked(self.stage, gpu, &self.problem, opts)
    }
}

/// Checks and runs `stage` on `problem`, for callers that hold any stage: a decode stage
/// is refused by name.
pub fn run_stage(
    stage: &dyn Stage,
    gpu: &Gpu,
    problem: &Problem,
    opts: &RunOptions,
) -> Result<(RunReport, Outputs)> {
    PrefillRun::new(stage.workload().prefill()?, problem)?.run(gpu, opts)
}

fn run_checked(
    stage: &dyn PrefillStage,
    gpu: &Gpu,
    problem: &Problem,
    opts: &RunOptions,
) -> Result<(RunReport, Outputs)> {
    let info = stage.info();
    if let Some(request) = &opts.timeline {
        crate::timeline::check_request(info, problem, request)?;
    }
    gpu.check_stage(info)?;
    crate::fp8::check_scales(stage, opts.fp8_scales)?;

    let seed = opts.seed.unwrap_or_else(crate::inputs::fresh_seed);
    let mut inputs = HostInputs::generate(problem, seed);
    if let Some(adjust) = opts.adjust_inputs {
        adjust(problem, &mut inputs);
    }
    let scratch_elements = stage.scratch_elements(problem).max(1);
    let (q_bytes, kv_bytes) = (problem.shape.q_len() * 2, problem.shape.kv_len() * 2);
    let (lse_bytes, scratch_bytes) = (problem.shape.lse_len() * 4, scratch_elements * 4);
    let timeline_shape = opts
        .timeline
        .map(|r| (r.blocks, crate::timeline::stride_for(problem)));
    let timeline_bytes = timeline_shape.map_or(0, |(b, s)| TimelineBuffer::bytes_for(b, s));
    let needed = 2 * q_bytes + 2 * kv_bytes + lse_bytes + scratch_bytes + timeline_bytes;
    ensure_fits(gpu, needed, || {
        format!(
            "for stage {} on {problem} (its workspace alone is {})",
            info.label(),
            crate::error::gib(scratch_bytes)
        )
    })?;

    let stream = gpu.stream();
    let (q, k, v) = (
        upload(gpu, &inputs.q, "Q")?,
        upload(gpu, &inputs.k, "K")?,
        upload(gpu, &inputs.v, "V")?,
    );
    let nan_bits = problem.dtype.to_bits(f32::NAN);
    let o = poisoned(gpu, problem.shape.q_len(), nan_bits, "O")?;
    let lse = poisoned(gpu, problem.shape.lse_len(), f32::NAN, "LSE")?;
    let scratch: CudaSlice<f32> = stream.alloc_zeros(scratch_elements).allocating(
        gpu.context(),
        scratch_bytes,
        "allocating the workspace",
    )?;
    let timeline = timeline_shape
        .map(|(blocks, stride)| DeviceTimeline::alloc(gpu, blocks, stride))
        .transpose()?;

    let args = {
        let ptr = |s: &CudaSlice<u16>| s.device_ptr(stream).0;
        let mut params = AttnParams::for_problem(problem)?;
        params.q = ptr(&q);
        params.k = ptr(&k);
        params.v = ptr(&v);
        params.o = o.device_ptr(stream).0;
        params.lse = lse.device_ptr(stream).0;
        params.scratch = scratch.device_ptr(stream).0;
        if let Some(t) = &timeline {
            t.point(gpu, &mut params);
        }
        LaunchArgs {
            problem: *problem,
            params,
            fp8_scales: opts.fp8_scales,
        }
    };

    stage.prepare(gpu, &args)?;
    stage.launch(gpu, &args)?;
    gpu.synchronize(&format!("stage {}", info.label()))?;
    let o_host = stream.clone_dtoh(&o).during("copying O back")?;
    let lse_host = stream.clone_dtoh(&lse).during("copying LSE back")?;

    let check = opts.check.then(|| {
        check_outputs_emulating(
            problem,
            &inputs,
            &o_host,
            &lse_host,
            stage.emulation(opts.fp8_scales),
        )
    });

    let timing = match opts.timing {
        Some(protocol) => {
            let t = time(gpu, protocol, || stage.launch(gpu, &args))?;
            gpu.synchronize(&format!("timing stage {}", info.label()))?;
            Some(t)
        }
        None => None,
    };
    // The preparation alone (the FP8 stages' quantization), for the stages that have one.
    let prepare = match opts.timing {
        Some(protocol) if stage.has_prepare() => {
            let t = time(gpu, protocol, || stage.prepare(gpu, &args))?;
            gpu.synchronize(&format!("timing stage {}'s preparation", info.label()))?;
            Some(t)
        }
        _ => None,
    };
    let timeline = timeline.map(|t| t.read_back(gpu)).transpose()?;
    let report = RunReport {
        stage: info.number,
        slug: info.slug,
        problem: *problem,
        seed,
        tflops: timing
            .as_ref()
            .map(|t| tflops(problem.flops(), t.median_ms)),
        check,
        timing,
        prepare,
    };
    Ok((
        report,
        Outputs {
            inputs,
            o: o_host,
            lse: lse_host,
            timeline,
        },
    ))
}

/// A timeline buffer on the device, zeroed (the host reads a slot's events up to its first
/// empty record), for the runs that record one: the prefill run and the backward's.
pub(crate) struct DeviceTimeline {
    buffer: CudaSlice<u64>,
    blocks: u32,
    stride: u32,
}

impl DeviceTimeline {
    pub(crate) fn alloc(gpu: &Gpu, blocks: u32, stride: u32) -> Result<DeviceTimeline> {
        let buffer = gpu
            .stream()
            .alloc_zeros(TimelineBuffer::words_for(blocks, stride))
            .allocating(
                gpu.context(),
                TimelineBuffer::bytes_for(blocks, stride),
                "allocating the timeline buffer",
            )?;
        Ok(DeviceTimeline {
            buffer,
            blocks,
            stride,
        })
    }

    /// Where the kernels' parameters say a timeline kernel records.
    pub(crate) fn point(&self, gpu: &Gpu, params: &mut AttnParams) {
        params.timeline = self.buffer.device_ptr(gpu.stream()).0;
        params.timeline_blocks = self.blocks as i32;
        params.timeline_stride = self.stride as i32;
    }

    pub(crate) fn read_back(self, gpu: &Gpu) -> Result<TimelineBuffer> {
        Ok(TimelineBuffer {
            blocks: self.blocks,
            stride: self.stride,
            words: gpu
                .stream()
                .clone_dtoh(&self.buffer)
                .during("copying the timeline back")?,
        })
    }
}

/// Refuses a run whose buffers need more than `gpu` has free, asked before allocating so
/// the error gives the whole run's need, not the one buffer that happened not to fit;
/// `during` says which run.
pub(crate) fn ensure_fits(gpu: &Gpu, needed: usize, during: impl FnOnce() -> String) -> Result<()> {
    let (free, total) = gpu.context().mem_get_info().during("reading free memory")?;
    if needed > free {
        return Err(Error::OutOfMemory {
            during: during(),
            requested_bytes: needed,
            free_bytes: Some(free),
            total_bytes: Some(total),
        });
    }
    Ok(())
}

/// `host` in a new device buffer; `what` names it in an error.
pub(crate) fn upload<T: DeviceRepr>(gpu: &Gpu, host: &[T], what: &str) -> Result<CudaSlice<T>> {
    gpu.stream().clone_htod(host).allocating(
        gpu.context(),
        std::mem::size_of_val(host),
        format!("copying {what} to the GPU"),
    )
}

/// A device buffer of `len` copies of `nan` (at least one, as CUDA allocates no empty
/// buffer): an element the kernel never writes then fails the check.
pub(crate) fn poisoned<T: DeviceRepr + Copy>(
    gpu: &Gpu,
    len: usize,
    nan: T,
    what: &str,
) -> Result<CudaSlice<T>> {
    let len = len.max(1);
    gpu.stream().clone_htod(&vec![nan; len]).allocating(
        gpu.context(),
        len * std::mem::size_of::<T>(),
        format!("poisoning {what}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stage::fakes::{DECODE, PREFILL};

    /// The one validation of a prefill run, before any GPU: a bad problem, then a head dim
    /// or dtype the stage has no kernel for; and a decode stage never gets that far.
    #[test]
    fn a_prefill_run_is_checked_before_the_gpu() {
        let p = Problem::new(1, 2, 64, 128);
        let run = PrefillRun::new(&PREFILL, &p).unwrap();
        assert_eq!((run.problem(), run.stage().info().number), (&p, 3));
        let err = |p: Problem| PrefillRun::new(&PREFILL, &p).err().unwrap().to_string();
        assert!(
            err(Problem::new(1, 2, 64, 96))
                .contains("head dim 96; it supports head dims [64, 128]")
        );
        let f16 = Problem {
            dtype: crate::DType::F16,
            ..p
        };
        assert!(err(f16).contains("dtype f16; it supports bf16"));
        let mut bad = p;
        bad.shape.kv_heads = 3;
        assert!(matches!(
            PrefillRun::new(&PREFILL, &bad),
            Err(Error::InvalidProblem(_))
        ));
        let err = DECODE.workload().prefill().err().unwrap();
        assert!(
            err.to_string()
                .contains("does not support prefill problems")
        );
    }
}
