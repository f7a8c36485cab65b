//! flashlab: FlashAttention built one kernel at a time. This crate is the `flashlab`
//! command line and the stage table it drives; the machinery lives in `harness`, the
//! oracle in `reference`, and each kernel stage in its own crate under `stages/`.

pub mod accuracy;
pub mod bench;
pub mod cli;
mod commands;
pub mod save;
pub mod schedule;
pub mod stages;
pub mod timeline;

pub use commands::run;
