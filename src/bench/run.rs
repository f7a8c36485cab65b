//! `flashlab bench` from start to end: the GPU and the stages it can run, the speed of
//! light, the sweep's rows, the baselines, then the files.

use super::results::{
    Baselines, BenchResults, GIT_COMMIT, Header, Row, RowKind, SCHEMA, Status, SweepInfo, utc_now,
};
use super::sweep::{BenchConfig, Pass, Plan, describe_plan, plan_row_for, select_stages_for};
use super::sweep::{shape_label, stage_name, validate_sweep};
use super::{baselines, output, plots};
use anyhow::{Result, anyhow};
use harness::backward::run::{BackwardOptions, run_backward_stage};
use harness::run::{RunOptions, run_stage};
use harness::timing::TimingProtocol;
use harness::{Gpu, Stage};

/// Runs the bench: returns the process exit code (1 when a stage row failed its check or
/// errored; the files are written either way).
pub fn run(config: &BenchConfig) -> Result<i32> {
    validate_sweep(&config.sweep)?;
    if config.dry_run {
        print!("{}", describe_plan(config)?);
        return Ok(0);
    }
    let requested = select_stages_for(config.pass, config.stages.as_deref())?;
    let gpu = Gpu::open().map_err(|e| {
        anyhow!("{e}\n(`flashlab bench --dry-run` shows the rows it would run without a GPU)")
    })?;
    let device = gpu.facts()?;
    eprintln!(
        "bench on {} (sm_{}{}, {} SMs, driver {}), commit {GIT_COMMIT}",
        device.name,
        gpu.compute_capability.0,
        gpu.compute_capability.1,
        device.multiprocessors,
        device.driver_version
    );

    // Stages this GPU cannot run, or that carry no kernels, are left out with a note.
    let mut notes = Vec::new();
    let mut stages = Vec::new();
    for s in requested {
        let info = s.info();
        if let Some(reason) = info.kernels.not_compiled_reason() {
            notes.push(format!(
                "stage {} left out: kernels not compiled ({reason})",
                info.label()
            ));
        } else if let Err(e) = gpu.check_stage(info) {
            notes.push(format!("stage {} left out: {e}", info.label()));
        } else {
            stages.push(s);
        }
    }
    for n in &notes {
        eprintln!("{n}");
    }

    // Find python and torch before the long part, so a missing torch is said up front.
    let probe = if config.baselines {
        Some(baselines::probe())
    } else {
        None
    };
    if let Some(Err(why)) = &probe {
        eprintln!("baselines will be skipped: {why}");
    }

    eprintln!(
        "measuring the speed of light (copy bandwidth, cuBLAS bf16 GEMM, mma.sync, L2 to shared memory)..."
    );
    let sol = harness::sol::measure(&gpu, config.timing)?;
    match sol.gemm_tflops {
        Some(t) => eprintln!(
            "speed of light: copy {:.0} GB/s, GEMM {t:.0} TFLOPS",
            sol.copy_gb_per_s
        ),
        None => eprintln!(
            "speed of light: copy {:.0} GB/s; GEMM not measured, so no % of SOL",
            sol.copy_gb_per_s
        ),
    }

    let shapes = config.sweep.shapes();
    let mut rows = Vec::new();
    let total = shapes.len() * stages.len();
    let progress = output::Progress::new(total as u64, "stages");
    for shape in &shapes {
        for stage in &stages {
            let name = stage_name(*stage);
            progress.start(&format!("{name} {}", shape_label(shape)));
            let row = Row::new(RowKind::Stage, &name, Some(stage.info().number), shape);
            let row = match (
                plan_row_for(config.pass, *stage, shape, config.max_workspace_gib),
                config.pass,
            ) {
                (Plan::Skip(why), Pass::Forward) => row.skipped(why),
                (Plan::Skip(why), Pass::Backward) => row.backward().skipped(why),
                (Plan::Run, Pass::Forward) => {
                    run_row(*stage, &gpu, config.seed, config.timing, row)
                }
                (Plan::Run, Pass::Backward) => {
                    run_backward_row(*stage, &gpu, config.seed, config.timing, row.backward())
                }
            };
            progress.finish_row(&row);
            rows.push(row);
        }
    }
    progress.done();

    // An FP8 stage in the run brings the FP8 baselines (cuDNN's FP8 attention) along.
    let fp8 = stages
        .iter()
        .filter_map(|s| s.workload().prefill().ok())
        .any(harness::fp8::is_fp8);
    let baselines = match probe {
        None => Baselines::NotRequested,
        Some(Err(why)) => Baselines::Skipped { reason: why },
        Some(Ok(python)) => match baselines::run(&python, &shapes, config.timing, fp8, config.pass)
        {
            Ok((environment, baseline_rows)) => {
                rows.extend(baseline_rows);
                Baselines::Ran { environment }
            }
            Err(e) => {
                eprintln!("baselines failed: {e:#}");
                Baselines::Skipped {
                    reason: format!("{e:#}"),
                }
            }
        },
    };
    if let Baselines::Skipped { reason } = &baselines {
        eprintln!("baselines skipped: {reason}");
    }

    for r in &mut rows {
        r.fill_derived(sol.gemm_tflops);
    }
    let results = BenchResults {
        header: Header {
            schema: SCHEMA,
            tool: format!("flashlab {}", env!("CARGO_PKG_VERSION")),
            git_commit: GIT_COMMIT.to_string(),
            date_utc: utc_now(),
            command_line: std::env::args().collect::<Vec<_>>().join(" "),
            device,
            speed_of_light: sol,
            sweep: SweepInfo::new(
                &config.sweep,
                stages.iter().map(|s| s.info().number).collect(),
                config.timing,
                config.seed,
                config.max_workspace_gib,
                config.pass,
            ),
            baselines,
            notes,
        },
        rows,
    };
    let (json, csv) = results.write(&config.out)?;
    println!("{}", output::results_table(&results));
    eprintln!("wrote {} and {}", json.display(), csv.display());
    if config.plots {
        for path in plots::write_all(&results, &config.out)? {
            eprintln!("wrote {}", path.display());
        }
    }
    let bad: Vec<&Row> = results
        .rows
        .iter()
        .filter(|r| {
            r.kind == RowKind::Stage && matches!(r.status, Status::CheckFailed | Status::Error)
        })
        .collect();
    if bad.is_empty() {
        return Ok(0);
    }
    eprintln!("{} stage rows failed:", bad.len());
    for r in bad {
        eprintln!(
            "  {} {}: {} {}",
            r.name,
            shape_label(&r.problem),
            r.status.name(),
            r.reason.as_deref().unwrap_or("")
        );
    }
    Ok(1)
}

/// Checks and times one stage on one shape, into `row`.
pub fn run_row(
    stage: &dyn Stage,
    gpu: &Gpu,
    seed: u64,
    timing: TimingProtocol,
    mut row: Row,
) -> Row {
    let opts = RunOptions {
        seed: Some(seed),
        check: true,
        timing: Some(timing),
        adjust_inputs: None,
        timeline: None,
        ..Default::default()
    };
    match run_stage(stage, gpu, &row.problem, &opts) {
        Ok((report, _outputs)) => {
            row.prepare_ms = report.prepare.as_ref().map(|t| t.median_ms);
            let check = report.check.as_ref().map(|c| RowCheck {
                max_abs: c.o_max_abs,
                bound: c.o_bound,
                passed: c.passed,
                summary: c.summary(),
            });
            fill(&mut row, report.timing.as_ref(), report.tflops, check);
        }
        Err(e) => failed(&mut row, e),
    }
    row
}

/// What a row keeps of a run's check: its largest error and bound, its verdict and, when
/// it failed, its summary as the row's reason.
struct RowCheck {
    max_abs: f64,
    bound: f64,
    passed: bool,
    summary: String,
}

/// A run's time, speed and check, into `row`, and its status: the one way a stage row
/// records a run, forward or backward.
fn fill(
    row: &mut Row,
    timing: Option<&harness::timing::Timing>,
    tflops: Option<f64>,
    check: Option<RowCheck>,
) {
    if let Some(t) = timing {
        row.median_ms = Some(t.median_ms);
        row.min_ms = Some(t.min_ms);
        row.iterations = Some(t.iterations);
    }
    row.tflops = tflops;
    let passed = check.as_ref().is_some_and(|c| c.passed);
    if let Some(c) = check {
        row.max_abs_error = Some(c.max_abs);
        row.error_bound = Some(c.bound);
        row.check_passed = Some(c.passed);
        if !c.passed {
            row.reason = Some(c.summary);
        }
    }
    row.status = if passed {
        Status::Ok
    } else {
        Status::CheckFailed
    };
}

fn failed(row: &mut Row, e: harness::Error) {
    row.status = Status::Error;
    row.reason = Some(e.to_string());
}

/// Checks and times one backward stage on one shape, into `row` (a backward row): the
/// gradients' largest error and bound are dQ's, dK's or dV's, whichever is nearest its bound.
pub fn run_backward_row(
    stage: &dyn Stage,
    gpu: &Gpu,
    seed: u64,
    timing: TimingProtocol,
    mut row: Row,
) -> Row {
    let opts = BackwardOptions {
        seed: Some(seed),
        check: true,
        timing: Some(timing),
        deterministic: false,
        timeline: None,
    };
    match run_backward_stage(stage, gpu, &row.problem, &opts) {
        Ok((report, _outputs)) => {
            let check = report.check.as_ref().map(|c| {
                let worst = c
                    .gradients
                    .iter()
                    .max_by(|a, b| (a.max_abs / a.bound).total_cmp(&(b.max_abs / b.bound)));
                RowCheck {
                    max_abs: worst.map_or(f64::NAN, |g| g.max_abs),
                    bound: worst.map_or(f64::NAN, |g| g.bound),
                    passed: c.passed,
                    summary: c.summary(),
                }
            });
            fill(&mut row, report.timing.as_ref(), report.tflops, check);
        }
        Err(e) => failed(&mut row, e),
    }
    row
}
