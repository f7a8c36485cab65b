//! What each subcommand does. Returns the process exit code: 0, or 1 when a check failed.

use crate::cli::{Cli, Command, StageArgs, TimelineArgs};
use crate::stages::{STAGES, find};
use anyhow::{Context, Result};
use harness::backward::run::{BackwardOptions, BackwardRun};
use harness::decode::run::{DecodeOptions, DecodeRun};
use harness::run::{PrefillRun, RunOptions};
use harness::timing::TimingProtocol;
use harness::{BackwardStage, DecodeStage, Gpu, KernelResources, PrefillStage, Workload};
use serde::Serialize;

pub fn run(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::List { json } => list(json),
        Command::Stage(args) => stage(args),
        Command::Info { json, timing } => info(json, timing.timing),
        Command::Resources { stage, arch, json } => resources(stage, arch.as_deref(), json),
        Command::Bench(args) if args.decode => crate::bench::decode::run(&args.decode_config()),
        Command::Bench(args) => crate::bench::run(&args.config()),
        Command::Plots { book: true, .. } => book_plots(),
        Command::Plots { from, out, .. } => plots(&from, &out),
        Command::Compare(args) => compare(args),
        Command::Accuracy(args) => crate::accuracy::run(args),
        Command::Timeline(args) => timeline(args),
        Command::Schedule(args) => crate::schedule::run(args),
        Command::DumpFatbin { stage, out } => dump_fatbin(stage, &out),
    }
}

#[derive(Serialize)]
struct StageRow {
    number: u32,
    /// The stage whose kernel it changes by one idea (null for the first).
    builds_on: Option<u32>,
    slug: &'static str,
    idea: &'static str,
    /// `sm_80+` or `sm_90a`: the GPUs the stage's kernels are built for.
    gpu: &'static str,
    head_dims: &'static [usize],
    dtypes: Vec<&'static str>,
    compiled: bool,
    /// Whether it has timeline kernels (`flashlab timeline N`).
    timeline: bool,
    /// `prefill`, `decode` or `backward`: what `flashlab stage N` runs it on.
    workload: &'static str,
}

fn list(json: bool) -> Result<i32> {
    let rows: Vec<StageRow> = STAGES
        .iter()
        .map(|s| {
            let i = s.info();
            StageRow {
                number: i.number,
                builds_on: i.builds_on,
                slug: i.slug,
                idea: i.idea,
                gpu: i.gpu.short_name(),
                head_dims: i.head_dims,
                dtypes: i.dtypes.iter().map(|d| d.name()).collect(),
                compiled: i.kernels.compiled(),
                timeline: i.timeline,
                workload: s.workload().name(),
            }
        })
        .collect();
    if json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(0);
    }
    // The slug column is as wide as the longest slug, so the ideas line up.
    let w = rows.iter().map(|r| r.slug.len()).max().unwrap_or(0).max(5);
    println!(
        "{:>3}  {:<w$} {:<6} {:<6} {:<9} {:<9} idea",
        "#", "stage", "on", "gpu", "dims", "dtypes"
    );
    for branch in crate::stages::ladder_branches(STAGES) {
        let first = rows.iter().find(|r| r.number == branch[0]).unwrap();
        let from = first
            .builds_on
            .map_or(String::new(), |p| format!(", growing from stage {p}"));
        println!("{} on {}{from}", first.workload, first.gpu);
        for n in branch {
            let r = rows.iter().find(|r| r.number == n).unwrap();
            let dims = r
                .head_dims
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(",");
            let on = r.builds_on.map_or("-".to_string(), |p| p.to_string());
            println!(
                "{:>3}  {:<w$} {:<6} {:<6} {:<9} {:<9} {}",
                r.number,
                r.slug,
                on,
                r.gpu,
                dims,
                r.dtypes.join(","),
                r.idea
            );
        }
    }
    println!(
        "\ngpu: sm_80+ runs on compute capability 8.0 or newer; sm_90a on Hopper (9.0: H100, H200) only"
    );
    // A line for each kind of stage that has its own commands, naming its stages.
    let footnote = |what: &str, keep: fn(&StageRow) -> bool| {
        let numbers: Vec<String> = rows
            .iter()
            .filter(|r| keep(r))
            .map(|r| r.number.to_string())
            .collect();
        if !numbers.is_empty() {
            println!("{what}: stage {}", numbers.join(", "));
        }
    };
    footnote(
        "timeline kernels (`flashlab timeline N`, a measured Gantt chart)",
        |r| r.timeline,
    );
    footnote(
        "decode stages (new query rows against a K/V cache: `flashlab stage N --seqlen-q 1 --cache-lens 8192`, `flashlab bench --decode`)",
        |r| r.workload == "decode",
    );
    footnote(
        "backward stages (dQ, dK and dV from dO, after the forward of the stage they build on: `flashlab stage N`, `--deterministic`, `flashlab bench --backward`)",
        |r| r.workload == "backward",
    );
    if rows.iter().any(|r| !r.compiled) {
        println!("\nkernels not compiled (no nvcc when built): run `just cuda`, then rebuild");
    }
    Ok(0)
}

/// The numbers of the stages `gpu` can run, for the message that refuses one it cannot.
fn runnable_here(gpu: &Gpu) -> String {
    let numbers: Vec<String> = STAGES
        .iter()
        .filter(|s| s.info().gpu.runs_on(gpu.compute_capability))
        .map(|s| s.info().number.to_string())
        .collect();
    if numbers.is_empty() {
        "none".into()
    } else {
        numbers.join(", ")
    }
}

/// A run refuses a stage this GPU cannot run; the message then names those it can.
fn naming_runnable(e: harness::Error, gpu: &Gpu) -> anyhow::Error {
    match e {
        harness::Error::WrongGpu { .. } => anyhow::anyhow!(
            "{e}\nthe stages that run on this GPU: {}",
            runnable_here(gpu)
        ),
        e => e.into(),
    }
}

fn stage(args: StageArgs) -> Result<i32> {
    let stage = find(args.number).map_err(anyhow::Error::msg)?;
    if args.deterministic && !matches!(stage.workload(), Workload::Backward(_)) {
        anyhow::bail!(
            "--deterministic is for the backward stages (dQ's additions in a fixed order); stage {} is a {} stage",
            stage.info().label(),
            stage.workload().name()
        );
    }
    let scales = args.fp8_scales.granularity();
    match stage.workload() {
        Workload::Prefill(prefill) => {
            harness::fp8::check_scales(prefill, scales)?;
            prefill_stage(prefill, args)
        }
        _ if scales != reference::fp8_attention::Granularity::PerHead => anyhow::bail!(
            "--fp8-scales is for the FP8 prefill stages; stage {} is a {} stage",
            stage.info().label(),
            stage.workload().name()
        ),
        Workload::Decode(decode) => decode_stage(decode, args),
        Workload::Backward(backward) => backward_stage(backward, args),
    }
}

/// `flashlab stage N` for a backward stage: the forward stage it builds on writes O and the
/// LSE, then the backward's dQ, dK and dV are checked against the f64 backward and timed.
fn backward_stage(stage: &dyn BackwardStage, args: StageArgs) -> Result<i32> {
    if args.decode.given() {
        anyhow::bail!(
            "--cache-lens, --page-size and --splits are for the decode stages; stage {} is a backward stage",
            stage.info().label()
        );
    }
    let problem = args.shape.problem();
    let run = BackwardRun::new(stage, &problem)?;
    let gpu = Gpu::open()?;
    let opts = BackwardOptions {
        seed: args.seed,
        check: !args.no_check,
        timing: (!args.no_time).then_some(args.timing.timing),
        deterministic: args.deterministic,
        timeline: None,
    };
    let (report, outputs) = run.run(&gpu, &opts).map_err(|e| naming_runnable(e, &gpu))?;
    if let Some(dir) = &args.save {
        crate::save::save_backward(dir, &report, &outputs)?;
    }
    let failed = report.check.as_ref().is_some_and(|c| !c.passed);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(if failed { 1 } else { 0 });
    }
    print_run_header(stage.info(), &gpu, &problem, report.seed);
    println!(
        "forward  stage {} wrote O and the LSE (not timed); dQ's additions {}",
        report.forward_stage,
        if report.deterministic {
            "in a fixed order (--deterministic)"
        } else {
            "in any order (atomics; --deterministic fixes it)"
        }
    );
    if let Some(c) = &report.check {
        println!("check    {}", if c.passed { "PASS" } else { "FAIL" });
        for g in &c.gradients {
            println!(
                "  {}     max|err| {:.3e} (bound {:.3e}, {:.3e} for the same math in the dtype), rel fro {:.2e}, {} of {} rows",
                g.name, g.max_abs, g.bound, g.lowp_max_abs, g.rel_fro, g.rows_checked, g.rows_total
            );
        }
        if c.nan_elements > 0 {
            println!("  {} NaN/unwritten gradient elements", c.nan_elements);
        }
    }
    if let (Some(t), Some(tf)) = (&report.timing, report.tflops) {
        print_time(t, "");
        println!(
            "speed    {tf:.1} TFLOPS  ({:.3} GFLOP: the backward's five products, 2.5x the forward's count; causal counts only visible pairs)",
            harness::backward::backward_flops(&problem) / 1e9
        );
    }
    if let Some(dir) = &args.save {
        println!(
            "saved    q, k, v, o, lse, d_o, dq, dk, dv .npy in {}",
            dir.display()
        );
    }
    Ok(if failed { 1 } else { 0 })
}

/// `flashlab stage N` for a prefill stage: a [`harness::Problem`], checked against the
/// oracle and timed.
fn prefill_stage(stage: &dyn PrefillStage, args: StageArgs) -> Result<i32> {
    if args.decode.given() {
        anyhow::bail!(
            "--cache-lens, --page-size and --splits are for the decode stages; stage {} is a prefill stage",
            stage.info().label()
        );
    }
    let problem = args.shape.problem();
    // Refuse bad input before touching the GPU, so the message names the real problem.
    let run = PrefillRun::new(stage, &problem)?;
    let gpu = Gpu::open()?;
    let opts = RunOptions {
        seed: args.seed,
        check: !args.no_check,
        timing: (!args.no_time).then_some(args.timing.timing),
        adjust_inputs: None,
        timeline: None,
        fp8_scales: args.fp8_scales.granularity(),
    };
    let (report, outputs) = run.run(&gpu, &opts).map_err(|e| naming_runnable(e, &gpu))?;
    if let Some(dir) = &args.save {
        crate::save::save_prefill(dir, &report, &outputs)?;
    }
    let failed = report.check.as_ref().is_some_and(|c| !c.passed);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        let info = stage.info();
        print_run_header(info, &gpu, &problem, report.seed);
        if let Some(c) = &report.check {
            println!(
                "check    {}  {}",
                if c.passed { "PASS" } else { "FAIL" },
                c.summary()
            );
        }
        if let (Some(t), Some(tf)) = (&report.timing, report.tflops) {
            print_time(t, "");
            println!(
                "speed    {tf:.1} TFLOPS  ({:.3} GFLOP, causal counts only visible pairs)",
                problem.flops() / 1e9
            );
        }
        if let Some(t) = &report.prepare {
            // The FP8 stages' quantization of bf16 Q, K and V, not counted above: it moves
            // Q, K and V in bf16 and writes their codes, so its speed is in bytes.
            let bytes = problem.shape.q_len() * 3 + problem.shape.kv_len() * 6;
            println!(
                "prepare  {:.4} ms median (bf16 to E4M3 codes and scales, not in the time above: {:.0} GB/s of the {:.1} MB read and written once each)",
                t.median_ms,
                bytes as f64 / t.median_ms / 1e6,
                bytes as f64 / 1e6
            );
        }
        if let Some(dir) = &args.save {
            println!("saved    q, k, v, o, lse .npy in {}", dir.display());
        }
    }
    Ok(if failed { 1 } else { 0 })
}

/// `flashlab stage N` for a decode stage: a decode problem, checked against the oracle
/// sequence by sequence and timed with the L2 flushed before each launch.
fn decode_stage(stage: &dyn DecodeStage, args: StageArgs) -> Result<i32> {
    let problem = args
        .decode
        .problem(&args.shape)
        .map_err(anyhow::Error::msg)?;
    let run = DecodeRun::new(stage, &problem)?;
    let gpu = Gpu::open()?;
    let opts = DecodeOptions {
        seed: args.seed,
        check: !args.no_check,
        timing: (!args.no_time).then_some(args.timing.timing),
        cold_l2: true,
        read_floor: true,
    };
    let (report, outputs) = run.run(&gpu, &opts).map_err(|e| naming_runnable(e, &gpu))?;
    let saved = match &args.save {
        Some(dir) => Some((dir, crate::save::save_decode(dir, &report, &outputs)?)),
        None => None,
    };
    let failed = report.check.as_ref().is_some_and(|c| !c.passed);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(if failed { 1 } else { 0 });
    }
    print_run_header(stage.info(), &gpu, &problem, report.seed);
    let (blocks, slots) = (report.blocks_per_split, report.slots);
    let counted = match report.split_rule {
        harness::decode::SplitRule::FlashAttention => format!(
            "{} SMs x {} blocks each",
            gpu.multiprocessors, report.blocks_per_sm
        ),
        harness::decode::SplitRule::OneWave => format!(
            "{} SMs x {} KiB / {} KiB of K/V tile a block ({} blocks fit an SM)",
            gpu.multiprocessors,
            harness::decode::WAVE_TILE_BYTES_PER_SM / 1024,
            report.kv_tile_bytes / 1024,
            report.blocks_per_sm
        ),
    };
    println!(
        "splits   {} ({}; {blocks} blocks per split, {slots} slots = {counted}: wave efficiency {:.2})",
        report.splits,
        if report.splits_from == "given" {
            "--splits".to_string()
        } else {
            format!("the heuristic's choice, {}", report.split_rule)
        },
        report.wave_efficiency
    );
    if let Some(c) = &report.check {
        println!(
            "check    {}  {} ({} of {} sequences)",
            if c.passed { "PASS" } else { "FAIL" },
            c.summary(),
            report.sequences_checked,
            problem.batch
        );
    }
    if let (Some(t), Some(gbs)) = (&report.timing, report.gb_per_s) {
        print_time(t, ", the L2 flushed before each launch");
        println!(
            "speed    {gbs:.0} GB/s of K/V read ({:.1} MB: every sequence's keys and values once per K/V head)",
            problem.kv_bytes() / 1e6
        );
    }
    if let (Some(gbs), Some(floor)) = (report.gb_per_s, &report.read_floor) {
        println!(
            "floor    {:.0} GB/s: a kernel that only reads as many bytes, timed the same way ({:.0}% of it)",
            floor.gb_per_s,
            100.0 * gbs / floor.gb_per_s
        );
    }
    if let Some((dir, files)) = saved {
        println!(
            "saved    {} .npy in {} (its README.md replays a sequence in numpy)",
            files.join(", "),
            dir.display()
        );
    }
    Ok(if failed { 1 } else { 0 })
}

/// The first lines of every run's report (`stage`, `timeline`): the stage, the GPU, the
/// problem and its seed.
fn print_run_header(
    info: &harness::StageInfo,
    gpu: &Gpu,
    problem: &dyn std::fmt::Display,
    seed: u64,
) {
    println!("stage    {} ({}): {}", info.number, info.slug, info.idea);
    println!(
        "gpu      {} (sm_{}{}, {} SMs)",
        gpu.name, gpu.compute_capability.0, gpu.compute_capability.1, gpu.multiprocessors
    );
    println!("problem  {problem}   seed {seed}");
}

/// Gated timing is the default and goes unsaid; the other protocol is named wherever a
/// time is printed, so its numbers are not mistaken for the usual ones.
/// A run's `time` line: the median and its spread, what came before each launch (`how`),
/// and the protocol when it is not the gated one.
fn print_time(t: &harness::timing::Timing, how: &str) {
    println!(
        "time     {:.4} ms median of {} (min {:.4}, max {:.4}){how}{}",
        t.median_ms,
        t.iterations,
        t.min_ms,
        t.max_ms,
        ungated_note(t.protocol)
    );
}

fn ungated_note(protocol: TimingProtocol) -> &'static str {
    match protocol {
        TimingProtocol::Gated => "",
        TimingProtocol::Ungated => ", ungated: host launch time included",
    }
}

fn timeline(args: TimelineArgs) -> Result<i32> {
    let stage = find(args.number).map_err(anyhow::Error::msg)?;
    let problem = args.shape.problem();
    // Refused before touching the GPU: a stage without timeline kernels names those with one.
    harness::timeline::check(stage.info(), &problem, STAGES.iter().map(|s| s.info()))?;
    match stage.workload() {
        Workload::Prefill(stage) => prefill_timeline(stage, &args, problem),
        Workload::Backward(stage) => backward_timeline(stage, &args, problem),
        // `check` refuses them first: no decode stage has timeline kernels.
        Workload::Decode(_) => anyhow::bail!(
            "stage {} is a decode stage: its kernels have no timeline variants",
            stage.info().label()
        ),
    }
}

/// `flashlab timeline N` for a prefill stage: the timed kernel, then the timeline kernel on
/// the same inputs, checked against the oracle.
fn prefill_timeline(
    stage: &dyn PrefillStage,
    args: &TimelineArgs,
    problem: harness::Problem,
) -> Result<i32> {
    let run = PrefillRun::new(stage, &problem)?;
    let gpu = Gpu::open()?;
    let seed = args.seed.unwrap_or_else(harness::inputs::fresh_seed);
    let timing = (!args.no_time).then_some(args.timing.timing);
    let (timed, (report, outputs)) = timed_then_recorded(args, &gpu, |timeline| {
        run.run(
            &gpu,
            &RunOptions {
                seed: Some(seed),
                // The timed kernels are checked by `flashlab stage`; here, the run that records.
                check: timeline.is_some(),
                timing,
                adjust_inputs: None,
                timeline,
                ..Default::default()
            },
        )
    })?;
    let buffer = outputs
        .timeline
        .as_ref()
        .context("the timeline run returned no events")?;
    print_run_header(stage.info(), &gpu, &problem, report.seed);
    let check = report
        .check
        .as_ref()
        .map(crate::timeline::RunCheck::Prefill);
    print_timeline_check(check);
    draw_timeline(
        args,
        Recorded {
            info: stage.info(),
            gpu: &gpu,
            problem,
            seed: report.seed,
            check,
            timed: timed.as_ref().and_then(|(r, _)| r.timing.as_ref()),
            recorded: report.timing.as_ref(),
            buffer,
        },
    )
}

/// `flashlab timeline N` for a backward stage: the forward it builds on writes O and the
/// LSE, then the backward's timed kernels, then the same with its main kernel's timeline
/// build, checked against the f64 backward. The times are the backward's three kernels'.
fn backward_timeline(
    stage: &dyn BackwardStage,
    args: &TimelineArgs,
    problem: harness::Problem,
) -> Result<i32> {
    let run = BackwardRun::new(stage, &problem)?;
    let gpu = Gpu::open()?;
    let seed = args.seed.unwrap_or_else(harness::inputs::fresh_seed);
    let timing = (!args.no_time).then_some(args.timing.timing);
    let (timed, (report, outputs)) = timed_then_recorded(args, &gpu, |timeline| {
        run.run(
            &gpu,
            &BackwardOptions {
                seed: Some(seed),
                // The timed kernels are checked by `flashlab stage`; here, the run that records.
                check: timeline.is_some(),
                timing,
                deterministic: false,
                timeline,
            },
        )
    })?;
    let buffer = outputs
        .timeline
        .as_ref()
        .context("the timeline run returned no events")?;
    print_run_header(stage.info(), &gpu, &problem, report.seed);
    println!(
        "forward  stage {} wrote O and the LSE (not timed); the times below are the backward's three kernels, of which the main one records",
        report.forward_stage
    );
    let check = report
        .check
        .as_ref()
        .map(crate::timeline::RunCheck::Backward);
    print_timeline_check(check);
    draw_timeline(
        args,
        Recorded {
            info: stage.info(),
            gpu: &gpu,
            problem,
            seed: report.seed,
            check,
            timed: timed.as_ref().and_then(|(r, _)| r.timing.as_ref()),
            recorded: report.timing.as_ref(),
            buffer,
        },
    )
}

/// The timed kernels (unless `--no-time`), then the timeline kernels on the same inputs
/// (`run` builds the workload's options around the request it is given): the difference in
/// time is what the instrumentation costs.
fn timed_then_recorded<R>(
    args: &TimelineArgs,
    gpu: &Gpu,
    run: impl Fn(Option<harness::timeline::TimelineRequest>) -> harness::Result<R>,
) -> Result<(Option<R>, R)> {
    let timed = match args.no_time {
        false => Some(run(None).map_err(|e| naming_runnable(e, gpu))?),
        true => None,
    };
    let request = harness::timeline::TimelineRequest {
        blocks: args.blocks,
    };
    let recorded = run(Some(request)).map_err(|e| naming_runnable(e, gpu))?;
    Ok((timed, recorded))
}

/// The recording run's check line, when it was checked.
fn print_timeline_check(check: Option<crate::timeline::RunCheck>) {
    if let Some(c) = check {
        println!(
            "check    {}  {} (the timeline kernel's output)",
            if c.passed() { "PASS" } else { "FAIL" },
            c.summary()
        );
    }
}

/// What a timeline run brought back, whatever its workload.
struct Recorded<'a> {
    info: &'static harness::StageInfo,
    gpu: &'a Gpu,
    problem: harness::Problem,
    seed: u64,
    check: Option<crate::timeline::RunCheck<'a>>,
    timed: Option<&'a harness::timing::Timing>,
    recorded: Option<&'a harness::timing::Timing>,
    buffer: &'a harness::timeline::TimelineBuffer,
}

/// The overhead, the summary, the chart and the JSON of a recorded run; exit status 1 when
/// its check failed (the chart is still written).
fn draw_timeline(args: &TimelineArgs, r: Recorded) -> Result<i32> {
    let recorded = harness::timeline::Timeline::from_buffer(r.buffer)?;
    let out = crate::timeline::report(
        &crate::timeline::Runs {
            info: r.info,
            gpu: &r.gpu.name,
            problem: r.problem,
            seed: r.seed,
            check: r.check,
            timed: r.timed,
            recorded: r.recorded,
            timeline: &recorded,
            blocks: args.blocks,
        },
        args.window(),
    );
    for line in &out.lines {
        println!("{line}");
    }
    for warning in &out.warnings {
        eprintln!("warning: {warning}");
    }
    let path = args.out();
    write_creating_parent(&path, &out.svg)?;
    println!("wrote    {}", path.display());
    if let Some(path) = &args.json {
        write_creating_parent(path, &serde_json::to_string_pretty(&out.json)?)?;
        println!("wrote    {}", path.display());
    }
    Ok(if r.check.is_none_or(|c| c.passed()) {
        0
    } else {
        1
    })
}

fn write_creating_parent(path: &std::path::Path, contents: &str) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(path, contents).with_context(|| format!("writing {}", path.display()))
}

fn info(json: bool, timing: TimingProtocol) -> Result<i32> {
    let gpu = Gpu::open()?;
    let facts = gpu.facts()?;
    let sol = harness::sol::measure(&gpu, timing)?;
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(
                &serde_json::json!({ "device": facts, "speed_of_light": sol })
            )?
        );
        return Ok(0);
    }
    println!(
        "gpu        {} (compute capability {}, {} SMs)",
        facts.name, facts.compute_capability, facts.multiprocessors
    );
    println!(
        "memory     {:.1} GiB, L2 {:.0} MiB, shared memory per block up to {} KiB",
        facts.memory_gib, facts.l2_mib, facts.max_smem_per_block_kib
    );
    println!(
        "clocks     SM {} MHz, memory {} MHz (maximum, from the driver)   driver {}",
        facts.sm_clock_mhz, facts.memory_clock_mhz, facts.driver_version
    );
    println!(
        "copy       {:.0} GB/s device-to-device ({} MiB, read + write){}",
        sol.copy_gb_per_s,
        sol.copy_bytes >> 20,
        ungated_note(timing)
    );
    if let Some(read) = sol.read_gb_per_s {
        println!(
            "read       {read:.0} GB/s streaming read of the same buffer (read only: the decode stages' roofline){}",
            ungated_note(timing)
        );
    }
    match (sol.gemm_tflops, &sol.gemm_skipped) {
        (Some(t), _) => println!(
            "gemm       {t:.0} TFLOPS cuBLAS bf16 {n}x{n}x{n}, fp32 accumulate (random data)",
            n = sol.gemm_size
        ),
        (None, Some(why)) => println!("gemm       not measured: {why}"),
        _ => {}
    }
    match (
        sol.mma_sync_tflops,
        sol.l2_to_smem_tb_per_s,
        &sol.ceilings_skipped,
    ) {
        (Some(mma), Some(l2), _) => {
            println!(
                "mma.sync   {mma:.0} TFLOPS bf16 m16n8k16, fp32 accumulate, nothing else running: the tensor-core ceiling of the mma.sync stages (3-10)"
            );
            println!(
                "l2->smem   {l2:.2} TB/s cp.async of 32 KiB tiles from an L2-resident buffer: the tile path of the cp.async stages (5-9)"
            );
        }
        (_, _, Some(why)) => println!("mma.sync   ceilings not measured: {why}"),
        _ => {}
    }
    Ok(0)
}

fn resources(stage: Option<u32>, arch: Option<&str>, json: bool) -> Result<i32> {
    let stages: Vec<_> = match stage {
        Some(n) => vec![find(n).map_err(anyhow::Error::msg)?],
        None => STAGES.to_vec(),
    };
    let mut rows: Vec<(u32, KernelResources)> = Vec::new();
    // Stages whose tensor-core instructions could not be counted, and why.
    let mut uncounted: Vec<(String, String)> = Vec::new();
    for s in &stages {
        let info = s.info();
        if let Some(reason) = info.kernels.not_compiled_reason() {
            eprintln!("stage {}: kernels not compiled: {reason}", info.label());
            continue;
        }
        if let Some(reason) = info.kernels.sass_counts_unavailable() {
            uncounted.push((info.number.to_string(), reason));
        }
        rows.extend(
            info.kernels
                .resources()
                .into_iter()
                .filter(|r| arch.is_none_or(|a| r.arch == a))
                .map(|r| (info.number, r)),
        );
    }
    // One note for the stages that share a reason (usually all of them: no cuobjdump).
    let mut notes: Vec<(Vec<&str>, &str)> = Vec::new();
    for (n, reason) in &uncounted {
        match notes.iter_mut().find(|(_, r)| r == reason) {
            Some((numbers, _)) => numbers.push(n),
            None => notes.push((vec![n], reason)),
        }
    }
    let notes: Vec<String> = notes
        .iter()
        .map(|(numbers, reason)| {
            format!(
                "stage {}: tensor-core instructions not counted: {reason}",
                numbers.join(", ")
            )
        })
        .collect();
    if json {
        let list: Vec<_> = rows
            .iter()
            .map(|(n, r)| serde_json::json!({ "stage": n, "resources": r }))
            .collect();
        println!("{}", serde_json::to_string_pretty(&list)?);
        for note in &notes {
            eprintln!("{note}");
        }
        return Ok(0);
    }
    println!(
        "{:>2}  {:<32} {:<7} {:>4} {:>8} {:>9} {:>6} {:>7} {:>5} {:>5} {:>5}",
        "#",
        "kernel",
        "arch",
        "regs",
        "barriers",
        "smem(st)",
        "stack",
        "spills",
        "HMMA",
        "HGMMA",
        "QGMMA"
    );
    let count = |c: Option<u32>| c.map_or_else(|| "-".to_string(), |c| c.to_string());
    for (n, r) in &rows {
        println!(
            "{:>2}  {:<32} {:<7} {:>4} {:>8} {:>9} {:>6} {:>7} {:>5} {:>5} {:>5}",
            n,
            r.kernel,
            r.arch,
            r.registers,
            r.barriers,
            r.static_smem_bytes,
            r.stack_frame_bytes,
            r.spill_store_bytes + r.spill_load_bytes,
            count(r.hmma),
            count(r.hgmma),
            count(r.qgmma)
        );
    }
    println!("\nsmem(st) is static __shared__ only; dynamic shared memory is set at launch.");
    println!(
        "HMMA (mma.sync), HGMMA (wgmma f16/bf16), QGMMA (wgmma fp8): tensor-core instructions in the SASS, a static count (a loop body counts once); - is not counted."
    );
    for note in &notes {
        println!("{note}");
    }
    Ok(0)
}

/// Everything the book draws from the runs of record, as `bench/records/book.txt` lists it,
/// from the repository root (the working directory).
fn book_plots() -> Result<i32> {
    use crate::bench::records::{BOOK_GENERATED, BookSource, book_list};
    let root = std::path::Path::new("");
    for entry in book_list(root)? {
        let out = root.join(BOOK_GENERATED).join(&entry.to);
        match &entry.source {
            BookSource::Plots(from) => {
                plots(&root.join(from), &out)?;
            }
            BookSource::Svgs(from) => {
                std::fs::create_dir_all(&out)
                    .with_context(|| format!("creating {}", out.display()))?;
                let dir = root.join(from);
                for file in
                    std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))?
                {
                    let path = file?.path();
                    if path.extension().is_some_and(|e| e == "svg") {
                        let to = out.join(path.file_name().unwrap());
                        std::fs::copy(&path, &to)
                            .with_context(|| format!("copying {}", path.display()))?;
                        println!("copied {}", to.display());
                    }
                }
            }
        }
    }
    Ok(0)
}

fn plots(from: &std::path::Path, out: &std::path::Path) -> Result<i32> {
    // A decode bench's JSON says so in its header.
    let text =
        std::fs::read_to_string(from).with_context(|| format!("reading {}", from.display()))?;
    if serde_json::from_str::<serde_json::Value>(&text)
        .is_ok_and(|v| v["header"]["kind"] == "decode")
    {
        let results = crate::bench::decode::DecodeResults::read(from)?;
        std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
        std::fs::write(
            out.join("decode-table.md"),
            crate::bench::decode::decode_table(&results),
        )?;
        for path in crate::bench::decode::write_plots(&results, out)? {
            println!("wrote {}", path.display());
        }
        return Ok(0);
    }
    let results = crate::bench::BenchResults::read(from)?;
    for path in crate::bench::plots::write_all(&results, out)? {
        println!("wrote {}", path.display());
    }
    Ok(0)
}

fn compare(args: crate::cli::CompareArgs) -> Result<i32> {
    let problem = args.shape.problem();
    let seed = args.seed.unwrap_or(crate::bench::DEFAULT_SEED);
    let c = crate::bench::compare::compare(args.a, args.b, &problem, seed, args.timing.timing)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&c)?);
    } else {
        print!("{}", crate::bench::compare::render(&c));
    }
    let failed = [&c.a, &c.b]
        .iter()
        .any(|s| s.report.check.as_ref().is_some_and(|ch| !ch.passed));
    Ok(if failed { 1 } else { 0 })
}

fn dump_fatbin(stage: u32, out: &std::path::Path) -> Result<i32> {
    let info = find(stage).map_err(anyhow::Error::msg)?.info();
    if let Some(reason) = info.kernels.not_compiled_reason() {
        anyhow::bail!(
            "stage {}'s kernels were not compiled: {reason}",
            info.label()
        );
    }
    std::fs::write(out, info.kernels.fatbin)
        .with_context(|| format!("writing {}", out.display()))?;
    eprintln!(
        "stage {}: {} bytes of fatbin in {}",
        info.label(),
        info.kernels.fatbin.len(),
        out.display()
    );
    Ok(0)
}
