//! Attention masks: which key `j` a query row `i` may attend to.
//!
//! Every mask here allows a *contiguous* range of keys per query row, which is what lets the
//! kernels skip whole K/V tiles. [`Mask::key_range`] is therefore the primitive, and
//! [`Mask::allows`] is defined from it, so the two can never disagree.
//!
//! Alignment matters only when `seqlen_q != seqlen_k`. FlashAttention (from v2.1) aligns the
//! causal diagonal to the bottom-right corner: the last query row sees every key, which is what
//! decoding with a KV cache needs. PyTorch's `is_causal` aligns it top-left.

use std::ops::Range;

/// Where the diagonal of a causal or sliding-window mask is anchored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// Query `i` is centred on key `i`.
    TopLeft,
    /// Query `i` is centred on key `i + seqlen_k - seqlen_q` (FlashAttention's convention).
    BottomRight,
}

/// Which keys each query row may see.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mask {
    /// Every query sees every key.
    None,
    /// Query `i` sees keys up to and including its diagonal.
    Causal(Align),
    /// Query `i` sees keys from `left` before its diagonal to `right` after it (both inclusive);
    /// `None` means unbounded on that side, as FlashAttention's `window_size = -1`.
    /// `SlidingWindow { left: None, right: Some(0), .. }` is exactly causal.
    SlidingWindow {
        left: Option<usize>,
        right: Option<usize>,
        align: Align,
    },
}

impl Mask {
    /// FlashAttention's causal mask (bottom-right aligned).
    pub fn causal() -> Self {
        Mask::Causal(Align::BottomRight)
    }

    /// A bottom-right aligned sliding window, FlashAttention's `window_size = (left, right)`.
    pub fn sliding_window(left: Option<usize>, right: Option<usize>) -> Self {
        Mask::SlidingWindow {
            left,
            right,
            align: Align::BottomRight,
        }
    }

    /// Whether query row `i` may attend to key `j`.
    ///
    /// Bottom-right causal: `j <= i + seqlen_k - seqlen_q` in signed arithmetic, so when
    /// `seqlen_q > seqlen_k` the first `seqlen_q - seqlen_k` rows see nothing. Top-left: `j <= i`.
    pub fn allows(&self, i: usize, j: usize, seqlen_q: usize, seqlen_k: usize) -> bool {
        self.key_range(i, seqlen_q, seqlen_k).contains(&j)
    }

    /// The keys query row `i` may see, clipped to `0..seqlen_k`; empty for a fully masked row.
    pub fn key_range(&self, i: usize, seqlen_q: usize, seqlen_k: usize) -> Range<usize> {
        let (left, right, align) = match *self {
            Mask::None => return 0..seqlen_k,
            Mask::Causal(align) => (None, Some(0), align),
            Mask::SlidingWindow { left, right, align } => (left, right, align),
        };
        // i128 so that huge window sizes and seqlen_q > seqlen_k cannot overflow or wrap.
        let diagonal = match align {
            Align::TopLeft => i as i128,
            Align::BottomRight => i as i128 + seqlen_k as i128 - seqlen_q as i128,
        };
        let lo = left.map_or(0, |l| diagonal - l as i128).max(0);
        let hi = right
            .map_or(seqlen_k as i128, |r| diagonal + r as i128 + 1)
            .min(seqlen_k as i128);
        if lo >= hi {
            0..0
        } else {
            lo as usize..hi as usize
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(mask: Mask, sq: usize, sk: usize) -> Vec<String> {
        (0..sq)
            .map(|i| {
                (0..sk)
                    .map(|j| if mask.allows(i, j, sq, sk) { '1' } else { '.' })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn causal_alignments_differ_only_when_lengths_differ() {
        assert_eq!(
            pattern(Mask::Causal(Align::TopLeft), 3, 3),
            pattern(Mask::Causal(Align::BottomRight), 3, 3)
        );
        assert_eq!(
            pattern(Mask::Causal(Align::TopLeft), 2, 4),
            ["1...", "11.."]
        );
        assert_eq!(
            pattern(Mask::Causal(Align::BottomRight), 2, 4),
            ["111.", "1111"]
        );
    }

    #[test]
    fn bottom_right_causal_with_more_queries_than_keys_masks_first_rows() {
        assert_eq!(pattern(Mask::causal(), 4, 2), ["..", "..", "1.", "11"]);
        assert_eq!(
            pattern(Mask::Causal(Align::TopLeft), 4, 2),
            ["1.", "11", "11", "11"]
        );
    }

    #[test]
    fn sliding_window_is_a_band_around_the_diagonal() {
        assert_eq!(
            pattern(Mask::sliding_window(Some(1), Some(0)), 4, 4),
            ["1...", "11..", ".11.", "..11"]
        );
        assert_eq!(
            pattern(Mask::sliding_window(Some(0), Some(1)), 3, 5),
            ["..11.", "...11", "....1"]
        );
        assert_eq!(
            pattern(Mask::sliding_window(None, Some(0)), 3, 5),
            pattern(Mask::causal(), 3, 5)
        );
        assert_eq!(
            pattern(Mask::sliding_window(None, None), 2, 3),
            ["111", "111"]
        );
    }

    #[test]
    fn huge_windows_do_not_overflow() {
        let mask = Mask::sliding_window(Some(usize::MAX), Some(usize::MAX));
        assert_eq!(mask.key_range(0, 3, 7), 0..7);
    }

    #[test]
    fn allows_agrees_with_key_range() {
        let masks = [
            Mask::None,
            Mask::Causal(Align::TopLeft),
            Mask::causal(),
            Mask::sliding_window(Some(2), Some(1)),
            Mask::SlidingWindow {
                left: Some(0),
                right: None,
                align: Align::TopLeft,
            },
        ];
        for mask in masks {
            for (sq, sk) in [(0, 3), (3, 0), (5, 3), (3, 5), (4, 4)] {
                for i in 0..sq {
                    let range = mask.key_range(i, sq, sk);
                    assert!(range.end <= sk);
                    for j in 0..sk {
                        assert_eq!(mask.allows(i, j, sq, sk), range.contains(&j));
                    }
                }
            }
        }
    }
}
