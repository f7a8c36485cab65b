//! `flashlab bench`: every stage of the table on a sweep of shapes, each row checked
//! against the oracle and timed, optionally with PyTorch's and FlashAttention's kernels
//! timed on the same shapes in the same run; results as JSON and CSV, plots and a
//! markdown table from them.
//!
//! By responsibility, each module using only those before it: [`sweep`] (the
//! configuration and its defaults: which shapes, which rows are skipped and why),
//! [`results`] (the rows and the header, `bench.json`), [`output`] (CSV, the terminal's
//! progress lines, the markdown table), [`style`] (what every figure shares), [`ladder`],
//! [`plots`] (every figure of a run, the ladder's among them), [`baselines`] (PyTorch and flash_attn
//! through `bench/baselines.py`), [`decode`] (`--decode`) and `run` (a whole bench, running
//! each row: the one part that needs a GPU besides [`compare`]). [`records`] knows the
//! committed runs of record's layout and the list of what the book draws from them. The command line
//! ([`crate::cli`]) builds a [`BenchConfig`] from its flags; nothing here knows the CLI.

pub mod baselines;
pub mod compare;
pub mod decode;
pub mod ladder;
pub mod output;
pub mod plots;
pub mod records;
pub mod results;
mod run;
pub mod style;
pub mod sweep;

pub use output::{CSV_COLUMNS, row_line};
pub use results::{
    BACKWARD_FLOP_RULE, Baselines, BenchResults, FLOP_RULE, GIT_COMMIT, Header, Row, RowKind,
    SCHEMA, Status, SweepInfo, format_utc, utc_now,
};
pub use run::run;
pub use sweep::{
    BenchConfig, DEFAULT_DIMS, DEFAULT_HEADS, DEFAULT_MAX_WORKSPACE_GIB, DEFAULT_SEED,
    DEFAULT_SEQLENS, DEFAULT_TOKENS, Pass, Plan, QUICK_DIMS, QUICK_SEQLENS, Sweep, describe_plan,
    plan_row, plan_row_for, select_stages, select_stages_for, shape_label, shape_rule, stage_name,
    validate_sweep,
};
