//! kernel-build: what every stage's `build.rs` calls, and the parser for what it keeps.
//!
//! At build time [`compile_stage_kernels`] finds nvcc, compiles the stage's `kernels/*.cu`
//! into one fatbin (SASS for each real architecture, PTX for the oldest one so newer
//! GPUs can still JIT it), and saves nvcc's ptxas report beside it in `OUT_DIR`. The
//! stage crate embeds both with [`include_kernels!`](../harness/macro.include_kernels.html).
//! Without nvcc the build still succeeds: it warns, embeds an empty fatbin and a report
//! that says how to get a compiler, so CPU-only machines build and test the workspace.

mod nvcc;
mod ptxas;

pub use nvcc::{Arch, DEFAULT_ARCHS, ToolchainError, find_nvcc, parse_archs};
pub use ptxas::{KernelResources, parse_ptxas_report};

/// File names inside `OUT_DIR`, shared by the build script and the embedding macro.
pub const FATBIN_FILE: &str = "kernels.fatbin";
pub const REPORT_FILE: &str = "ptxas-report.txt";
pub const STATUS_FILE: &str = "nvcc-status.txt";

/// The first line of the status file when no nvcc was found.
pub const NO_NVCC: &str = "no-nvcc";

pub use nvcc::{
    HOPPER_ARCHS, compile_hopper_stage_kernels_with, compile_stage_kernels,
    compile_stage_kernels_with,
};
