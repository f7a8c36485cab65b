//! The command line as a user meets it: parsing, defaults, and bad input answered with a
//! clear message and exit code 2 (never a panic), all without a GPU.

use clap::Parser;
use flashlab::cli::{Cli, Command};
use std::process::Command as Process;

fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
    Cli::try_parse_from(std::iter::once("flashlab").chain(args.iter().copied()))
}

#[test]
fn stage_defaults_are_the_issue_shape() {
    let Command::Stage(args) = parse(&["stage", "2"]).unwrap().command else {
        panic!("not a stage command")
    };
    let p = args.shape.problem();
    assert_eq!(
        (
            p.shape.batch,
            p.shape.heads,
            p.shape.kv_heads,
            p.shape.seqlen_q,
            p.shape.seqlen_k,
            p.shape.head_dim
        ),
        (1, 16, 16, 4096, 4096, 128)
    );
    assert!(!p.causal && p.scale.is_none());
    assert_eq!(p.dtype, harness::DType::Bf16);
}

#[test]
fn shape_flags_override_each_part() {
    let cli = parse(&[
        "stage",
        "5",
        "--seqlen",
        "100",
        "--seqlen-k",
        "300",
        "--kv-heads",
        "4",
        "--dim",
        "64",
        "--causal",
        "--dtype",
        "f16",
        "--seed",
        "7",
        "--json",
    ])
    .unwrap();
    let Command::Stage(args) = cli.command else {
        panic!("not a stage command")
    };
    let p = args.shape.problem();
    assert_eq!(
        (
            p.shape.seqlen_q,
            p.shape.seqlen_k,
            p.shape.kv_heads,
            p.shape.head_dim
        ),
        (100, 300, 4, 64)
    );
    assert!(p.causal && args.json);
    assert_eq!(args.seed, Some(7));
    assert_eq!(p.dtype, harness::DType::F16);
}

#[test]
fn every_timing_command_takes_the_protocol_and_defaults_to_the_gate() {
    use harness::timing::TimingProtocol::{Gated, Ungated};
    let protocol = |args: &[&str]| match parse(args).unwrap().command {
        Command::Stage(a) => a.timing.timing,
        Command::Bench(a) => a.timing.timing,
        Command::Compare(a) => a.timing.timing,
        Command::Info { timing, .. } => timing.timing,
        Command::Timeline(a) => a.timing.timing,
        other => panic!("{other:?} does not time"),
    };
    for command in [
        &["stage", "2"][..],
        &["bench"],
        &["compare", "1", "2"],
        &["info"],
        &["timeline", "11"],
    ] {
        assert_eq!(protocol(command), Gated, "{command:?}");
        let ungated: Vec<&str> = command
            .iter()
            .copied()
            .chain(["--timing", "ungated"])
            .collect();
        assert_eq!(protocol(&ungated), Ungated, "{command:?}");
    }
    let Command::Bench(args) = parse(&["bench", "--timing", "ungated"]).unwrap().command else {
        panic!("not a bench command")
    };
    assert_eq!(args.config().timing, Ungated);
    let err = parse(&["stage", "2", "--timing", "async"])
        .unwrap_err()
        .to_string();
    assert!(err.contains("gated, ungated"), "{err}");
}

#[test]
fn bad_dtype_names_what_is_supported() {
    let err = parse(&["stage", "2", "--dtype", "fp8"])
        .unwrap_err()
        .to_string();
    assert!(err.contains("bf16 and f16"), "{err}");
}

fn flashlab(args: &[&str]) -> (i32, String) {
    let out = Process::new(env!("CARGO_BIN_EXE_flashlab"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The standard output of a run that must succeed (its standard error if it did not).
fn stdout_of_success(out: &std::process::Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Bad input is refused before any GPU is touched, so these hold on every machine.
#[test]
fn bad_input_exits_2_with_a_clear_message() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["stage", "2", "--dim", "96"],
            "supports head dims [64, 128]",
        ),
        // A zero size names the flag typed, not the problem's field.
        (
            &["stage", "3", "--seqlen", "0"],
            "invalid value '0' for '--seqlen <SEQLEN>': every size must be at least 1",
        ),
        (
            &["stage", "3", "--seqlen-q", "0"],
            "for '--seqlen-q <SEQLEN_Q>'",
        ),
        (
            &["stage", "14", "--seqlen-k", "0"],
            "for '--seqlen-k <SEQLEN_K>'",
        ),
        (&["stage", "3", "--heads", "0"], "for '--heads <HEADS>'"),
        (
            &["stage", "1", "--heads", "6", "--kv-heads", "4"],
            "multiple of kv_heads",
        ),
        (
            &[
                "stage", "5", "--batch", "16", "--heads", "64", "--seqlen", "32768",
            ],
            "32-bit",
        ),
        (&["stage", "99"], "there is no stage 99"),
        // The cause is printed after the context: which file, and why.
        (
            &["plots", "--from", "/nonexistent/bench.json"],
            "reading /nonexistent/bench.json: No such file or directory",
        ),
        (&["resources", "42"], "there is no stage 42"),
        // A timeline is refused before the GPU too: which stages have one, which dtype.
        (
            &["timeline", "10"],
            "stage 10 (tma) has no timeline kernels; stages with one: 11",
        ),
        (
            &["timeline", "11", "--dtype", "f16"],
            "dtype f16 in its timeline kernels; it supports bf16",
        ),
        (&["timeline", "11", "--dim", "96"], "head dims [64, 128]"),
        (&["timeline", "99"], "there is no stage 99"),
        (
            &["timeline", "11", "--tiles", "4..4"],
            "tiles 4..4 is empty",
        ),
        (
            &["timeline", "11", "--tiles", "3-9"],
            "not a range of tiles A..B",
        ),
        (
            &["timeline", "11", "--all", "--tiles", "0..2"],
            "cannot be used with",
        ),
        (&["timeline", "11", "--blocks", "0"], "--blocks"),
        // The backward stage with timeline kernels takes them as the forward ones do.
        (
            &["timeline", "22"],
            "stage 22 (backward) has no timeline kernels",
        ),
        (
            &["timeline", "23", "--dtype", "f16"],
            "stage 23 (hopper-backward) does not support dtype f16 in its timeline kernels",
        ),
        // Decode: impossible shapes, and decode flags where they mean nothing.
        (&["stage", "14", "--seqlen-q", "17"], "1 to 16 query rows"),
        (
            &["stage", "14", "--heads", "32", "--kv-heads", "5"],
            "multiple of kv_heads",
        ),
        (
            &["stage", "14", "--page-size", "48"],
            "power of two of at least 16",
        ),
        (
            &["stage", "14", "--cache-lens", "100,0"],
            "sequence 1's cache length is 0",
        ),
        (
            &["stage", "14", "--batch", "3", "--cache-lens", "100,200"],
            "one cache length per sequence",
        ),
        (&["stage", "14", "--splits", "129"], "1 to 128"),
        (
            &["stage", "14", "--dim", "96"],
            "supports head dims [64, 128, 256]",
        ),
        (
            &[
                "stage",
                "14",
                "--batch",
                "64",
                "--heads",
                "32",
                "--kv-heads",
                "8",
                "--seqlen",
                "131072",
            ],
            "32-bit",
        ),
        (&["stage", "9", "--page-size", "16"], "is a prefill stage"),
        // FP8 scales: only the FP8 stages have them.
        (
            &["stage", "19", "--fp8-scales", "tensor"],
            "stage 19 (lazy-rescale) computes in 16 bits and has no FP8 scales",
        ),
        (
            &["stage", "23", "--fp8-scales", "tensor"],
            "--fp8-scales is for the FP8 prefill stages; stage 23 (hopper-backward) is a backward stage",
        ),
        (
            &["stage", "20", "--fp8-scales", "block"],
            "invalid value 'block'",
        ),
        (&["compare", "9", "14"], "does not support prefill problems"),
        // Stage 15 goes through the same checks.
        (
            &["stage", "15", "--dim", "96"],
            "supports head dims [64, 128, 256]",
        ),
        (&["stage", "15", "--seqlen-q", "17"], "1 to 16 query rows"),
        (
            &["compare", "14", "15"],
            "does not support prefill problems",
        ),
    ];
    for (args, expected) in cases {
        let (code, stderr) = flashlab(args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(
            stderr.contains(expected),
            "{args:?}: expected {expected:?} in {stderr:?}"
        );
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

#[test]
fn list_prints_every_stage_of_the_table() {
    let out = Process::new(env!("CARGO_BIN_EXE_flashlab"))
        .args(["list", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    let numbers: Vec<u64> = rows.iter().map(|r| r["number"].as_u64().unwrap()).collect();
    let table: Vec<u64> = flashlab::stages::STAGES
        .iter()
        .map(|s| s.info().number as u64)
        .collect();
    assert_eq!(numbers, table);
}

/// `resources` shows each kernel's tensor-core instructions beside its registers: numbers
/// where they were counted at build time, `-` (null in --json) and a note where not.
#[test]
fn resources_shows_the_tensor_core_instructions() {
    let run = |args: &[&str]| {
        let out = Process::new(env!("CARGO_BIN_EXE_flashlab"))
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let kernels = flashlab::stages::find(3).unwrap().info().kernels;
    let counted = kernels.compiled() && kernels.sass_counts_unavailable().is_none();
    let rows: Vec<serde_json::Value> =
        serde_json::from_str(&run(&["resources", "3", "--json"])).unwrap();
    assert_eq!(rows.is_empty(), !kernels.compiled());
    for row in &rows {
        let r = &row["resources"];
        for key in ["hmma", "hgmma", "qgmma"] {
            assert_eq!(r[key].is_u64(), counted, "{key} in {r}");
            assert_eq!(r[key].is_null(), !counted, "{key} in {r}");
        }
        if counted {
            assert!(r["hmma"].as_u64().unwrap() > 0, "{r}");
            assert_eq!(r["hgmma"].as_u64(), Some(0), "{r}");
        }
    }
    let table = run(&["resources", "3"]);
    let header = table.lines().next().unwrap();
    assert!(header.ends_with("HMMA HGMMA QGMMA"), "{header}");
    assert_eq!(
        table.contains("tensor-core instructions not counted"),
        kernels.compiled() && !counted,
        "{table}"
    );
}

/// `flashlab timeline N` takes `flashlab stage`'s problem options, and draws tiles 0..6
/// of two blocks into bench/out/ unless told otherwise.
#[test]
fn timeline_takes_the_stage_options_and_a_window() {
    use protocol_viz::timeline::Window;
    let timeline = |args: &[&str]| {
        let args: Vec<&str> = ["timeline"].iter().chain(args).copied().collect();
        match parse(&args).unwrap().command {
            Command::Timeline(a) => a,
            other => panic!("{other:?} is not a timeline command"),
        }
    };
    let defaults = timeline(&["11"]);
    let p = defaults.shape.problem();
    assert_eq!(
        (
            p.shape.batch,
            p.shape.heads,
            p.shape.seqlen_q,
            p.shape.head_dim
        ),
        (1, 16, 4096, 128)
    );
    assert_eq!(p.dtype, harness::DType::Bf16);
    assert_eq!(defaults.blocks, 2);
    assert_eq!(defaults.window(), Window::Tiles { first: 0, end: 6 });
    assert_eq!(
        defaults.out(),
        std::path::PathBuf::from("bench/out/timeline-11.svg")
    );
    assert!(defaults.json.is_none() && !defaults.no_time);

    let custom = timeline(&[
        "12", "--seqlen", "16384", "--causal", "--dim", "64", "--blocks", "3", "--tiles", "10..14",
        "--out", "t.svg", "--json", "t.json", "--seed", "5",
    ]);
    let p = custom.shape.problem();
    assert!(p.causal && p.shape.seqlen_k == 16384 && p.shape.head_dim == 64);
    assert_eq!((custom.blocks, custom.seed), (3, Some(5)));
    assert_eq!(custom.window(), Window::Tiles { first: 10, end: 14 });
    assert_eq!(custom.out(), std::path::PathBuf::from("t.svg"));
    assert_eq!(custom.json, Some("t.json".into()));
    assert_eq!(timeline(&["11", "--all"]).window(), Window::All);
}

/// Like `flashlab stage`, a timeline on a machine without a GPU: NoGpu and exit 2.
#[test]
fn timeline_without_a_gpu_says_so_and_exits_2() {
    if harness::Gpu::open().is_ok() {
        return;
    }
    for stage in ["11", "23"] {
        let (code, stderr) = flashlab(&["timeline", stage, "--seqlen", "256", "--no-time"]);
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains("flashlab: no NVIDIA GPU found"), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn help_documents_the_exit_status() {
    let out = Process::new(env!("CARGO_BIN_EXE_flashlab"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("2 on an error"), "{help}");
}

/// `bench --decode --dry-run` says what the decode bench would run, without a GPU: the
/// issue's shapes up to the token limit, and per shape the runs the split sweep allows.
#[test]
fn decode_bench_dry_run_lists_its_shapes_and_runs() {
    let out = Process::new(env!("CARGO_BIN_EXE_flashlab"))
        .args([
            "bench",
            "--decode",
            "--dry-run",
            "--decode-batches",
            "1,64",
            "--decode-cache-lens",
            "2048,131072",
        ])
        .output()
        .unwrap();
    let text = stdout_of_success(&out);
    assert!(text.starts_with("decode bench: 3 shapes"), "{text}");
    // 2048 keys are 32 tiles: the sweep stops at 32 (10 counts), plus the heuristic's run
    // and three page sizes; 64 x 128k is past the token limit.
    assert!(
        text.contains("batch 1 heads 32 (kv 8) q 1 cache 2048 dim 128 bf16 contiguous: 14 runs"),
        "{text}"
    );
    assert!(
        text.contains("batch 1 heads 32 (kv 8) q 1 cache 131072 dim 128 bf16 contiguous: 18 runs"),
        "{text}"
    );
    assert!(
        !text.contains("batch 64 heads 32 (kv 8) q 1 cache 131072"),
        "{text}"
    );
}

/// `bench --decode --stages` runs the decode stages named, the last one with the sweep;
/// a prefill stage or a missing one is refused naming the decode stages, and the prefill
/// bench's shape flags are refused beside --decode (as the decode flags are without it),
/// never silently ignored.
#[test]
fn decode_bench_takes_stages_and_refuses_prefill_flags() {
    let run = |args: &[&str]| {
        Process::new(env!("CARGO_BIN_EXE_flashlab"))
            .args(["bench", "--dry-run"])
            .args(args)
            .output()
            .unwrap()
    };
    let shape = ["--decode-batches", "1", "--decode-cache-lens", "2048"];
    let out = run(&[&["--decode", "--stages", "15"][..], &shape].concat());
    let text = stdout_of_success(&out);
    assert!(
        text.contains(
            "  stage 15 batch 1 heads 32 (kv 8) q 1 cache 2048 dim 128 bf16 contiguous: 14 runs"
        ),
        "{text}"
    );
    assert!(!text.contains("stage 14"), "{text}");
    let out = run(&[&["--decode", "--stages", "14"][..], &shape].concat());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "stage 14 batch 1 heads 32 (kv 8) q 1 cache 2048 dim 128 bf16 contiguous: 14 runs"
        ),
        "{text}"
    );
    for (stage, why) in [
        ("5", "stage 5 is a prefill stage"),
        ("99", "there is no stage 99"),
    ] {
        let out = run(&["--decode", "--stages", stage]);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!(
                "--stages {stage}: {why}; --decode runs the decode stages 14, 15"
            )),
            "{err}"
        );
    }
    for flags in [
        &["--decode", "--seqlens", "1024"][..],
        &["--decode", "--dtype", "f16"],
        &["--decode", "--quick"],
    ] {
        let out = run(flags);
        assert_eq!(out.status.code(), Some(2), "{flags:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("cannot be used with"), "{flags:?}: {err}");
    }
    let out = run(&["--decode-dim", "64"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--decode"));
}

/// `--decode-dim` sets every decode shape's head dim; one that a decode stage does not build
/// is refused by name, with the dims they do.
#[test]
fn decode_bench_takes_a_head_dim_the_decode_stages_build() {
    let run = |dim: &str| {
        Process::new(env!("CARGO_BIN_EXE_flashlab"))
            .args([
                "bench",
                "--decode",
                "--dry-run",
                "--decode-batches",
                "8",
                "--decode-cache-lens",
                "8192",
                "--decode-dim",
                dim,
            ])
            .output()
            .unwrap()
    };
    let out = run("256");
    let text = stdout_of_success(&out);
    assert!(
        text.contains(
            "stage 15 batch 8 heads 32 (kv 8) q 1 cache 8192 dim 256 bf16 contiguous: 18 runs"
        ),
        "{text}"
    );
    let out = run("96");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--decode-dim 96: the decode stages build head dims [64, 128, 256]"),
        "{err}"
    );
}

/// `flashlab accuracy --accumulator-bits`: the accumulator model's table on the CPU, and its
/// bad input refused by name.
#[test]
fn accuracy_models_the_fp8_accumulator_on_the_cpu() {
    let out = Process::new(env!("CARGO_BIN_EXE_flashlab"))
        .args([
            "accuracy",
            "--accumulator-bits",
            "14",
            "--seqlens",
            "256,512",
            "--rows",
            "4",
            "--dim",
            "32",
        ])
        .output()
        .unwrap();
    let stdout = stdout_of_success(&out);
    assert!(stdout.contains("| one 14-bit accumulator |"), "{stdout}");
    for line in [
        "| mean 0.5 (flashlab's inputs) | 512 |",
        "| N(0, 1) (FlashAttention-3's) | 256 |",
    ] {
        assert!(stdout.contains(line), "{stdout}");
    }
    let (code, stderr) = flashlab(&["accuracy", "--accumulator-bits", "0"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("1 to 40 significant bits"), "{stderr}");
    let (code, stderr) = flashlab(&["accuracy", "--accumulator-bits", "14", "--stages", "20"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--stages"), "{stderr}");
}

/// `flashlab schedule` on a listing file needs no GPU and no cuobjdump: the record's, with
/// its profile, prints the phase table; bad input names what is wrong.
#[test]
fn schedule_reads_a_listing_and_refuses_what_it_cannot_read() {
    let root = env!("CARGO_MANIFEST_DIR");
    let listing = format!("{root}/bench/records/cpu-schedule/stage16-d128.sass.gz");
    let page = format!("{root}/bench/records/h200-prefill/hopper/profile/stage16-sass.csv.gz");
    let fa4_page = format!("{root}/bench/records/h200-prefill/hopper/profile/fa4-sass.csv.gz");
    let readme = format!("{root}/bench/records/cpu-schedule/README.md");
    let out = Process::new(env!("CARGO_BIN_EXE_flashlab"))
        .args(["schedule", &listing, "--profile", &page, "--listing"])
        .output()
        .unwrap();
    let text = stdout_of_success(&out);
    assert!(
        text.contains("the way executed: 499 instructions, 1174 static cycles"),
        "{text}"
    );
    assert!(
        text.contains("around the loop") && text.contains("72066") && text.contains("28130"),
        "{text}"
    );
    assert!(text.contains("wait samples on the next"), "{text}");
    // The way's first instructions with their control bits, and the cycles so far.
    assert!(text.contains("    0  S02 Y W- R- B------  /*5870*/ UIADD3 UR8, UR4, 0x1, URZ\n    2  S02 Y W- R- B------  /*5880*/ ULEA"), "{text}");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["schedule", "99"], "there is no stage 99"),
        (
            vec!["schedule", "/nonexistent.sass"],
            "is neither a stage number nor a file",
        ),
        (
            vec!["schedule", &listing, "--arch", "sm_80"],
            "has no sm_80 code; it has sm_90a",
        ),
        (
            vec!["schedule", &listing, "--kernel", "decode"],
            "no sm_90a kernel of",
        ),
        (
            vec!["schedule", &listing, "--profile", &fa4_page],
            "not the same binary",
        ),
        (vec!["schedule", &readme], "the listing has no function"),
    ];
    for (args, message) in cases {
        let (code, stderr) = flashlab(&args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}
