//! `flashlab accuracy` on a small shape: the relations its table exists to show, with the
//! values asserted (no GPU involved: the computations are the CPU oracle's).

use flashlab::accuracy::{
    AccuracyArgs, ErrorRow, accumulator_table, measure, measure_accumulator, plot, table,
};

fn args(seqlen: usize, dim: usize) -> AccuracyArgs {
    AccuracyArgs {
        batch: 1,
        heads: 2,
        seqlen,
        dim,
        causal: false,
        seed: 1,
        outlier_fraction: 0.001,
        outlier_std: 10.0,
        block_rows: 64,
        json: None,
        stages: Vec::new(),
        plot: None,
        from: None,
        accumulator_bits: None,
        seqlens: Vec::new(),
        rows: 64,
    }
}

fn rmse(rows: &[ErrorRow], inputs: &str, starts: &str) -> f64 {
    rows.iter()
        .find(|r| r.inputs == inputs && r.computation.starts_with(starts))
        .unwrap_or_else(|| panic!("no row {starts:?} for {inputs:?}"))
        .rmse
}

#[test]
fn fp8_costs_an_order_of_magnitude_and_the_rotation_wins_some_back_on_outliers() {
    let rows = measure(&args(512, 64)).unwrap();
    assert_eq!(rows.len(), 14, "seven computations on two kinds of input");
    for inputs in ["N(0, 1)", "with outliers"] {
        let bf16 = rmse(&rows, inputs, "bf16");
        let fp8 = rmse(&rows, inputs, "FP8 E4M3, a scale per tensor");
        // E4M3 keeps 3 mantissa bits to bf16's 7: at least 4x the error.
        assert!(
            fp8 > 4.0 * bf16,
            "{inputs}: FP8 {fp8:.2e} against bf16 {bf16:.2e}"
        );
        // bf16 stays near its unit roundoff, 2^-9 relative, on O's O(0.1) values.
        assert!(bf16 < 2e-3, "{inputs}: bf16 {bf16:.2e}");
    }
    let plain = rmse(&rows, "with outliers", "FP8 E4M3, a scale per tensor");
    let rotated = rmse(&rows, "with outliers", "FP8 E4M3, per tensor, incoherent");
    assert!(
        rotated < 0.8 * plain,
        "outliers: {rotated:.2e} rotated against {plain:.2e}"
    );
    // On normal inputs there are no outliers to spread: the rotation changes little.
    let plain = rmse(&rows, "N(0, 1)", "FP8 E4M3, a scale per tensor");
    let rotated = rmse(&rows, "N(0, 1)", "FP8 E4M3, per tensor, incoherent");
    assert!(
        (rotated / plain - 1.0).abs() < 0.2,
        "normal: {rotated:.2e} rotated against {plain:.2e}"
    );
    let md = table(&rows);
    assert_eq!(md.lines().count(), 2 + 7, "{md}");
}

#[test]
fn unsupported_head_dims_and_empty_shapes_are_refused_by_name() {
    let e = measure(&args(64, 96)).unwrap_err().to_string();
    assert!(e.contains("--dim 96") && e.contains("power of two"), "{e}");
    let e = measure(&args(0, 64)).unwrap_err().to_string();
    assert!(e.contains("--seqlen"), "{e}");
}

/// The plot has a dot for each line of the table and kind of input (and two in its legend),
/// and names every computation on its axis.
#[test]
fn the_plot_draws_every_line_of_the_table() {
    let rows = measure(&args(128, 64)).unwrap();
    let dir = std::env::temp_dir().join(format!("flashlab-accuracy-plot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("accuracy.svg");
    plot(&rows, "a test", &path).unwrap();
    let svg = std::fs::read_to_string(&path).unwrap();
    assert_eq!(svg.matches("<circle").count(), rows.len() + 2, "{svg}");
    for name in [
        "bf16 math",
        "per tensor",
        "per head, rotated",
        "per 64 rows",
    ] {
        assert!(
            svg.contains(&format!(">\n{name}\n<")),
            "no axis label {name:?}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--accumulator-bits 14`: on flashlab's inputs (mean 0.5) one accumulator over all the
/// keys errs more the more keys there are, and both the fold and V centred keep the casts'
/// error; on zero-mean inputs the dropped bits cancel; where the keys Q prefers have V's
/// off the column means, centring does not help and the fold still does.
#[test]
fn the_accumulator_table_shows_the_fold_at_work() {
    let mut a = args(0, 32);
    a.seqlens = vec![512, 4096];
    a.rows = 8;
    let rows = measure_accumulator(&a, 14).unwrap();
    assert_eq!(rows.len(), 6, "two lengths on three kinds of input");
    let (short, long) = (&rows[0], &rows[1]);
    assert!(short.inputs.starts_with("mean 0.5") && (short.seqlen, long.seqlen) == (512, 4096));
    assert!(
        long.one_accumulator > 1.5 * short.one_accumulator,
        "{short:?} {long:?}"
    );
    assert!(
        long.one_accumulator > 2.0 * long.folded_every_128
            && long.folded_every_128 < 1.5 * long.exact_sum
            && long.one_accumulator_v_centred < 1.5 * long.exact_sum,
        "{long:?}"
    );
    let zero_mean = &rows[3];
    assert!(
        zero_mean.one_accumulator < 1.5 * zero_mean.exact_sum,
        "{zero_mean:?}"
    );
    let off_mean = &rows[5];
    assert!(
        off_mean.one_accumulator_v_centred > 2.0 * off_mean.folded_every_128
            && off_mean.folded_every_128 < 1.5 * off_mean.exact_sum,
        "{off_mean:?}"
    );
    let md = accumulator_table(&rows, 14);
    assert_eq!(md.lines().count(), 2 + 6, "{md}");
}
