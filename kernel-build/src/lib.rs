//! kernel-build: what every stage's `build.rs` calls, and the parser for what it keeps.
//!
//! At build time [`compile_stage_kernels`] finds nvcc, compiles the stage's `kernels/*.cu`
//! into one fatbin (SASS for each real architecture, PTX for the oldest one so newer
//! GPUs can still JIT it), and saves nvcc's ptxas report beside it in `OUT_DIR`, with the
//! count of tensor-core instructions per kernel in its SASS (from `cuobjdump -sass`). The
//! stage crate embeds them with [`include_kernels!`](../harness/macro.include_kernels.html).
//! Without nvcc the build still succeeds: it warns, embeds an empty fatbin and a report
//! that says how to get a compiler, so CPU-only machines build and test the workspace.

mod nvcc;
mod out_files;
mod ptxas;
mod sass;

pub use nvcc::{Arch, DEFAULT_ARCHS, ToolchainError, find_nvcc, parse_archs};
pub use out_files::{FATBIN_FILE, NO_NVCC, REPORT_FILE, SASS_COUNTS_FILE, STATUS_FILE};
pub use ptxas::{KernelResources, is_compiler_warning, parse_ptxas_report};
pub use sass::{
    SASS_COUNTS_UNAVAILABLE, SassCounts, TENSOR_CORE_KINDS, add_sass_counts,
    count_tensor_core_instructions, find_cuobjdump, format_sass_counts, parse_sass_counts,
    sass_listing,
};

pub use nvcc::{
    HOPPER_ARCHS, compile_hopper_stage_kernels_with, compile_stage_kernels,
    compile_stage_kernels_with,
};
