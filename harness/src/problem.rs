//! One attention problem: its shape, mask, dtype and scale, its validation and its FLOPs.

use crate::{Error, Result};
use reference::Shape;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The element type of Q, K, V and O. Accumulation is always fp32.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    Bf16,
    F16,
}

impl DType {
    pub const ALL: [DType; 2] = [DType::Bf16, DType::F16];

    /// The suffix kernels are exported under (`online_softmax_bf16_d128`).
    pub fn name(self) -> &'static str {
        match self {
            DType::Bf16 => "bf16",
            DType::F16 => "f16",
        }
    }

    pub fn low_precision(self) -> reference::LowPrecision {
        match self {
            DType::Bf16 => reference::LowPrecision::Bf16,
            DType::F16 => reference::LowPrecision::F16,
        }
    }

    /// The 16-bit pattern of the nearest value to `x`.
    pub fn to_bits(self, x: f32) -> u16 {
        match self {
            DType::Bf16 => half::bf16::from_f32(x).to_bits(),
            DType::F16 => half::f16::from_f32(x).to_bits(),
        }
    }

    pub fn from_bits(self, bits: u16) -> f32 {
        match self {
            DType::Bf16 => half::bf16::from_bits(bits).to_f32(),
            DType::F16 => half::f16::from_bits(bits).to_f32(),
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for DType {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "bf16" | "bfloat16" => Ok(DType::Bf16),
            "f16" | "fp16" | "half" | "float16" => Ok(DType::F16),
            _ => Err(format!(
                "unknown dtype `{s}`; flashlab supports bf16 and f16"
            )),
        }
    }
}

/// An attention forward problem: a [`Shape`] (tensors are contiguous "BSHD", as in
/// FlashAttention: Q and O are `[batch, seqlen_q, heads, head_dim]`, K and V `[batch,
/// seqlen_k, kv_heads, head_dim]`, and the log-sum-exp `[batch, heads, seqlen_q]` in fp32)
/// with the mask, dtype and scale a kernel needs.
///
/// As JSON (`flashlab stage --json`) the shape's fields stand beside the others, as they
/// did before `Problem` held a `Shape`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Problem {
    #[serde(flatten, serialize_with = "serialize_shape")]
    pub shape: Shape,
    /// Causal masking aligned to the bottom-right corner, as FlashAttention does: query i
    /// sees key j when j <= i + seqlen_k - seqlen_q.
    pub causal: bool,
    pub dtype: DType,
    /// The softmax scale; `None` means the usual 1/sqrt(head_dim).
    pub scale: Option<f32>,
}

/// `reference` has no serde (it is the dependency-light oracle), so its `Shape` is
/// written field by field here.
fn serialize_shape<S: serde::Serializer>(
    shape: &Shape,
    serializer: S,
) -> std::result::Result<S::Ok, S::Error> {
    use serde::ser::SerializeStruct as _;
    let mut s = serializer.serialize_struct("Shape", 6)?;
    s.serialize_field("batch", &shape.batch)?;
    s.serialize_field("heads", &shape.heads)?;
    s.serialize_field("kv_heads", &shape.kv_heads)?;
    s.serialize_field("seqlen_q", &shape.seqlen_q)?;
    s.serialize_field("seqlen_k", &shape.seqlen_k)?;
    s.serialize_field("head_dim", &shape.head_dim)?;
    s.end()
}

/// The kernels index within a tensor with 32-bit integers.
pub const MAX_ELEMENTS: usize = i32::MAX as usize;

impl Problem {
    /// A problem with the defaults of `flashlab stage N`: one batch, MHA, non-causal bf16.
    pub fn new(batch: usize, heads: usize, seqlen: usize, head_dim: usize) -> Problem {
        Problem {
            // A literal, not `Shape::new`, which panics: `validate` says what is wrong.
            shape: Shape {
                batch,
                heads,
                kv_heads: heads,
                seqlen_q: seqlen,
                seqlen_k: seqlen,
                head_dim,
            },
            causal: false,
            dtype: DType::Bf16,
            scale: None,
        }
    }

    pub fn softmax_scale(&self) -> f32 {
        self.scale
            .unwrap_or(1.0 / (self.shape.head_dim as f32).sqrt())
    }

    pub fn mask(&self) -> reference::Mask {
        if self.causal {
            reference::Mask::Causal(reference::Align::BottomRight)
        } else {
            reference::Mask::None
        }
    }

    /// Query-key pairs the mask lets through, per (batch, head). Causal bottom-right: row
    /// i sees min(seqlen_k, max(0, i + seqlen_k - seqlen_q + 1)) keys.
    pub fn visible_pairs(&self) -> u128 {
        let (sq, sk) = (self.shape.seqlen_q as i128, self.shape.seqlen_k as i128);
        if !self.causal {
            return (sq * sk) as u128;
        }
        (0..sq)
            .map(|i| (i + sk - sq + 1).clamp(0, sk))
            .sum::<i128>() as u128
    }

    // ANCHOR: flops
    /// FLOPs of the forward pass: two matrix products of 2·D FLOPs per visible pair, so
    /// 4·B·H·Sq·Sk·D without a mask and about half of it causal (only the work needed).
    pub fn flops(&self) -> f64 {
        let s = &self.shape;
        4.0 * (s.batch * s.heads) as f64 * self.visible_pairs() as f64 * s.head_dim as f64
    }

    /// The fewest bytes a forward pass must move: Q, K, V read once, O and LSE written once.
    pub fn min_bytes(&self) -> f64 {
        let elems = 2 * self.shape.q_len() + 2 * self.shape.kv_len();
        (elems * 2 + self.shape.lse_len() * 4) as f64
    }
    // ANCHOR_END: flops

    /// Checks what every stage needs; a stage checks its own head dims and dtypes after.
    pub fn validate(&self) -> Result<()> {
        let s = &self.shape;
        let fields = [
            ("batch", s.batch),
            ("heads", s.heads),
            ("kv_heads", s.kv_heads),
            ("seqlen_q", s.seqlen_q),
            ("seqlen_k", s.seqlen_k),
            ("head_dim", s.head_dim),
        ];
        for (name, value) in fields {
            if value == 0 {
                return Err(Error::InvalidProblem(format!(
                    "{name} is 0; every size must be at least 1"
                )));
            }
        }
        if s.heads % s.kv_heads != 0 {
            return Err(Error::InvalidProblem(format!(
                "heads ({}) must be a multiple of kv_heads ({}): each group of heads/kv_heads query heads shares one K/V head (GQA)",
                s.heads, s.kv_heads
            )));
        }
        if s.batch.saturating_mul(s.heads) > 65_535 {
            return Err(Error::InvalidProblem(format!(
                "batch x heads is {}; the kernels put one (batch, head) pair per grid row, and a grid has at most 65535",
                s.batch.saturating_mul(s.heads)
            )));
        }
        let scale = self.softmax_scale();
        if !scale.is_finite() || scale <= 0.0 {
            return Err(Error::InvalidProblem(format!(
                "softmax scale {scale} must be finite and positive"
            )));
        }
        for (name, n) in [
            ("Q/O", self.checked_elements(true)),
            ("K/V", self.checked_elements(false)),
        ] {
            match n {
                Some(n) if n <= MAX_ELEMENTS => {}
                _ => {
                    return Err(Error::InvalidProblem(format!(
                        "{name} would hold more than 2^31 - 1 elements; the kernels index a tensor with 32-bit integers, so keep batch x seqlen x heads x head_dim below {MAX_ELEMENTS}"
                    )));
                }
            }
        }
        Ok(())
    }

    fn checked_elements(&self, query: bool) -> Option<usize> {
        let s = &self.shape;
        let (seqlen, heads) = if query {
            (s.seqlen_q, s.heads)
        } else {
            (s.seqlen_k, s.kv_heads)
        };
        s.batch
            .checked_mul(seqlen)?
            .checked_mul(heads)?
            .checked_mul(s.head_dim)
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.shape;
        write!(f, "batch {} heads {}", s.batch, s.heads)?;
        if s.kv_heads != s.heads {
            write!(f, " (kv {})", s.kv_heads)?;
        }
        if s.seqlen_q == s.seqlen_k {
            write!(f, " seqlen {}", s.seqlen_q)?;
        } else {
            write!(f, " seqlen_q {} seqlen_k {}", s.seqlen_q, s.seqlen_k)?;
        }
        write!(
            f,
            " dim {} {}{}",
            s.head_dim,
            self.dtype,
            if self.causal { " causal" } else { "" }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flops_count_four_bhsd_squared() {
        let p = Problem::new(1, 16, 4096, 128);
        assert_eq!(p.flops(), 4.0 * 16.0 * 4096.0 * 4096.0 * 128.0);
    }

    #[test]
    fn causal_counts_only_visible_pairs() {
        let mut p = Problem::new(2, 3, 4, 8);
        p.causal = true;
        // Rows see 1, 2, 3, 4 keys: 10 pairs.
        assert_eq!(p.visible_pairs(), 10);
        assert_eq!(p.flops(), 4.0 * 6.0 * 10.0 * 8.0);
        // Bottom-right alignment with more keys than queries: rows see 3 and 4 of 4 keys.
        p.shape.seqlen_q = 2;
        assert_eq!(p.visible_pairs(), 7);
        // More queries than keys: the first two rows see nothing.
        p.shape.seqlen_q = 4;
        p.shape.seqlen_k = 2;
        assert_eq!(p.visible_pairs(), 3);
    }

    #[test]
    fn causal_is_about_half_for_long_sequences() {
        let mut p = Problem::new(1, 1, 8192, 128);
        let full = p.flops();
        p.causal = true;
        let ratio = p.flops() / full;
        assert!((ratio - 0.5).abs() < 1e-3, "{ratio}");
    }

    #[test]
    fn zero_sizes_are_rejected_by_name() {
        let mut p = Problem::new(1, 16, 128, 64);
        p.shape.seqlen_k = 0;
        let err = p.validate().unwrap_err().to_string();
        assert!(err.contains("seqlen_k is 0"), "{err}");
    }

    #[test]
    fn heads_must_divide_into_kv_groups() {
        let mut p = Problem::new(1, 6, 128, 64);
        p.shape.kv_heads = 4;
        let err = p.validate().unwrap_err().to_string();
        assert!(err.contains("multiple of kv_heads"), "{err}");
        p.shape.kv_heads = 3;
        p.validate().unwrap();
    }

    #[test]
    fn thirty_two_bit_overflow_is_an_error_not_a_wrong_answer() {
        let p = Problem::new(16, 64, 32768, 128); // 2^32 elements
        let err = p.validate().unwrap_err().to_string();
        assert!(err.contains("32-bit"), "{err}");
        let huge = Problem::new(usize::MAX / 2, 4, 4, 4);
        assert!(huge.validate().is_err());
    }

    #[test]
    fn json_keeps_the_shape_fields_beside_the_others() {
        let mut p = Problem::new(2, 8, 128, 64);
        p.shape.kv_heads = 2;
        p.shape.seqlen_k = 256;
        p.causal = true;
        assert_eq!(
            serde_json::to_value(p).unwrap(),
            serde_json::json!({
                "batch": 2, "heads": 8, "kv_heads": 2, "seqlen_q": 128, "seqlen_k": 256,
                "head_dim": 64, "causal": true, "dtype": "bf16", "scale": null
            })
        );
    }

    #[test]
    fn dtype_parses_common_spellings() {
        assert_eq!("BF16".parse::<DType>().unwrap(), DType::Bf16);
        assert_eq!("fp16".parse::<DType>().unwrap(), DType::F16);
        let err = "fp8".parse::<DType>().unwrap_err();
        assert!(err.contains("bf16 and f16"), "{err}");
    }

    #[test]
    fn dtype_bits_round_trip() {
        for d in DType::ALL {
            assert_eq!(d.from_bits(d.to_bits(1.5)), 1.5);
        }
        assert_eq!(DType::Bf16.to_bits(1.0), 0x3f80);
        assert_eq!(DType::F16.to_bits(1.0), 0x3c00);
    }
}
