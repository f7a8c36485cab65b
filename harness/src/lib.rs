//! harness: the machinery every stage shares, written once.
//!
//! A stage crate brings only its kernels and a [`Stage`] implementation that says how to
//! launch them. Everything around a launch lives here: the [`Problem`] and its validation,
//! the GPU context ([`Gpu`]), seeded inputs that are not zero-mean, NaN-poisoned outputs,
//! the comparison with the `reference` oracle under a dtype-justified tolerance
//! ([`check`]), timing with CUDA events ([`timing`]), and the measured timelines of the
//! stages that record one ([`timeline`]).

pub mod backward;
pub mod check;
pub mod decode;
mod error;
pub mod fp8;
pub mod gpu;
pub mod inputs;
pub mod kernels;
mod params;
mod problem;
pub mod run;
pub mod sol;
mod stage;
pub mod tensor_map;
pub mod testing;
pub mod tiled;
pub mod tiles;
pub mod timeline;
pub mod timing;
pub mod tma;

pub use decode::{DecodeProblem, KvLayout};
pub use error::{Error, Result};
pub use fp8::{Fp8Stage, VLayout};
pub use gpu::Gpu;
pub use kernels::{Kernel, KernelBundle};
pub use params::AttnParams;
pub use problem::{DType, Problem};
pub use stage::{
    BackwardStage, DecodeStage, GpuArch, LaunchArgs, PrefillStage, Stage, StageInfo, TensorCores,
    Workload, WorkloadKind,
};
pub use tiled::{QTiles, TiledStage, ToleratedSpill};
pub use tma::TmaStage;

/// Re-exported so stage crates need no direct dependency on cudarc for launching.
pub use cudarc;
pub use kernel_build::{KernelResources, parse_ptxas_report};
