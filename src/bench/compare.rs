//! `flashlab compare A B`: two stages on one shape and one seed, side by side: time,
//! TFLOPS, error, and the registers, barriers, shared memory and spills of the kernels
//! the driver will load on this GPU.

use crate::stages::find;
use anyhow::Result;
use harness::run::{PrefillRun, RunOptions, RunReport};
use harness::timing::TimingProtocol;
use harness::{Gpu, KernelResources, Problem, Stage};
use serde::Serialize;

/// `sm_90a` -> (9, 0, true); `sm_80` -> (8, 0, false); `sm_100a` -> (10, 0, true).
pub fn parse_sass_arch(arch: &str) -> Option<(u32, u32, bool)> {
    let rest = arch.strip_prefix("sm_")?;
    let (digits, specific) = match rest.strip_suffix(['a', 'f']) {
        Some(d) => (d, true),
        None => (rest, false),
    };
    if digits.len() < 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (major, minor) = digits.split_at(digits.len() - 1);
    Some((major.parse().ok()?, minor.parse().ok()?, specific))
}

/// The SASS the driver loads from a fatbin on a GPU of compute capability `cc`: the
/// arch-specific build for exactly this GPU (`sm_90a` on 9.0) if present, else the newest
/// plain `sm_XY` of the same major version not newer than the GPU. `None` means the
/// driver JIT-compiles the PTX, and no ptxas report describes what runs.
pub fn loaded_arch(cc: (u32, u32), available: &[&str]) -> Option<String> {
    let parsed: Vec<(&str, (u32, u32, bool))> = available
        .iter()
        .filter_map(|a| Some((*a, parse_sass_arch(a)?)))
        .collect();
    if let Some((a, _)) = parsed
        .iter()
        .find(|(_, (ma, mi, specific))| *specific && (*ma, *mi) == cc)
    {
        return Some(a.to_string());
    }
    parsed
        .iter()
        .filter(|(_, (ma, mi, specific))| !specific && *ma == cc.0 && *mi <= cc.1)
        .max_by_key(|(_, (_, mi, _))| *mi)
        .map(|(a, _)| a.to_string())
}

/// The kernels of `stage` for `problem`'s dtype and head dim (`*_bf16_d128`), on `arch`:
/// the timed ones, not the timeline kernels (`flashlab timeline`) of the same name.
pub fn kernels_for(stage: &dyn Stage, problem: &Problem, arch: &str) -> Vec<KernelResources> {
    let suffix = format!("_{}_d{}", problem.dtype.name(), problem.shape.head_dim);
    let on_arch: Vec<KernelResources> = stage
        .info()
        .kernels
        .resources()
        .into_iter()
        .filter(|r| r.arch == arch && !harness::timeline::is_timeline_kernel(&r.kernel))
        .collect();
    let variant: Vec<KernelResources> = on_arch
        .iter()
        .filter(|r| r.kernel.ends_with(&suffix))
        .cloned()
        .collect();
    if variant.is_empty() { on_arch } else { variant }
}

#[derive(Clone, Debug, Serialize)]
pub struct Side {
    pub stage: u32,
    pub name: String,
    pub report: RunReport,
    pub kernels: Vec<KernelResources>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    pub gpu: String,
    pub compute_capability: String,
    /// The SASS whose ptxas report is shown; `None` when the driver JITs PTX.
    pub sass_arch: Option<String>,
    pub problem: Problem,
    pub seed: u64,
    pub a: Side,
    pub b: Side,
    /// Median time of A over median time of B: above 1 means B is faster.
    pub speedup_b_over_a: Option<f64>,
}

/// Runs both stages on the same problem and inputs, timed under `timing`.
pub fn compare(
    a: u32,
    b: u32,
    problem: &Problem,
    seed: u64,
    timing: TimingProtocol,
) -> Result<Comparison> {
    let (sa, sb) = (
        find(a).map_err(anyhow::Error::msg)?,
        find(b).map_err(anyhow::Error::msg)?,
    );
    // Both checked before the GPU is touched, so a bad problem is named as such.
    let (run_a, run_b) = (
        PrefillRun::new(sa.workload().prefill()?, problem)?,
        PrefillRun::new(sb.workload().prefill()?, problem)?,
    );
    let gpu = Gpu::open()?;
    let cc = gpu.compute_capability;
    let opts = RunOptions {
        seed: Some(seed),
        check: true,
        timing: Some(timing),
        adjust_inputs: None,
        timeline: None,
        ..Default::default()
    };
    let mut archs: Vec<String> = [sa, sb]
        .iter()
        .flat_map(|s| s.info().kernels.resources())
        .map(|r| r.arch)
        .collect();
    archs.sort();
    archs.dedup();
    let arch_refs: Vec<&str> = archs.iter().map(String::as_str).collect();
    let sass_arch = loaded_arch(cc, &arch_refs);
    let side = |s: &'static dyn Stage, run: PrefillRun| -> Result<Side> {
        let (report, _) = run.run(&gpu, &opts)?;
        Ok(Side {
            stage: s.info().number,
            name: super::sweep::stage_name(s),
            report,
            kernels: sass_arch
                .as_deref()
                .map(|arch| kernels_for(s, problem, arch))
                .unwrap_or_default(),
        })
    };
    let (side_a, side_b) = (side(sa, run_a)?, side(sb, run_b)?);
    let speedup = match (&side_a.report.timing, &side_b.report.timing) {
        (Some(ta), Some(tb)) if tb.median_ms > 0.0 => Some(ta.median_ms / tb.median_ms),
        _ => None,
    };
    Ok(Comparison {
        gpu: gpu.name.clone(),
        compute_capability: format!("{}.{}", cc.0, cc.1),
        sass_arch,
        problem: *problem,
        seed,
        a: side_a,
        b: side_b,
        speedup_b_over_a: speedup,
    })
}

/// The two-column table.
pub fn render(c: &Comparison) -> String {
    let mut lines: Vec<(String, String, String)> = Vec::new();
    let mut row = |label: &str, f: &dyn Fn(&Side) -> String| {
        lines.push((label.to_string(), f(&c.a), f(&c.b)));
    };
    row("stage", &|s| s.name.clone());
    row("time (median)", &|s| {
        s.report
            .timing
            .as_ref()
            .map(|t| match t.protocol {
                TimingProtocol::Gated => format!("{:.4} ms", t.median_ms),
                TimingProtocol::Ungated => format!("{:.4} ms ungated", t.median_ms),
            })
            .unwrap_or_else(|| "-".into())
    });
    row("TFLOPS", &|s| {
        s.report
            .tflops
            .map(|t| format!("{t:.2}"))
            .unwrap_or_else(|| "-".into())
    });
    row("check", &|s| match &s.report.check {
        Some(ch) if ch.passed => "PASS".into(),
        Some(_) => "FAIL".into(),
        None => "-".into(),
    });
    row("max |dO| (bound)", &|s| {
        s.report
            .check
            .as_ref()
            .map(|ch| format!("{:.2e} ({:.2e})", ch.o_max_abs, ch.o_bound))
            .unwrap_or_else(|| "-".into())
    });
    row("max |dLSE|", &|s| {
        s.report
            .check
            .as_ref()
            .map(|ch| format!("{:.2e}", ch.lse_max_abs))
            .unwrap_or_else(|| "-".into())
    });
    let per_kernel = |f: fn(&KernelResources) -> String| {
        move |s: &Side| {
            if s.kernels.is_empty() {
                "-".to_string()
            } else {
                s.kernels.iter().map(f).collect::<Vec<_>>().join(" / ")
            }
        }
    };
    row("kernels", &per_kernel(|k| k.kernel.clone()));
    row("registers/thread", &per_kernel(|k| k.registers.to_string()));
    row("barriers", &per_kernel(|k| k.barriers.to_string()));
    row(
        "static smem",
        &per_kernel(|k| format!("{} B", k.static_smem_bytes)),
    );
    row(
        "stack frame",
        &per_kernel(|k| format!("{} B", k.stack_frame_bytes)),
    );
    row(
        "spills (st+ld)",
        &per_kernel(|k| format!("{}+{} B", k.spill_store_bytes, k.spill_load_bytes)),
    );
    row("tensor-core instr.", &per_kernel(tensor_core_summary));

    let w0 = lines.iter().map(|l| l.0.len()).max().unwrap_or(0);
    let w1 = lines.iter().map(|l| l.1.chars().count()).max().unwrap_or(0);
    let mut out = format!(
        "gpu      {} (compute capability {}); resources from the ptxas report and SASS of {}\nproblem  {}   seed {}\n\n",
        c.gpu,
        c.compute_capability,
        c.sass_arch
            .as_deref()
            .unwrap_or("no SASS for this GPU (the driver JIT-compiles the PTX)"),
        c.problem,
        c.seed
    );
    for (label, a, b) in &lines {
        out.push_str(&format!("{label:<w0$}  {a:<w1$}  {b}\n"));
    }
    if let Some(s) = c.speedup_b_over_a {
        out.push_str(&format!(
            "\nstage {} takes {:.2}x the time of stage {}{}\n",
            c.a.stage,
            s,
            c.b.stage,
            if s > 1.0 {
                format!(": stage {} is {s:.2}x faster", c.b.stage)
            } else {
                String::new()
            }
        ));
    }
    if c.a.kernels.len() > 1 || c.b.kernels.len() > 1 {
        out.push_str("several kernels: the stage's kernels for this dtype and head dim in the binary (a stage may launch all of them, like stage 1, or pick one variant at launch)\n");
    }
    out.push_str("dynamic shared memory is chosen at launch and not in the ptxas report.\n");
    out
}

/// The tensor-core instructions in a kernel's SASS, the kinds it has: `HMMA 384`, `none`,
/// or `-` when they were not counted (no cuobjdump at build time).
fn tensor_core_summary(k: &KernelResources) -> String {
    let (Some(hmma), Some(hgmma), Some(qgmma)) = (k.hmma, k.hgmma, k.qgmma) else {
        return "-".into();
    };
    let kinds: Vec<String> = [("HMMA", hmma), ("HGMMA", hgmma), ("QGMMA", qgmma)]
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(kind, n)| format!("{kind} {n}"))
        .collect();
    if kinds.is_empty() {
        "none".into()
    } else {
        kinds.join(" + ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_names_parse() {
        assert_eq!(parse_sass_arch("sm_90a"), Some((9, 0, true)));
        assert_eq!(parse_sass_arch("sm_80"), Some((8, 0, false)));
        assert_eq!(parse_sass_arch("sm_100a"), Some((10, 0, true)));
        assert_eq!(parse_sass_arch("sm_120"), Some((12, 0, false)));
        assert_eq!(parse_sass_arch("compute_80"), None);
        assert_eq!(parse_sass_arch("sm_x0"), None);
    }

    #[test]
    fn the_driver_loads_the_matching_sass() {
        let built = ["sm_80", "sm_90a"];
        assert_eq!(loaded_arch((9, 0), &built).as_deref(), Some("sm_90a"));
        assert_eq!(loaded_arch((8, 0), &built).as_deref(), Some("sm_80"));
        // An L40S or RTX 4090 (8.9) and an A10 (8.6) run sm_80 SASS.
        assert_eq!(loaded_arch((8, 9), &built).as_deref(), Some("sm_80"));
        assert_eq!(
            loaded_arch((8, 6), &["sm_80", "sm_86"]).as_deref(),
            Some("sm_86")
        );
        // sm_90a does not run on Blackwell: PTX is JIT-compiled there.
        assert_eq!(loaded_arch((10, 0), &built), None);
        assert_eq!(loaded_arch((12, 0), &built), None);
    }

    // Which kernels a comparison loads is tested in tests/bench.rs, where a test that
    // finds no compiled kernels is reported ignored rather than passed.

    #[test]
    fn tensor_cores_name_the_kinds_present() {
        let k = |hmma, hgmma| KernelResources {
            hmma,
            hgmma,
            qgmma: hmma.map(|_| 0),
            ..Default::default()
        };
        assert_eq!(tensor_core_summary(&k(Some(384), Some(0))), "HMMA 384");
        assert_eq!(tensor_core_summary(&k(Some(0), Some(64))), "HGMMA 64");
        assert_eq!(tensor_core_summary(&k(Some(0), Some(0))), "none");
        assert_eq!(tensor_core_summary(&k(None, None)), "-");
    }
}
