//! `flashlab accuracy`: what FP8 costs in accuracy, before any FP8 kernel runs. The CPU
//! oracle computes attention exactly in f64, as the bf16 stages compute it (inputs, P and O
//! in bf16, S in f32), and as an FP8 kernel computes it under four recipes (E4M3 casts
//! with a scale per tensor or per block of rows, with and without FlashAttention-3's
//! incoherent processing), on standard normal inputs and on FlashAttention-3's outlier
//! inputs. Each line is the error of one computation against the exact one.

use anyhow::{Result, bail};
use clap::Args;
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
            format!("FP8 E4M3, a scale per {block_rows} rows"),
            recipe(block, None),
        ),
        (
            "FP8 E4M3, per tensor, incoherent processing".into(),
            recipe(Granularity::PerTensor, Some(0x5eed)),
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
    let scale = 1.0 / (args.dim as f64).sqrt();
    let mut rows = Vec::new();
    for (kind, fraction) in [("N(0, 1)", 0.0), ("with outliers", args.outlier_fraction)] {
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

pub fn run(args: AccuracyArgs) -> Result<i32> {
    let rows = measure(&args)?;
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
        "\nEmulated on the CPU (reference::fp8_attention): the FP8 lines are the error of the casts alone, which an FP8 kernel adds to its own summation order."
    );
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_string_pretty(&rows)? + "\n")?;
        println!("wrote {}", path.display());
    }
    Ok(0)
}
