//! The attention problem's shape and the BSHD index arithmetic every other module relies on.
//!
//! Layout is FlashAttention's contiguous "BSHD": `q` and `o` are
//! `[batch, seqlen_q, heads, head_dim]`, `k` and `v` are `[batch, seqlen_k, kv_heads, head_dim]`,
//! and the log-sum-exp is `[batch, heads, seqlen_q]`. Keeping the index functions in one place
//! means a stride bug shows up once, in this file's tests, rather than in every stage.

/// Sizes of one attention problem. `heads` must be a multiple of `kv_heads`: grouped-query
/// attention (GQA) lets `heads / kv_heads` query heads share one K/V head, and multi-query
/// attention (MQA) is the extreme `kv_heads == 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub batch: usize,
    pub heads: usize,
    pub kv_heads: usize,
    pub seqlen_q: usize,
    pub seqlen_k: usize,
    pub head_dim: usize,
}

impl Shape {
    /// A shape with every field given; panics (via [`Shape::validate`]) on an impossible one.
    pub fn new(
        batch: usize,
        heads: usize,
        kv_heads: usize,
        seqlen_q: usize,
        seqlen_k: usize,
        head_dim: usize,
    ) -> Self {
        let shape = Shape {
            batch,
            heads,
            kv_heads,
            seqlen_q,
            seqlen_k,
            head_dim,
        };
        shape.validate();
        shape
    }

    /// Plain multi-head attention: one K/V head per query head.
    pub fn mha(
        batch: usize,
        heads: usize,
        seqlen_q: usize,
        seqlen_k: usize,
        head_dim: usize,
    ) -> Self {
        Shape::new(batch, heads, heads, seqlen_q, seqlen_k, head_dim)
    }

    /// Panics with a readable message unless the head counts are compatible. Zero-length
    /// sequences are allowed on purpose: they are the degenerate cases kernels must survive.
    pub fn validate(&self) {
        assert!(self.kv_heads > 0, "kv_heads must be positive: {self:?}");
        assert!(
            self.heads % self.kv_heads == 0,
            "heads ({}) must be a multiple of kv_heads ({})",
            self.heads,
            self.kv_heads
        );
    }

    /// How many query heads share one K/V head (1 for MHA, `heads` for MQA).
    pub fn group_size(&self) -> usize {
        self.heads / self.kv_heads
    }

    /// The K/V head that query head `h` reads.
    pub fn kv_head(&self, h: usize) -> usize {
        h / self.group_size()
    }

    /// Number of elements of `q` (and of `o`).
    pub fn q_len(&self) -> usize {
        self.batch * self.seqlen_q * self.heads * self.head_dim
    }

    /// Number of elements of `k` (and of `v`).
    pub fn kv_len(&self) -> usize {
        self.batch * self.seqlen_k * self.kv_heads * self.head_dim
    }

    /// Number of elements of `o`; the same as `q_len` because O has Q's layout.
    pub fn o_len(&self) -> usize {
        self.q_len()
    }

    /// Number of elements of the log-sum-exp, one per (batch, head, query row).
    pub fn lse_len(&self) -> usize {
        self.batch * self.heads * self.seqlen_q
    }

    /// Flat offset of `q[b, i, h, d]` (also used for `o`).
    pub fn q_index(&self, b: usize, i: usize, h: usize, d: usize) -> usize {
        ((b * self.seqlen_q + i) * self.heads + h) * self.head_dim + d
    }

    /// Flat offset of `k[b, j, hk, d]` (also used for `v`).
    pub fn kv_index(&self, b: usize, j: usize, hk: usize, d: usize) -> usize {
        ((b * self.seqlen_k + j) * self.kv_heads + hk) * self.head_dim + d
    }

    /// Flat offset of `lse[b, h, i]`.
    pub fn lse_index(&self, b: usize, h: usize, i: usize) -> usize {
        (b * self.heads + h) * self.seqlen_q + i
    }

    /// Panics unless the three input slices have the lengths this shape implies. Every public
    /// entry point calls it, so a caller passing a wrong layout learns at once and by name.
    pub fn check_inputs(&self, q: &[f64], k: &[f64], v: &[f64]) {
        self.validate();
        assert_eq!(q.len(), self.q_len(), "q has the wrong length for {self:?}");
        assert_eq!(
            k.len(),
            self.kv_len(),
            "k has the wrong length for {self:?}"
        );
        assert_eq!(
            v.len(),
            self.kv_len(),
            "v has the wrong length for {self:?}"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_are_dense_and_in_bounds() {
        let s = Shape::new(2, 4, 2, 3, 5, 2);
        let mut seen = vec![false; s.q_len()];
        for b in 0..s.batch {
            for i in 0..s.seqlen_q {
                for h in 0..s.heads {
                    for d in 0..s.head_dim {
                        let idx = s.q_index(b, i, h, d);
                        assert!(!seen[idx]);
                        seen[idx] = true;
                    }
                }
            }
        }
        assert!(seen.iter().all(|&x| x));
        assert_eq!(s.kv_index(1, 4, 1, 1), s.kv_len() - 1);
        assert_eq!(s.lse_index(1, 3, 2), s.lse_len() - 1);
        // BSHD: the head dimension is innermost, then heads, then sequence.
        assert_eq!(s.q_index(0, 0, 1, 0), 2);
        assert_eq!(s.q_index(0, 1, 0, 0), 8);
    }

    #[test]
    fn gqa_maps_consecutive_query_heads_to_one_kv_head() {
        let s = Shape::new(1, 8, 2, 1, 1, 1);
        let kv: Vec<usize> = (0..8).map(|h| s.kv_head(h)).collect();
        assert_eq!(kv, vec![0, 0, 0, 0, 1, 1, 1, 1]);
        let mqa = Shape::new(1, 3, 1, 1, 1, 1);
        assert_eq!(mqa.kv_head(2), 0);
    }

    #[test]
    #[should_panic(expected = "multiple of kv_heads")]
    fn incompatible_heads_are_rejected() {
        Shape::new(1, 6, 4, 1, 1, 1);
    }
}
