//! Counting the tensor-core instructions in a fatbin's SASS, per (kernel, architecture).
//!
//! At build time `cuobjdump -sass` (found beside the nvcc that compiled the stage; it needs
//! `nvdisasm` beside it too) disassembles the fatbin, [`count_tensor_core_instructions`]
//! counts the opcodes of [`TENSOR_CORE_KINDS`], and the build script keeps the counts as a
//! small text file ([`crate::SASS_COUNTS_FILE`]) beside the ptxas report. At run time
//! [`add_sass_counts`] puts them into the [`KernelResources`] rows. Without cuobjdump the
//! file says why instead, and the counts stay `None` ("unknown"), not 0.

use crate::KernelResources;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The tensor-core opcodes counted, by their mnemonic before the first `.`:
/// `HMMA` (mma.sync on f16/bf16, Ampere and Hopper), `HGMMA` (wgmma on f16/bf16, Hopper),
/// `QGMMA` (wgmma on fp8, Hopper).
pub const TENSOR_CORE_KINDS: [&str; 3] = ["HMMA", "HGMMA", "QGMMA"];

/// The first word of the counts file when there are no counts; the reason follows.
pub const SASS_COUNTS_UNAVAILABLE: &str = "unavailable:";

/// The static count of each of [`TENSOR_CORE_KINDS`] in one kernel's SASS for one
/// architecture: instructions in the binary, not instructions executed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SassCounts {
    pub arch: String,
    pub kernel: String,
    /// In the order of [`TENSOR_CORE_KINDS`].
    pub counts: [u32; TENSOR_CORE_KINDS.len()],
}

/// Reads a `cuobjdump -sass` listing: `code for sm_XY` starts an architecture,
/// `Function : name` a kernel, and each `/*addr*/ [@pred] OPCODE.modifiers ...` line is one
/// instruction. Functions appear in listing order, once per architecture.
pub fn count_tensor_core_instructions(listing: &str) -> Vec<SassCounts> {
    let mut out: Vec<SassCounts> = Vec::new();
    let mut arch = String::new();
    let mut in_function = false;
    for line in listing.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("code for ") {
            arch = rest.trim().to_string();
            in_function = false;
        } else if let Some((_, name)) = line.split_once("Function : ") {
            out.push(SassCounts {
                arch: arch.clone(),
                kernel: name.trim().to_string(),
                counts: [0; TENSOR_CORE_KINDS.len()],
            });
            in_function = true;
        } else if in_function {
            let Some(op) = opcode(line) else { continue };
            let current = out.last_mut().expect("in_function implies a function");
            if let Some(i) = TENSOR_CORE_KINDS.iter().position(|k| *k == op) {
                current.counts[i] += 1;
            }
        }
    }
    out
}

/// The opcode of an instruction line, without its modifiers: `/*0a40*/ @!P0 HMMA.16816.F32
/// R4, ...` gives `HMMA`. Lines that are not instructions (the encoding halves
/// `/* 0x000fe2... */`, headers, labels) give `None`.
fn opcode(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("/*")?;
    let (address, rest) = rest.split_once("*/")?;
    if address.is_empty() || !address.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let mut words = rest.split_whitespace();
    let mut word = words.next()?;
    if word.starts_with('@') {
        word = words.next()?;
    }
    let op = word.split(['.', ';']).next()?;
    (!op.is_empty()).then_some(op)
}

/// The counts file: a comment, a header naming the columns, then one line per function:
/// `sm_90a tensor_cores_bf16_d64 384 0 0`.
pub fn format_sass_counts(counts: &[SassCounts]) -> String {
    let mut text = String::from(
        "# flashlab: tensor-core instructions per kernel in the fatbin's SASS (cuobjdump -sass)\n",
    );
    text.push_str(&format!("arch kernel {}\n", TENSOR_CORE_KINDS.join(" ")));
    for c in counts {
        let numbers: Vec<String> = c.counts.iter().map(u32::to_string).collect();
        text.push_str(&format!("{} {} {}\n", c.arch, c.kernel, numbers.join(" ")));
    }
    text
}

/// Reads the counts file back: the counts, or why there are none (no cuobjdump, no
/// kernels compiled, a file this version cannot read).
pub fn parse_sass_counts(text: &str) -> Result<Vec<SassCounts>, String> {
    let mut lines = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'));
    let Some(header) = lines.next() else {
        return Err("no SASS counts were made (the kernels were not compiled)".into());
    };
    if let Some(reason) = header.strip_prefix(SASS_COUNTS_UNAVAILABLE) {
        return Err(reason.trim().to_string());
    }
    let columns: Vec<&str> = header.split_whitespace().collect();
    if columns.get(..2) != Some(&["arch", "kernel"][..]) {
        return Err(format!(
            "the SASS counts file starts with {header:?}, not a header"
        ));
    }
    // Each kind's column, wherever the file put it (a kind it lacks stays unknown).
    let positions: Vec<Option<usize>> = TENSOR_CORE_KINDS
        .iter()
        .map(|k| columns.iter().position(|c| c == k))
        .collect();
    if positions.iter().all(Option::is_none) {
        return Err(format!(
            "the SASS counts file has none of {TENSOR_CORE_KINDS:?}"
        ));
    }
    lines
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.len() != columns.len() {
                return Err(format!(
                    "SASS counts line {line:?} does not match {header:?}"
                ));
            }
            let mut counts = [0; TENSOR_CORE_KINDS.len()];
            for (count, position) in counts.iter_mut().zip(&positions) {
                if let Some(p) = position {
                    *count = fields[*p]
                        .parse()
                        .map_err(|_| format!("SASS counts line {line:?}: not a number"))?;
                }
            }
            Ok(SassCounts {
                arch: fields[0].to_string(),
                kernel: fields[1].to_string(),
                counts,
            })
        })
        .collect()
}

/// Fills `hmma`, `hgmma`, `qgmma` of each row from the counts file. Returns why they stay
/// `None`, when they do; a row whose (kernel, arch) the counts lack also stays `None`.
pub fn add_sass_counts(resources: &mut [KernelResources], counts_file: &str) -> Option<String> {
    let counts = match parse_sass_counts(counts_file) {
        Ok(counts) => counts,
        Err(reason) => return Some(reason),
    };
    for r in resources.iter_mut() {
        if let Some(c) = counts
            .iter()
            .find(|c| c.kernel == r.kernel && c.arch == r.arch)
        {
            let [hmma, hgmma, qgmma] = c.counts;
            r.hmma = Some(hmma);
            r.hgmma = Some(hgmma);
            r.qgmma = Some(qgmma);
        }
    }
    None
}

/// cuobjdump for the nvcc at `nvcc`: `$CUOBJDUMP`, else the one in the same folder (a CUDA
/// toolkit's bin/, or `.toolchain/cuda/nvidia/cu13/bin` once `just cuda` installed it).
pub fn find_cuobjdump(nvcc: &Path) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CUOBJDUMP") {
        return Some(PathBuf::from(p)).filter(|p| p.is_file());
    }
    let beside = nvcc.parent()?.join("cuobjdump");
    beside.is_file().then_some(beside)
}

/// Runs `cuobjdump -sass` on `fatbin` and returns the counts file, or why it could not.
pub fn sass_counts_of(cuobjdump: &Path, fatbin: &Path) -> Result<String, String> {
    let listing = sass_listing(cuobjdump, fatbin)?;
    let counts = count_tensor_core_instructions(&listing);
    if counts.is_empty() {
        return Err(format!(
            "{} -sass listed no function in {}",
            cuobjdump.display(),
            fatbin.display()
        ));
    }
    Ok(format_sass_counts(&counts))
}

/// The `cuobjdump -sass` listing of `fatbin`, or why it could not be made.
pub fn sass_listing(cuobjdump: &Path, fatbin: &Path) -> Result<String, String> {
    let mut cmd = Command::new(cuobjdump);
    cmd.arg("-sass").arg(fatbin);
    // cuobjdump disassembles with nvdisasm, which it finds on $PATH or in $NVDISASM_PATH;
    // the pip wheels put both in one folder, which is on neither.
    let beside = cuobjdump.parent().filter(|d| d.join("nvdisasm").is_file());
    if let (None, Some(dir)) = (std::env::var_os("NVDISASM_PATH"), beside) {
        cmd.env("NVDISASM_PATH", dir);
    }
    let output = cmd
        .output()
        .map_err(|e| format!("could not run {}: {e}", cuobjdump.display()))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(format!(
            "{} -sass failed: {}",
            cuobjdump.display(),
            stderr.trim()
        ));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Real `cuobjdump -sass` output, cut down: stage 3's `tensor_cores_bf16_d64` for sm_80
    /// and sm_90a (its first HMMA lines and its last lines kept) and, for the wgmma
    /// instruction, a Hopper probe kernel compiled for sm_90a. The counts asserted below
    /// are of this excerpt, counted by hand.
    const LISTING: &str = include_str!("../tests/fixtures/cuobjdump-sass-excerpt.txt");

    #[test]
    fn counts_tensor_core_opcodes_per_kernel_and_arch() {
        let counts = count_tensor_core_instructions(LISTING);
        let got: Vec<(&str, &str, [u32; 3])> = counts
            .iter()
            .map(|c| (c.arch.as_str(), c.kernel.as_str(), c.counts))
            .collect();
        assert_eq!(
            got,
            [
                ("sm_80", "tensor_cores_bf16_d64", [4, 0, 0]),
                ("sm_90a", "tensor_cores_bf16_d64", [6, 0, 0]),
                ("sm_90a", "wgmma_probe", [0, 2, 0]),
            ]
        );
    }

    #[test]
    fn opcodes_lose_predicates_and_modifiers() {
        assert_eq!(
            opcode("/*0a40*/  @!P0 HMMA.16816.F32.BF16 R4, R8, R12, R4 ;  /* 0x0 */"),
            Some("HMMA")
        );
        assert_eq!(
            opcode("/*11f0*/ HGMMA.64x64x16.F32 R24, gdesc[UR4], RZ, !UPT, gsb0 ;"),
            Some("HGMMA")
        );
        assert_eq!(opcode("/*0b00*/ EXIT ;"), Some("EXIT"));
        assert_eq!(opcode("/* 0x000fe200078e00ff */"), None);
        assert_eq!(opcode(".L_x_12:"), None);
        assert_eq!(opcode("Function : f"), None);
    }

    #[test]
    fn the_counts_file_round_trips_and_says_why_when_empty() {
        let counts = count_tensor_core_instructions(LISTING);
        assert_eq!(parse_sass_counts(&format_sass_counts(&counts)), Ok(counts));
        assert_eq!(
            parse_sass_counts("unavailable: no cuobjdump beside /x/nvcc\n"),
            Err("no cuobjdump beside /x/nvcc".into())
        );
        assert!(parse_sass_counts("").is_err());
        assert!(parse_sass_counts("arch kernel HMMA\nsm_80 k\n").is_err());
        // A file from a later version with more columns still reads.
        let wider = "arch kernel IMMA HMMA QGMMA HGMMA\nsm_90a k 7 1 2 3\n";
        assert_eq!(parse_sass_counts(wider).unwrap()[0].counts, [1, 3, 2]);
    }

    #[test]
    fn rows_get_counts_or_stay_unknown() {
        let row = |kernel: &str, arch: &str| KernelResources {
            kernel: kernel.into(),
            arch: arch.into(),
            ..Default::default()
        };
        let mut rows = vec![
            row("tensor_cores_bf16_d64", "sm_90a"),
            row("wgmma_probe", "sm_90a"),
            row("not_in_the_listing", "sm_80"),
        ];
        let file = format_sass_counts(&count_tensor_core_instructions(LISTING));
        assert_eq!(add_sass_counts(&mut rows, &file), None);
        assert_eq!(
            (rows[0].hmma, rows[0].hgmma, rows[0].qgmma),
            (Some(6), Some(0), Some(0))
        );
        assert_eq!(
            (rows[1].hmma, rows[1].hgmma, rows[1].qgmma),
            (Some(0), Some(2), Some(0))
        );
        assert_eq!(rows[2].hmma, None);
        let mut rows = vec![row("tensor_cores_bf16_d64", "sm_90a")];
        assert_eq!(
            add_sass_counts(&mut rows, "unavailable: no cuobjdump\n"),
            Some("no cuobjdump".into())
        );
        assert_eq!(rows[0].hmma, None);
    }
}
