//! The backward pass of attention in f64: dQ, dK, dV from dO, recomputing P from the saved LSE
//! the way FlashAttention-2's backward kernel does.
//!
//! For one query row `i` with `P_ij = exp(scale·s_ij − LSE_i)` (zero where masked):
//!
//! ```text
//! D_i   = Σ_d dO_id · O_id                 (= Σ_j P_ij dP_ij, the softmax Jacobian's row term)
//! dV_j += P_ij · dO_i
//! dP_ij = dO_i · V_j
//! dS_ij = P_ij · (dP_ij − D_i)
//! dQ_i += scale · dS_ij · K_j
//! dK_j += scale · dS_ij · Q_i
//! ```
//!
//! With GQA several query heads read the same K/V head, so their contributions to dK and dV add.

use crate::dtype::Precision;
use crate::mask::Mask;
use crate::oracle::RowId;
use crate::shape::Shape;
use rayon::prelude::*;

/// Gradients of a scalar loss with respect to the attention inputs, in the inputs' layouts.
#[derive(Clone, Debug, PartialEq)]
pub struct Gradients {
    pub dq: Vec<f64>,
    pub dk: Vec<f64>,
    pub dv: Vec<f64>,
}

/// dQ, dK, dV given the forward inputs, the forward outputs `o` and `lse`, and the output
/// gradient `d_o` (same layout as `o`). A fully masked row (LSE = −∞) contributes nothing.
#[allow(clippy::too_many_arguments)]
pub fn backward(
    q: &[f64],
    k: &[f64],
    v: &[f64],
    o: &[f64],
    lse: &[f64],
    d_o: &[f64],
    shape: &Shape,
    mask: &Mask,
    scale: f64,
) -> Gradients {
    shape.check_inputs(q, k, v);
    assert_eq!(o.len(), shape.o_len(), "o has the wrong length");
    assert_eq!(d_o.len(), shape.o_len(), "d_o has the wrong length");
    assert_eq!(lse.len(), shape.lse_len(), "lse has the wrong length");
    let d = shape.head_dim;

    // One task per (batch, kv head): it owns that kv head's dK/dV rows, so no two tasks write
    // the same gradient, and it produces dQ for the query heads of its group.
    let groups: Vec<(usize, usize)> = (0..shape.batch)
        .flat_map(|b| (0..shape.kv_heads).map(move |hk| (b, hk)))
        .collect();
    let per_group: Vec<GroupGradients> = groups
        .par_iter()
        .map(|&(b, hk)| group_backward(q, k, v, o, lse, d_o, shape, mask, scale, b, hk))
        .collect();

    let mut grads = Gradients {
        dq: vec![0.0; shape.q_len()],
        dk: vec![0.0; shape.kv_len()],
        dv: vec![0.0; shape.kv_len()],
    };
    for (&(b, hk), g) in groups.iter().zip(per_group) {
        for j in 0..shape.seqlen_k {
            let start = shape.kv_index(b, j, hk, 0);
            grads.dk[start..start + d].copy_from_slice(&g.dk[j * d..(j + 1) * d]);
            grads.dv[start..start + d].copy_from_slice(&g.dv[j * d..(j + 1) * d]);
        }
        for (h, i, dq_i) in g.dq_rows {
            let start = shape.q_index(b, i, h, 0);
            grads.dq[start..start + d].copy_from_slice(&dq_i);
        }
    }
    grads
}

struct GroupGradients {
    /// `[seqlen_k, head_dim]` for this group's kv head.
    dk: Vec<f64>,
    dv: Vec<f64>,
    /// `(head, row, dQ row)` for every query row of every head in the group.
    dq_rows: Vec<(usize, usize, Vec<f64>)>,
}

#[allow(clippy::too_many_arguments)]
fn group_backward(
    q: &[f64],
    k: &[f64],
    v: &[f64],
    o: &[f64],
    lse: &[f64],
    d_o: &[f64],
    shape: &Shape,
    mask: &Mask,
    scale: f64,
    b: usize,
    hk: usize,
) -> GroupGradients {
    let d = shape.head_dim;
    let dot = |x: &[f64], y: &[f64]| -> f64 { x.iter().zip(y).map(|(a, c)| a * c).sum() };
    let mut g = GroupGradients {
        dk: vec![0.0; shape.seqlen_k * d],
        dv: vec![0.0; shape.seqlen_k * d],
        dq_rows: Vec::new(),
    };
    let heads = hk * shape.group_size()..(hk + 1) * shape.group_size();
    for h in heads {
        for i in 0..shape.seqlen_q {
            let q_start = shape.q_index(b, i, h, 0);
            let (q_i, o_i, do_i) = (
                &q[q_start..q_start + d],
                &o[q_start..q_start + d],
                &d_o[q_start..q_start + d],
            );
            let lse_i = lse[shape.lse_index(b, h, i)];
            let mut dq_i = vec![0.0; d];
            if lse_i != f64::NEG_INFINITY {
                let delta = dot(do_i, o_i);
                for j in mask.key_range(i, shape.seqlen_q, shape.seqlen_k) {
                    let kv_start = shape.kv_index(b, j, hk, 0);
                    let (k_j, v_j) = (&k[kv_start..kv_start + d], &v[kv_start..kv_start + d]);
                    let p = (scale * dot(q_i, k_j) - lse_i).exp();
                    let ds = p * (dot(do_i, v_j) - delta);
                    for c in 0..d {
                        g.dv[j * d + c] += p * do_i[c];
                        g.dk[j * d + c] += scale * ds * q_i[c];
                        dq_i[c] += scale * ds * k_j[c];
                    }
                }
            }
            g.dq_rows.push((h, i, dq_i));
        }
    }
    g
}

/// One key row of one K/V head of one batch element: a row of dK and dV.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KvRowId {
    pub batch: usize,
    pub kv_head: usize,
    pub row: usize,
}

/// The gradients of some rows: `dq[n]` is the dQ row of `q_rows[n]`, `dk[n]` and `dv[n]`
/// those of `kv_rows[n]` ([`backward_rows`]).
#[derive(Clone, Debug, PartialEq)]
pub struct RowGradients {
    pub dq: Vec<Vec<f64>>,
    pub dk: Vec<Vec<f64>>,
    pub dv: Vec<Vec<f64>>,
}

/// The backward of given forward outputs, row by row, exactly or as a 16-bit kernel does it.
///
/// This is the backward as a function of (Q, K, V, O, LSE, dO): what a backward kernel
/// computes from the forward's saved outputs, whichever forward made them. Each dQ row costs
/// one pass over its keys and each dK/dV row one pass over the query rows that see it, so a
/// check can sample rows of a problem far too large for [`backward`].
///
/// With [`Precision::Emulated`] the values a mma.sync or wgmma backward feeds its tensor
/// cores are rounded to the dtype: P (the A operand of dV = Pᵀ dO) and dS (of dK = dSᵀ Q and
/// dQ = dS K); S, dP, D and the sums stay exact (the kernels keep them in f32), and each
/// gradient is rounded to the dtype at the end, as the kernel stores it.
#[allow(clippy::too_many_arguments)]
pub fn backward_rows(
    q: &[f64],
    k: &[f64],
    v: &[f64],
    o: &[f64],
    lse: &[f64],
    d_o: &[f64],
    shape: &Shape,
    mask: &Mask,
    scale: f64,
    precision: Precision,
    q_rows: &[RowId],
    kv_rows: &[KvRowId],
) -> RowGradients {
    shape.check_inputs(q, k, v);
    assert_eq!(o.len(), shape.o_len(), "o has the wrong length");
    assert_eq!(d_o.len(), shape.o_len(), "d_o has the wrong length");
    assert_eq!(lse.len(), shape.lse_len(), "lse has the wrong length");
    let d = shape.head_dim;
    let dot = |x: &[f64], y: &[f64]| -> f64 { x.iter().zip(y).map(|(a, c)| a * c).sum() };
    // What the kernel rounds to its dtype: P and dS as tensor-core operands, and the gradients.
    let round = |x: f64| match precision {
        Precision::F64 => x,
        Precision::Emulated(lp) => lp.round(x),
    };
    // P_ij and dS_ij of one (batch, head, query row, key), or None where the key is masked or
    // the row sees no key; D_i from the given O and dO.
    let row = |b: usize, h: usize, i: usize| {
        let start = shape.q_index(b, i, h, 0);
        let (q_i, do_i) = (&q[start..start + d], &d_o[start..start + d]);
        let lse_i = lse[shape.lse_index(b, h, i)];
        let delta = dot(do_i, &o[start..start + d]);
        (q_i, do_i, lse_i, delta)
    };
    let p_and_ds =
        |q_i: &[f64], do_i: &[f64], lse_i: f64, delta: f64, b: usize, hk: usize, j: usize| {
            let kv = shape.kv_index(b, j, hk, 0);
            let (k_j, v_j) = (&k[kv..kv + d], &v[kv..kv + d]);
            let p = (scale * dot(q_i, k_j) - lse_i).exp();
            let ds = p * (dot(do_i, v_j) - delta);
            (round(p), round(ds))
        };
    let dq = q_rows
        .par_iter()
        .map(|r| {
            let (q_i, do_i, lse_i, delta) = row(r.batch, r.head, r.row);
            let hk = shape.kv_head(r.head);
            let mut dq_i = vec![0.0; d];
            if lse_i != f64::NEG_INFINITY {
                for j in mask.key_range(r.row, shape.seqlen_q, shape.seqlen_k) {
                    let (_, ds) = p_and_ds(q_i, do_i, lse_i, delta, r.batch, hk, j);
                    let kv = shape.kv_index(r.batch, j, hk, 0);
                    for (acc, kx) in dq_i.iter_mut().zip(&k[kv..kv + d]) {
                        *acc += ds * kx;
                    }
                }
            }
            dq_i.into_iter().map(|x| round(scale * x)).collect()
        })
        .collect();
    let (dk, dv): (Vec<Vec<f64>>, Vec<Vec<f64>>) = kv_rows
        .par_iter()
        .map(|r| {
            let (mut dk_j, mut dv_j) = (vec![0.0; d], vec![0.0; d]);
            let heads = r.kv_head * shape.group_size()..(r.kv_head + 1) * shape.group_size();
            for h in heads {
                for i in 0..shape.seqlen_q {
                    if !mask.allows(i, r.row, shape.seqlen_q, shape.seqlen_k) {
                        continue;
                    }
                    let (q_i, do_i, lse_i, delta) = row(r.batch, h, i);
                    if lse_i == f64::NEG_INFINITY {
                        continue;
                    }
                    let (p, ds) = p_and_ds(q_i, do_i, lse_i, delta, r.batch, r.kv_head, r.row);
                    for c in 0..d {
                        dv_j[c] += p * do_i[c];
                        dk_j[c] += ds * q_i[c];
                    }
                }
            }
            (
                dk_j.into_iter().map(|x| round(scale * x)).collect(),
                dv_j.into_iter().map(round).collect(),
            )
        })
        .unzip();
    RowGradients { dq, dk, dv }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::attention;
    use approx::assert_relative_eq;

    #[test]
    fn single_key_passes_the_whole_gradient_to_v() {
        // With one key, O = v and P = 1: dV = dO, and softmax's Jacobian kills dQ and dK.
        let shape = Shape::mha(1, 1, 1, 1, 2);
        let (q, k, v) = (vec![0.3, -0.2], vec![1.0, 2.0], vec![5.0, 6.0]);
        let fwd = attention(&q, &k, &v, &shape, &Mask::None, 1.0);
        let g = backward(
            &q,
            &k,
            &v,
            &fwd.o,
            &fwd.lse,
            &[1.5, -2.0],
            &shape,
            &Mask::None,
            1.0,
        );
        assert_relative_eq!(g.dv.as_slice(), [1.5, -2.0].as_slice(), epsilon = 1e-15);
        assert_relative_eq!(g.dq.as_slice(), [0.0, 0.0].as_slice(), epsilon = 1e-15);
        assert_relative_eq!(g.dk.as_slice(), [0.0, 0.0].as_slice(), epsilon = 1e-15);
    }

    #[test]
    fn two_keys_by_hand() {
        // d = 1, q = 1, k = (0, ln 3), v = (0, 1), scale 1: P = (1/4, 3/4), O = 3/4.
        // With dO = 1: D = 3/4, dP = v = (0, 1), dS = P·(dP − D) = (−3/16, 3/16),
        // dQ = Σ dS·k = 3/16·ln 3, dK = dS·q = (−3/16, 3/16), dV = P = (1/4, 3/4).
        let shape = Shape::mha(1, 1, 1, 2, 1);
        let (q, k, v) = (vec![1.0], vec![0.0, 3f64.ln()], vec![0.0, 1.0]);
        let fwd = attention(&q, &k, &v, &shape, &Mask::None, 1.0);
        let g = backward(
            &q,
            &k,
            &v,
            &fwd.o,
            &fwd.lse,
            &[1.0],
            &shape,
            &Mask::None,
            1.0,
        );
        assert_relative_eq!(g.dv.as_slice(), [0.25, 0.75].as_slice(), epsilon = 1e-15);
        assert_relative_eq!(
            g.dk.as_slice(),
            [-3.0 / 16.0, 3.0 / 16.0].as_slice(),
            epsilon = 1e-15
        );
        assert_relative_eq!(g.dq[0], 3.0 / 16.0 * 3f64.ln(), epsilon = 1e-15);
    }

    #[test]
    fn fully_masked_rows_have_zero_gradients() {
        let shape = Shape::mha(1, 1, 2, 1, 1);
        let (q, k, v) = (vec![1.0, 2.0], vec![1.0], vec![3.0]);
        let fwd = attention(&q, &k, &v, &shape, &Mask::causal(), 1.0);
        let g = backward(
            &q,
            &k,
            &v,
            &fwd.o,
            &fwd.lse,
            &[1.0, 1.0],
            &shape,
            &Mask::causal(),
            1.0,
        );
        assert_eq!(g.dq, vec![0.0, 0.0]);
        assert_eq!(g.dv, vec![1.0]);
        assert!(g.dk.iter().all(|x| x.is_finite()));
    }

    /// Every row asked for, exactly, is the whole backward's row.
    #[test]
    fn rows_equal_the_whole_backward() {
        let shape = Shape::new(2, 4, 2, 5, 7, 3);
        let val = |n: usize, f: f64| -> Vec<f64> {
            (0..n).map(|i| ((i as f64) * f).sin() + 0.3).collect()
        };
        let (q, k, v, d_o) = (
            val(shape.q_len(), 1.3),
            val(shape.kv_len(), 0.7),
            val(shape.kv_len(), 2.1),
            val(shape.o_len(), 0.9),
        );
        for mask in [Mask::None, Mask::causal()] {
            let fwd = attention(&q, &k, &v, &shape, &mask, 0.6);
            let whole = backward(&q, &k, &v, &fwd.o, &fwd.lse, &d_o, &shape, &mask, 0.6);
            let q_rows = crate::oracle::all_rows(&shape);
            let kv_rows: Vec<KvRowId> = (0..2)
                .flat_map(|batch| {
                    (0..2).flat_map(move |kv_head| {
                        (0..7).map(move |row| KvRowId {
                            batch,
                            kv_head,
                            row,
                        })
                    })
                })
                .collect();
            let rows = backward_rows(
                &q,
                &k,
                &v,
                &fwd.o,
                &fwd.lse,
                &d_o,
                &shape,
                &mask,
                0.6,
                Precision::F64,
                &q_rows,
                &kv_rows,
            );
            for (r, dq) in q_rows.iter().zip(&rows.dq) {
                let s = shape.q_index(r.batch, r.row, r.head, 0);
                assert_relative_eq!(dq.as_slice(), &whole.dq[s..s + 3], epsilon = 1e-12);
            }
            for (r, (dk, dv)) in kv_rows.iter().zip(rows.dk.iter().zip(&rows.dv)) {
                let s = shape.kv_index(r.batch, r.row, r.kv_head, 0);
                assert_relative_eq!(dk.as_slice(), &whole.dk[s..s + 3], epsilon = 1e-12);
                assert_relative_eq!(dv.as_slice(), &whole.dv[s..s + 3], epsilon = 1e-12);
            }
        }
    }
}
