//! The bench without a GPU: the sweep and its skips, rows, JSON and CSV round trips,
//! plots and the results table from fixture data, the baselines' JSON Lines, and the
//! counting/summary parts of `sass.sh` and `ncu.sh` on real (trimmed) tool output.
//!
//! Some tests need what only the repository has (the fixtures, the runs of record, the
//! scripts; the GPU bundle lacks them), python3, compiled kernels, or no GPU: where this
//! machine lacks it, each is reported ignored, with the reason, never passed having
//! checked nothing (`harness = false`: `harness::testing`).

use flashlab::bench::{
    self, BenchResults, CSV_COLUMNS, Plan, Row, RowKind, Status, Sweep, baselines, output, plots,
    shape_label,
};
use flashlab::stages::find;
use harness::testing::{Checked, Needs, Skipped};
use harness::timing::TimingProtocol;
use harness::{DType, Problem};
use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::process::Command;

harness::test_main!(Needs::Cpu => [
    the_default_sweep_follows_the_shape_rule,
    the_shape_rule_says_batch_one_when_tokens_are_below_every_seqlen,
    bad_sweeps_are_refused_before_any_gpu_work,
    stage_one_is_skipped_past_4096_and_says_how_much_memory,
    the_plan_is_printed_without_a_gpu,
    the_backward_plan_takes_the_backward_stages,
    json_round_trips_exactly,
    a_row_keeps_the_flat_shape_fields_and_refuses_what_it_cannot_write,
    the_baselines_status_reads_and_writes_its_three_states,
    csv_round_trips_every_field,
    the_committed_csv_files_are_what_their_json_makes,
    written_files_read_back,
    derived_numbers_use_the_harness_flop_count,
    only_rows_that_passed_are_plotted,
    plots_are_written_and_deterministic,
    speedups_follow_the_ladder_tree,
    the_ladder_is_drawn_from_two_branches_deterministically,
    the_results_table_marks_failures_and_skips,
    dates_are_iso_utc,
    baseline_json_lines_become_rows,
    the_embedded_script_is_the_committed_one_and_passes_its_self_test,
    sass_counts_match_an_independent_count_of_real_cuobjdump_output,
    the_ncu_summary_reads_a_real_raw_export,
    without_a_gpu_the_commands_say_so_clearly,
    dump_fatbin_writes_the_embedded_kernels,
    the_kernels_compared_are_the_timed_ones,
    the_decode_records_regenerate_their_tables_and_plots,
    the_read_floor_gets_a_column_and_a_ratio,
    the_embedded_decode_script_is_the_committed_one_and_passes_its_self_test,
    decode_baseline_lines_become_rows,
]);

/// Made-up numbers with every row status (ok, skipped, check-failed) and a CSV-hostile reason.
const SMALL: &str = include_str!("fixtures/bench-small.json");
/// Real rows of an H200 run (seqlen 1024 and 4096, head dim 128).
const H200: &str = include_str!("fixtures/bench-h200-subset.json");
/// Stages of two branches (1 and 9; 10 and 16) and the reference baselines, from the
/// ladder's run of record, with one made-up row at 1024 and one made-up check failure.
const LADDER: &str = include_str!("fixtures/bench-ladder-small.json");

fn small() -> BenchResults {
    serde_json::from_str(SMALL).expect("fixture parses")
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("flashlab-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn default_sweep() -> Sweep {
    Sweep {
        seqlens: bench::DEFAULT_SEQLENS.to_vec(),
        dims: bench::DEFAULT_DIMS.to_vec(),
        causal: vec![false, true],
        dtype: DType::Bf16,
        tokens: bench::DEFAULT_TOKENS,
        heads: bench::DEFAULT_HEADS,
    }
}

fn the_default_sweep_follows_the_shape_rule() {
    let shapes = default_sweep().shapes();
    assert_eq!(shapes.len(), 6 * 2 * 2);
    for p in &shapes {
        let s = &p.shape;
        assert_eq!((s.heads, s.kv_heads), (16, 16));
        assert_eq!(s.seqlen_q, s.seqlen_k, "{}", shape_label(p));
        assert_eq!(s.batch, (8192 / s.seqlen_q).max(1), "{}", shape_label(p));
        // Every shape is valid for the harness (no 32-bit overflow, no zero sizes).
        p.validate().unwrap();
    }
    let batch_seqlen = |p: &Problem| (p.shape.batch, p.shape.seqlen_q);
    assert_eq!(batch_seqlen(&shapes[0]), (16, 512));
    assert_eq!(batch_seqlen(&shapes[5]), (1, 16384));
    bench::validate_sweep(&default_sweep()).unwrap();
}

/// The rule's words follow the numbers: with --tokens 1 (the issues' batch-1 shapes) it
/// says batch 1, not a count of query rows that holds only for the default.
fn the_shape_rule_says_batch_one_when_tokens_are_below_every_seqlen() {
    assert_eq!(
        bench::shape_rule(1, 16, &[4096, 8192, 16384]),
        "heads = 16, batch = max(1, 1 / seqlen) = 1 at every seqlen of the sweep"
    );
    let default = bench::shape_rule(8192, 16, &default_sweep().seqlens);
    assert!(default.contains("131072 query rows"), "{default}");
}

fn bad_sweeps_are_refused_before_any_gpu_work() {
    let mut s = default_sweep();
    s.seqlens.clear();
    assert!(
        bench::validate_sweep(&s)
            .unwrap_err()
            .to_string()
            .contains("empty")
    );
    // A dtype the stages lack cannot be written down: the sweep's dtype is typed, and a
    // JSON naming another is refused with the supported ones.
    let mut json = serde_json::to_value(default_sweep()).unwrap();
    json["dtype"] = "fp8".into();
    let err = serde_json::from_value::<Sweep>(json)
        .unwrap_err()
        .to_string();
    assert!(err.contains("bf16") && err.contains("f16"), "{err}");
    let mut s = default_sweep();
    s.seqlens = vec![1 << 22];
    s.tokens = 1 << 24;
    let err = format!("{:#}", bench::validate_sweep(&s).unwrap_err());
    assert!(err.contains("32-bit"), "{err}");
    assert!(bench::select_stages(Some(&[99])).is_err());
    assert!(bench::select_stages(Some(&[])).is_err());
    let picked = bench::select_stages(Some(&[2, 1, 2])).unwrap();
    let numbers: Vec<u32> = picked.iter().map(|s| s.info().number).collect();
    assert_eq!(numbers, [2, 1]);
}

fn stage_one_is_skipped_past_4096_and_says_how_much_memory() {
    let naive = find(1).unwrap();
    let max = bench::DEFAULT_MAX_WORKSPACE_GIB;
    match bench::plan_row(naive, &Problem::new(1, 16, 8192, 128), max) {
        Plan::Skip(why) => assert!(why.contains("needs 4.0 GiB"), "{why}"),
        Plan::Run => panic!("stage 1 at 8192 should be skipped"),
    }
    assert_eq!(
        bench::plan_row(naive, &Problem::new(2, 16, 4096, 128), max),
        Plan::Run
    );
    // A head dim the stage was not written for is a skip with the stage's own reason.
    match bench::plan_row(naive, &Problem::new(2, 16, 4096, 96), 100.0) {
        Plan::Skip(why) => assert!(why.contains("head dim 96"), "{why}"),
        Plan::Run => panic!("head dim 96 should be skipped"),
    }
    // Stage 2 has no workspace: it runs at every length.
    let long = Problem::new(1, 16, 16384, 128);
    assert_eq!(bench::plan_row(find(2).unwrap(), &long, 0.0), Plan::Run);
}

fn the_plan_is_printed_without_a_gpu() {
    let config = bench::BenchConfig {
        sweep: default_sweep(),
        stages: Some(vec![1, 2]),
        baselines: true,
        out: PathBuf::from("unused"),
        plots: false,
        seed: bench::DEFAULT_SEED,
        max_workspace_gib: bench::DEFAULT_MAX_WORKSPACE_GIB,
        dry_run: true,
        timing: TimingProtocol::Gated,
        pass: bench::Pass::Forward,
    };
    let plan = bench::describe_plan(&config).unwrap();
    assert!(plan.contains("40 stage rows to run, 8 skipped"), "{plan}");
    assert!(
        plan.contains("on 24 shapes if python3 with torch is found"),
        "{plan}"
    );
}

/// `--backward` runs the backward stages alone by default, and a forward stage named in
/// it is a skipped row saying what the stage takes; the rows' FLOPs are the backward's.
fn the_backward_plan_takes_the_backward_stages() {
    let mut config = bench::BenchConfig {
        sweep: default_sweep(),
        stages: None,
        baselines: false,
        out: PathBuf::from("unused"),
        plots: false,
        seed: bench::DEFAULT_SEED,
        max_workspace_gib: bench::DEFAULT_MAX_WORKSPACE_GIB,
        dry_run: true,
        timing: TimingProtocol::Gated,
        pass: bench::Pass::Backward,
    };
    let plan = bench::describe_plan(&config).unwrap();
    assert!(plan.contains("run   22-backward"), "{plan}");
    assert!(!plan.contains("9-lean-softmax"), "{plan}");
    config.stages = Some(vec![9, 22]);
    let plan = bench::describe_plan(&config).unwrap();
    assert!(
        plan.contains("does not support backward problems; it supports prefill problems"),
        "{plan}"
    );
    let p = Problem::new(1, 16, 4096, 128);
    let row = bench::Row::new(bench::RowKind::Stage, "22-backward", Some(22), &p).backward();
    assert_eq!(row.gflop, 2.5 * p.flops() / 1e9);
}

fn json_round_trips_exactly() {
    for text in [SMALL, H200] {
        let results: BenchResults = serde_json::from_str(text).unwrap();
        let again: BenchResults = serde_json::from_str(&results.to_json().unwrap()).unwrap();
        assert_eq!(results, again);
    }
}

fn a_row_keeps_the_flat_shape_fields_and_refuses_what_it_cannot_write() {
    let shape = Problem {
        causal: true,
        dtype: DType::F16,
        ..Problem::new(2, 16, 4096, 64)
    };
    let row = Row::new(RowKind::Stage, "2-online-softmax", Some(2), &shape);
    let json = serde_json::to_value(&row).unwrap();
    let keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    for key in ["batch", "heads", "seqlen", "head_dim", "causal", "dtype"] {
        assert!(keys.contains(&key), "{key} missing from {keys:?}");
    }
    assert!(
        !keys.contains(&"seqlen_q") && !keys.contains(&"kv_heads"),
        "{keys:?}"
    );
    assert_eq!(
        (json["seqlen"].as_u64(), json["dtype"].as_str()),
        (Some(4096), Some("f16"))
    );
    assert_eq!(serde_json::from_value::<Row>(json).unwrap(), row);
    // GQA or unequal lengths have no place in a row: writing one is an error, not a lie.
    let mut gqa = row.clone();
    gqa.problem.shape.kv_heads = 4;
    let err = serde_json::to_string(&gqa).unwrap_err().to_string();
    assert!(err.contains("only MHA shapes"), "{err}");
}

fn the_baselines_status_reads_and_writes_its_three_states() {
    use bench::Baselines;
    let environment = serde_json::json!({ "torch": "2.11.0" });
    for (status, json) in [
        (
            Baselines::NotRequested,
            serde_json::json!({ "requested": false, "status": "not requested", "reason": null, "environment": null }),
        ),
        (
            Baselines::Ran {
                environment: environment.clone(),
            },
            serde_json::json!({ "requested": true, "status": "ran", "reason": null, "environment": environment }),
        ),
        (
            Baselines::Skipped {
                reason: "no torch".into(),
            },
            serde_json::json!({ "requested": true, "status": "skipped", "reason": "no torch", "environment": null }),
        ),
    ] {
        assert_eq!(serde_json::to_value(&status).unwrap(), json);
        assert_eq!(serde_json::from_value::<Baselines>(json).unwrap(), status);
    }
    let err = serde_json::from_value::<Baselines>(
        serde_json::json!({ "requested": true, "status": "maybe" }),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("ran, skipped or not requested"), "{err}");
}

fn csv_round_trips_every_field() {
    let results = small();
    let csv = results.to_csv();
    let records: Vec<Vec<String>> = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(csv.as_bytes())
        .deserialize()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(records[0], CSV_COLUMNS);
    assert_eq!(records.len(), results.rows.len() + 1);
    let col = |name: &str| CSV_COLUMNS.iter().position(|c| *c == name).unwrap();
    for (rec, row) in records[1..].iter().zip(&results.rows) {
        assert_eq!(rec.len(), CSV_COLUMNS.len());
        assert_eq!(rec[col("name")], row.name);
        assert_eq!(rec[col("status")], row.status.name());
        assert_eq!(
            rec[col("seqlen")].parse::<usize>().unwrap(),
            row.problem.shape.seqlen_q
        );
        assert_eq!(rec[col("dtype")], row.problem.dtype.name());
        assert_eq!(rec[col("reason")], row.reason.clone().unwrap_or_default());
        assert_eq!(rec[col("gpu")], results.header.device.name);
        // Floats are written in Rust's shortest round-trip form: they read back exactly.
        let tflops = rec[col("tflops")].parse::<f64>().ok();
        assert_eq!(tflops, row.tflops);
    }
    // The reason with a comma and quotes survived quoting.
    assert!(
        records
            .iter()
            .any(|r| r[col("reason")].contains("\"quoted\", with comma"))
    );
}

/// The runs of record's `bench.csv` are what `to_csv` makes of their `bench.json`, byte
/// for byte: the CSV writer may change, the files it wrote may not.
fn the_committed_csv_files_are_what_their_json_makes() -> Checked {
    let runs = flashlab::bench::records::runs(&root())
        .map_err(|e| Skipped(format!("{e:#} (GPU bundle)")))?;
    let mut compared = 0;
    for dir in runs {
        let (json, csv) = (dir.join("bench.json"), dir.join("bench.csv"));
        if !(json.exists() && csv.exists()) {
            continue;
        }
        let expected = std::fs::read_to_string(&csv).unwrap();
        let made = BenchResults::read(&json).unwrap().to_csv();
        assert!(made == expected, "{} differs from to_csv", csv.display());
        compared += 1;
    }
    // h200-prefill: hopper, ladder, 2026-11-21-stages-1-5; h100-prefill: sweep,
    // 2026-11-24-stages-1-9.
    assert!(compared >= 5, "only {compared} runs with a bench.csv");
    Ok(())
}

fn written_files_read_back() {
    let dir = temp_dir("write");
    let results = small();
    let (json, csv) = results.write(&dir).unwrap();
    assert_eq!(BenchResults::read(&json).unwrap(), results);
    assert!(
        std::fs::read_to_string(csv)
            .unwrap()
            .starts_with("kind,name,stage")
    );
    // A file that is not a bench JSON says so, with the cause.
    std::fs::write(dir.join("bad.json"), "{}").unwrap();
    let err = format!(
        "{:#}",
        BenchResults::read(&dir.join("bad.json")).unwrap_err()
    );
    assert!(
        err.contains("not a flashlab bench JSON") && err.contains("missing field"),
        "{err}"
    );
    let err = format!(
        "{:#}",
        BenchResults::read(&dir.join("absent.json")).unwrap_err()
    );
    assert!(
        err.contains("reading") && err.contains("absent.json") && err.contains("os error 2"),
        "{err}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

fn derived_numbers_use_the_harness_flop_count() {
    let results = small();
    for row in &results.rows {
        let mut again = row.clone();
        again.tflops = None;
        again.fill_derived(results.header.speed_of_light.gemm_tflops);
        assert!((again.gflop - row.problem.flops() / 1e9).abs() < 1e-9);
        match (row.tflops, again.tflops) {
            (Some(a), Some(b)) => assert!((a - b).abs() <= 1e-9 * a, "{a} vs {b}"),
            (None, None) => {}
            other => panic!("{other:?}"),
        }
        if let (Some(t), Some(pct)) = (again.tflops, again.sol_percent) {
            assert!((pct - 100.0 * t / 795.0).abs() < 1e-9);
        }
    }
    // Causal counts seqlen * (seqlen + 1) / 2 pairs, exactly as bench/baselines.py does.
    let shape = Problem {
        causal: true,
        ..Problem::new(2, 16, 4096, 64)
    };
    let row = Row::new(RowKind::Baseline, "x", None, &shape);
    assert_eq!(
        row.gflop * 1e9,
        4.0 * 2.0 * 16.0 * 64.0 * 4096.0 * 4097.0 / 2.0
    );
}

fn only_rows_that_passed_are_plotted() {
    let results = small();
    let series = plots::series_of(
        &results.rows,
        |r| r.problem.shape.head_dim == 64 && r.problem.causal,
        |r| r.tflops,
    );
    let labels: Vec<&str> = series.iter().map(|s| s.label.as_str()).collect();
    // Stages first by number, then baselines; the never-available flash-attn is absent.
    assert_eq!(
        labels,
        [
            "1-naive",
            "2-online-softmax",
            "3-tensor-cores",
            "sdpa-flash"
        ]
    );
    let points = |name: &str| {
        series
            .iter()
            .find(|s| s.label == name)
            .unwrap()
            .points
            .len()
    };
    assert_eq!(points("1-naive"), 1, "the skipped 4096 row is not drawn");
    assert_eq!(
        points("3-tensor-cores"),
        1,
        "the check-failed row is not drawn"
    );
    assert_eq!(points("2-online-softmax"), 2);
    let speedups = plots::speedup_series(&results.rows, 128, false);
    assert_eq!(speedups.len(), 2);
    assert_eq!(speedups[0].label, "stage 2 over 1");
    let (_, s) = speedups[0].points[0];
    assert!((s - 4.9 / 1.1).abs() < 1e-3, "{s}");
}

/// The speedup plot draws each stage over the nearest stage of the run it builds on: in the
/// H200 backward record, stage 25 (built on 22) over 22, not over 23, the number before it.
/// Stage 23 builds on 19, which the run has not, so it falls back to the number before it.
fn speedups_follow_the_ladder_tree() {
    let results =
        BenchResults::read(&root().join("bench/records/h200-backward/sweep/bench.json")).unwrap();
    for (dim, causal) in [(64, false), (128, true)] {
        let labels: Vec<String> = plots::speedup_series(&results.rows, dim, causal)
            .into_iter()
            .map(|s| s.label)
            .collect();
        assert_eq!(
            labels,
            ["stage 23 over 22", "stage 25 over 22"],
            "d{dim} causal {causal}"
        );
    }
    let row = |stage: u32| {
        results
            .rows
            .iter()
            .find(|r| {
                r.stage == Some(stage)
                    && r.problem.shape.head_dim == 128
                    && !r.problem.causal
                    && r.problem.shape.seqlen_q == 8192
            })
            .and_then(|r| r.tflops)
            .unwrap()
    };
    let speedups = plots::speedup_series(&results.rows, 128, false);
    let (_, s) = speedups[1]
        .points
        .iter()
        .find(|p| p.0 == 8192.0)
        .copied()
        .unwrap();
    assert!((s - row(25) / row(22)).abs() < 1e-9, "{s}");
}

fn plots_are_written_and_deterministic() {
    for (name, text) in [("small", SMALL), ("h200", H200)] {
        let results: BenchResults = serde_json::from_str(text).unwrap();
        let (a, b) = (
            temp_dir(&format!("plots-a-{name}")),
            temp_dir(&format!("plots-b-{name}")),
        );
        let written = plots::write_all(&results, &a).unwrap();
        plots::write_all(&results, &b).unwrap();
        let names: Vec<String> = written
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        for expected in ["sol-percent.svg", "speedups.svg", "results-table.md"] {
            assert!(names.iter().any(|n| n == expected), "{names:?}");
        }
        assert!(names.iter().any(|n| n == "tflops-d128.svg"), "{names:?}");
        for n in &names {
            let (x, y) = (
                std::fs::read(a.join(n)).unwrap(),
                std::fs::read(b.join(n)).unwrap(),
            );
            assert_eq!(x, y, "{n} differs between two runs");
            if n.ends_with(".svg") {
                let svg = String::from_utf8(x).unwrap();
                assert!(svg.starts_with("<svg"), "{n}");
                assert!(svg.contains("sequence length"), "{n}");
            }
        }
        let tflops = std::fs::read_to_string(a.join("tflops-d128.svg")).unwrap();
        assert!(tflops.contains("sdpa-flash") && tflops.contains("2-online-softmax"));
        // Stages of one branch only: no ladder, and the list of files says so.
        assert!(!names.iter().any(|n| n.starts_with("ladder")), "{names:?}");
        assert_eq!(names, plots::file_names(&results));
        std::fs::remove_dir_all(a).unwrap();
        std::fs::remove_dir_all(b).unwrap();
    }
}

/// Stages of two branches make the ladder at a glance: two charts and a table, the same
/// bytes from the same JSON, listed by `file_names` (which the book's checks read).
fn the_ladder_is_drawn_from_two_branches_deterministically() {
    use flashlab::bench::ladder::{LADDER_CAUSAL_SVG, LADDER_FILES, LADDER_SVG, LADDER_TABLE_MD};
    let results: BenchResults = serde_json::from_str(LADDER).unwrap();
    let (a, b) = (temp_dir("ladder-a"), temp_dir("ladder-b"));
    let written = plots::write_all(&results, &a).unwrap();
    plots::write_all(&results, &b).unwrap();
    let names: Vec<String> = written
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, plots::file_names(&results));
    assert_eq!(names[names.len() - 3..], LADDER_FILES.map(String::from));
    for n in LADDER_FILES {
        assert_eq!(
            std::fs::read(a.join(n)).unwrap(),
            std::fs::read(b.join(n)).unwrap(),
            "{n} differs between two runs"
        );
    }
    for (file, mask) in [(LADDER_SVG, "no mask"), (LADDER_CAUSAL_SVG, "causal")] {
        let svg = std::fs::read_to_string(a.join(file)).unwrap();
        assert!(svg.starts_with(&format!("<svg width=\"{}\"", bench::style::FIGURE_W)));
        // The largest seqlen of the run, head dim 128.
        assert!(
            svg.contains(&format!("head dim 128, seqlen 4096, {mask}")),
            "{file}"
        );
        // A bar label per stage in the tree's order, then the branches' names.
        let at = |s: &str| {
            svg.find(&format!("\n{s}\n"))
                .unwrap_or_else(|| panic!("{file}: no {s}"))
        };
        assert!(at("1-naive") < at("9-lean-softmax"));
        assert!(at("9-lean-softmax") < at("10-tma"));
        assert!(at("10-tma") < at("16-overlap"));
        assert!(svg.contains("stages 1, 9: any GPU from sm_80"), "{file}");
        assert!(
            svg.contains("stages 10, 16: Hopper only (sm_90a)"),
            "{file}"
        );
        // The three reference lines, labelled; no line for the others.
        for reference in ["FlashAttention-2 ", "cuDNN ", "FlashAttention-4 "] {
            assert!(svg.contains(reference), "{file}: {reference}");
        }
        assert!(!svg.contains("sdpa-efficient") && !svg.contains("flash-attn"));
    }
    let table = std::fs::read_to_string(a.join(LADDER_TABLE_MD)).unwrap();
    let lines: Vec<&str> = table.lines().filter(|l| l.starts_with("| ")).collect();
    let first_cells: Vec<&str> = lines
        .iter()
        .map(|l| l.split(" | ").next().unwrap().trim_start_matches("| "))
        .collect();
    assert_eq!(
        first_cells,
        [
            "stage",
            "1-naive",
            "9-lean-softmax",
            "10-tma",
            "16-overlap",
            "sdpa-flash",
            "sdpa-cudnn",
            "flash-attn-4"
        ],
        "{table}"
    );
    // The idea up to its first colon; TFLOPS at 4096, not the made-up 1024 row.
    assert!(
        table.contains("| 10-tma | TMA and mbarriers | 411 | 260 | 332 | 205 |"),
        "{table}"
    );
    assert!(table.contains("| 9-lean-softmax | a lean softmax | 391 | 240 | 316 | FAIL |"));
    for line in table.lines() {
        assert!(line.len() <= 90, "wider than the column: {line}");
        assert!(!line.contains('$'), "no math in the table: {line}");
    }
    std::fs::remove_dir_all(a).unwrap();
    std::fs::remove_dir_all(b).unwrap();
}

fn the_results_table_marks_failures_and_skips() {
    let table = output::results_table(&small());
    assert!(table.contains("#### Head dim 64, causal"), "{table}");
    assert!(
        table.contains(
            "| seqlen | batch x heads | 1-naive | 2-online-softmax | 3-tensor-cores | sdpa-flash |"
        ),
        "{table}"
    );
    assert!(
        !table.contains("| flash-attn |"),
        "a baseline that never ran gets no column"
    );
    assert!(table.contains("FAIL"));
    assert!(table.contains("not available there: flash-attn"), "{table}");
    // 4096 causal, d 64: stage 1 skipped, stage 3 failed its check.
    let line = table
        .lines()
        .skip_while(|l| !l.contains("Head dim 64, causal"))
        .find(|l| l.starts_with("| 4096 |"))
        .unwrap();
    assert!(line.starts_with("| 4096 | 2 x 16 | - |"), "{line}");
    assert!(line.contains("| FAIL |"), "{line}");
    let real = output::results_table(&serde_json::from_str(H200).unwrap());
    assert!(real.contains("**NVIDIA H200**"), "{real}");
}

fn dates_are_iso_utc() {
    use std::time::{Duration, SystemTime, UNIX_EPOCH};
    let at = |secs: u64| bench::format_utc(UNIX_EPOCH + Duration::from_secs(secs));
    assert_eq!(at(0), "1970-01-01T00:00:00Z");
    assert_eq!(at(951_782_400), "2000-02-29T00:00:00Z");
    assert_eq!(at(1_738_324_800), "2025-01-31T12:00:00Z");
    assert_eq!(at(4_107_542_399), "2100-02-28T23:59:59Z");
    // Sub-second parts are dropped, not rounded.
    let late = UNIX_EPOCH + Duration::from_millis(1_738_324_800_999);
    assert_eq!(bench::format_utc(late), "2025-01-31T12:00:00Z");
    // utc_now is the clock's time in that format: it parses back to within a second or
    // two of the clock read around it.
    let before = SystemTime::now() - Duration::from_secs(1);
    let now = bench::utc_now();
    let after = SystemTime::now() + Duration::from_secs(1);
    let parsed = humantime::parse_rfc3339(&now).unwrap();
    assert!(before <= parsed && parsed <= after, "{now}");
    assert!(!bench::GIT_COMMIT.is_empty());
}

fn baseline_json_lines_become_rows() {
    let lines = r#"{"kind": "meta", "torch": "2.11.0", "planned": 2}
a library printing to stdout
{"kind": "baseline", "name": "sdpa-flash", "stage": null, "batch": 2, "heads": 16, "seqlen": 4096, "head_dim": 128, "causal": true, "dtype": "bf16", "status": "ok", "reason": null, "median_ms": 0.5, "min_ms": 0.49, "iterations": 200, "gflop": 1.0, "tflops": 2.0, "sol_percent": null, "max_abs_error": 0.002, "error_bound": 0.09, "check_passed": true}
{"kind": "baseline", "name": "flash-attn", "batch": 2, "heads": 16, "seqlen": 4096, "head_dim": 128, "causal": true, "dtype": "bf16", "status": "skipped", "reason": "flash_attn is not importable"}
"#;
    let (meta, rows) = baselines::read_lines(Cursor::new(lines));
    assert_eq!(meta.unwrap()["torch"], "2.11.0");
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].status, Status::Ok);
    assert_eq!(rows[1].status, Status::Skipped);
    let mut r = rows[0].clone();
    r.fill_derived(Some(800.0));
    // The script's own FLOPs/TFLOPS are replaced by the harness's count for the shape.
    assert!((r.tflops.unwrap() - r.problem.flops() / 0.5e-3 / 1e12).abs() < 1e-9);
    let (meta, rows) = baselines::read_lines(Cursor::new("not json\n"));
    assert!(meta.is_err() && rows.is_empty());
}

fn the_embedded_script_is_the_committed_one_and_passes_its_self_test() -> Checked {
    assert_embedded_script("bench/baselines.py", baselines::SCRIPT)
}

/// The script at `path` is the one the binary embeds, and its `--self-test` passes
/// (`Err` where the repository or python3 is absent).
fn assert_embedded_script(path: &str, embedded: &str) -> Checked {
    let on_disk = root().join(path);
    let Ok(text) = std::fs::read_to_string(&on_disk) else {
        return Err(Skipped(format!(
            "{} not present (GPU bundle)",
            on_disk.display()
        )));
    };
    assert_eq!(text, embedded);
    let out = Command::new("python3")
        .arg(&on_disk)
        .arg("--self-test")
        .output()
        .map_err(|e| Skipped(format!("no python3: {e}")))?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(())
}

/// Runs a bundle script from the repository and returns its stdout; `Err` in the GPU
/// bundle, which has no fixtures folder.
fn script(name: &str, args: &[&str]) -> Result<String, Skipped> {
    let path = root().join("scripts/bundle").join(name);
    let fixtures = root().join("tests/fixtures");
    if !path.exists() || !fixtures.exists() {
        return Err(Skipped(format!(
            "{} or the fixtures are not present (GPU bundle)",
            path.display()
        )));
    }
    let out = Command::new("bash")
        .arg(&path)
        .args(args)
        .current_dir(root())
        .output()
        .map_err(|e| Skipped(format!("bash could not be run: {e}")))?;
    assert!(
        out.status.success(),
        "{name} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(String::from_utf8(out.stdout).unwrap())
}

fn sass_counts_match_an_independent_count_of_real_cuobjdump_output() -> Checked {
    let table = script(
        "sass.sh",
        &["--count", "tests/fixtures/sass-stage5-excerpt.sass"],
    )?;
    let lines: Vec<Vec<&str>> = table
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        lines[0],
        [
            "arch", "kernel", "HMMA", "HGMMA", "LDSM", "LDGSTS", "UTMALDG", "FFMA", "MUFU", "BAR",
            "SHFL", "LDS", "STS", "LDG", "STG", "total"
        ]
    );
    // Counted separately with a regular expression when the fixture was cut.
    assert_eq!(
        lines[1][..5],
        ["sm_80", "cp_async_w8s3_f16_d128", "44", "0", "33"]
    );
    assert_eq!(lines[1][15], "201");
    assert_eq!(
        lines[2][..5],
        ["sm_90a", "cp_async_w8s3_f16_d128", "30", "0", "27"]
    );
    assert_eq!(lines[2][15], "157");
    let only = script(
        "sass.sh",
        &[
            "--count",
            "tests/fixtures/sass-stage5-excerpt.sass",
            "--arch",
            "sm_90a",
        ],
    )?;
    assert_eq!(only.lines().count(), 2);
    Ok(())
}

fn the_ncu_summary_reads_a_real_raw_export() -> Checked {
    if let Err(e) = Command::new("python3").arg("--version").output() {
        return Err(Skipped(format!("no python3: {e}")));
    }
    let summary = script(
        "ncu.sh",
        &["--summarize", "tests/fixtures/ncu-raw-stage3-h200.csv"],
    )?;
    for expected in [
        "kernel       tensor_cores_bf16_d128",
        "174 registers/thread",
        "49152 B dynamic",
        "time         0.7080 ms",
        "HMMA (mma.sync) 7.8%",
        "8.40M instructions, 16.0 wavefronts each",
        "117.95M bank conflicts",
        "achieved 12.32%",
        "(theoretical 12.5%)",
        "DRAM 0.79% of peak",
        "top stalls   short_scoreboard 12.54, long_scoreboard 2.25",
    ] {
        assert!(
            summary.contains(expected),
            "missing {expected:?} in\n{summary}"
        );
    }
    assert!(
        !summary.contains("selected 1.00"),
        "'selected' is not a stall"
    );
    Ok(())
}

fn without_a_gpu_the_commands_say_so_clearly() -> Checked {
    if harness::Gpu::open().is_ok() {
        return Err(Skipped::because("a GPU is present"));
    }
    let exe = env!("CARGO_BIN_EXE_flashlab");
    let run = |args: &[&str]| Command::new(exe).args(args).output().unwrap();
    let out = run(&["bench", "--quick", "--out", "/nonexistent-bench-out"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no NVIDIA GPU found") && err.contains("--dry-run"),
        "{err}"
    );
    assert!(!Path::new("/nonexistent-bench-out").exists());
    let out = run(&["compare", "1", "2"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no NVIDIA GPU found"));
    // Bad input is refused before looking for a GPU.
    let out = run(&["compare", "1", "2", "--dim", "96"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("head dim 96"));
    let out = run(&["bench", "--dry-run", "--quick"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("stage rows to run"));
    Ok(())
}

fn dump_fatbin_writes_the_embedded_kernels() -> Checked {
    let info = find(2).unwrap().info();
    if let Some(reason) = info.kernels.not_compiled_reason() {
        return Err(Skipped(format!(
            "stage 2's kernels were not compiled: {reason}"
        )));
    }
    let dir = temp_dir("fatbin");
    let path = dir.join("s2.fatbin");
    let out = Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args(["dump-fatbin", "2", "--out"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read(&path).unwrap(), info.kernels.fatbin);
    std::fs::remove_dir_all(dir).unwrap();
    Ok(())
}

/// What a run of stage 11 loads is its timed kernel, not the timeline kernel that
/// shares its dtype and head dim suffix.
fn the_kernels_compared_are_the_timed_ones() -> Checked {
    let stage = find(11).unwrap();
    if let Some(reason) = stage.info().kernels.not_compiled_reason() {
        return Err(Skipped(format!(
            "stage 11's kernels were not compiled: {reason}"
        )));
    }
    let names: Vec<String> =
        bench::compare::kernels_for(stage, &Problem::new(1, 1, 128, 128), "sm_90a")
            .into_iter()
            .map(|r| r.kernel)
            .collect();
    assert_eq!(names, ["wgmma_bf16_d128"]);
    Ok(())
}

/// The decode run of record's table is what `flashlab plots` makes of its JSON (generated,
/// never typed), its plots are drawn for the book's column, and its rows say what the
/// chapter says of them: every stage row checked and passed.
fn the_decode_records_regenerate_their_tables_and_plots() -> Checked {
    // Those present are checked all the same; any absent one leaves the test ignored.
    let missing: Vec<String> = [
        "h100-decode/sweep",
        "h100-decode/d256",
        "h100-decode/2026-11-26-7ef4ebd",
        "h100-decode/2026-11-25-stage-14",
        "h200-decode/sweep",
    ]
    .into_iter()
    .filter_map(|record| check_decode_record(record).err())
    .map(|Skipped(reason)| reason)
    .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(Skipped(missing.join("; ")))
    }
}

fn check_decode_record(record: &str) -> Checked {
    use flashlab::bench::decode::{DecodeResults, PLOT_FILES, decode_table, write_plots};
    let dir = root().join(flashlab::bench::records::RECORDS).join(record);
    let Ok(results) = DecodeResults::read(&dir.join("decode.json")) else {
        return Err(Skipped(format!(
            "{} not present (GPU bundle)",
            dir.display()
        )));
    };
    let table = std::fs::read_to_string(dir.join("decode-table.md")).unwrap();
    assert_eq!(decode_table(&results), table);
    let stage_rows: Vec<_> = results.rows.iter().filter(|r| r.is_stage()).collect();
    assert!(stage_rows.len() > 100);
    assert!(
        stage_rows
            .iter()
            .all(|r| r.status == "ok" && r.check_passed == Some(true))
    );
    // The heuristic's count is recorded beside the sweep's at every shape.
    for r in stage_rows.iter().filter(|r| r.kind == "heuristic") {
        assert!(r.splits.is_some_and(|s| s >= 1), "{r:?}");
    }
    let out = std::env::temp_dir().join(format!(
        "flashlab-{}-{}",
        record.replace('/', "-"),
        std::process::id()
    ));
    std::fs::create_dir_all(&out).unwrap();
    let written = write_plots(&results, &out).unwrap();
    assert_eq!(written.len(), PLOT_FILES.len());
    for path in written {
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.contains("width=\"740\""), "{}", path.display());
        // plotters writes each size over 1.24: the smallest text asked for is 15 px.
        let smallest = svg
            .split("font-size=\"")
            .skip(1)
            .filter_map(|s| {
                s.split('"')
                    .next()?
                    .trim_end_matches("px")
                    .parse::<f64>()
                    .ok()
            })
            .fold(f64::INFINITY, f64::min);
        assert!(smallest >= 12.0, "{}: {smallest} px", path.display());
    }
    let _ = std::fs::remove_dir_all(&out);
    Ok(())
}

/// A run that measured each shape's read floor gets its column and the newest stage's
/// ratio to it, computed from the rows; one without (stage 14's record, before the floor)
/// keeps its table.
fn the_read_floor_gets_a_column_and_a_ratio() -> Checked {
    use flashlab::bench::decode::{DecodeResults, READ_FLOOR, decode_table};
    let records = root().join(flashlab::bench::records::RECORDS);
    let (Ok(fused), Ok(older)) = (
        DecodeResults::read(&records.join("h200-decode/sweep/decode.json")),
        DecodeResults::read(&records.join("h100-decode/2026-11-25-stage-14/decode.json")),
    ) else {
        return Err(Skipped::because(
            "the decode records are not present (GPU bundle)",
        ));
    };
    let table = decode_table(&fused);
    let head = table.lines().find(|l| l.starts_with("| batch")).unwrap();
    assert!(head.contains("| streaming read, same bytes |"), "{head}");
    assert!(head.ends_with("| 15 / same-bytes read |"), "{head}");
    let gb = |kind: &str, name: &str| {
        fused
            .rows
            .iter()
            .find(|r| r.kind == kind && r.name == name && (r.batch, r.cache_len) == (1, 8192))
            .and_then(|r| r.gb_per_s)
            .unwrap()
    };
    let (stage, floor) = (gb("heuristic", "stage 15"), gb("read", READ_FLOOR));
    // This run flushed with evict-first reads: its shapes smaller than the L2 are marked.
    let row = table
        .lines()
        .find(|l| l.starts_with("| 1 | 8192 † |"))
        .unwrap();
    assert!(row.ends_with(&format!("| {:.2} |", stage / floor)), "{row}");
    let read = fused.header.read_gb_per_s;
    assert!(
        row.contains(&format!("| {floor:.0} ({:.0}%) |", 100.0 * floor / read)),
        "{row}"
    );
    // Every shape has its floor, and a kernel that only reads is faster than the stage.
    let shapes = fused.rows.iter().filter(|r| r.kind == "read").count();
    assert_eq!(shapes, 9);
    assert!(stage < floor);
    assert!(!decode_table(&older).contains("same bytes"));
    // Of its nine shapes, batch 1 at 2k and 8k keys (8.4 and 33.5 MB) fit the H200's L2.
    assert_eq!(table.matches(" † |").count(), 2);
    assert!(table.lines().next().unwrap().contains("evict-first"));
    // A run with the flush of plain loads marks nothing.
    let mut fixed = fused.clone();
    fixed.header.l2_flush = Some(flashlab::bench::decode::L2_FLUSH.to_string());
    let table = decode_table(&fixed);
    assert!(!table.contains('†'), "{table}");
    assert!(
        table
            .lines()
            .next()
            .unwrap()
            .ends_with("the L2 flushed before each launch.")
    );
    Ok(())
}

fn the_embedded_decode_script_is_the_committed_one_and_passes_its_self_test() -> Checked {
    // It imports baselines.py's helpers from beside it, as the bench writes them.
    assert_embedded_script("bench/decode_baselines.py", flashlab::bench::decode::SCRIPT)
}

/// decode_baselines.py's lines become decode rows; a line that is not JSON is passed on,
/// not fatal, as for the prefill baselines.
fn decode_baseline_lines_become_rows() {
    let text = r#"{"kind": "meta", "device": "H100"}
a library printing to stdout
{"kind": "decode-baseline", "name": "sdpa-cudnn", "batch": 1, "heads": 32, "kv_heads": 8, "seqlen_q": 1, "seqlen_k": 8192, "head_dim": 128, "status": "ok", "median_ms": 0.02, "gb_per_s": 1500.0, "check_passed": true}
"#;
    let (meta, rows) = flashlab::bench::decode::read_baseline_lines(Cursor::new(text));
    assert_eq!(meta["device"], "H100");
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    assert_eq!(
        (r.kind.as_str(), r.name.as_str(), r.cache_len),
        ("baseline", "sdpa-cudnn", 8192)
    );
    assert_eq!(
        (r.gb_per_s, r.check_passed, r.splits),
        (Some(1500.0), Some(true), None)
    );
    assert_eq!(r.kv_bytes, 32.0 * 1024.0 * 1024.0);
}
