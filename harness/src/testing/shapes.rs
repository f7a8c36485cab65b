//! The shape grid every prefill and backward stage's GPU tests run.

use crate::{DType, Problem};

/// (batch, heads, kv_heads, seqlen_q, seqlen_k): a single token, tile-aligned lengths,
/// lengths that are not a multiple of any tile, seqlen_q ≠ seqlen_k both ways (with
/// causal, more queries than keys leaves fully masked rows), GQA and MQA, and one
/// longer sequence that crosses many KV tiles.
pub const SHAPES: &[(usize, usize, usize, usize, usize)] = &[
    (1, 1, 1, 1, 1),
    (2, 3, 3, 64, 64),
    (1, 4, 2, 197, 197),
    (2, 2, 1, 113, 300),
    (1, 2, 2, 300, 113),
    (1, 2, 2, 1, 257),
    (1, 2, 1, 1024, 1024),
];

/// The problem of one grid entry (batch, heads, kv_heads, seqlen_q, seqlen_k) at a head dim,
/// dtype and mask, with the default scale.
pub(crate) fn grid_problem(
    shape: (usize, usize, usize, usize, usize),
    head_dim: usize,
    dtype: DType,
    causal: bool,
) -> Problem {
    let (batch, heads, kv_heads, seqlen_q, seqlen_k) = shape;
    Problem {
        shape: reference::Shape {
            batch,
            heads,
            kv_heads,
            seqlen_q,
            seqlen_k,
            head_dim,
        },
        causal,
        dtype,
        scale: None,
    }
}
