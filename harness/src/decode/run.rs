//! One decode run: validate, build the cache, poison every output with NaN, launch the
//! split and combine kernels, check each sequence against the oracle, and time the step
//! with the L2 cache flushed before each launch.

use super::cache::{DecodeInputs, validate_block_table};
use super::{
    DecodeLaunch, DecodeParams, DecodeProblem, DecodeTiles, KvLayout, SplitRule, check_splits,
    choose_splits, wave_efficiency,
};
use crate::check::{CheckReport, check_outputs_f64};
use crate::error::CudaContext as _;
use crate::run::{ensure_fits, poisoned, upload};
use crate::timing::{Timing, TimingProtocol, gb_per_s, time_between};
use crate::{AttnParams, DecodeStage, Gpu, Result};
use cudarc::driver::{CudaSlice, DevicePtr};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;

#[derive(Clone, Debug)]
pub struct DecodeOptions {
    /// Input seed; `None` draws a fresh one (printed, so a failure can be replayed).
    pub seed: Option<u64>,
    pub check: bool,
    pub timing: Option<TimingProtocol>,
    /// Flush the L2 cache before each timed launch, so the K/V cache comes from memory as
    /// it does when a model's layers take turns (an 8k cache of 8 heads, 32 MiB, would
    /// otherwise stay in an H100's 50 MiB L2 from one launch to the next).
    pub cold_l2: bool,
    /// With timing, also time the read floor of the step's K/V bytes
    /// ([`crate::sol::read_floor`]): what a kernel that only reads them reaches, timed
    /// the same way. The bench, which runs each shape many times, measures it once a shape.
    pub read_floor: bool,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            seed: None,
            check: true,
            timing: Some(TimingProtocol::Gated),
            cold_l2: true,
            read_floor: true,
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct DecodeReport {
    pub stage: u32,
    pub slug: &'static str,
    pub problem: DecodeProblem,
    pub splits: usize,
    /// "heuristic" or "given".
    pub splits_from: &'static str,
    /// The stage's rule for the heuristic, whether or not it chose the count.
    pub split_rule: SplitRule,
    pub tiles: DecodeTiles,
    /// Blocks of one split: every (sequence, K/V head, row tile).
    pub blocks_per_split: usize,
    /// One key tile's K and V bytes, what the one-wave rule counts its slots in.
    pub kv_tile_bytes: usize,
    /// The split kernel's blocks one SM holds at once.
    pub blocks_per_sm: u32,
    /// The block slots of one wave that the split heuristic counted
    /// ([`SplitRule::slots`]).
    pub slots: usize,
    /// How much of its last wave of `slots` the split kernel's grid fills
    /// ([`wave_efficiency`]).
    pub wave_efficiency: f64,
    pub seed: u64,
    /// The worst checked sequence's numbers, with rows and NaN counts over all of them.
    pub check: Option<CheckReport>,
    pub sequences_checked: usize,
    pub timing: Option<Timing>,
    /// Unique K/V bytes read per second (`DecodeProblem::kv_bytes`).
    pub gb_per_s: Option<f64>,
    pub cold_l2: bool,
    /// With timing and [`DecodeOptions::read_floor`]: the roofline of this size.
    pub read_floor: Option<ReadFloor>,
}

/// A streaming read of the step's K/V bytes, timed as the step is.
#[derive(Clone, Debug, Serialize)]
pub struct ReadFloor {
    pub timing: Timing,
    pub gb_per_s: f64,
}

pub struct DecodeOutputs {
    pub inputs: DecodeInputs,
    pub o: Vec<u16>,
    pub lse: Vec<f32>,
}

/// A decode stage and a problem it takes, checked once ([`DecodeRun::new`]), before any GPU
/// is touched (the split count, which depends on the GPU, is checked once chosen).
#[derive(Clone, Copy)]
pub struct DecodeRun<'a> {
    stage: &'a dyn DecodeStage,
    problem: &'a DecodeProblem,
}

impl<'a> DecodeRun<'a> {
    /// Refuses a bad problem, and head dims and dtypes the stage was not written for,
    /// naming what it supports.
    pub fn new(stage: &'a dyn DecodeStage, problem: &'a DecodeProblem) -> Result<DecodeRun<'a>> {
        problem.validate()?;
        stage
            .info()
            .check_kernel_variant(problem.head_dim, problem.dtype)?;
        Ok(DecodeRun { stage, problem })
    }

    pub fn problem(&self) -> &'a DecodeProblem {
        self.problem
    }

    /// Runs it on `gpu`: the protocol every decode run goes through.
    pub fn run(&self, gpu: &Gpu, opts: &DecodeOptions) -> Result<(DecodeReport, DecodeOutputs)> {
        run_checked(self.stage, gpu, self.problem, opts)
    }
}

/// Checks and runs decode stage `stage` on `p`.
pub fn run_decode(
    stage: &dyn DecodeStage,
    gpu: &Gpu,
    p: &DecodeProblem,
    opts: &DecodeOptions,
) -> Result<(DecodeReport, DecodeOutputs)> {
    DecodeRun::new(stage, p)?.run(gpu, opts)
}

fn run_checked(
    decode: &dyn DecodeStage,
    gpu: &Gpu,
    p: &DecodeProblem,
    opts: &DecodeOptions,
) -> Result<(DecodeReport, DecodeOutputs)> {
    let info = decode.info();
    gpu.check_stage(info)?;
    let tiles = decode.tiles();
    let blocks_per_sm = decode.blocks_per_sm(gpu, p)?;
    let rule = decode.split_rule();
    let slots = rule.slots(
        gpu.multiprocessors as usize,
        blocks_per_sm as usize,
        tiles.kv_tile_bytes(p.head_dim),
    );
    let splits = choose_splits(p, &tiles, slots, rule);
    check_splits(p, splits)?;

    let seed = opts.seed.unwrap_or_else(crate::inputs::fresh_seed);
    let inputs = DecodeInputs::generate(p, seed);
    validate_block_table(p, &inputs.block_table, inputs.pages)?;

    let partial_elements = if splits > 1 {
        splits * (p.q_len() + p.lse_len())
    } else {
        0
    };
    let flush_bytes = if opts.timing.is_some() && opts.cold_l2 {
        crate::sol::StreamingRead::l2_flush_bytes(gpu)?
    } else {
        0
    };
    let needed = 4 * p.q_len()
        + 2 * 2 * inputs.k.len()
        + 4 * p.lse_len()
        + 4 * partial_elements
        + 4 * (p.batch + inputs.block_table.len())
        + 4 * tiles.blocks_per_split(p)
        + flush_bytes;
    ensure_fits(gpu, needed, || format!("for stage {} on {p}", info.label()))?;

    let stream = gpu.stream();
    let (q, k, v) = (
        upload(gpu, &inputs.q, "Q")?,
        upload(gpu, &inputs.k, "K")?,
        upload(gpu, &inputs.v, "V")?,
    );
    let lengths: Vec<i32> = p.seqlens_k.iter().map(|&n| n as i32).collect();
    let seqlens_k = upload(gpu, &lengths, "the cache lengths")?;
    let table = (!inputs.block_table.is_empty())
        .then(|| upload(gpu, &inputs.block_table, "the block table"))
        .transpose()?;
    let nan = p.dtype.to_bits(f32::NAN);
    let mut o = poisoned(gpu, p.q_len(), nan, "O")?;
    let mut lse = poisoned(gpu, p.lse_len(), f32::NAN, "LSE")?;
    // Poisoned too: a split that skipped its write would hand the combine NaN.
    let o_partial = poisoned(
        gpu,
        splits * p.q_len() * usize::from(splits > 1),
        f32::NAN,
        "the partial O",
    )?;
    let lse_partial = poisoned(
        gpu,
        splits * p.lse_len() * usize::from(splits > 1),
        f32::NAN,
        "the partial LSE",
    )?;

    // Zero, as the stages that count finished splits need them before every launch (each
    // launch leaves them zero again: the check below runs the second launch).
    let split_counters = stream
        .alloc_zeros::<i32>(tiles.blocks_per_split(p).max(1))
        .allocating(
            gpu.context(),
            4 * tiles.blocks_per_split(p).max(1),
            "allocating the split counters",
        )?;
    let ptr16 = |s: &CudaSlice<u16>| s.device_ptr(stream).0;
    let ptr32 = |s: &CudaSlice<f32>| s.device_ptr(stream).0;
    let scale = p.softmax_scale();
    let page_size = p.layout.page_size().unwrap_or(0);
    let params = DecodeParams {
        attn: AttnParams {
            q: ptr16(&q),
            k: ptr16(&k),
            v: ptr16(&v),
            o: ptr16(&o),
            lse: ptr32(&lse),
            scratch: 0,
            batch: p.batch as i32,
            heads: p.heads as i32,
            kv_heads: p.kv_heads as i32,
            seqlen_q: p.seqlen_q as i32,
            seqlen_k: p.capacity() as i32,
            head_dim: p.head_dim as i32,
            causal: p.causal as i32,
            scale,
            scale_log2: scale * std::f32::consts::LOG2_E,
            ..Default::default()
        },
        seqlens_k: seqlens_k.device_ptr(stream).0,
        block_table: table.as_ref().map_or(0, |t| t.device_ptr(stream).0),
        o_partial: ptr32(&o_partial),
        lse_partial: ptr32(&lse_partial),
        page_size: page_size as i32,
        page_shift: page_size.checked_ilog2().unwrap_or(0) as i32,
        pages_per_seq: if matches!(p.layout, KvLayout::Paged { .. }) {
            p.pages_per_seq() as i32
        } else {
            0
        },
        num_splits: splits as i32,
        tiles_per_split: tiles.key_tiles(p).div_ceil(splits) as i32,
        group: p.group() as i32,
        split_counters: split_counters.device_ptr(stream).0,
        cache_capacity: match p.layout {
            KvLayout::Contiguous => p.capacity() as i32,
            KvLayout::Paged { .. } => 0,
        },
    };
    let args = DecodeLaunch {
        problem: p,
        params,
        splits,
    };

    // Twice, O and LSE poisoned again before the second: a launch must leave its workspace
    // as it found it (stage 15's split counters back at zero), since timing relaunches it,
    // and the check sees the second launch's results.
    decode.launch_decode(gpu, &args)?;
    gpu.synchronize(&format!("stage {}", info.label()))?;
    stream
        .memcpy_htod(&vec![nan; p.q_len()], &mut o)
        .during("poisoning O again")?;
    stream
        .memcpy_htod(&vec![f32::NAN; p.lse_len().max(1)], &mut lse)
        .during("poisoning LSE again")?;
    decode.launch_decode(gpu, &args)?;
    gpu.synchronize(&format!("stage {} (second launch)", info.label()))?;
    let o_host = stream.clone_dtoh(&o).during("copying O back")?;
    let lse_host = stream.clone_dtoh(&lse).during("copying LSE back")?;
    let (check, sequences_checked) = if opts.check {
        let (report, n) = check_decode(p, &inputs, &o_host, &lse_host);
        (Some(report), n)
    } else {
        (None, 0)
    };

    let timing = match opts.timing {
        Some(protocol) => {
            // ANCHOR: flush
            // The flush reads a buffer twice the L2's size with plain loads
            // (sol::StreamingRead::l2_flush), leaving clean lines: flushed with a memset
            // instead, the dirty lines' write-back cost stage 14 9% at 8k keys (1061
            // against 1161 GB/s, the same build); with evict-first loads the last launch's
            // K/V stayed in the L2 where they fit (book: "Results", "A flush that did not
            // flush").
            let mut flush = (flush_bytes > 0)
                .then(|| crate::sol::StreamingRead::l2_flush(gpu))
                .transpose()?;
            let t = time_between(
                gpu,
                protocol,
                || match &mut flush {
                    Some(flush) => flush.queue(gpu),
                    None => Ok(()),
                },
                || decode.launch_decode(gpu, &args),
            )?;
            // ANCHOR_END: flush
            gpu.synchronize(&format!("timing stage {}", info.label()))?;
            Some(t)
        }
        None => None,
    };
    // The run's buffers are freed first: the floor allocates a buffer of as many bytes as
    // the cache, which beside it could run out of memory where the run itself fits.
    drop((
        q,
        k,
        v,
        o,
        lse,
        o_partial,
        lse_partial,
        seqlens_k,
        table,
        split_counters,
    ));
    let read_floor = match opts.timing {
        Some(protocol) if opts.read_floor => {
            let t = crate::sol::read_floor(gpu, protocol, p.kv_bytes() as usize)?;
            Some(ReadFloor {
                gb_per_s: gb_per_s(p.kv_bytes(), t.median_ms),
                timing: t,
            })
        }
        _ => None,
    };
    let report = DecodeReport {
        stage: info.number,
        slug: info.slug,
        problem: p.clone(),
        splits,
        splits_from: if p.splits.is_some() {
            "given"
        } else {
            "heuristic"
        },
        split_rule: rule,
        tiles,
        blocks_per_split: tiles.blocks_per_split(p),
        kv_tile_bytes: tiles.kv_tile_bytes(p.head_dim),
        blocks_per_sm,
        slots,
        wave_efficiency: wave_efficiency(tiles.blocks_per_split(p), slots, splits),
        seed,
        check,
        sequences_checked,
        gb_per_s: timing.as_ref().map(|t| gb_per_s(p.kv_bytes(), t.median_ms)),
        timing,
        cold_l2: opts.cold_l2,
        read_floor,
    };
    Ok((
        report,
        DecodeOutputs {
            inputs,
            o: o_host,
            lse: lse_host,
        },
    ))
}

/// Sequences whose oracle costs at most this many multiply-adds in all are all checked;
/// past it, the first, the last and two more drawn from the seed.
pub const FULL_CHECK_MACS: u128 = 1 << 32;

/// Checks every element was written, then each checked sequence's rows against the
/// oracle under the prefill stages' rule ([`check_outputs_f64`]): the sequence as a batch-1
/// problem, its keys gathered through the layout.
pub fn check_decode(
    p: &DecodeProblem,
    inputs: &DecodeInputs,
    o: &[u16],
    lse: &[f32],
) -> (CheckReport, usize) {
    let nan_elements = o.iter().filter(|&&b| p.dtype.from_bits(b).is_nan()).count()
        + lse.iter().filter(|x| x.is_nan()).count();
    let macs: u128 = p
        .seqlens_k
        .iter()
        .map(|&n| (p.heads * p.seqlen_q * n * p.head_dim) as u128)
        .sum();
    let mut sequences: Vec<usize> = if macs <= FULL_CHECK_MACS {
        (0..p.batch).collect()
    } else {
        let mut rng = StdRng::seed_from_u64(inputs.seed ^ 0xdec0de);
        let mut s = vec![
            0,
            p.batch - 1,
            rng.random_range(0..p.batch),
            rng.random_range(0..p.batch),
        ];
        s.sort_unstable();
        s.dedup();
        s
    };
    sequences.sort_unstable();
    let (q_rows, lse_rows) = (p.seqlen_q * p.heads * p.head_dim, p.heads * p.seqlen_q);
    // One set of f64 buffers for every checked sequence: see DecodeInputs::sequence_f64.
    let mut qkv = [Vec::new(), Vec::new(), Vec::new()];
    let reports: Vec<CheckReport> = sequences
        .iter()
        .map(|&b| {
            inputs.sequence_f64(p, b, &mut qkv);
            let [q, k, v] = &qkv;
            check_outputs_f64(
                &p.sequence_problem(b),
                inputs.seed,
                q,
                k,
                v,
                &o[b * q_rows..(b + 1) * q_rows],
                &lse[b * lse_rows..(b + 1) * lse_rows],
            )
        })
        .collect();
    let ratio = |r: &CheckReport| r.o_max_abs / r.o_bound.max(f64::MIN_POSITIVE);
    let mut worst = reports
        .iter()
        .max_by(|a, b| {
            ratio(a)
                .total_cmp(&ratio(b))
                .then(a.lse_max_abs.total_cmp(&b.lse_max_abs))
        })
        .cloned()
        .expect("at least one sequence is checked");
    worst.rows_checked = reports.iter().map(|r| r.rows_checked).sum();
    worst.rows_total = p.batch * p.heads * p.seqlen_q;
    worst.lse_mask_mismatches = reports.iter().map(|r| r.lse_mask_mismatches).sum();
    worst.nan_elements = nan_elements;
    worst.passed = nan_elements == 0 && reports.iter().all(|r| r.passed);
    (worst, sequences.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stage::fakes::DECODE;

    /// The one validation of a decode run, before any GPU: the problem, then the stage's
    /// head dims and dtypes.
    #[test]
    fn a_decode_run_is_checked_before_the_gpu() {
        let p = DecodeProblem::uniform(2, 8, 2, 1, 1000, 128);
        let run = DecodeRun::new(&DECODE, &p).unwrap();
        assert_eq!(run.problem(), &p);
        let d64 = DecodeProblem::uniform(2, 8, 2, 1, 1000, 64);
        let err = DecodeRun::new(&DECODE, &d64).err().unwrap().to_string();
        assert!(
            err.contains("stage 14 (fake-decode) does not support head dim 64"),
            "{err}"
        );
        let long = DecodeProblem::uniform(2, 8, 2, 17, 1000, 128);
        let err = DecodeRun::new(&DECODE, &long).err().unwrap().to_string();
        assert!(err.contains("1 to 16 query rows"), "{err}");
    }
}
