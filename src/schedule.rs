//! `flashlab schedule`: a kernel's main loop as ptxas scheduled it, read from its SASS (the
//! `sass-schedule` crate): a way around the loop cut into phases at each synchronization,
//! with the static cycles of each (the sum of the stall counts ptxas encoded: the fewest
//! cycles a warp takes to issue it when nothing else holds it). With `--profile`, a Nsight
//! Compute source page of the same binary: the way the warps executed, the samples on each
//! phase, and how the `wait` samples follow the stall counts. Book: Tools, "The schedule
//! ptxas wrote".

use crate::stages::find;
use anyhow::{Context, Result, bail};
use clap::Args;
use sass_schedule::{
    Function, LoopSchedule, SourcePage, Way, main_loop, parse_listing, stall_versus_wait,
};
use std::fmt::Write as _;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ScheduleArgs {
    /// A stage number, or a `cuobjdump -sass` listing (`.gz` read as such): FlashAttention-4's
    /// kernel, a variant built by hand.
    pub what: String,
    /// Only the kernels whose name contains this (one whose name is exactly this, alone).
    #[arg(long)]
    pub kernel: Option<String>,
    /// Only this architecture (default: sm_90a where the listing has it).
    #[arg(long)]
    pub arch: Option<String>,
    /// A Nsight Compute source page of the same binary (`ncu --import R --page source --csv
    /// --print-source sass`, `.gz` read as such): follow the way the warps executed, with
    /// their samples; needs exactly one kernel.
    #[arg(long, value_name = "CSV")]
    pub profile: Option<PathBuf>,
    /// Also print each instruction of the way with its control bits.
    #[arg(long)]
    pub listing: bool,
    /// Print the phase table (and with --profile the stall table) as Markdown, alone: what
    /// the book includes from a record; needs exactly one kernel.
    #[arg(long, conflicts_with = "listing")]
    pub markdown: bool,
}

pub fn run(args: ScheduleArgs) -> Result<i32> {
    let (source, text) = match args.what.parse::<u32>() {
        Ok(n) => {
            let stage = find(n).map_err(anyhow::Error::msg)?;
            let info = stage.info();
            let listing = info
                .kernels
                .sass_listing()
                .map_err(|e| anyhow::anyhow!("stage {}: {e}", info.label()))?;
            (format!("stage {}", info.label()), listing)
        }
        Err(_) => {
            let path = PathBuf::from(&args.what);
            if !path.is_file() {
                bail!(
                    "{} is neither a stage number nor a file (give a stage, or a `cuobjdump -sass` listing)",
                    args.what
                );
            }
            let text = sass_schedule::read_text(&path)
                .with_context(|| format!("reading {}", path.display()))?;
            (path.display().to_string(), text)
        }
    };
    let functions =
        parse_listing(&text).with_context(|| format!("reading the SASS of {source}"))?;
    if functions.is_empty() {
        bail!("{source}: the listing has no function (is it `cuobjdump -sass` output?)");
    }
    let arch = match &args.arch {
        Some(a) => a.clone(),
        None if functions.iter().any(|f| f.arch == "sm_90a") => "sm_90a".into(),
        None => functions[0].arch.clone(),
    };
    let in_arch: Vec<&Function> = functions.iter().filter(|f| f.arch == arch).collect();
    if in_arch.is_empty() {
        let archs: std::collections::BTreeSet<&str> =
            functions.iter().map(|f| f.arch.as_str()).collect();
        bail!(
            "{source} has no {arch} code; it has {}",
            archs.into_iter().collect::<Vec<_>>().join(", ")
        );
    }
    let chosen: Vec<&Function> = match &args.kernel {
        None => in_arch.clone(),
        Some(k) => match in_arch.iter().find(|f| f.name == *k) {
            Some(f) => vec![*f],
            None => in_arch
                .iter()
                .copied()
                .filter(|f| f.name.contains(k.as_str()))
                .collect(),
        },
    };
    if chosen.is_empty() {
        let names: Vec<&str> = in_arch.iter().map(|f| f.name.as_str()).collect();
        bail!(
            "no {arch} kernel of {source} matches {:?}; its kernels are {}",
            args.kernel.unwrap_or_default(),
            names.join(", ")
        );
    }
    if args.markdown && chosen.len() != 1 {
        let names: Vec<&str> = chosen.iter().map(|f| f.name.as_str()).collect();
        bail!(
            "--markdown needs one kernel; there are {} here: {}",
            chosen.len(),
            names.join(", ")
        );
    }
    let page = match &args.profile {
        None => None,
        Some(path) => {
            if chosen.len() != 1 {
                let names: Vec<&str> = chosen.iter().map(|f| f.name.as_str()).collect();
                bail!(
                    "--profile needs one kernel; --kernel matches {} here: {}",
                    chosen.len(),
                    names.join(", ")
                );
            }
            let text = sass_schedule::read_text(path)
                .with_context(|| format!("reading {}", path.display()))?;
            Some(SourcePage::parse(&text).with_context(|| format!("reading {}", path.display()))?)
        }
    };
    let detailed = chosen.len() == 1;
    let mut out = String::new();
    for f in &chosen {
        let rows = match &page {
            Some(p) => Some(p.join(f).with_context(|| {
                format!(
                    "joining {} to {}",
                    args.profile.as_ref().unwrap().display(),
                    f.name
                )
            })?),
            None => None,
        };
        if args.markdown {
            let s = main_loop(f, rows).ok_or_else(|| {
                anyhow::anyhow!("{}: no loop with a tensor-core instruction", f.name)
            })?;
            out.push_str(&markdown(f, &s, rows));
            continue;
        }
        let Some(s) = main_loop(f, rows) else {
            writeln!(
                out,
                "{} ({}): {} instructions, no loop with a tensor-core instruction",
                f.name,
                f.arch,
                f.instructions.len()
            )?;
            continue;
        };
        writeln!(out, "{}", summary(f, &s))?;
        if detailed {
            out.push('\n');
            out.push_str(&phase_table(f, &s));
            if args.listing {
                out.push('\n');
                out.push_str(&way_listing(f, &s));
            }
            if let Some(rows) = rows {
                out.push('\n');
                out.push_str(&stall_table(f, rows));
            }
        }
    }
    if !detailed && !args.markdown {
        out.push_str("\n(--kernel NAME for one kernel's phases)\n");
    }
    print!("{out}");
    Ok(0)
}

fn counts(f: &Function, s: &LoopSchedule, mnemonics: &[&str]) -> String {
    mnemonics
        .iter()
        .map(|m| (m, s.count(f, m)))
        .filter(|(_, n)| *n > 0)
        .map(|(m, n)| format!("{n} {m}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One line per kernel: its main loop, and the way around it.
pub fn summary(f: &Function, s: &LoopSchedule) -> String {
    let way = match s.way {
        Way::Lightest => "its lightest way around",
        Way::Executed => "the way executed",
    };
    format!(
        "{} ({}): main loop of {} blocks, {} instructions, {} on the tensor cores; {way}: {} instructions, {} static cycles ({})",
        f.name,
        f.arch,
        s.lp.blocks.len(),
        s.loop_instructions,
        s.loop_tensor_core,
        s.path.len(),
        s.static_cycles(),
        counts(
            f,
            s,
            &[
                "HMMA", "HGMMA", "QGMMA", "MUFU", "FFMA", "FMNMX", "SHFL", "F2FP", "BAR", "SYNCS"
            ]
        ),
    )
}

/// Each phase with its first instruction, and whether it is the loop's head (the first
/// phase, when it starts at no synchronization).
fn labelled<'a>(
    f: &'a Function,
    s: &'a LoopSchedule,
) -> impl Iterator<
    Item = (
        bool,
        &'a sass_schedule::Instruction,
        &'a sass_schedule::Phase,
    ),
> {
    s.phases.iter().enumerate().map(|(k, p)| {
        let first = &f.instructions[p.instructions[0]];
        (
            k == 0 && !sass_schedule::schedule::synchronizes(first),
            first,
            p,
        )
    })
}

/// The way's phases, each from its synchronizing instruction to the next.
pub fn phase_table(f: &Function, s: &LoopSchedule) -> String {
    let profiled = s.phases.first().is_some_and(|p| p.samples.is_some());
    let mut t = String::new();
    let _ = writeln!(
        t,
        "{:<60} {:>6} {:>7}{}  instructions",
        "phase, from",
        "instr",
        "cycles",
        if profiled {
            format!(" {:>8} {:>7}", "samples", "wait")
        } else {
            String::new()
        }
    );
    for (head, first, p) in labelled(f, s) {
        let mut from = format!("{first}");
        if head {
            from = format!("(loop head) {from}");
        }
        if from.chars().count() > 60 {
            from = from.chars().take(59).collect::<String>() + "…";
        }
        let mix: Vec<String> = p
            .mnemonics(f)
            .into_iter()
            .take(5)
            .map(|(m, n)| format!("{m} {n}"))
            .collect();
        let _ = writeln!(
            t,
            "{from:<60} {:>6} {:>7}{}  {}",
            p.instructions.len(),
            p.static_cycles,
            match (p.samples, p.wait) {
                (Some(x), Some(w)) => format!(" {x:>8} {w:>7}"),
                _ => String::new(),
            },
            mix.join(", ")
        );
    }
    let _ = writeln!(
        t,
        "{:<60} {:>6} {:>7}{}",
        "around the loop",
        s.path.len(),
        s.static_cycles(),
        if profiled {
            let x: u64 = s.phases.iter().filter_map(|p| p.samples).sum();
            let w: u64 = s.phases.iter().filter_map(|p| p.wait).sum();
            format!(" {x:>8} {w:>7}")
        } else {
            String::new()
        }
    );
    let _ = writeln!(
        t,
        "cycles: the sum of the phase's stall counts, the fewest cycles a warp takes to issue it when no scoreboard or barrier holds it"
    );
    t
}

/// Every instruction of the way, with its control bits and the cycles so far.
pub fn way_listing(f: &Function, s: &LoopSchedule) -> String {
    let mut t = String::from("cycle  stall/yield/write sb/read sb/waits  instruction\n");
    let mut cycle = 0u64;
    for &i in &s.path {
        let ins = &f.instructions[i];
        let _ = writeln!(t, "{cycle:>5}  {}  {ins}", ins.control.describe());
        cycle += u64::from(ins.control.stall);
    }
    t
}

/// Stall count against the `wait` samples on the instruction after it.
pub fn stall_table(f: &Function, rows: &[sass_schedule::Row]) -> String {
    let mut t = String::from(
        "stall  instructions   executed  wait samples on the next  per million executions\n",
    );
    for r in stall_versus_wait(f, rows) {
        let _ = writeln!(
            t,
            "{:>5} {:>12} {:>10} {:>25} {:>23.1}",
            r.stall,
            r.instructions,
            r.executed,
            r.wait_after,
            r.wait_per_million()
        );
    }
    t
}

/// The phase table as Markdown (with a source page, the samples too, and the stall table
/// after it): one row a phase, then the way's totals. Each table sits between mdBook anchor
/// comments (`phases`, `stalls`), so a chapter can include one alone.
pub fn markdown(f: &Function, s: &LoopSchedule, rows: Option<&[sass_schedule::Row]>) -> String {
    let profiled = rows.is_some();
    let mut t = String::from("<!-- ANCHOR: phases -->\n");
    let _ = writeln!(
        t,
        "| phase, from its first instruction | instructions | static cycles |{} most frequent |",
        if profiled {
            " samples | `wait` samples |"
        } else {
            ""
        }
    );
    let _ = writeln!(
        t,
        "|---|---:|---:|{}---|",
        if profiled { "---:|---:|" } else { "" }
    );
    let cell = |p: &sass_schedule::Phase| match (p.samples, p.wait) {
        (Some(x), Some(w)) => format!(" {x} | {w} |"),
        _ => String::new(),
    };
    for (head, first, p) in labelled(f, s) {
        let text = first.text().replace('|', "\\|");
        let from = if head {
            format!("loop head: `{text}`")
        } else {
            format!("`{text}`")
        };
        let mix: Vec<String> = p
            .mnemonics(f)
            .into_iter()
            .take(4)
            .map(|(m, n)| format!("{n} {m}"))
            .collect();
        let _ = writeln!(
            t,
            "| {from} | {} | {} |{} {} |",
            p.instructions.len(),
            p.static_cycles,
            cell(p),
            mix.join(", ")
        );
    }
    let x: u64 = s.phases.iter().filter_map(|p| p.samples).sum();
    let w: u64 = s.phases.iter().filter_map(|p| p.wait).sum();
    let _ = writeln!(
        t,
        "| **around the loop** | **{}** | **{}** |{} |",
        s.path.len(),
        s.static_cycles(),
        if profiled {
            format!(" **{x}** | **{w}** |")
        } else {
            String::new()
        }
    );
    t.push_str("<!-- ANCHOR_END: phases -->\n");
    if let Some(rows) = rows {
        t.push_str("\n<!-- ANCHOR: stalls -->\n| stall count | instructions | executed | `wait` samples on the next | per million executions |\n|---:|---:|---:|---:|---:|\n");
        for r in stall_versus_wait(f, rows) {
            let _ = writeln!(
                t,
                "| {} | {} | {} | {} | {:.1} |",
                r.stall,
                r.instructions,
                r.executed,
                r.wait_after,
                r.wait_per_million()
            );
        }
        t.push_str("<!-- ANCHOR_END: stalls -->\n");
    }
    t
}
