//! What a stage build leaves in `OUT_DIR`: the file names, shared by the build script
//! ([`crate::compile_stage_kernels`]) and the embedding macro, and the status file's
//! first line without a compiler. A module of its own so the build (`nvcc`) takes them
//! from below rather than from the crate root that re-exports it.

/// File names inside `OUT_DIR`, shared by the build script and the embedding macro.
pub const FATBIN_FILE: &str = "kernels.fatbin";
pub const REPORT_FILE: &str = "ptxas-report.txt";
pub const STATUS_FILE: &str = "nvcc-status.txt";
pub const SASS_COUNTS_FILE: &str = "sass-counts.txt";

/// The first line of the status file when no nvcc was found.
pub const NO_NVCC: &str = "no-nvcc";
