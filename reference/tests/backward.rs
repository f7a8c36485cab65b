//! Properties of the backward reference: its gradients are the derivatives of the oracle,
//! checked against central finite differences, and GQA's dK/dV sum over shared heads.

mod common;

use common::{Problem, check_close, problem_with, shape, values};
use proptest::prelude::*;
use reference::{Shape, attention, backward};

/// The scalar whose gradient `backward` computes: `L = Σ O ⊙ dO`, so that `∂L/∂O = dO`.
fn loss(p: &Problem, q: &[f64], k: &[f64], v: &[f64], d_o: &[f64]) -> f64 {
    let out = attention(q, k, v, &p.shape, &p.mask, p.scale);
    out.o.iter().zip(d_o).map(|(o, g)| o * g).sum()
}

/// `(L(x + h·e_i) − L(x − h·e_i)) / 2h` for every coordinate `i` of the input picked by `which`
/// (0 = Q, 1 = K, 2 = V). The error is O(h²) from truncation plus O(ε/h) from rounding.
fn finite_differences(p: &Problem, d_o: &[f64], which: usize, h: f64) -> Vec<f64> {
    let len = [p.q.len(), p.k.len(), p.v.len()][which];
    (0..len)
        .map(|i| {
            let eval = |delta: f64| {
                let (mut q, mut k, mut v) = (p.q.clone(), p.k.clone(), p.v.clone());
                [&mut q, &mut k, &mut v][which][i] += delta;
                loss(p, &q, &k, &v, d_o)
            };
            (eval(h) - eval(-h)) / (2.0 * h)
        })
        .collect()
}

/// A small problem (the finite differences cost two forward passes per input element) with
/// its output gradient.
fn problem_and_grad() -> impl Strategy<Value = (Problem, Vec<f64>)> {
    problem_with(shape(5, 4)).prop_flat_map(|p| {
        let n = p.shape.o_len();
        (Just(p), values(n, 2.0))
    })
}

proptest! {
    #[test]
    fn backward_matches_finite_differences((p, d_o) in problem_and_grad()) {
        let fwd = attention(&p.q, &p.k, &p.v, &p.shape, &p.mask, p.scale);
        let grads = backward(&p.q, &p.k, &p.v, &fwd.o, &fwd.lse, &d_o, &p.shape, &p.mask, p.scale);
        let h = 1e-5;
        for (which, name, analytic) in [(0, "dQ", &grads.dq), (1, "dK", &grads.dk), (2, "dV", &grads.dv)] {
            let numeric = finite_differences(&p, &d_o, which, h);
            check_close(name, analytic, &numeric, 1e-6, 1e-5)?;
        }
    }

    #[test]
    fn gqa_backward_equals_mha_with_summed_kv_gradients((p, d_o) in problem_and_grad()) {
        // Run MHA with each kv head repeated per query head, then add up the copies' gradients:
        // that is what sharing one K/V head among a group means for dK and dV.
        let s = p.shape;
        let mha = Shape::mha(s.batch, s.heads, s.seqlen_q, s.seqlen_k, s.head_dim);
        let repeat = |x: &[f64]| {
            let mut out = vec![0.0; mha.kv_len()];
            for b in 0..s.batch {
                for j in 0..s.seqlen_k {
                    for h in 0..s.heads {
                        for d in 0..s.head_dim {
                            out[mha.kv_index(b, j, h, d)] = x[s.kv_index(b, j, s.kv_head(h), d)];
                        }
                    }
                }
            }
            out
        };
        let (k, v) = (repeat(&p.k), repeat(&p.v));
        let fwd = attention(&p.q, &k, &v, &mha, &p.mask, p.scale);
        let mha_grads = backward(&p.q, &k, &v, &fwd.o, &fwd.lse, &d_o, &mha, &p.mask, p.scale);
        let fwd_gqa = attention(&p.q, &p.k, &p.v, &s, &p.mask, p.scale);
        let gqa = backward(&p.q, &p.k, &p.v, &fwd_gqa.o, &fwd_gqa.lse, &d_o, &s, &p.mask, p.scale);

        let (mut dk, mut dv) = (vec![0.0; s.kv_len()], vec![0.0; s.kv_len()]);
        for b in 0..s.batch {
            for j in 0..s.seqlen_k {
                for h in 0..s.heads {
                    for d in 0..s.head_dim {
                        dk[s.kv_index(b, j, s.kv_head(h), d)] += mha_grads.dk[mha.kv_index(b, j, h, d)];
                        dv[s.kv_index(b, j, s.kv_head(h), d)] += mha_grads.dv[mha.kv_index(b, j, h, d)];
                    }
                }
            }
        }
        check_close("dQ", &gqa.dq, &mha_grads.dq, 1e-13, 1e-12)?;
        check_close("dK", &gqa.dk, &dk, 1e-13, 1e-12)?;
        check_close("dV", &gqa.dv, &dv, 1e-13, 1e-12)?;
    }

    #[test]
    fn dv_columns_sum_to_the_row_sums_of_do((p, d_o) in problem_and_grad()) {
        // Each unmasked row's probabilities sum to one, so Σ_j dV_j = Σ_i dO_i over the rows
        // (of the heads sharing that kv head) that see at least one key.
        let s = p.shape;
        let fwd = attention(&p.q, &p.k, &p.v, &s, &p.mask, p.scale);
        let grads = backward(&p.q, &p.k, &p.v, &fwd.o, &fwd.lse, &d_o, &s, &p.mask, p.scale);
        for b in 0..s.batch {
            for hk in 0..s.kv_heads {
                let mut got = vec![0.0; s.head_dim];
                let mut want = vec![0.0; s.head_dim];
                for d in 0..s.head_dim {
                    got[d] = (0..s.seqlen_k).map(|j| grads.dv[s.kv_index(b, j, hk, d)]).sum();
                    for h in (0..s.heads).filter(|&h| s.kv_head(h) == hk) {
                        for i in (0..s.seqlen_q).filter(|&i| fwd.lse[s.lse_index(b, h, i)].is_finite()) {
                            want[d] += d_o[s.q_index(b, i, h, d)];
                        }
                    }
                }
                check_close("Σ dV", &got, &want, 1e-12, 1e-12)?;
            }
        }
    }
}
