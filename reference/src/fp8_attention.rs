//! FP8 attention as an FP8 kernel computes it, in emulation (and, for comparison, bf16 as
//! a bf16 flash kernel computes it): what its inputs and P become
//! after the casts to E4M3, and nothing else rounded, so its error against the exact
//! [`attention`](crate::attention) is the error FP8 itself costs.
//!
//! The recipe is FlashAttention-3's (its paper, section 3.3):
//!
//! 1. optionally, Q and K are multiplied by the same random orthogonal matrix `M = D H`, a
//!    diagonal of random signs times the normalized Hadamard matrix ("incoherent
//!    processing"): `(Q M)(K M)ᵀ = Q Kᵀ` in exact arithmetic, while an outlier in one
//!    coordinate is spread over all of them before the cast;
//! 2. Q, K and V are quantized to E4M3 with a scale per tensor, per (batch, head), or per
//!    block of rows of one (batch, head) ([`Granularity`]), each scale `amax / 448`;
//! 3. `S = Q Kᵀ` from the quantized values (exact: an FP8 `wgmma` accumulates products of
//!    8-bit values in f32, and the error of that sum is far below the casts');
//! 4. the softmax with each row's exact max; P = `exp(S − m)` cast to E4M3 after a
//!    multiplication by 2^8 (which puts P's largest value, 1, in E4M3's range rather than at
//!    its bottom) and taken back out; the row sum from P before the cast, as a kernel keeps it
//!    in f32;
//! 5. `O = round_bf16(Σ P̃ V / l)`: the output is stored in bf16.
//!
//! A kernel's online softmax rounds P against the running max instead of the final one;
//! the emulation uses the final max, which changes which P values share a binade, not the
//! size of the rounding error.
//!
//! Step 5's sum is exact here. A Hopper FP8 tensor core's is not: it adds into its
//! accumulator with fewer bits than f32 keeps (DeepSeek-V3's report, section 3.3.2: about
//! 14). [`attention_fp8_rows_accumulated`] models that with an [`Accumulator`], to show on a
//! CPU what it does to O over many keys, and what adding each tile's sum into an exact O
//! (stage 20's fold) saves.

use crate::dtype::LowPrecision;
use crate::fp8::Fp8Format;
use crate::hadamard::hadamard_transform;
use crate::mask::Mask;
use crate::oracle::{Attention, RowId, RowResult, all_rows};
use crate::shape::Shape;
use rayon::prelude::*;

/// Which elements share one quantization scale.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Granularity {
    /// One scale for the whole tensor (FlashAttention-3's released kernels take one descale
    /// per (batch, head) of K and V; per tensor is the simplest "baseline FP8").
    PerTensor,
    /// One scale per (batch, head) of the tensor.
    PerHead,
    /// One scale per block of `rows` consecutive sequence positions of one (batch, head):
    /// the paper's "block quantization", where a block is a kernel's tile.
    PerBlock { rows: usize },
}

impl Granularity {
    pub fn name(self) -> String {
        match self {
            Granularity::PerTensor => "per tensor".into(),
            Granularity::PerHead => "per head".into(),
            Granularity::PerBlock { rows } => format!("per block of {rows} rows"),
        }
    }
}

/// How an FP8 kernel prepares and computes: the scales' granularity, and the seed of the
/// random signs of incoherent processing (`None`: no rotation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fp8Recipe {
    pub granularity: Granularity,
    pub incoherent: Option<u64>,
}

/// 2^8: P is multiplied by it before the cast to E4M3 and divided by it after.
pub const P_SCALE: f64 = 256.0;

/// Keys one FP8 `wgmma` adds into its accumulator (the k of m64nNk32).
pub const K_STEP: usize = 32;

/// A model of an FP8 tensor core's accumulator, for P V. Each `wgmma` adds `K_STEP`
/// products to the accumulator; the model aligns the products and the accumulator to the
/// largest exponent `e` among them, keeps `bits` significant bits at that exponent (drops
/// every bit below `2^(e + 1 - bits)`, truncating towards zero), and adds what is left
/// exactly. It is a model, not the hardware's documented behaviour (NVIDIA documents
/// none): `bits` is the free parameter, which DeepSeek-V3 puts at about 14.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Accumulator {
    /// Significant bits kept, the leading one included (f32 keeps 24).
    pub bits: u32,
    /// `Some(n)`: the accumulator starts from zero every `n` keys (a K/V tile) and its sum is
    /// added into O exactly, as stage 20's fold adds each tile's P V in f32; `None`: one
    /// accumulator over all the keys.
    pub fold_keys: Option<usize>,
    /// V centred: the preparation subtracts each column's mean over the keys of its
    /// (batch, K/V head) from V before the cast, and O gets it back exactly at the end
    /// (`Σ_j P_j μ = l μ`), so the products the accumulator adds have both signs.
    pub center_v: bool,
}

/// `terms` added as [`Accumulator`] models one step: aligned to the largest exponent `e`
/// among them, truncated towards zero below `2^(e + 1 - bits)`, then summed exactly (for
/// `bits` up to 40 the sum of a few dozen such terms is exact in f64).
pub fn aligned_sum(terms: &[f64], bits: u32) -> f64 {
    assert!(
        (1..=40).contains(&bits),
        "the model keeps 1 to 40 significant bits, not {bits}"
    );
    let largest = terms.iter().fold(0.0f64, |m, t| m.max(t.abs()));
    if largest == 0.0 {
        return 0.0;
    }
    // 2^(e + 1 - bits), e the exponent of `largest` (a normal f64), from its bits: a
    // power of two, so dividing by it and multiplying back are exact.
    let e = ((largest.to_bits() >> 52) & 0x7ff) as i64 - 1023;
    let quantum = f64::from_bits(((e + 1 - i64::from(bits) + 1023) as u64) << 52);
    let inverse = 1.0 / quantum;
    // Below 2^bits in magnitude after the division: `as i64` truncates towards zero exactly
    // (and needs no libm call, as `trunc` does on a baseline x86-64 target).
    terms
        .iter()
        .map(|t| (t * inverse) as i64 as f64 * quantum)
        .sum()
}

/// The random signs of incoherent processing for head dim `d`: entry `i` is ±1, from a
/// SplitMix64 stream of `seed` (fixed, so Q and K get the same matrix).
pub fn random_signs(d: usize, seed: u64) -> Vec<f64> {
    let mut state = seed;
    (0..d)
        .map(|_| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            if z & 1 == 0 { 1.0 } else { -1.0 }
        })
        .collect()
}

/// `x ← x D H` for every row of length `signs.len()` (a power of two): the signs, then the
/// orthonormal Hadamard transform. Orthogonal, so dot products between rows are unchanged.
pub fn rotate_rows(x: &mut [f64], signs: &[f64]) {
    let d = signs.len();
    assert_eq!(x.len() % d, 0, "rows of length {d}");
    for row in x.chunks_mut(d) {
        for (v, s) in row.iter_mut().zip(signs) {
            *v *= s;
        }
        hadamard_transform(row);
    }
}

/// Quantize-dequantize a BSHD tensor of `seqlen` positions and `heads` heads to E4M3, with
/// one scale per group of `granularity`: the values an FP8 kernel computes with.
///
/// The scale and the codes are computed in f32, as flashlab's quantization kernel computes
/// them (`fp8_quantize.cuh`: the descale amax / 448, its reciprocal, the product x times
/// it, each rounded to f32, then the cast to E4M3 to nearest, ties to even). In exact
/// arithmetic a 16-bit input often lands exactly between two codes (x 448 / amax = 168,
/// between 160 and 176), and rounds to even; the kernel's product lands just off the tie,
/// on the side the reciprocal's rounding gives. One such code of Q moves every score of
/// its row, and its LSE by a few hundredths, which exact arithmetic would not have
/// predicted (`bench/records/h200-checks/2026-12-03-all-gpu-tests/`).
pub fn fake_quantize_bshd(
    x: &[f64],
    batch: usize,
    seqlen: usize,
    heads: usize,
    dim: usize,
    granularity: Granularity,
) -> Vec<f64> {
    assert_eq!(x.len(), batch * seqlen * heads * dim, "a BSHD tensor");
    let format = Fp8Format::E4M3;
    // The group of element (b, s, h, _).
    let group = |b: usize, s: usize, h: usize| -> usize {
        match granularity {
            Granularity::PerTensor => 0,
            Granularity::PerHead => b * heads + h,
            Granularity::PerBlock { rows } => {
                let blocks = seqlen.div_ceil(rows);
                (b * heads + h) * blocks + s / rows
            }
        }
    };
    let groups = match granularity {
        Granularity::PerTensor => 1,
        Granularity::PerHead => batch * heads,
        Granularity::PerBlock { rows } => batch * heads * seqlen.div_ceil(rows),
    };
    let mut amax = vec![0.0f64; groups];
    let index = |b: usize, s: usize, h: usize| ((b * seqlen + s) * heads + h) * dim;
    for b in 0..batch {
        for s in 0..seqlen {
            for h in 0..heads {
                let g = group(b, s, h);
                let start = index(b, s, h);
                for v in &x[start..start + dim] {
                    amax[g] = amax[g].max(v.abs());
                }
            }
        }
    }
    // Each group's descale in f32 (fp8_descale: amax / 448, or 1 for an all-zero group) and
    // the factor that takes values to codes, its f32 reciprocal.
    let factors: Vec<(f32, f32)> = amax
        .iter()
        .map(|&a| {
            let descale = if a > 0.0 {
                a as f32 / format.max() as f32
            } else {
                1.0
            };
            (descale, 1.0 / descale)
        })
        .collect();
    let mut out = vec![0.0; x.len()];
    for b in 0..batch {
        for s in 0..seqlen {
            for h in 0..heads {
                let (descale, to_codes) = factors[group(b, s, h)];
                let start = index(b, s, h);
                for d in start..start + dim {
                    let code = format.round(f64::from(x[d] as f32 * to_codes));
                    out[d] = code * f64::from(descale);
                }
            }
        }
    }
    out
}

/// Attention computed as an FP8 kernel would by `recipe` (see the module documentation).
/// The LSE is that of the quantized scores.
pub fn attention_fp8(
    q: &[f64],
    k: &[f64],
    v: &[f64],
    shape: &Shape,
    mask: &Mask,
    scale: f64,
    recipe: Fp8Recipe,
) -> Attention {
    let rows = all_rows(shape);
    let results = attention_fp8_rows(q, k, v, shape, mask, scale, recipe, &rows);
    Attention::from_rows(shape, &rows, results.into_iter().map(|r| (r.o, r.lse)))
}

/// [`attention_fp8`] for the rows `rows` alone (the casts still see whole tensors, as a
/// kernel's scales do): what a GPU check of an FP8 stage compares a sample of rows with.
#[allow(clippy::too_many_arguments)]
pub fn attention_fp8_rows(
    q: &[f64],
    k: &[f64],
    v: &[f64],
    shape: &Shape,
    mask: &Mask,
    scale: f64,
    recipe: Fp8Recipe,
    rows: &[RowId],
) -> Vec<RowResult> {
    attention_fp8_rows_accumulated(q, k, v, shape, mask, scale, recipe, rows, None)
}

/// [`attention_fp8_rows`] with P V summed as `accumulator` models an FP8 tensor core's
/// accumulator (`None`: exactly): each row's P V a `K_STEP` of keys at a time, from key 0.
#[allow(clippy::too_many_arguments)]
pub fn attention_fp8_rows_accumulated(
    q: &[f64],
    k: &[f64],
    v: &[f64],
    shape: &Shape,
    mask: &Mask,
    scale: f64,
    recipe: Fp8Recipe,
    rows: &[RowId],
    accumulator: Option<Accumulator>,
) -> Vec<RowResult> {
    shape.check_inputs(q, k, v);
    let casts = cast_qk(q, k, shape, recipe);
    rows_from_casts(&casts, v, shape, mask, scale, recipe, rows, accumulator)
}

/// [`attention_fp8_rows`] and [`lse_fp8_rows_accumulated`] with `bits`, on one set of casts
/// (casting whole tensors is most of either's time on a long sequence): what a GPU check of
/// an FP8 stage bounds it with.
#[allow(clippy::too_many_arguments)]
pub fn attention_fp8_rows_and_accumulated_lse(
    q: &[f64],
    k: &[f64],
    v: &[f64],
    shape: &Shape,
    mask: &Mask,
    scale: f64,
    recipe: Fp8Recipe,
    rows: &[RowId],
    bits: u32,
) -> (Vec<RowResult>, Vec<f64>) {
    shape.check_inputs(q, k, v);
    let casts = cast_qk(q, k, shape, recipe);
    let results = rows_from_casts(&casts, v, shape, mask, scale, recipe, rows, None);
    let lse = lse_from_casts(&casts, shape, mask, scale, rows, bits);
    (results, lse)
}

/// The rows of [`attention_fp8_rows_accumulated`], Q and K already cast.
#[allow(clippy::too_many_arguments)]
fn rows_from_casts(
    casts: &QkCasts,
    v: &[f64],
    shape: &Shape,
    mask: &Mask,
    scale: f64,
    recipe: Fp8Recipe,
    rows: &[RowId],
    accumulator: Option<Accumulator>,
) -> Vec<RowResult> {
    let d = shape.head_dim;
    let g = recipe.granularity;
    let QkCasts { q, k, q8, k8 } = casts;
    let means = accumulator
        .is_some_and(|a| a.center_v)
        .then(|| column_means(v, shape));
    let v8 = match &means {
        None => fake_quantize_bshd(v, shape.batch, shape.seqlen_k, shape.kv_heads, d, g),
        Some(mu) => {
            let centred: Vec<f64> = v
                .iter()
                .enumerate()
                .map(|(i, x)| x - mu[mean_index(shape, i)])
                .collect();
            fake_quantize_bshd(&centred, shape.batch, shape.seqlen_k, shape.kv_heads, d, g)
        }
    };
    let unquantized = Some((q.as_slice(), k.as_slice()));
    let sum = Summation {
        accumulator,
        v_offset: means.as_deref(),
    };
    flash_style_rows(
        q8,
        k8,
        &v8,
        shape,
        mask,
        scale,
        rows,
        unquantized,
        sum,
        |p| Fp8Format::E4M3.round(p * P_SCALE) / P_SCALE,
    )
}

/// Q and K as an FP8 kernel of `recipe` sees them: rotated (incoherent processing), and
/// each also cast to E4M3 and back (`q8`, `k8`).
struct QkCasts {
    q: Vec<f64>,
    k: Vec<f64>,
    q8: Vec<f64>,
    k8: Vec<f64>,
}

fn cast_qk(q: &[f64], k: &[f64], shape: &Shape, recipe: Fp8Recipe) -> QkCasts {
    let d = shape.head_dim;
    let (mut q, mut k) = (q.to_vec(), k.to_vec());
    if let Some(seed) = recipe.incoherent {
        assert!(
            d.is_power_of_two(),
            "incoherent processing needs a power-of-two head dim, not {d}"
        );
        let signs = random_signs(d, seed);
        rotate_rows(&mut q, &signs);
        rotate_rows(&mut k, &signs);
    }
    let g = recipe.granularity;
    let q8 = fake_quantize_bshd(&q, shape.batch, shape.seqlen_q, shape.heads, d, g);
    let k8 = fake_quantize_bshd(&k, shape.batch, shape.seqlen_k, shape.kv_heads, d, g);
    QkCasts { q, k, q8, k8 }
}

/// The significant bits the GPU checks' [`Accumulator`] keeps for an FP8 `wgmma`: the 14
/// that DeepSeek-V3's report gives for Hopper, where stage 20's P V without the fold measured
/// within 13% of the model (`bench/records/cpu-accumulator/`).
pub const TENSOR_CORE_BITS: u32 = 14;

/// Each row's LSE on the casts of [`attention_fp8_rows`], with every score Q Kᵀ summed as
/// an FP8 kernel's S is: `K_STEP` of the head dim a `wgmma`, each step added into the
/// accumulator as [`aligned_sum`] models it with `bits`, from zero. The LSE moves with a
/// shift common to a row's scores, which O does not see and which such an accumulator's
/// truncation gives a row whose products share a sign; the exact sums of
/// [`attention_fp8_rows`] leave it out.
#[allow(clippy::too_many_arguments)]
pub fn lse_fp8_rows_accumulated(
    q: &[f64],
    k: &[f64],
    shape: &Shape,
    mask: &Mask,
    scale: f64,
    recipe: Fp8Recipe,
    rows: &[RowId],
    bits: u32,
) -> Vec<f64> {
    lse_from_casts(
        &cast_qk(q, k, shape, recipe),
        shape,
        mask,
        scale,
        rows,
        bits,
    )
}

/// The LSEs of [`lse_fp8_rows_accumulated`], Q and K already cast.
fn lse_from_casts(
    casts: &QkCasts,
    shape: &Shape,
    mask: &Mask,
    scale: f64,
    rows: &[RowId],
    bits: u32,
) -> Vec<f64> {
    let d = shape.head_dim;
    let (q8, k8) = (&casts.q8, &casts.k8);
    rows.par_iter()
        .map(
            |&RowId {
                 batch: b,
                 head: h,
                 row: i,
             }| {
                let hk = shape.kv_head(h);
                let qi = &q8[shape.q_index(b, i, h, 0)..][..d];
                let scores: Vec<f64> = mask
                    .key_range(i, shape.seqlen_q, shape.seqlen_k)
                    .map(|j| {
                        let kj = &k8[shape.kv_index(b, j, hk, 0)..][..d];
                        let mut acc = 0.0;
                        let mut terms = [0.0f64; K_STEP + 1];
                        for (qs, ks) in qi.chunks(K_STEP).zip(kj.chunks(K_STEP)) {
                            terms[0] = acc;
                            for (t, (a, b)) in terms[1..].iter_mut().zip(qs.iter().zip(ks)) {
                                *t = a * b;
                            }
                            acc = aligned_sum(&terms[..=qs.len()], bits);
                        }
                        scale * acc
                    })
                    .collect();
                let m = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                if m == f64::NEG_INFINITY {
                    return f64::NEG_INFINITY;
                }
                m + scores.iter().map(|s| (s - m).exp()).sum::<f64>().ln()
            },
        )
        .collect()
}

/// Each column's mean of V over the keys of its (batch, K/V head): `[batch][kv_head][d]`.
fn column_means(v: &[f64], shape: &Shape) -> Vec<f64> {
    let mut mu = vec![0.0; shape.batch * shape.kv_heads * shape.head_dim];
    for (i, x) in v.iter().enumerate() {
        mu[mean_index(shape, i)] += x;
    }
    for m in &mut mu {
        *m /= shape.seqlen_k.max(1) as f64;
    }
    mu
}

/// Where element `i` of a `[batch][seqlen_k][kv_head][d]` tensor finds its column's mean.
fn mean_index(shape: &Shape, i: usize) -> usize {
    let (d, kvh) = (shape.head_dim, shape.kv_heads);
    let (c, hk) = (i % d, (i / d) % kvh);
    let b = i / (d * kvh * shape.seqlen_k);
    (b * kvh + hk) * d + c
}

/// How [`flash_style_rows`] sums P V: exactly or as an [`Accumulator`] models it, and
/// what it adds to O at the end (V's column means, where V was centred).
#[derive(Clone, Copy, Default)]
struct Summation<'a> {
    accumulator: Option<Accumulator>,
    v_offset: Option<&'a [f64]>,
}

/// Attention as a bf16 flash kernel computes it: Q, K and V in bf16, S and the softmax in
/// f32 (here exact), P cast to bf16 for P V, O stored in bf16. Unlike
/// [`Precision::Emulated`](crate::Precision::Emulated), which follows PyTorch's eager
/// attention and also rounds S to bf16, this is the math of the flash stages.
pub fn attention_bf16_flash(
    q: &[f64],
    k: &[f64],
    v: &[f64],
    shape: &Shape,
    mask: &Mask,
    scale: f64,
) -> Attention {
    shape.check_inputs(q, k, v);
    let bf16 = LowPrecision::Bf16;
    let (q, k, v) = (bf16.rounded(q), bf16.rounded(k), bf16.rounded(v));
    flash_style(&q, &k, &v, shape, mask, scale, |p| bf16.round(p))
}

/// Steps 3-5 of the module documentation on inputs already cast: exact scores, the
/// softmax with each row's exact max, P = `round_p(exp(S − m))` for P V and the unrounded
/// sum for the normalization, O rounded to bf16.
fn flash_style(
    q: &[f64],
    k: &[f64],
    v: &[f64],
    shape: &Shape,
    mask: &Mask,
    scale: f64,
    round_p: impl Fn(f64) -> f64 + Sync,
) -> Attention {
    let rows = all_rows(shape);
    let none = Summation::default();
    let results = flash_style_rows(q, k, v, shape, mask, scale, &rows, None, none, round_p);
    Attention::from_rows(shape, &rows, results.into_iter().map(|r| (r.o, r.lse)))
}

/// [`flash_style`] for the rows `rows`. Given Q and K before their casts (`unquantized`),
/// each row's `lse_spread` is the typical size of the LSE error the casts of Q and K cause,
/// `sqrt(Σ_j (w_j δs_j)²)` with `δs_j² = scale² Σ_i ((q̃_i δk_ji)² + (k_ji δq_i)²)`: the
/// standard deviation of the score's error if the casts' errors had random signs. A row
/// whose casts erred little by luck (one key whose score happens to round well) then still
/// gets a bound of the size FP8 can err by, where the kernel's own summation (an FP8 wgmma
/// keeps fewer bits than f32 as it accumulates) adds its part.
#[allow(clippy::too_many_arguments)]
fn flash_style_rows(
    q: &[f64],
    k: &[f64],
    v: &[f64],
    shape: &Shape,
    mask: &Mask,
    scale: f64,
    rows: &[RowId],
    unquantized: Option<(&[f64], &[f64])>,
    sum: Summation,
    round_p: impl Fn(f64) -> f64 + Sync,
) -> Vec<RowResult> {
    let accumulator = sum.accumulator;
    let d = shape.head_dim;
    rows.par_iter()
        .map(
            |&RowId {
                 batch: b,
                 head: h,
                 row: i,
             }| {
                let hk = shape.kv_head(h);
                let qi = &q[shape.q_index(b, i, h, 0)..][..d];
                let keys = mask.key_range(i, shape.seqlen_q, shape.seqlen_k);
                if keys.is_empty() {
                    return RowResult {
                        o: vec![0.0; d],
                        lse: f64::NEG_INFINITY,
                        lse_spread: 0.0,
                    };
                }
                let scores: Vec<f64> = keys
                    .clone()
                    .map(|j| {
                        let kj = &k[shape.kv_index(b, j, hk, 0)..][..d];
                        scale * qi.iter().zip(kj).map(|(a, b)| a * b).sum::<f64>()
                    })
                    .collect();
                let m = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let mut o = vec![0.0; d];
                let mut l = 0.0;
                // P's values, kept only for a modelled accumulator; without one, P V is
                // summed as they come.
                let mut ps = Vec::new();
                for (j, s) in keys.clone().zip(&scores) {
                    let e = (s - m).exp();
                    l += e;
                    let p = round_p(e);
                    if accumulator.is_some() {
                        ps.push(p);
                    } else {
                        let vj = &v[shape.kv_index(b, j, hk, 0)..][..d];
                        for (o, x) in o.iter_mut().zip(vj) {
                            *o += p * x;
                        }
                    }
                }
                if let Some(acc) = accumulator {
                    let value = |j: usize, c: usize| v[shape.kv_index(b, j, hk, c)];
                    accumulate(&mut o, &ps, keys.start, value, acc);
                }
                let mean = |c: usize| {
                    sum.v_offset
                        .map_or(0.0, |mu| mu[(b * shape.kv_heads + hk) * d + c])
                };
                let o = o
                    .iter()
                    .enumerate()
                    .map(|(c, x)| LowPrecision::Bf16.round(x / l + mean(c)))
                    .collect();
                let lse_spread = unquantized.map_or(0.0, |(q0, k0)| {
                    let q0i = &q0[shape.q_index(b, i, h, 0)..][..d];
                    let keys = mask.key_range(i, shape.seqlen_q, shape.seqlen_k);
                    keys.zip(&scores)
                        .map(|(j, s)| {
                            let at = shape.kv_index(b, j, hk, 0);
                            let (kj, k0j) = (&k[at..][..d], &k0[at..][..d]);
                            let var: f64 = (0..d)
                                .map(|t| {
                                    (qi[t] * (kj[t] - k0j[t])).powi(2)
                                        + (k0j[t] * (qi[t] - q0i[t])).powi(2)
                                })
                                .sum();
                            ((s - m).exp() / l * scale).powi(2) * var
                        })
                        .sum::<f64>()
                        .sqrt()
                });
                RowResult {
                    o,
                    lse: m + l.ln(),
                    lse_spread,
                }
            },
        )
        .collect()
}

/// `o[c] = Σ_j ps[j - first] · value(j, c)` over the keys `first ..`, summed as `acc`
/// models: a step at every multiple of [`K_STEP`] keys, and with `fold_keys` an exact add
/// of the accumulator into `o` and a fresh one at every multiple of it.
fn accumulate(
    o: &mut [f64],
    ps: &[f64],
    first: usize,
    value: impl Fn(usize, usize) -> f64,
    acc: Accumulator,
) {
    assert!(
        acc.fold_keys.is_none_or(|n| n > 0 && n % K_STEP == 0),
        "a fold every {:?} keys: it must be a multiple of the {K_STEP} keys of one step",
        acc.fold_keys
    );
    let end = first + ps.len();
    let mut terms = Vec::with_capacity(K_STEP + 1);
    for (c, o) in o.iter_mut().enumerate() {
        let mut sum = 0.0;
        let mut j = first;
        while j < end {
            let step_end = ((j / K_STEP + 1) * K_STEP).min(end);
            terms.clear();
            terms.push(sum);
            terms.extend((j..step_end).map(|jj| ps[jj - first] * value(jj, c)));
            sum = aligned_sum(&terms, acc.bits);
            j = step_end;
            if acc.fold_keys.is_some_and(|n| j % n == 0) || j == end {
                *o += sum;
                sum = 0.0;
            }
        }
    }
}
