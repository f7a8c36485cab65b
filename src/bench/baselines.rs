//! The baselines: `bench/baselines.py` (embedded in the binary, so the GPU bundle needs no
//! extra file) run with python3 and torch, its JSON Lines read back as bench rows.

use super::output::Progress;
use super::results::{Row, RowKind, SweepShapeFields};
use super::sweep::Pass;
use anyhow::Context as _;
use anyhow::{Result, bail};
use harness::Problem;
use harness::timing::TimingProtocol;
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// The script, as committed under `bench/`.
pub const SCRIPT: &str = include_str!("../../bench/baselines.py");

/// A python that imports torch and sees a CUDA GPU, and the script to give it.
#[derive(Clone, Debug)]
pub struct Python {
    pub exe: String,
    pub torch: String,
    /// `FLASHLAB_BASELINES_PY`, or `None` to use the embedded copy.
    pub script: Option<PathBuf>,
}

/// The python to use: `FLASHLAB_PYTHON`, else `python3`.
pub fn python_exe() -> String {
    std::env::var("FLASHLAB_PYTHON").unwrap_or_else(|_| "python3".to_string())
}

/// Finds python3 with torch and a CUDA device; the error says which part is missing.
pub fn probe() -> std::result::Result<Python, String> {
    let exe = python_exe();
    let probe = "import torch, sys; print(torch.__version__); sys.exit(0 if torch.cuda.is_available() else 7)";
    let out = match Command::new(&exe).args(["-c", probe]).output() {
        Ok(out) => out,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!(
                "{exe} was not found (install python3 with torch, or set FLASHLAB_PYTHON)"
            ));
        }
        Err(e) => return Err(format!("could not run {exe}: {e}")),
    };
    let stdout = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let stderr = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(0) => Ok(Python {
            exe,
            torch: stdout,
            script: std::env::var_os("FLASHLAB_BASELINES_PY").map(PathBuf::from),
        }),
        Some(7) => Err(format!(
            "torch {stdout} is installed but sees no CUDA GPU (torch.cuda.is_available() is False)"
        )),
        _ => Err(format!(
            "{exe} cannot import torch: {}",
            last_line(&stderr).unwrap_or("no error message")
        )),
    }
}

fn last_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).rfind(|l| !l.is_empty())
}

/// Runs the script on `shapes`, timed under `timing`; returns what it reported about its
/// environment and its rows (FLOPs, TFLOPS and % of SOL are recomputed by the caller, one
/// convention for all).
///
/// With `fp8` (an FP8 stage is in the run), the FP8 baselines run beside the usual ones
/// (`FLASHLAB_BASELINES_BACKENDS=default,cudnn-fp8,sdpa-fp8`, unless the user set it).
pub fn run(
    python: &Python,
    shapes: &[Problem],
    timing: TimingProtocol,
    fp8: bool,
    pass: Pass,
) -> Result<(serde_json::Value, Vec<Row>)> {
    let fields = shapes
        .iter()
        .map(|p| {
            let fields = SweepShapeFields::try_from(p)?;
            Ok(ShapeOfPass { fields, pass })
        })
        .collect::<Result<Vec<_>>>()?;
    let script = Script {
        files: &[("baselines.py", SCRIPT)],
        replacement: python.script.clone(),
        backends: fp8.then(|| FP8_BACKENDS.to_string()),
    };
    let (env, rows) = run_script(
        python,
        &script,
        &serde_json::to_string(&fields)?,
        shapes.len(),
        timing,
        |out| {
            let (env, rows) = read_lines(out);
            let n = rows.len();
            ((env, rows), n)
        },
    )?;
    Ok((env?, rows))
}

/// A shape as the script reads it: the sweep's fields, and `"pass": "backward"` for the
/// backward's timing (a forward shape says nothing, as before there was a backward).
#[derive(serde::Serialize)]
struct ShapeOfPass {
    #[serde(flatten)]
    fields: SweepShapeFields,
    #[serde(skip_serializing_if = "Pass::is_forward")]
    pass: Pass,
}

/// A Python script the bench runs: `files[0]` is run, the others are written beside it
/// (modules it imports); `replacement` runs another file in place of `files[0]`
/// (`FLASHLAB_BASELINES_PY`, for trying a changed script without rebuilding).
pub struct Script<'a> {
    pub files: &'a [(&'a str, &'a str)],
    pub replacement: Option<PathBuf>,
    /// `FLASHLAB_BASELINES_BACKENDS` for the script, unless the user set it.
    pub backends: Option<String>,
}

/// The backends of a run with an FP8 stage: the usual ones, cuDNN's FP8 attention (the cuDNN
/// frontend's wheel, `scripts/cudnn-frontend-wheel.sh`) and what SDPA does with E4M3 inputs.
pub const FP8_BACKENDS: &str = "default,cudnn-fp8,sdpa-fp8";
const BACKENDS_ENV: &str = "FLASHLAB_BASELINES_BACKENDS";

/// Runs `script` with `--shapes-json` (the shapes as `shapes_json`), `--device` and
/// `--timing` on python, hands its stdout to `read` (which returns what it read and how
/// many rows), and fails with the tail of its stderr if it exits with an error.
pub fn run_script<T>(
    python: &Python,
    script: &Script,
    shapes_json: &str,
    shapes: usize,
    timing: TimingProtocol,
    read: impl FnOnce(BufReader<std::process::ChildStdout>) -> (T, usize),
) -> Result<T> {
    let (name, _) = script.files[0];
    let stem = name.trim_end_matches(".py");
    let dir = std::env::temp_dir().join(format!("flashlab-{stem}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let shapes_path = dir.join("shapes.json");
    std::fs::write(&shapes_path, shapes_json)
        .with_context(|| format!("writing {}", shapes_path.display()))?;
    for (file, text) in script.files {
        let p = dir.join(file);
        std::fs::write(&p, text).with_context(|| format!("writing {}", p.display()))?;
    }
    let path = script.replacement.clone().unwrap_or_else(|| dir.join(name));
    let device = std::env::var("FLASHLAB_DEVICE").unwrap_or_else(|_| "0".into());
    eprintln!(
        "{stem}: {} {} (torch {}) on {shapes} shapes",
        python.exe,
        path.display(),
        python.torch,
    );
    let mut command = Command::new(&python.exe);
    if let Some(backends) = &script.backends
        && std::env::var_os(BACKENDS_ENV).is_none()
    {
        command.env(BACKENDS_ENV, backends);
    }
    let mut child = command
        .arg(&path)
        .arg("--shapes-json")
        .arg(&shapes_path)
        .args(["--device", &device])
        .args(["--timing", timing.name()])
        // The stages' warm-up (FLASHLAB_WARMUP_MS), so both sides start from the same load.
        .args(["--warmup-ms", &harness::timing::warmup_ms().to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {}", python.exe))?;

    // Collect stderr on a thread (torch may warn a lot) so neither pipe can fill up.
    let mut stderr = child.stderr.take().context("python's stderr")?;
    let stderr_thread = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let stdout = child.stdout.take().context("python's stdout")?;
    let (read, rows) = read(BufReader::new(stdout));
    let status = child.wait().context("waiting for python")?;
    let stderr = stderr_thread.join().unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    if !status.success() {
        let tail: Vec<&str> = stderr.lines().rev().take(15).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        bail!(
            "bench/{name} exited with {status} after {rows} rows:\n{}",
            tail.join("\n")
        );
    }
    Ok(read)
}

/// Reads the script's JSON Lines: one meta line, then rows. Lines that are not JSON
/// (a library printing to stdout) are passed on to stderr, not fatal.
pub fn read_lines(reader: impl BufRead) -> (Result<serde_json::Value>, Vec<Row>) {
    let mut meta = None;
    let mut rows = Vec::new();
    let mut progress: Option<Progress> = None;
    for line in reader.lines() {
        let Ok(line) = line else { break };
        let value: serde_json::Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(_) => {
                if !line.trim().is_empty() {
                    eprintln!("baselines.py: {line}");
                }
                continue;
            }
        };
        match value.get("kind").and_then(|k| k.as_str()) {
            Some("meta") => {
                let planned = value.get("planned").and_then(|p| p.as_u64()).unwrap_or(0);
                progress = Some(Progress::new(planned, "baselines"));
                meta = Some(value);
            }
            Some("baseline") => match serde_json::from_value::<Row>(value) {
                Ok(row) if row.kind == RowKind::Baseline => {
                    if let Some(p) = &progress {
                        p.finish_row(&row);
                    }
                    rows.push(row);
                }
                Ok(_) => {}
                Err(e) => eprintln!("baselines.py: a row did not parse ({e}): {line}"),
            },
            _ => eprintln!("baselines.py: {line}"),
        }
    }
    if let Some(p) = &progress {
        p.done();
    }
    let meta = meta.context("bench/baselines.py printed no meta line (did it start?)");
    (meta, rows)
}
