//! `reference`: the CPU oracle every flashlab stage is checked against.
//!
//! * [`oracle`]: exact f64 attention (and a bf16/f16 emulation of the same math), O and LSE.
//! * [`softmax`]: the two-pass softmax and the [`OnlineSoftmax`] state FlashAttention is built on.
//! * [`tiled`]: the FlashAttention-2 forward loop on the CPU, tile by tile.
//! * [`split_kv`]: partial results over K/V chunks and their combine (flash-decoding).
//! * [`backward`]: dQ, dK, dV from dO and the saved LSE.
//! * [`dtype`], [`fp8`], [`hadamard`]: low-precision emulation.
//! * [`error`]: error metrics and tolerances, including FlashAttention-3's rule.
//!
//! Tensors are flat `f64` slices in FlashAttention's BSHD layout; see [`Shape`].

pub mod backward;
pub mod dtype;
pub mod error;
pub mod fp8;
pub mod hadamard;
pub mod mask;
pub mod oracle;
pub mod shape;
pub mod softmax;
pub mod split_kv;
pub mod tiled;

pub use backward::{Gradients, backward};
pub use dtype::{LowPrecision, Precision};
pub use error::{Check, ErrorStats, Tolerance, error_stats, fa3_bound};
pub use fp8::{Fp8Format, Fp8Tensor};
pub use hadamard::hadamard_transform;
pub use mask::{Align, Mask};
pub use oracle::{Attention, RowId, RowResult, attention, attention_rows};
pub use shape::Shape;
pub use softmax::OnlineSoftmax;
