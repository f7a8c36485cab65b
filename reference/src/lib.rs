//! `reference`: the CPU oracle every flashlab stage is checked against.
//!
//! * [`oracle`]: exact f64 attention (and a bf16/f16 emulation of the same math), O and LSE.
//! * [`softmax`]: the two-pass softmax and the [`OnlineSoftmax`] state FlashAttention is built on.
//! * [`tiled`]: the FlashAttention-2 forward loop on the CPU, tile by tile.
//! * [`split_kv`]: partial results over K/V chunks and their combine (flash-decoding).
//! * [`backward`](mod@backward): dQ, dK, dV from dO and the saved LSE.
//! * [`dtype`], [`fp8`], [`hadamard`]: low-precision emulation; [`fp8_attention`]: attention
//!   as an FP8 kernel computes it (E4M3 casts, scales, incoherent processing).
//! * [`error`]: error metrics and tolerances, including FlashAttention-3's rule.
//!
//! Tensors are flat `f64` slices in FlashAttention's BSHD layout; see [`Shape`].
//!
//! ```
//! use reference::{Mask, Shape, attention, error::Tolerance, tiled::flash_forward};
//!
//! let shape = Shape::new(1, 4, 2, 5, 7, 8); // batch, heads, kv_heads, seqlen_q, seqlen_k, head_dim
//! let q: Vec<f64> = (0..shape.q_len()).map(|i| (i as f64).sin()).collect();
//! let k: Vec<f64> = (0..shape.kv_len()).map(|i| (i as f64).cos()).collect();
//! let v = k.clone();
//! let scale = 1.0 / (shape.head_dim as f64).sqrt();
//!
//! let exact = attention(&q, &k, &v, &shape, &Mask::causal(), scale);
//! let tiled = flash_forward(&q, &k, &v, &shape, &Mask::causal(), scale, 2, 3);
//! let check = Tolerance::AllClose { atol: 1e-12, rtol: 1e-12 }.check(&tiled.o, &exact.o);
//! assert!(check.passed, "{check}");
//! ```
//!
//! # Properties and where they are tested
//!
//! The property tests (run with many cases by `just proptest`) are named after what they state:
//!
//! | property | test |
//! |----------|------|
//! | online softmax equals two-pass softmax for every split | `tests/online_softmax.rs`: `online_softmax_equals_two_pass_for_any_split` |
//! | merge is associative / commutative; the empty state is its identity | `merge_is_associative`, `merge_is_commutative`, `empty_state_is_merge_identity` |
//! | a constant added to every score leaves O unchanged | `shifting_scores_leaves_output_unchanged`; `tests/oracle.rs`: `shifting_scores_leaves_attention_output_unchanged` |
//! | no overflow or NaN for scores up to ±1e4 | `large_scores_do_not_overflow` |
//! | a fully masked row gives O = 0 and LSE = −∞ | `fully_masked_row_gives_zero_and_neg_inf`; `fully_masked_rows_give_zero_and_neg_inf_in_every_implementation` |
//! | the oracle is the textbook formula | `tests/oracle.rs`: `oracle_equals_textbook_formula` |
//! | GQA equals MHA with K and V repeated | `gqa_equals_mha_with_repeated_kv` |
//! | rows computed together (sharing a K/V head) equal rows computed alone, bit for bit | `rows_computed_together_equal_rows_computed_alone` |
//! | tiled FA2 equals the oracle for any Br, Bc | `tests/tiled.rs`: `tiled_equals_oracle_for_any_tile_sizes` |
//! | split-KV over any partition equals the oracle | `split_kv_combine_equals_oracle`, `split_kv_merge_of_online_states_equals_oracle` |
//! | the backward pass matches finite differences | `tests/backward.rs`: `backward_matches_finite_differences` |
//! | FP8 rounds to a nearest code; Hadamard is orthonormal | `tests/dtype.rs` |
//! | a random rotation of Q and K leaves every score unchanged | `tests/fp8_attention.rs`: `rotation_leaves_scores_unchanged` |

pub mod backward;
pub mod dtype;
pub mod error;
pub mod fp8;
pub mod fp8_attention;
pub mod hadamard;
pub mod mask;
pub mod oracle;
pub mod shape;
pub mod softmax;
pub mod split_kv;
pub mod tiled;

pub use backward::{Gradients, KvRowId, RowGradients, backward, backward_rows};
pub use dtype::{LowPrecision, Precision};
pub use error::{Check, ErrorStats, Tolerance, check_fa3, error_stats, fa3_atol, fa3_bound};
pub use fp8::{Fp8Format, Fp8Tensor};
pub use hadamard::hadamard_transform;
pub use mask::{Align, Mask};
pub use oracle::{
    Attention, RowId, RowResult, all_rows, attention, attention_rows, attention_with_precision,
};
pub use shape::Shape;
pub use softmax::OnlineSoftmax;
pub use split_kv::split_forward;
pub use tiled::{TileConfig, flash_forward};
