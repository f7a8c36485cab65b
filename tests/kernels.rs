//! Every stage in the table carries its compiled kernels, for every architecture asked for,
//! none spills more than its stage allows, and only the timeline kernels read the clocks.
//!
//! Under `just test` (and CI) `FLASHLAB_REQUIRE_KERNELS=1` is set and a compiler is
//! guaranteed, so a missing fatbin fails here. A plain `cargo test` on a machine without
//! nvcc instead checks that each stage says why it has no kernels, and each test that
//! needs the kernels is reported ignored, with the reason, rather than passed having
//! checked nothing (`harness = false`: `harness::testing`). Kernels that were not
//! compiled, or a compiler without cuobjdump beside it, are the only reasons allowed for
//! checking nothing, and neither is allowed under `FLASHLAB_REQUIRE_KERNELS`.

use flashlab::stages::STAGES;
use harness::kernels::{SassListingError, kernels_by_arch};
use harness::testing::{Checked, Needs, Skipped};
use harness::{GpuArch, KernelBundle, KernelResources, Stage, TensorCores};

harness::test_main!(Needs::Cpu => [
    every_stage_has_sass_for_the_gpus_its_table_row_names,
    no_kernel_spills_registers_beyond_what_its_stage_allows,
    no_stage_compiles_with_a_warning,
    ceiling_kernels_are_compiled_without_spills,
    the_sass_shows_the_tensor_core_instructions_each_stage_is_written_for,
    only_the_timeline_kernels_read_the_clocks,
    special_registers_are_read_from_the_instructions,
    the_l2_flush_loads_are_not_evict_first,
    the_control_bits_read_as_ptxas_wrote_them,
    the_hopper_loops_issue_their_products_and_exponentials_once_a_tile,
    the_fp8_loops_issue_their_products_and_exponentials_once_a_tile,
]);

fn required() -> bool {
    std::env::var_os("FLASHLAB_REQUIRE_KERNELS").is_some()
}

/// Why `bundle` has no kernels, or its ptxas report. A missing compile fails under
/// `FLASHLAB_REQUIRE_KERNELS`.
fn resources(what: &str, bundle: &KernelBundle) -> Result<Vec<KernelResources>, String> {
    if let Some(reason) = bundle.not_compiled_reason() {
        assert!(!required(), "{what} was built without kernels: {reason}");
        return Err(reason);
    }
    let resources = bundle.resources();
    // An empty or unreadable report would let every check below pass without a kernel.
    assert!(
        !resources.is_empty(),
        "{what} was compiled, but its ptxas report lists no kernel:\n{}",
        bundle.ptxas_report
    );
    Ok(resources)
}

/// The stages whose kernels were compiled, with their ptxas reports, and why the others'
/// were not (checked after the compiled ones: [`Compiled::all`]).
struct Compiled {
    stages: Vec<(&'static dyn Stage, Vec<KernelResources>)>,
    missing: Option<String>,
}

impl Compiled {
    /// `Ok` when every stage was compiled (so every stage was checked).
    fn all(self) -> Checked {
        self.missing.map_or(Ok(()), |m| Err(Skipped(m)))
    }
}

fn compiled_stages() -> Compiled {
    let mut compiled = Vec::new();
    let mut missing = Vec::new();
    for &stage in STAGES {
        let info = stage.info();
        match resources(&format!("stage {}", info.label()), info.kernels) {
            Ok(r) => compiled.push((stage, r)),
            Err(reason) => missing.push((info.number.to_string(), reason)),
        }
    }
    let missing = missing.first().map(|(_, reason)| {
        let numbers: Vec<&str> = missing.iter().map(|(n, _)| n.as_str()).collect();
        format!(
            "the kernels of stage(s) {} were not compiled: {reason}",
            numbers.join(", ")
        )
    });
    Compiled {
        stages: compiled,
        missing,
    }
}

fn every_stage_has_sass_for_the_gpus_its_table_row_names() -> Checked {
    for stage in STAGES {
        if let Some(reason) = stage.info().kernels.not_compiled_reason() {
            assert!(
                reason.contains("just cuda"),
                "stage {}: the reason must say how to get nvcc: {reason}",
                stage.info().label()
            );
        }
    }
    let compiled = compiled_stages();
    for (stage, resources) in &compiled.stages {
        let info = stage.info();
        let by_arch = kernels_by_arch(resources);
        // sm_80 and sm_90a (or what FLASHLAB_ARCHS asked for); a Hopper stage, sm_90a alone.
        let archs = match info.gpu {
            GpuArch::Sm80 => std::env::var("FLASHLAB_ARCHS")
                .unwrap_or_else(|_| kernel_build::DEFAULT_ARCHS.into()),
            GpuArch::Sm90a => kernel_build::HOPPER_ARCHS.into(),
        };
        for arch in archs.split(',').filter(|a| a.starts_with("sm_")) {
            let kernels = by_arch
                .get(arch)
                .unwrap_or_else(|| panic!("stage {}: no {arch} SASS", info.label()));
            // Every dtype x head dim the table promises has a kernel for this arch.
            for dtype in info.dtypes {
                for dim in info.head_dims {
                    let suffix = format!("_{}_d{dim}", dtype.name());
                    assert!(
                        kernels.iter().any(|k| k.ends_with(&suffix)),
                        "stage {}: no {arch} kernel for {dtype} d{dim} (have {kernels:?})",
                        info.label()
                    );
                }
            }
        }
    }
    compiled.all()
}

fn no_kernel_spills_registers_beyond_what_its_stage_allows() -> Checked {
    // A spill turns register traffic into local-memory traffic; the stages are written
    // not to spill, and a stage that accepts one says why (`Stage::tolerated_spill_bytes`).
    let compiled = compiled_stages();
    for (stage, resources) in &compiled.stages {
        let info = stage.info();
        for r in resources {
            let spilled = r.spill_store_bytes + r.spill_load_bytes;
            let allowed = stage.tolerated_spill_bytes(&r.kernel);
            assert!(
                spilled <= allowed,
                "stage {}: {} on {} spills {spilled} bytes (allowed {allowed})",
                info.label(),
                r.kernel,
                r.arch
            );
        }
    }
    compiled.all()
}

/// No stage's compile prints a warning, nor one of ptxas's "Potential Performance Loss"
/// notes, which it prints as info lines: C7508 says it ignored a `setmaxnreg` (no register
/// count known at entry, as without `__launch_bounds__`), leaving stages 12 and 13's
/// producer and consumers at the launch count; C7515 and its kin say it serialized wgmmas.
fn no_stage_compiles_with_a_warning() -> Checked {
    let compiled = compiled_stages();
    for (stage, _) in &compiled.stages {
        let info = stage.info();
        let warnings: Vec<&str> = info
            .kernels
            .ptxas_report
            .lines()
            .filter(|l| kernel_build::is_compiler_warning(l))
            .collect();
        assert!(
            warnings.is_empty(),
            "stage {} compiles with warnings:\n{}",
            info.label(),
            warnings.join("\n")
        );
    }
    compiled.all()
}

/// The ceiling kernels `flashlab info` and the bench run (harness/kernels/ceilings.cu) are
/// compiled like the stages', and neither spills.
fn ceiling_kernels_are_compiled_without_spills() -> Checked {
    let resources = match resources("the harness", &harness::kernels::HARNESS_KERNELS) {
        Ok(r) => r,
        Err(reason) => {
            return Err(Skipped(format!(
                "the harness's kernels were not compiled: {reason}"
            )));
        }
    };
    for name in [
        "ceiling_mma_sync",
        "ceiling_l2_to_smem",
        "ceiling_read",
        "l2_flush_read",
    ] {
        let found: Vec<_> = resources.iter().filter(|r| r.kernel == name).collect();
        assert!(!found.is_empty(), "{name} missing from the ptxas report");
        for r in found {
            assert_eq!(
                r.spill_store_bytes + r.spill_load_bytes,
                0,
                "{name} on {} spills",
                r.arch
            );
        }
    }
    Ok(())
}

/// `flashlab resources` counts the tensor-core instructions in each kernel's SASS; they
/// say which tensor-core path each stage really compiled to. The FP8 stages' preprocessing
/// kernels (`_amax_`, `_quantize_`) and the backward's pre- and postprocess run on CUDA cores.
fn the_sass_shows_the_tensor_core_instructions_each_stage_is_written_for() -> Checked {
    let mut uncounted = Vec::new();
    let compiled = compiled_stages();
    for (stage, resources) in &compiled.stages {
        let info = stage.info();
        if let Some(reason) = info.kernels.sass_counts_unavailable() {
            uncounted.push((info.number.to_string(), reason));
            continue;
        }
        let expected = info.tensor_cores;
        // The attention kernels the table promises; a stage's probe kernels may differ, and
        // so does split-KV's combine kernel, which merges partial results on CUDA cores.
        let is_attention = |kernel: &str| {
            !kernel.contains("_combine_")
                && !kernel.contains("_amax_")
                && !kernel.contains("_quantize_")
                && !kernel.contains("_preprocess_")
                && !kernel.contains("_postprocess_")
                && info.dtypes.iter().any(|dtype| {
                    info.head_dims
                        .iter()
                        .any(|dim| kernel.ends_with(&format!("_{}_d{dim}", dtype.name())))
                })
        };
        let mut checked = 0;
        for r in resources {
            let (Some(hmma), Some(hgmma), Some(qgmma)) = (r.hmma, r.hgmma, r.qgmma) else {
                panic!(
                    "stage {}: {} on {} is in the ptxas report but not in the SASS counts",
                    info.label(),
                    r.kernel,
                    r.arch
                );
            };
            if expected != TensorCores::None && !is_attention(&r.kernel) {
                continue;
            }
            let ok = match expected {
                TensorCores::None => hmma == 0 && hgmma == 0 && qgmma == 0,
                TensorCores::Hmma => hmma > 0 && hgmma == 0 && qgmma == 0,
                TensorCores::Hgmma => hmma == 0 && hgmma > 0 && qgmma == 0,
                TensorCores::HgmmaWithHmmaRowSums => hmma > 0 && hgmma > 0 && qgmma == 0,
                TensorCores::Qgmma => hmma == 0 && hgmma == 0 && qgmma > 0,
            };
            assert!(
                ok,
                "stage {}: {} on {} should use {expected:?} tensor cores, but its SASS has {hmma} HMMA, {hgmma} HGMMA, {qgmma} QGMMA",
                info.label(),
                r.kernel,
                r.arch
            );
            checked += 1;
        }
        assert!(checked > 0, "stage {}: no kernel checked", info.label());
    }
    if let Some((_, reason)) = uncounted.first() {
        let numbers: Vec<&str> = uncounted.iter().map(|(n, _)| n.as_str()).collect();
        let message = format!(
            "the tensor-core instructions of stage(s) {} were not counted: {reason}",
            numbers.join(", ")
        );
        // `just cuda` installs cuobjdump with the compiler, so under `just test` they must be.
        assert!(!required(), "{message}");
        return Err(Skipped(message));
    }
    compiled.all()
}

/// The `cuobjdump -sass` listing of a bundle's fatbin ([`KernelBundle::sass_listing`]);
/// `None` where there are no kernels or no cuobjdump, which the callers report. A
/// cuobjdump that fails fails the test.
fn sass_listing(kernels: &KernelBundle) -> Option<String> {
    match kernels.sass_listing() {
        Ok(listing) => Some(listing),
        Err(SassListingError::NoCuobjdump | SassListingError::NoKernels(_)) => None,
        Err(e) => panic!("{}: {e}", kernels.crate_name),
    }
}

/// The special registers each function of a `cuobjdump -sass` listing reads (`SR_CLOCKLO`,
/// `SR_GLOBALTIMERLO`, ...), by function name.
fn special_registers(listing: &str) -> Vec<(String, std::collections::BTreeSet<String>)> {
    let mut functions: Vec<(String, std::collections::BTreeSet<String>)> = Vec::new();
    for line in listing.lines() {
        if let Some((_, name)) = line.split_once("Function : ") {
            functions.push((name.trim().to_string(), Default::default()));
        } else if let Some((_, registers)) = functions.last_mut() {
            // `/*0dc0*/ CS2R R4, SR_GLOBALTIMERLO ; /* 0x...7805 */`: the instruction, between
            // its address and its encoding.
            let code = line
                .split("/*")
                .nth(1)
                .and_then(|rest| rest.split_once("*/"))
                .map_or("", |(_, code)| code);
            for word in code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
                if word.starts_with("SR_") {
                    registers.insert(word.to_string());
                }
            }
        }
    }
    functions
}

/// The timeline kernels read the clocks (`clock64`, `%globaltimer`) and the timed ones do
/// not: the instrumentation is compiled out of the kernels the bench times, not merely
/// skipped at run time (timeline.cuh's `Timeline<false>`).
fn only_the_timeline_kernels_read_the_clocks() -> Checked {
    let mut unchecked = Vec::new();
    let compiled = compiled_stages();
    for (stage, _) in &compiled.stages {
        let info = stage.info();
        if !info.timeline {
            continue;
        }
        let Some(listing) = sass_listing(info.kernels) else {
            unchecked.push(info.number.to_string());
            continue;
        };
        let functions = special_registers(&listing);
        let mut timeline_kernels = 0;
        for (kernel, registers) in &functions {
            let is_attention = info.dtypes.iter().any(|d| {
                info.head_dims
                    .iter()
                    .any(|dim| kernel.ends_with(&format!("_{}_d{dim}", d.name())))
            });
            if !is_attention {
                continue;
            }
            let clocks = ["SR_CLOCKLO", "SR_GLOBALTIMERLO"].map(|r| registers.contains(r));
            if harness::timeline::is_timeline_kernel(kernel) {
                timeline_kernels += 1;
                assert_eq!(
                    clocks,
                    [true, true],
                    "stage {}: {kernel} reads {registers:?}",
                    info.label()
                );
            } else {
                let read: Vec<&String> = registers
                    .iter()
                    .filter(|r| {
                        r.contains("CLOCK") || r.contains("GLOBALTIMER") || r.contains("SMID")
                    })
                    .collect();
                assert!(
                    read.is_empty(),
                    "stage {}: the timed kernel {kernel} reads {read:?}",
                    info.label()
                );
            }
        }
        // One per dtype and head dim the timeline kernels are built for: those every
        // timeline stage builds that the stage has (stage 24 has 128 alone), and
        // where a stage has more head dims (stage 18's 256), those too.
        let dims = harness::timeline::timeline_head_dims(info);
        assert!(
            harness::timeline::HEAD_DIMS
                .iter()
                .filter(|d| info.head_dims.contains(d))
                .all(|d| dims.contains(d)),
            "stage {}: timeline kernels for {dims:?}",
            info.label()
        );
        let expected = harness::timeline::DTYPES.len() * dims.len();
        assert_eq!(
            timeline_kernels,
            expected,
            "stage {}: timeline kernels in {:?}",
            info.label(),
            functions.iter().map(|f| &f.0).collect::<Vec<_>>()
        );
    }
    if !unchecked.is_empty() {
        let message = format!(
            "no cuobjdump was found for stage(s) {}: their timeline kernels' SASS was not read",
            unchecked.join(", ")
        );
        assert!(!required(), "{message}");
        return Err(Skipped(message));
    }
    compiled.all()
}

fn special_registers_are_read_from_the_instructions() {
    let listing = "\t\tFunction : k_timeline_bf16_d64\n        /*0dc0*/                   CS2R R4, SR_GLOBALTIMERLO ;                 /* 0x0000000000047805 */\n        /*0dd0*/                   CS2R R14, SR_CLOCKLO ;   /* 0x00000000000e7805 */\n\t\tFunction : k_bf16_d64\n        /*0070*/                   S2UR UR14, SR_CTAID.X ;                 /* 0x00000000000e79c3 */\n";
    let got = special_registers(listing);
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].0, "k_timeline_bf16_d64");
    assert_eq!(
        got[0].1.iter().map(String::as_str).collect::<Vec<_>>(),
        ["SR_CLOCKLO", "SR_GLOBALTIMERLO"]
    );
    assert_eq!(
        got[1].1.iter().map(String::as_str).collect::<Vec<_>>(),
        ["SR_CTAID"]
    );
}

/// The decode runs' L2 flush reads with plain loads, the streaming read with evict-first
/// ones (`LDG.E.EF`): a flush of evict-first lines evicts its own lines first and left the
/// last launch's K/V in the L2 (book: Results, "A flush that did not flush"). Read from the
/// harness's SASS, for every architecture in its fatbin.
fn the_l2_flush_loads_are_not_evict_first() -> Checked {
    let kernels = &harness::kernels::HARNESS_KERNELS;
    let Some(listing) = sass_listing(kernels) else {
        let message = format!(
            "the harness's kernels were not compiled, or no cuobjdump was found ({}): their loads were not read",
            kernels.status.lines().next().unwrap_or("no status")
        );
        assert!(!required(), "{message}");
        return Err(Skipped(message));
    };
    // Each global load's opcode (`LDG.E.EF.128`), by function, over every architecture.
    let mut loads: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    let mut function = String::new();
    for line in listing.lines() {
        if let Some((_, name)) = line.split_once("Function : ") {
            function = name.trim().to_string();
        } else if let Some(op) = line.split_whitespace().find(|w| w.starts_with("LDG")) {
            loads
                .entry(function.clone())
                .or_default()
                .push(op.to_string());
        }
    }
    let of = |name: &str| loads.get(name).cloned().unwrap_or_default();
    let (flush, read) = (of("l2_flush_read"), of("ceiling_read"));
    assert!(!flush.is_empty() && !read.is_empty(), "{loads:?}");
    assert!(flush.iter().all(|op| !op.contains(".EF")), "{flush:?}");
    assert!(read.iter().all(|op| op.contains(".EF")), "{read:?}");
    Ok(())
}

/// A stage and the functions of its SASS listing.
type Listing = (&'static dyn Stage, Vec<sass_schedule::Function>);

/// Every stage's listing, parsed by `sass-schedule` (what `flashlab schedule` reads), or
/// why a stage's could not be made (no cuobjdump: reported, never passed). Made once for
/// the tests that read them: cuobjdump over every stage takes seconds.
fn parsed_listings() -> Result<&'static [Listing], Skipped> {
    static LISTINGS: std::sync::OnceLock<Result<Vec<Listing>, String>> = std::sync::OnceLock::new();
    let made = LISTINGS.get_or_init(|| {
        let compiled = compiled_stages();
        let mut out = Vec::new();
        for (stage, _) in &compiled.stages {
            let info = stage.info();
            let Some(listing) = sass_listing(info.kernels) else {
                let message = format!(
                    "stage {}: no cuobjdump was found ({}): its SASS was not read",
                    info.label(),
                    info.kernels.status.lines().next().unwrap_or("no status")
                );
                assert!(!required(), "{message}");
                return Err(message);
            };
            let functions = sass_schedule::parse_listing(&listing)
                .unwrap_or_else(|e| panic!("stage {}: {e}", info.label()));
            assert!(
                !functions.is_empty(),
                "stage {}: no function in its listing",
                info.label()
            );
            out.push((*stage, functions));
        }
        compiled.all().map_err(|Skipped(reason)| reason)?;
        Ok(out)
    });
    made.as_deref().map_err(|reason| Skipped(reason.clone()))
}

/// The control bits `flashlab schedule` reads are read as ptxas wrote them (sass-schedule's
/// `control.rs` gives their layout, which NVIDIA does not document). Over every kernel of
/// every stage and architecture: where the next instruction reads the result of fixed-latency
/// arithmetic, the stall count is at least 4, the FP32 and integer pipes' latency, and it is
/// 4 somewhere (a misread field would give stalls below it, or never hit it); and every
/// scoreboard an instruction waits on is set by an instruction on some way to it.
fn the_control_bits_read_as_ptxas_wrote_them() -> Checked {
    let listings = parsed_listings()?;
    let (mut seen, mut at_four) = (0usize, 0usize);
    for (stage, functions) in listings {
        let label = stage.info().label();
        for (mnemonic, stalls) in
            sass_schedule::dependence::stalls_before_dependent_reads(functions)
        {
            let least = *stalls.keys().next().unwrap();
            assert!(
                least >= 4,
                "stage {label}: {mnemonic} read by the next instruction after a stall of {least} ({stalls:?})"
            );
            seen += stalls.values().sum::<usize>();
            at_four += stalls.get(&4).copied().unwrap_or(0);
        }
        for f in functions {
            let unset = sass_schedule::cfg::waits_on_unset_scoreboards(f);
            if let Some(&(i, b)) = unset.first() {
                panic!(
                    "stage {label}: {} waits on scoreboard {b}, which nothing before it sets: {}",
                    f.name, f.instructions[i]
                );
            }
        }
    }
    assert!(
        seen > 1000 && at_four > 0,
        "{seen} dependent reads, {at_four} after a stall of 4"
    );
    Ok(())
}

/// Each timed sm_90a bf16 attention kernel of the stages `wanted` keeps, with its head dim
/// and its main loop (`flashlab schedule N`, on its lightest way around); how many there were.
fn each_hopper_main_loop(
    wanted: impl Fn(u32) -> bool,
    mut check: impl FnMut(
        &harness::StageInfo,
        &sass_schedule::Function,
        usize,
        &sass_schedule::LoopSchedule,
    ),
) -> Result<usize, Skipped> {
    let mut checked = 0;
    for (stage, functions) in parsed_listings()? {
        let info = stage.info();
        if !wanted(info.number) {
            continue;
        }
        for f in functions.iter().filter(|f| {
            f.arch == "sm_90a"
                && !harness::timeline::is_timeline_kernel(&f.name)
                && f.name.contains("_bf16_d")
                && !f.name.contains("_amax_")
                && !f.name.contains("_quantize_")
        }) {
            let Some(d) = f
                .name
                .rsplit("_d")
                .next()
                .and_then(|d| d.parse::<usize>().ok())
            else {
                continue;
            };
            let s = sass_schedule::main_loop(f, None)
                .unwrap_or_else(|| panic!("stage {}: {} has no main loop", info.label(), f.name));
            check(info, f, d, &s);
            checked += 1;
        }
    }
    Ok(checked)
}

/// Each Hopper prefill stage's main loop, on its lightest way around: one tile's products,
/// D / 16 wgmmas for S and BLOCK_KV / 16 for P V, and its exponentials, BLOCK_KV / 2 a
/// thread and two for the rescale factors, once each.
fn the_hopper_loops_issue_their_products_and_exponentials_once_a_tile() -> Checked {
    // The warp-specialized stages with both products on wgmma in one loop.
    let checked = each_hopper_main_loop(
        |n| matches!(n, 12 | 13 | 16 | 17 | 18 | 19 | 26),
        |info, f, d, s| {
            let block_kv = if d == 256 { 80 } else { 128 };
            assert_eq!(
                s.count(f, "HGMMA"),
                d / 16 + block_kv / 16,
                "stage {}: {}",
                info.label(),
                f.name
            );
            assert_eq!(
                s.count(f, "MUFU"),
                block_kv / 2 + 2,
                "stage {}: {}",
                info.label(),
                f.name
            );
            assert!(
                s.static_cycles() > 500 && s.static_cycles() < 3000,
                "stage {}: {} around its loop in {} cycles",
                info.label(),
                f.name,
                s.static_cycles()
            );
        },
    )?;
    assert!(checked >= 12, "checked {checked} kernels");
    Ok(())
}

/// The same for the FP8 stages' consumer loops: D / 32 `QGMMA`s for S and BLOCK_KV / 32 for
/// P V (twice at d256, whose P V is made in two parts of 128 columns, and in stage 28 at d128,
/// in two halves of 64), and BLOCK_KV / 2 + 2
/// exponentials, BLOCK_KV the key tile each stage launches at that head dim (stage 27's is
/// 192 at d64): the SASS holds the host's tiles to the kernel's.
fn the_fp8_loops_issue_their_products_and_exponentials_once_a_tile() -> Checked {
    let fp8: [&harness::Fp8Stage; 5] = [
        &stage20_fp8::STAGE,
        &stage21_incoherent::STAGE,
        &stage24_v_transpose::STAGE,
        &stage27_wide_keys::STAGE,
        &stage28_three_consumers::STAGE,
    ];
    let of = |n: u32| fp8.iter().find(|s| s.info.number == n);
    let checked = each_hopper_main_loop(
        |n| of(n).is_some(),
        |info, f, d, s| {
            let block_kv = of(info.number).unwrap().tiles_for(d).block_kv as usize;
            // O's columns one P V makes: all of them up to 128, and stage 28's halves at d128.
            let pv_part = match (info.number, d) {
                (28, 128) => stage28_three_consumers::tiles::PV_PART_D128 as usize,
                _ => d.min(128),
            };
            let pv_parts = d / pv_part;
            assert_eq!(
                s.count(f, "QGMMA"),
                d / 32 + pv_parts * block_kv / 32,
                "stage {}: {}",
                info.label(),
                f.name
            );
            assert_eq!(
                s.count(f, "MUFU"),
                block_kv / 2 + 2,
                "stage {}: {}",
                info.label(),
                f.name
            );
        },
    )?;
    assert!(checked >= 10, "checked {checked} kernels");
    Ok(())
}
