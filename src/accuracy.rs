//! `flashlab accuracy`: what FP8 costs in accuracy. The CPU oracle computes attention
//! exactly in f64, as the bf16 stages compute it (inputs, P and O in bf16, S in f32), and as
//! an FP8 kernel computes it under six recipes (E4M3 casts with a scale per tensor, per head
//! or per block of rows, with and without FlashAttention-3's incoherent processing), on
//! standard normal inputs and on FlashAttention-3's outlier inputs; with `--stages`, the
//! GPU runs those stages on the same inputs. Each line is the error of one computation
//! against the exact one.

use anyhow::{Result, bail};
use clap::Args;
use harness::inputs::HostInputs;
use harness::run::{RunOptions, run_stage};
use harness::{Gpu, Problem};
use rand::{Rng, SeedableRng, rngs::StdRng};
use rand_distr::StandardNormal;
use reference::fp8_attention::{Fp8Recipe, Granularity, attention_bf16_flash, attention_fp8};
use reference::{Mask, Shape, attention};
use serde::Serialize;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct AccuracyArgs {
    #[arg(long, default_value_t = 1)]
    pub batch: usize,
    #[arg(long, default_value_t = 2)]
    pub heads: usize,
    #[arg(long, default_value_t = 1024)]
    pub seqlen: usize,
    /// Head dim (a power of two: the Hadamard transform needs one).
    #[arg(long, default_value_t = 128)]
    pub dim: usize,
    #[arg(long)]
    pub causal: bool,
    /// Input seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// The outlier inputs: each entry of Q, K and V is an outlier with this probability...
    #[arg(long, default_value_t = 0.001)]
    pub outlier_fraction: f64,
    /// ...drawn from N(0, s²) with this s instead of N(0, 1) (FlashAttention-3: 0.1%, 10).
    #[arg(long, default_value_t = 10.0)]
    pub outlier_std: f64,
    /// Rows of one block for the per-block scales (a kernel's tile).
    #[arg(long, default_value_t = 128)]
    pub block_rows: usize,
    /// Also write the table as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Also draw the table's RMSEs as an SVG (a dot a computation and kind of input, on a
    /// log scale).
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
    /// Read the rows from a `--json` file written before instead of computing them (to
    /// redraw a run's plot or table without its GPU; give the run's shape flags too, which
    /// the captions name).
    #[arg(long, value_name = "FILE", conflicts_with = "stages")]
    pub from: Option<PathBuf>,
    /// Also run these stages on the GPU on the same inputs (rounded to bf16, which every
    /// stage takes) and measure their outputs the same way: `--stages 19,20,21` sets the bf16
    /// stage beside the FP8 stages.
    #[arg(long, value_delimiter = ',', value_name = "N,N,...")]
    pub stages: Vec<u32>,
    /// Instead of the table of casts: P V summed in a model of an FP8 tensor core's
    /// accumulator that keeps this many significant bits at the largest term of each 32-key
    /// step (`reference::fp8_attention::Accumulator`; DeepSeek-V3 reports about 14 on Hopper):
    /// once over all the keys, restarted every 128 keys and added into an exact O (stage
    /// 20's fold), and over all the keys with V centred; at each of `--seqlens`, on three
    /// kinds of input (flashlab's, mean 0.5; N(0, 1); and one whose preferred keys' V sit
    /// off the mean), one head, scales per head. Each line is O's relative error on `--rows`
    /// sampled query rows. CPU only.
    #[arg(long, value_name = "BITS", conflicts_with_all = ["stages", "from", "plot"])]
    pub accumulator_bits: Option<u32>,
    /// The sequence lengths of `--accumulator-bits`.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1024,2048,4096,8192,16384",
        value_name = "N,N,..."
    )]
    pub seqlens: Vec<usize>,
    /// The query rows `--accumulator-bits` samples, spread evenly over the sequence.
    #[arg(long, default_value_t = 64)]
    pub rows: usize,
}

/// One computation on one kind of input: its error against exact f64 attention.
#[derive(Serialize, Debug, Clone)]
pub struct ErrorRow {
    pub inputs: &'static str,
    pub computation: String,
    /// Root mean square of O's error over every element.
    pub rmse: f64,
    pub max_abs_error: f64,
}

/// The computations of the table, in order: the bf16 math, then the FP8 recipes.
fn computations(block_rows: usize) -> Vec<(String, Option<Fp8Recipe>)> {
    let block = Granularity::PerBlock { rows: block_rows };
    let recipe = |granularity, incoherent| {
        Some(Fp8Recipe {
            granularity,
            incoherent,
        })
    };
    vec![
        (
            "bf16: S in f32, P and O in bf16 (the bf16 stages)".into(),
            None,
        ),
        (
            "FP8 E4M3, a scale per tensor".into(),
            recipe(Granularity::PerTensor, None),
        ),
        (
            "FP8 E4M3, a scale per head (stage 20's recipe)".into(),
            recipe(Granularity::PerHead, None),
        ),
        (
            format!("FP8 E4M3, a scale per {block_rows} rows"),
            recipe(block, None),
        ),
        (
            "FP8 E4M3, per tensor, incoherent processing".into(),
            recipe(Granularity::PerTensor, Some(0x5eed)),
        ),
        (
            "FP8 E4M3, per head, incoherent processing (stage 21's recipe)".into(),
            recipe(Granularity::PerHead, Some(0x5eed)),
        ),
        (
            format!("FP8 E4M3, per {block_rows} rows, incoherent processing"),
            recipe(block, Some(0x5eed)),
        ),
    ]
}

/// Q, K, V of `shape` from N(0, 1), and with `fraction` of their entries from N(0, s²).
fn inputs(shape: &Shape, seed: u64, fraction: f64, s: f64) -> [Vec<f64>; 3] {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut draw = |n: usize| -> Vec<f64> {
        (0..n)
            .map(|_| {
                let x: f64 = rng.sample(StandardNormal);
                if fraction > 0.0 && rng.random::<f64>() < fraction {
                    x * s
                } else {
                    x
                }
            })
            .collect()
    };
    [
        draw(shape.q_len()),
        draw(shape.kv_len()),
        draw(shape.kv_len()),
    ]
}

fn rmse_and_max(a: &[f64], b: &[f64]) -> (f64, f64) {
    let (mut sum, mut max) = (0.0, 0.0f64);
    for (x, y) in a.iter().zip(b) {
        let e = (x - y).abs();
        sum += e * e;
        max = max.max(e);
    }
    ((sum / a.len() as f64).sqrt(), max)
}

/// The GPU runs draw their inputs as the CPU's do, from the run's seed, with FlashAttention-3's
/// outliers or none, then round them to the problem's dtype: `RunOptions::adjust_inputs`
/// takes a plain function, so the two kinds are two functions.
fn gpu_normal_inputs(p: &Problem, inputs: &mut HostInputs) {
    replace_inputs(p, inputs, 0.0);
}
fn gpu_outlier_inputs(p: &Problem, inputs: &mut HostInputs) {
    replace_inputs(p, inputs, FA3_OUTLIER_FRACTION);
}
const FA3_OUTLIER_FRACTION: f64 = 0.001;
const FA3_OUTLIER_STD: f64 = 10.0;
fn replace_inputs(p: &Problem, host: &mut HostInputs, fraction: f64) {
    let [q, k, v] = inputs(&p.shape, host.seed, fraction, FA3_OUTLIER_STD);
    let bits = |x: Vec<f64>| x.iter().map(|&x| p.dtype.to_bits(x as f32)).collect();
    (host.q, host.k, host.v) = (bits(q), bits(k), bits(v));
}

/// The stages of `args.stages` on the GPU on one kind of input (`adjust` draws it as the CPU
/// lines do): O's error against `exact`, the exact attention of the unrounded inputs, as
/// the CPU lines measure theirs.
fn measure_stages(
    args: &AccuracyArgs,
    gpu: &Gpu,
    kind: &'static str,
    adjust: fn(&Problem, &mut HostInputs),
    exact: &[f64],
) -> Result<Vec<ErrorRow>> {
    let mut problem = Problem::new(args.batch, args.heads, args.seqlen, args.dim);
    problem.causal = args.causal;
    // One stage's line; `fp8_scales` names an FP8 stage's scales.
    let measure =
        |stage: &'static dyn harness::Stage, fp8_scales: Option<Granularity>| -> Result<ErrorRow> {
            let opts = RunOptions {
                seed: Some(args.seed),
                check: true,
                timing: None,
                adjust_inputs: Some(adjust),
                timeline: None,
                fp8_scales: fp8_scales.unwrap_or(Granularity::PerHead),
            };
            let (report, outputs) = run_stage(stage, gpu, &problem, &opts)?;
            let o: Vec<f64> = outputs
                .o
                .iter()
                .map(|&b| problem.dtype.from_bits(b) as f64)
                .collect();
            let (rmse, max_abs_error) = rmse_and_max(&o, exact);
            let passed = report.check.as_ref().is_some_and(|c| c.passed);
            Ok(ErrorRow {
                inputs: kind,
                computation: format!(
                    "stage {} on the GPU: {}{}{}",
                    stage.info().label(),
                    stage.info().idea.split(':').next().unwrap_or(""),
                    fp8_scales.map_or(String::new(), |g| format!(", scales {}", g.name())),
                    if passed { "" } else { " (its check FAILED)" }
                ),
                rmse,
                max_abs_error,
            })
        };
    let mut rows = Vec::new();
    for &n in &args.stages {
        let stage = crate::stages::find(n).map_err(anyhow::Error::msg)?;
        // An FP8 stage runs with its scales per head, then per tensor (FlashAttention-3's
        // "baseline FP8"): the comparison its paper's table makes.
        if stage.workload().prefill().is_ok_and(harness::fp8::is_fp8) {
            for scales in [Granularity::PerHead, Granularity::PerTensor] {
                rows.push(measure(stage, Some(scales))?);
            }
        } else {
            rows.push(measure(stage, None)?);
        }
    }
    Ok(rows)
}

/// Every computation on both kinds of input.
pub fn measure(args: &AccuracyArgs) -> Result<Vec<ErrorRow>> {
    if !args.dim.is_power_of_two() || args.dim > 256 {
        bail!(
            "--dim {} is not supported: the Hadamard transform of incoherent processing needs a power of two, up to 256",
            args.dim
        );
    }
    if args.batch == 0 || args.heads == 0 || args.seqlen == 0 || args.block_rows == 0 {
        bail!("--batch, --heads, --seqlen and --block-rows must be at least 1");
    }
    if !(0.0..=1.0).contains(&args.outlier_fraction)
        || args.outlier_std.is_nan()
        || args.outlier_std <= 0.0
    {
        bail!("--outlier-fraction must be in [0, 1] and --outlier-std positive");
    }
    let shape = Shape::new(
        args.batch,
        args.heads,
        args.heads,
        args.seqlen,
        args.seqlen,
        args.dim,
    );
    let mask = if args.causal {
        Mask::causal()
    } else {
        Mask::None
    };
    // The stages run FlashAttention-3's outlier inputs alone: the GPU runs' inputs are drawn
    // by plain functions (`gpu_outlier_inputs`), which take no parameters.
    let gpu = if args.stages.is_empty() {
        None
    } else {
        if args.outlier_fraction != FA3_OUTLIER_FRACTION || args.outlier_std != FA3_OUTLIER_STD {
            bail!(
                "--stages runs FlashAttention-3's outlier inputs (0.1% from N(0, 10²)) alone: leave --outlier-fraction and --outlier-std at their defaults"
            );
        }
        Some(Gpu::open()?)
    };
    let scale = 1.0 / (args.dim as f64).sqrt();
    let mut rows = Vec::new();
    for (kind, fraction, adjust) in [
        (
            "N(0, 1)",
            0.0,
            gpu_normal_inputs as fn(&Problem, &mut HostInputs),
        ),
        ("with outliers", args.outlier_fraction, gpu_outlier_inputs),
    ] {
        let [q, k, v] = inputs(&shape, args.seed, fraction, args.outlier_std);
        let exact = attention(&q, &k, &v, &shape, &mask, scale);
        for (name, recipe) in computations(args.block_rows) {
            let o = match recipe {
                None => attention_bf16_flash(&q, &k, &v, &shape, &mask, scale).o,
                Some(r) => attention_fp8(&q, &k, &v, &shape, &mask, scale, r).o,
            };
            let (rmse, max_abs_error) = rmse_and_max(&o, &exact.o);
            rows.push(ErrorRow {
                inputs: kind,
                computation: name,
                rmse,
                max_abs_error,
            });
        }
        if let Some(gpu) = &gpu {
            rows.extend(measure_stages(args, gpu, kind, adjust, &exact.o)?);
        }
    }
    Ok(rows)
}

/// The table as markdown: a row per computation, RMSE and max error per kind of input.
pub fn table(rows: &[ErrorRow]) -> String {
    let kinds = ["N(0, 1)", "with outliers"];
    let mut out = String::from(
        "| computation | RMSE, N(0, 1) | max error, N(0, 1) | RMSE, outliers | max error, outliers |\n|---|--:|--:|--:|--:|\n",
    );
    let names: Vec<&String> = rows
        .iter()
        .filter(|r| r.inputs == kinds[0])
        .map(|r| &r.computation)
        .collect();
    for name in names {
        let cell = |kind: &str| {
            rows.iter()
                .find(|r| r.inputs == kind && &r.computation == name)
                .map_or("- | -".to_string(), |r| {
                    format!("{:.2e} | {:.2e}", r.rmse, r.max_abs_error)
                })
        };
        out += &format!("| {name} | {} | {} |\n", cell(kinds[0]), cell(kinds[1]));
    }
    out
}

/// The rows of a `--json` file: the kinds of input back to the names the table uses.
fn read_rows(path: &std::path::Path) -> Result<Vec<ErrorRow>> {
    #[derive(serde::Deserialize)]
    struct Stored {
        inputs: String,
        computation: String,
        rmse: f64,
        max_abs_error: f64,
    }
    let text = std::fs::read_to_string(path)?;
    let stored: Vec<Stored> = serde_json::from_str(&text)?;
    stored
        .into_iter()
        .map(|r| {
            let inputs = match r.inputs.as_str() {
                "N(0, 1)" => "N(0, 1)",
                "with outliers" => "with outliers",
                other => bail!("{}: unknown kind of input {other:?}", path.display()),
            };
            Ok(ErrorRow {
                inputs,
                computation: r.computation,
                rmse: r.rmse,
                max_abs_error: r.max_abs_error,
            })
        })
        .collect()
}

/// A computation's name, short enough for the plot's axis.
fn short_name(computation: &str) -> String {
    if let Some(rest) = computation.strip_prefix("stage ") {
        let number = rest.split_whitespace().next().unwrap_or("");
        return match computation.split(", scales ").nth(1) {
            Some(scales) => format!(
                "stage {number}, on the GPU, {}",
                scales.trim_end_matches(" (its check FAILED)")
            ),
            None => format!("stage {number}, on the GPU"),
        };
    }
    if computation.starts_with("bf16") {
        return "bf16 math".into();
    }
    computation
        .trim_start_matches("FP8 E4M3, ")
        .replace("a scale ", "")
        .replace(" (stage 20's recipe)", "")
        .replace(" (stage 21's recipe)", "")
        .replace("incoherent processing", "rotated")
}

/// The RMSEs as a dot plot: a row a computation, blue for normal inputs, orange for the
/// outlier inputs, log scale.
pub fn plot(rows: &[ErrorRow], subtitle: &str, path: &std::path::Path) -> Result<()> {
    use crate::bench::style::{FIGURE_W, MIN_TEXT_PX, font, plot_err};
    use plotters::prelude::*;
    let names: Vec<&String> = rows
        .iter()
        .filter(|r| r.inputs == "N(0, 1)")
        .map(|r| &r.computation)
        .collect();
    let n = names.len();
    let height = 120 + 34 * n as u32;
    let root = SVGBackend::new(path, (FIGURE_W, height)).into_drawing_area();
    root.fill(&WHITE).map_err(plot_err)?;
    let (title, body) = root.split_vertically(48);
    title
        .draw(&Text::new(
            "O's RMSE against exact attention",
            (12, 4),
            font(16.0),
        ))
        .map_err(plot_err)?;
    title
        .draw(&Text::new(
            subtitle.to_string(),
            (12, 28),
            font(MIN_TEXT_PX),
        ))
        .map_err(plot_err)?;
    let (lo, hi) = rows
        .iter()
        .map(|r| r.rmse.max(1e-9).log10())
        .fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
    let (lo, hi) = (lo.floor(), hi.ceil());
    let mut chart = ChartBuilder::on(&body)
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(250)
        .build_cartesian_2d(lo..hi, -0.5..(n as f64 - 0.5))
        .map_err(plot_err)?;
    let name_at = |y: &f64| -> String {
        let i = y.round();
        if (y - i).abs() > 1e-6 || i < 0.0 || i as usize >= n {
            return String::new();
        }
        short_name(names[n - 1 - i as usize])
    };
    chart
        .configure_mesh()
        .x_labels((hi - lo) as usize + 1)
        .y_labels(n)
        .x_label_formatter(&|x: &f64| format!("1e{}", x.round() as i32))
        .y_label_formatter(&name_at)
        .x_desc("RMSE of O (log scale)")
        .label_style(font(MIN_TEXT_PX))
        .axis_desc_style(font(13.0))
        .light_line_style(RGBColor(238, 238, 238))
        .draw()
        .map_err(plot_err)?;
    let blue = RGBColor(31, 119, 180);
    let orange = RGBColor(255, 127, 14);
    for (kind, color, offset) in [("N(0, 1)", blue, 0.12), ("with outliers", orange, -0.12)] {
        let points: Vec<(f64, f64)> = names
            .iter()
            .enumerate()
            .filter_map(|(i, name)| {
                let r = rows
                    .iter()
                    .find(|r| r.inputs == kind && &&r.computation == name)?;
                Some((r.rmse.max(1e-9).log10(), (n - 1 - i) as f64 + offset))
            })
            .collect();
        chart
            .draw_series(points.iter().map(|&p| Circle::new(p, 5, color.filled())))
            .map_err(plot_err)?;
    }
    // The legend in the title's strip, clear of every dot.
    for (i, (label, color)) in [
        ("N(0, 1) inputs", blue),
        ("with outliers (0.1% from N(0, 10²))", orange),
    ]
    .into_iter()
    .enumerate()
    {
        let y = 12 + 20 * i as i32;
        title
            .draw(&Circle::new((470, y), 5, color.filled()))
            .map_err(plot_err)?;
        title
            .draw(&Text::new(label, (482, y - 8), font(MIN_TEXT_PX)))
            .map_err(plot_err)?;
    }
    root.present().map_err(plot_err)?;
    Ok(())
}

/// One line of `--accumulator-bits`: O's relative error (Frobenius, on the sampled rows)
/// against exact attention, four ways of summing P V.
#[derive(Serialize, Debug, Clone)]
pub struct AccumulatorRow {
    pub inputs: &'static str,
    pub seqlen: usize,
    /// The casts alone, P V summed exactly (`reference::fp8_attention`'s emulation).
    pub exact_sum: f64,
    /// One modelled accumulator over all the keys.
    pub one_accumulator: f64,
    /// A fresh modelled accumulator every 128 keys, each added into an exact O.
    pub folded_every_128: f64,
    /// One modelled accumulator over all the keys, V's column means taken out before the
    /// cast and added back to O at the end.
    pub one_accumulator_v_centred: f64,
}

/// The kinds of input of `--accumulator-bits`: flashlab's, FlashAttention-3's, and one
/// where the keys Q prefers have V's of another mean than the rest.
pub const ACCUMULATOR_INPUTS: [&str; 3] = [
    "mean 0.5 (flashlab's inputs)",
    "N(0, 1) (FlashAttention-3's)",
    "preferred keys' V off the mean",
];

/// Q, K and V of one kind of [`ACCUMULATOR_INPUTS`], each entry N(mean, 1): means 0.5, or 0;
/// or, for the third, Q's 0.5, K's 0.8 on the first half of the keys and 0.5 on the rest
/// (so Q's scores favour the first half), and V's +1 on the first half and -1 on the rest
/// (so O sits near +1, far from V's column means near 0).
fn accumulator_inputs(kind: &str, shape: &Shape, seed: u64) -> [Vec<f64>; 3] {
    let [q, k, v] = inputs(shape, seed, 0.0, 1.0);
    let (d, half) = (shape.head_dim, shape.seqlen_k / 2);
    let shift = |x: Vec<f64>, mean: &dyn Fn(usize) -> f64| -> Vec<f64> {
        x.into_iter()
            .enumerate()
            .map(|(i, x)| x + mean(i / d))
            .collect()
    };
    if kind == ACCUMULATOR_INPUTS[2] {
        return [
            shift(q, &|_| 0.5),
            shift(k, &|key| if key < half { 0.8 } else { 0.5 }),
            shift(v, &|key| if key < half { 1.0 } else { -1.0 }),
        ];
    }
    let mean = if kind == ACCUMULATOR_INPUTS[0] {
        0.5
    } else {
        0.0
    };
    [q, k, v].map(|x| shift(x, &|_| mean))
}

/// `--accumulator-bits`: every line of the accumulator table.
pub fn measure_accumulator(args: &AccuracyArgs, bits: u32) -> Result<Vec<AccumulatorRow>> {
    use reference::fp8_attention::{Accumulator, attention_fp8_rows_accumulated};
    use reference::oracle::{RowId, attention_rows};
    if !(1..=40).contains(&bits) {
        bail!(
            "--accumulator-bits {bits} is not supported: the model keeps 1 to 40 significant bits (f32 keeps 24)"
        );
    }
    if args.rows == 0 || args.seqlens.contains(&0) || args.dim == 0 {
        bail!("--rows, --dim and every one of --seqlens must be at least 1");
    }
    let mask = if args.causal {
        Mask::causal()
    } else {
        Mask::None
    };
    let scale = 1.0 / (args.dim as f64).sqrt();
    let recipe = Fp8Recipe {
        granularity: Granularity::PerHead,
        incoherent: None,
    };
    let mut out = Vec::new();
    for kind in ACCUMULATOR_INPUTS {
        for &n in &args.seqlens {
            let shape = Shape::new(1, 1, 1, n, n, args.dim);
            let [q, k, v] = accumulator_inputs(kind, &shape, args.seed);
            let count = args.rows.min(n);
            let rows: Vec<RowId> = (0..count)
                .map(|i| RowId {
                    batch: 0,
                    head: 0,
                    row: (2 * i + 1) * n / (2 * count),
                })
                .collect();
            let flat = |r: Vec<reference::oracle::RowResult>| -> Vec<f64> {
                r.into_iter().flat_map(|r| r.o).collect()
            };
            let exact = flat(attention_rows(
                &q,
                &k,
                &v,
                &shape,
                &mask,
                scale,
                &rows,
                reference::Precision::F64,
            ));
            let error = |accumulator: Option<Accumulator>| {
                let o = flat(attention_fp8_rows_accumulated(
                    &q,
                    &k,
                    &v,
                    &shape,
                    &mask,
                    scale,
                    recipe,
                    &rows,
                    accumulator,
                ));
                let diff: f64 = o.iter().zip(&exact).map(|(a, b)| (a - b).powi(2)).sum();
                let norm: f64 = exact.iter().map(|b| b * b).sum();
                (diff / norm).sqrt()
            };
            out.push(AccumulatorRow {
                inputs: kind,
                seqlen: n,
                exact_sum: error(None),
                one_accumulator: error(Some(Accumulator {
                    bits,
                    fold_keys: None,
                    center_v: false,
                })),
                folded_every_128: error(Some(Accumulator {
                    bits,
                    fold_keys: Some(128),
                    center_v: false,
                })),
                one_accumulator_v_centred: error(Some(Accumulator {
                    bits,
                    fold_keys: None,
                    center_v: true,
                })),
            });
        }
    }
    Ok(out)
}

/// The accumulator table as markdown, a block of lines per kind of input.
pub fn accumulator_table(rows: &[AccumulatorRow], bits: u32) -> String {
    let mut out = format!(
        "| inputs | keys | P V summed exactly | one {bits}-bit accumulator | a fresh one every 128 keys, folded | one, V centred |\n|---|--:|--:|--:|--:|--:|\n"
    );
    for r in rows {
        out += &format!(
            "| {} | {} | {:.2e} | {:.2e} | {:.2e} | {:.2e} |\n",
            r.inputs,
            r.seqlen,
            r.exact_sum,
            r.one_accumulator,
            r.folded_every_128,
            r.one_accumulator_v_centred
        );
    }
    out
}

fn run_accumulator(args: &AccuracyArgs, bits: u32) -> Result<i32> {
    let rows = measure_accumulator(args, bits)?;
    println!(
        "O's relative error (Frobenius) against exact f64 attention, {} sampled query rows, one head, dim {}{}, seed {}, FP8 E4M3 with a scale per head; P V summed in a model of an FP8 tensor core's accumulator that keeps {bits} significant bits at the largest term of each 32-key step\n",
        args.rows,
        args.dim,
        if args.causal { " causal" } else { "" },
        args.seed
    );
    print!("{}", accumulator_table(&rows, bits));
    println!(
        "\nA model, not the hardware (reference::fp8_attention::Accumulator): with inputs of mean 0.5 P V's products mostly share a sign, so the bits each step drops add up as the keys grow; a fresh accumulator every 128 keys, added into an exact O (stage 20's fold), keeps the error at the casts' own. Centring V (its column means out before the cast, back into O at the end) removes the common sign on such inputs, but not where the keys Q prefers have V's off the means (the third kind): only the fold helps in every case."
    );
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_string_pretty(&rows)? + "\n")?;
        println!("wrote {}", path.display());
    }
    Ok(0)
}

pub fn run(args: AccuracyArgs) -> Result<i32> {
    if let Some(bits) = args.accumulator_bits {
        return run_accumulator(&args, bits);
    }
    let rows = match &args.from {
        Some(path) => read_rows(path)?,
        None => measure(&args)?,
    };
    println!(
        "O's error against exact f64 attention: batch {} heads {} seqlen {} dim {}{}, seed {}; outliers: {}% of the entries of Q, K and V from N(0, {}²)\n",
        args.batch,
        args.heads,
        args.seqlen,
        args.dim,
        if args.causal { " causal" } else { "" },
        args.seed,
        args.outlier_fraction * 100.0,
        args.outlier_std
    );
    print!("{}", table(&rows));
    println!(
        "\nThe lines without a stage are emulated on the CPU (reference::fp8_attention): the FP8 lines are the error of the casts alone, which an FP8 kernel adds to its own summation order; a stage's line is its kernel's output on the same inputs, rounded to bf16."
    );
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_string_pretty(&rows)? + "\n")?;
        println!("wrote {}", path.display());
    }
    if let Some(path) = &args.plot {
        let subtitle = format!(
            "batch {}, {} heads, seqlen {}, head dim {}{}, seed {}",
            args.batch,
            args.heads,
            args.seqlen,
            args.dim,
            if args.causal { ", causal" } else { "" },
            args.seed
        );
        plot(&rows, &subtitle, path)?;
        println!("wrote {}", path.display());
    }
    Ok(0)
}
