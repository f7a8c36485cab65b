//! Finding nvcc and running it for one stage: the fatbin, the ptxas report, the status.

use crate::out_files;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One `-gencode` target: machine code (SASS) for a real GPU, or PTX for a virtual one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Arch {
    /// `sm_XY` / `sm_90a`: SASS that runs on that architecture (and, for plain sm_XY,
    /// on later minor versions of the same major).
    Sass(String),
    /// `compute_XY`: PTX the driver compiles at load time for any newer GPU.
    Ptx(String),
}

impl Arch {
    /// The nvcc flag that asks for this target.
    pub fn gencode(&self) -> String {
        match self {
            // `sm_90a` needs `compute_90a` as its virtual architecture: the arch-specific
            // instructions (wgmma, setmaxnreg) only exist there.
            Arch::Sass(sm) => format!(
                "-gencode=arch={},code={sm}",
                sm.replacen("sm_", "compute_", 1)
            ),
            Arch::Ptx(compute) => format!("-gencode=arch={compute},code={compute}"),
        }
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Arch::Sass(s) | Arch::Ptx(s) => f.write_str(s),
        }
    }
}

/// SASS for Ampere (sm_80: A100, and by compatibility RTX 30/40/50) and Hopper with its
/// arch-specific instructions (sm_90a), PTX for compute_80 so any newer GPU can JIT it.
pub const DEFAULT_ARCHS: &str = "sm_80,sm_90a,compute_80";

/// Parses a `FLASHLAB_ARCHS`-style list: `sm_80,sm_90a,compute_80`.
pub fn parse_archs(list: &str) -> Result<Vec<Arch>, String> {
    let archs: Vec<Arch> = list
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            let digits = s.trim_start_matches("sm_").trim_start_matches("compute_");
            let valid = digits.len() >= 2
                && digits[..2].chars().all(|c| c.is_ascii_digit())
                && digits[2..].chars().all(|c| c.is_ascii_lowercase());
            match s {
                _ if !valid => Err(format!(
                    "`{s}` is not an architecture like sm_80, sm_90a or compute_80"
                )),
                _ if s.starts_with("sm_") => Ok(Arch::Sass(s.to_string())),
                _ if s.starts_with("compute_") => Ok(Arch::Ptx(s.to_string())),
                _ => Err(format!(
                    "`{s}` is not an architecture like sm_80, sm_90a or compute_80"
                )),
            }
        })
        .collect::<Result<_, _>>()?;
    if archs.is_empty() {
        return Err(
            "the architecture list is empty; the default is sm_80,sm_90a,compute_80".into(),
        );
    }
    Ok(archs)
}

/// No usable nvcc was found in any of the places `find_nvcc` looks.
#[derive(Debug)]
pub struct ToolchainError;

impl fmt::Display for ToolchainError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "no nvcc found (looked in $NVCC, $CUDA_HOME, $CUDA_PATH, $PATH, /usr/local/cuda and the workspace's .toolchain); run `just cuda` to install the pinned CUDA 13.0 compiler into .toolchain/"
        )
    }
}

/// Where `just cuda` installs the pinned compiler, relative to the workspace root.
pub const WORKSPACE_NVCC: &str = ".toolchain/cuda/nvidia/cu13/bin/nvcc";

/// Finds nvcc in the documented order: `$NVCC`, `$CUDA_HOME/bin`, `$CUDA_PATH/bin`,
/// `$PATH`, `/usr/local/cuda/bin`, then the workspace's own `.toolchain/`.
pub fn find_nvcc(workspace_root: &Path) -> Result<PathBuf, ToolchainError> {
    let mut candidates = Vec::new();
    if let Some(p) = std::env::var_os("NVCC") {
        candidates.push(PathBuf::from(p));
    }
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(home) = std::env::var_os(var) {
            candidates.push(PathBuf::from(home).join("bin/nvcc"));
        }
    }
    if let Some(path) = std::env::var_os("PATH") {
        candidates.extend(std::env::split_paths(&path).map(|dir| dir.join("nvcc")));
    }
    candidates.push(PathBuf::from("/usr/local/cuda/bin/nvcc"));
    candidates.push(workspace_root.join(WORKSPACE_NVCC));
    candidates
        .into_iter()
        .find(|p| p.is_file())
        .ok_or(ToolchainError)
}

/// The workspace root: the nearest ancestor holding the `justfile`.
fn workspace_root(manifest_dir: &Path) -> PathBuf {
    manifest_dir
        .ancestors()
        .find(|dir| dir.join("justfile").is_file())
        .unwrap_or(manifest_dir)
        .to_path_buf()
}

/// Compiles `$CARGO_MANIFEST_DIR/kernels/*.cu` into `$OUT_DIR/kernels.fatbin`, keeping the
/// ptxas report and a status line beside it. Call it from a stage's `build.rs`.
///
/// All `.cu` files of a stage become one translation unit (a generated file that includes
/// each of them), so one fatbin holds every kernel of the stage.
pub fn compile_stage_kernels() {
    compile_stage_kernels_with(&[]);
}

/// [`compile_stage_kernels`], passing each of the stage's host constants to nvcc as
/// `-DFLASHLAB_HOST_<NAME>=<value>`. A stage's `build.rs` does
/// `include!("src/tiles.rs")` and passes its `SHARED_WITH_KERNEL` table: the Rust side
/// launches with these values, and the kernel's `FLASHLAB_SAME_AS_HOST(NAME)` asserts hold
/// its own constants to them, so the two cannot drift apart.
pub fn compile_stage_kernels_with(host_constants: &[(&str, u32)]) {
    compile(host_constants, None);
}

/// [`compile_stage_kernels_with`] for a Hopper stage: SASS for `sm_90a` only, whatever
/// `FLASHLAB_ARCHS` says. Its kernels use instructions no other architecture has (TMA,
/// wgmma, setmaxnreg), and `sm_90a` code runs on compute capability 9.0 alone, with no
/// PTX for newer GPUs to JIT: the stage table says so (`harness::GpuArch::Sm90a`).
pub fn compile_hopper_stage_kernels_with(host_constants: &[(&str, u32)]) {
    compile(host_constants, Some(HOPPER_ARCHS));
}

/// What [`compile_hopper_stage_kernels_with`] builds.
pub const HOPPER_ARCHS: &str = "sm_90a";

/// Whether any kernel source in `kernels_dir` includes a shared header (`<flashlab/...>`).
fn uses_shared_headers(kernels_dir: &Path) -> bool {
    list_files(kernels_dir, "cu")
        .into_iter()
        .chain(list_files(kernels_dir, "cuh"))
        .any(|f| std::fs::read_to_string(f).is_ok_and(|t| t.contains("<flashlab/")))
}

fn compile(host_constants: &[(&str, u32)], fixed_archs: Option<&str>) {
    if !host_constants.is_empty() {
        println!("cargo:rerun-if-changed=src/tiles.rs");
    }
    let manifest_dir = PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"),
    );
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let kernels_dir = manifest_dir.join("kernels");
    // This checkout's headers, even when the headers crate was compiled in another one.
    let include_dir = flashlab_kernel_headers::include_dir_for(&manifest_dir);
    let root = workspace_root(&manifest_dir);

    let mut sources = list_files(&kernels_dir, "cu");
    sources.sort();
    // The shared headers are watched only by the crates whose kernels include them (every
    // stage, not the harness's ceiling kernels), so a changed header recompiles the stages
    // that use it and nothing else. Cargo scans a watched directory's whole tree.
    let mut watched = vec![kernels_dir.clone()];
    if uses_shared_headers(&kernels_dir) {
        watched.push(include_dir.join("flashlab"));
    }
    for dir in &watched {
        if !dir.is_dir() {
            continue;
        }
        println!("cargo:rerun-if-changed={}", dir.display());
        for file in list_files(dir, "cu")
            .into_iter()
            .chain(list_files(dir, "cuh"))
        {
            println!("cargo:rerun-if-changed={}", file.display());
        }
    }
    for var in [
        "NVCC",
        "CUDA_HOME",
        "CUDA_PATH",
        "FLASHLAB_ARCHS",
        "FLASHLAB_NVCC_FLAGS",
        "CUOBJDUMP",
        "NVDISASM_PATH",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }

    let fatbin = out_dir.join(out_files::FATBIN_FILE);
    let report = out_dir.join(out_files::REPORT_FILE);
    let status = out_dir.join(out_files::STATUS_FILE);
    let sass_counts = out_dir.join(out_files::SASS_COUNTS_FILE);

    let nvcc = match find_nvcc(&root) {
        Ok(nvcc) => nvcc,
        Err(err) => {
            println!(
                "cargo:warning=flashlab: kernels of {} not compiled: {err}",
                manifest_dir.display()
            );
            // A path that does not exist makes cargo rerun this script on every build, so
            // a compiler installed later by `just cuda` is picked up without a `cargo clean`.
            println!(
                "cargo:rerun-if-changed={}",
                root.join(WORKSPACE_NVCC).display()
            );
            write(&fatbin, b"");
            write(&report, b"");
            write(
                &status,
                format!("{}\n{err}\n", out_files::NO_NVCC).as_bytes(),
            );
            write(
                &sass_counts,
                format!(
                    "{} the kernels were not compiled (no nvcc)\n",
                    crate::SASS_COUNTS_UNAVAILABLE
                )
                .as_bytes(),
            );
            return;
        }
    };

    let archs_list = match fixed_archs {
        Some(archs) => archs.to_string(),
        None => std::env::var("FLASHLAB_ARCHS").unwrap_or_else(|_| DEFAULT_ARCHS.to_string()),
    };
    let archs = parse_archs(&archs_list).unwrap_or_else(|e| panic!("FLASHLAB_ARCHS: {e}"));

    let unity = out_dir.join("kernels_unity.cu");
    let mut unity_src =
        String::from("// Generated by kernel-build: one translation unit for the stage.\n");
    for src in &sources {
        unity_src.push_str(&format!("#include \"{}\"\n", src.display()));
    }
    write(&unity, unity_src.as_bytes());

    let mut cmd = Command::new(&nvcc);
    cmd.arg("-fatbin")
        .arg("-std=c++17")
        .arg("-O3")
        // Source lines in the SASS, for Nsight Compute and `just sass`; costs no speed.
        .arg("-lineinfo")
        .arg("-Xptxas=-v")
        .arg("--expt-relaxed-constexpr")
        .arg(format!("-I{}", include_dir.display()))
        .args(
            host_constants
                .iter()
                .map(|(name, value)| format!("-DFLASHLAB_HOST_{name}={value}")),
        )
        .args(archs.iter().map(Arch::gencode))
        .arg("-o")
        .arg(&fatbin)
        .arg(&unity);
    if let Ok(extra) = std::env::var("FLASHLAB_NVCC_FLAGS") {
        cmd.args(extra.split_whitespace());
    }
    let output = cmd
        .output()
        .unwrap_or_else(|e| panic!("could not run {}: {e}", nvcc.display()));
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        panic!(
            "nvcc failed for {}:\n{:?}\n{}{}",
            manifest_dir.display(),
            cmd,
            String::from_utf8_lossy(&output.stdout),
            stderr
        );
    }
    for line in stderr.lines().filter(|l| crate::is_compiler_warning(l)) {
        println!("cargo:warning={line}");
    }
    write(&report, stderr.as_bytes());
    write(&sass_counts, count_sass(&nvcc, &fatbin).as_bytes());
    let version = Command::new(&nvcc)
        .arg("--version")
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .last()
                .unwrap_or("")
                .to_string()
        })
        .unwrap_or_default();
    write(
        &status,
        format!("nvcc {}\n{version}\narchs {}\n", nvcc.display(), archs_list).as_bytes(),
    );
}

/// The counts file for `fatbin` (see [`crate::sass`]), or one line saying why there are no
/// counts: no cuobjdump beside `nvcc` is not an error, the kernels still build.
fn count_sass(nvcc: &Path, fatbin: &Path) -> String {
    let reason = match crate::find_cuobjdump(nvcc) {
        Some(cuobjdump) => match crate::sass::sass_counts_of(&cuobjdump, fatbin) {
            Ok(counts) => return counts,
            Err(reason) => {
                println!("cargo:warning=flashlab: no tensor-core counts: {reason}");
                reason
            }
        },
        None => {
            // Installing cuobjdump into nvcc's folder changes the folder, and cargo then
            // reruns this script; without it, the counts would wait for a `cargo clean`.
            if let Some(dir) = nvcc.parent() {
                println!("cargo:rerun-if-changed={}", dir.display());
            }
            match std::env::var_os("CUOBJDUMP") {
                Some(p) => format!("$CUOBJDUMP ({}) is not a file", PathBuf::from(p).display()),
                None => format!(
                    "no cuobjdump beside {} to count the tensor-core instructions in the SASS (it needs nvdisasm beside it too; for the pip toolchain `rm -rf .toolchain/cuda && just cuda` installs both; or set CUOBJDUMP)",
                    nvcc.display()
                ),
            }
        }
    };
    format!("{} {reason}\n", crate::SASS_COUNTS_UNAVAILABLE)
}

fn list_files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect()
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::write(path, bytes)
        .unwrap_or_else(|e| panic!("could not write {}: {e}", path.display()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn archs_parse_and_reject_nonsense() {
        assert_eq!(
            parse_archs("sm_80, sm_90a,compute_80").unwrap(),
            vec![
                Arch::Sass("sm_80".into()),
                Arch::Sass("sm_90a".into()),
                Arch::Ptx("compute_80".into())
            ]
        );
        assert!(parse_archs("hopper").is_err());
        assert!(parse_archs("").is_err());
        assert!(parse_archs("sm_9").is_err());
    }

    #[test]
    fn sass_targets_use_their_own_virtual_arch() {
        assert_eq!(
            Arch::Sass("sm_90a".into()).gencode(),
            "-gencode=arch=compute_90a,code=sm_90a"
        );
        assert_eq!(
            Arch::Ptx("compute_80".into()).gencode(),
            "-gencode=arch=compute_80,code=compute_80"
        );
    }
}
