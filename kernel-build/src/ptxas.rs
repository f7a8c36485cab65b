//! Parsing nvcc's `-Xptxas -v` report into one record per (kernel, architecture).

use serde::Serialize;

/// What ptxas says a kernel costs on one architecture. `static_smem_bytes` counts only
/// `__shared__` arrays; dynamic shared memory is chosen at launch and shown by the harness.
///
/// `hmma`, `hgmma` and `qgmma` are not from ptxas but from the SASS (see
/// [`add_sass_counts`](crate::add_sass_counts)): the tensor-core instructions in the
/// binary, `None` when they could not be counted (no cuobjdump at build time).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct KernelResources {
    pub kernel: String,
    pub arch: String,
    pub registers: u32,
    pub barriers: u32,
    pub static_smem_bytes: u32,
    pub stack_frame_bytes: u32,
    pub spill_store_bytes: u32,
    pub spill_load_bytes: u32,
    /// `HMMA`: mma.sync on f16/bf16 (Ampere, Hopper).
    pub hmma: Option<u32>,
    /// `HGMMA`: wgmma on f16/bf16 (Hopper).
    pub hgmma: Option<u32>,
    /// `QGMMA`: wgmma on fp8 (Hopper).
    pub qgmma: Option<u32>,
}

/// Whether a line of nvcc's output is a warning: nvcc's and ptxas's own, and ptxas's
/// "Potential Performance Loss" notes, which it prints as info lines although each says
/// it undid something the source asked for (C7508: a `setmaxnreg` ignored; C7515 and
/// kin: `wgmma`s serialized).
pub fn is_compiler_warning(line: &str) -> bool {
    line.to_lowercase().contains("warning") || line.contains("Potential Performance Loss")
}

/// Reads every kernel out of a ptxas report. Lines that are not about an entry function
/// (device functions, global variables, nvcc warnings) are skipped.
pub fn parse_ptxas_report(report: &str) -> Vec<KernelResources> {
    let mut kernels = Vec::new();
    let mut current: Option<KernelResources> = None;
    for line in report.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("ptxas info    : Compiling entry function '") {
            kernels.extend(current.take());
            let mut parts = rest.split('\'');
            let kernel = parts.next().unwrap_or_default().to_string();
            let arch = parts.nth(1).unwrap_or_default().to_string();
            current = Some(KernelResources {
                kernel,
                arch,
                ..Default::default()
            });
        } else if let Some(k) = current.as_mut() {
            if line.contains("bytes stack frame") {
                k.stack_frame_bytes = number_before(line, "bytes stack frame");
                k.spill_store_bytes = number_before(line, "bytes spill stores");
                k.spill_load_bytes = number_before(line, "bytes spill loads");
            } else if line.contains("Used ") && line.contains("registers") {
                k.registers = number_before(line, "registers");
                k.barriers = number_before(line, "barriers");
                k.static_smem_bytes = number_before(line, "bytes smem");
                kernels.extend(current.take());
            }
        }
    }
    kernels.extend(current);
    kernels
}

/// The integer just before `label` in `line` ("0 bytes spill stores" → 0), or 0 when the
/// label is absent (ptxas leaves out "bytes smem" when there is none). "used 1 barriers"
/// is read the same way: the number right before the label.
fn number_before(line: &str, label: &str) -> u32 {
    let Some(pos) = line.find(label) else {
        return 0;
    };
    line[..pos]
        .split(|c: char| !c.is_ascii_digit())
        .rfind(|s| !s.is_empty())
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn performance_loss_notes_count_as_warnings() {
        assert!(is_compiler_warning(
            "ptxas info    : (C7508) Potential Performance Loss: 'setmaxnreg' ignored; unable to determine register count at entry."
        ));
        assert!(is_compiler_warning(
            "ptxas warning : Registers are spilled to local memory"
        ));
        assert!(!is_compiler_warning(
            "ptxas info    : Used 168 registers, used 2 barriers, 80 bytes smem"
        ));
    }

    const REPORT: &str = "\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'online_softmax_bf16_d128' for 'sm_80'
ptxas info    : Function properties for online_softmax_bf16_d128
    8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 96 registers, used 1 barriers, 384 bytes cmem[0]
ptxas info    : Compiling entry function 'naive_scores_f16_d64' for 'sm_90a'
ptxas info    : Function properties for naive_scores_f16_d64
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 40 registers, used 1 barriers, 16384 bytes smem, 400 bytes cmem[0]
";

    #[test]
    fn reads_every_entry_function_with_its_arch() {
        let kernels = parse_ptxas_report(REPORT);
        assert_eq!(
            kernels,
            vec![
                KernelResources {
                    kernel: "online_softmax_bf16_d128".into(),
                    arch: "sm_80".into(),
                    registers: 96,
                    barriers: 1,
                    static_smem_bytes: 0,
                    stack_frame_bytes: 8,
                    spill_store_bytes: 4,
                    spill_load_bytes: 12,
                    ..Default::default()
                },
                KernelResources {
                    kernel: "naive_scores_f16_d64".into(),
                    arch: "sm_90a".into(),
                    registers: 40,
                    barriers: 1,
                    static_smem_bytes: 16384,
                    stack_frame_bytes: 0,
                    spill_store_bytes: 0,
                    spill_load_bytes: 0,
                    ..Default::default()
                },
            ]
        );
    }

    #[test]
    fn empty_report_has_no_kernels() {
        assert!(parse_ptxas_report("").is_empty());
    }
}
