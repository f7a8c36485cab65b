//! Properties of the online softmax: it is the two-pass softmax reorganized, not an
//! approximation of it. Each test is named after the property the book quotes.

mod common;

use common::check_close;
use proptest::prelude::*;
use reference::OnlineSoftmax;
use reference::softmax::{MASKED, two_pass};

const HEAD_DIM: usize = 3;

/// One row: scores (some masked, i.e. −∞), their value rows, and a scale.
#[derive(Clone, Debug)]
struct Row {
    scores: Vec<f64>,
    values: Vec<f64>,
    scale: f64,
}

fn row_with(max_len: usize, score_range: f64) -> impl Strategy<Value = Row> {
    (1..=max_len).prop_flat_map(move |n| {
        let score = prop_oneof![4 => -score_range..score_range, 1 => Just(MASKED)];
        (
            proptest::collection::vec(score, n),
            proptest::collection::vec(-5.0f64..5.0, n * HEAD_DIM),
            0.05f64..2.0,
        )
            .prop_map(|(scores, values, scale)| Row {
                scores,
                values,
                scale,
            })
    })
}

fn row() -> impl Strategy<Value = Row> {
    row_with(40, 20.0)
}

/// Cut points splitting `0..n` into consecutive blocks; repeated cuts give empty blocks.
fn blocks(n: usize, cuts: &[usize]) -> Vec<std::ops::Range<usize>> {
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (n + 1)).collect();
    points.push(0);
    points.push(n);
    points.sort_unstable();
    points.windows(2).map(|w| w[0]..w[1]).collect()
}

/// The online state after feeding `range` of the row in one `update`.
fn state_of(row: &Row, range: std::ops::Range<usize>) -> OnlineSoftmax {
    let mut state = OnlineSoftmax::empty(HEAD_DIM, row.scale);
    state.update(
        &row.scores[range.clone()],
        &row.values[range.start * HEAD_DIM..range.end * HEAD_DIM],
    );
    state
}

fn check_finished(
    what: &str,
    got: (Vec<f64>, f64),
    want: (Vec<f64>, f64),
) -> Result<(), TestCaseError> {
    check_close(&format!("{what} O"), &got.0, &want.0, 1e-12, 1e-10)?;
    check_close(&format!("{what} LSE"), &[got.1], &[want.1], 1e-12, 1e-12)
}

proptest! {
    #[test]
    fn online_softmax_equals_two_pass_for_any_split(
        row in row(),
        cuts in proptest::collection::vec(any::<usize>(), 0..8),
    ) {
        let mut state = OnlineSoftmax::empty(HEAD_DIM, row.scale);
        for block in blocks(row.scores.len(), &cuts) {
            state.update(&row.scores[block.clone()], &row.values[block.start * HEAD_DIM..block.end * HEAD_DIM]);
        }
        let want = two_pass(&row.scores, &row.values, HEAD_DIM, row.scale);
        check_finished("online vs two-pass", state.finish(), want)?;
    }

    #[test]
    fn merge_is_associative(row in row(), cuts in proptest::collection::vec(any::<usize>(), 2)) {
        let parts = blocks(row.scores.len(), &cuts);
        let [a, b, c] = [0, 1, 2].map(|i| state_of(&row, parts[i].clone()));
        let left = a.merge(&b).merge(&c);
        let right = a.merge(&b.merge(&c));
        check_finished("(a+b)+c vs a+(b+c)", left.finish(), right.finish())?;
    }

    #[test]
    fn merge_is_commutative(row in row(), cut in any::<usize>()) {
        let parts = blocks(row.scores.len(), &[cut]);
        let (a, b) = (state_of(&row, parts[0].clone()), state_of(&row, parts[1].clone()));
        // IEEE addition, multiplication and max are commutative, so this holds exactly.
        prop_assert_eq!(a.merge(&b), b.merge(&a));
    }

    #[test]
    fn empty_state_is_merge_identity(row in row(), cut in any::<usize>()) {
        let state = state_of(&row, 0..cut % (row.scores.len() + 1));
        let empty = OnlineSoftmax::empty(HEAD_DIM, row.scale);
        // Merging with the empty state rescales by exp2(0) = 1 and adds exp2(−∞)·0 = 0: exact.
        prop_assert_eq!(&state.merge(&empty), &state);
        prop_assert_eq!(&empty.merge(&state), &state);
    }

    #[test]
    fn merge_of_halves_equals_one_pass_over_both(row in row(), cut in any::<usize>()) {
        let n = row.scores.len();
        let parts = blocks(n, &[cut]);
        let merged = state_of(&row, parts[0].clone()).merge(&state_of(&row, parts[1].clone()));
        check_finished("merge vs single pass", merged.finish(), state_of(&row, 0..n).finish())?;
    }

    #[test]
    fn shifting_scores_leaves_output_unchanged(
        row in row(),
        shift in -1000.0f64..1000.0,
        cuts in proptest::collection::vec(any::<usize>(), 0..4),
    ) {
        let run = |scores: &[f64]| {
            let mut state = OnlineSoftmax::empty(HEAD_DIM, row.scale);
            for block in blocks(scores.len(), &cuts) {
                state.update(&scores[block.clone()], &row.values[block.start * HEAD_DIM..block.end * HEAD_DIM]);
            }
            state.finish()
        };
        let shifted: Vec<f64> = row.scores.iter().map(|s| s + shift).collect();
        let (o, lse) = run(&row.scores);
        let (o_shifted, lse_shifted) = run(&shifted);
        // Adding c to every score multiplies numerator and denominator by exp(scale·c).
        // The tolerance covers the rounding of s + c itself, up to |c|·2^-53 per score.
        check_close("O", &o_shifted, &o, 1e-9, 1e-9)?;
        let expected_lse = if lse == f64::NEG_INFINITY { lse } else { lse + row.scale * shift };
        check_close("LSE", &[lse_shifted], &[expected_lse], 1e-9, 1e-12)?;
    }

    #[test]
    fn large_scores_do_not_overflow(
        row in row_with(40, 1e4),
        cuts in proptest::collection::vec(any::<usize>(), 0..6),
    ) {
        let mut state = OnlineSoftmax::empty(HEAD_DIM, row.scale);
        for block in blocks(row.scores.len(), &cuts) {
            state.update(&row.scores[block.clone()], &row.values[block.start * HEAD_DIM..block.end * HEAD_DIM]);
        }
        let (o, lse) = state.finish();
        prop_assert!(o.iter().all(|x| x.is_finite()), "O = {:?}", o);
        prop_assert!(!lse.is_nan() && lse != f64::INFINITY, "LSE = {}", lse);
        // O is a convex combination of the value rows, so each coordinate stays within their range.
        for (d, o_d) in o.iter().enumerate() {
            let column = row.values.iter().skip(d).step_by(HEAD_DIM);
            prop_assert!(o_d.abs() <= column.fold(0.0f64, |m, v| m.max(v.abs())) + 1e-9);
        }
        let max_scaled = row.scores.iter().fold(f64::NEG_INFINITY, |m, &s| m.max(row.scale * s));
        if max_scaled > f64::NEG_INFINITY {
            // max ≤ LSE ≤ max + ln n: the sum has at least the max term and at most n of them.
            prop_assert!(lse >= max_scaled - 1e-9 && lse <= max_scaled + (row.scores.len() as f64).ln() + 1e-9);
        }
        let want = two_pass(&row.scores, &row.values, HEAD_DIM, row.scale);
        check_close("O vs two-pass", &o, &want.0, 1e-9, 1e-9)?;
        check_close("LSE vs two-pass", &[lse], &[want.1], 1e-9, 1e-12)?;
    }

    #[test]
    fn fully_masked_row_gives_zero_and_neg_inf(
        n in 0usize..30,
        values in proptest::collection::vec(-1e6f64..1e6, 30 * HEAD_DIM),
        cuts in proptest::collection::vec(any::<usize>(), 0..6),
        scale in 0.05f64..2.0,
    ) {
        let scores = vec![MASKED; n];
        let mut state = OnlineSoftmax::empty(HEAD_DIM, scale);
        let mut merged = OnlineSoftmax::empty(HEAD_DIM, scale);
        for block in blocks(n, &cuts) {
            let v = &values[block.start * HEAD_DIM..block.end * HEAD_DIM];
            state.update(&scores[block.clone()], v);
            let mut part = OnlineSoftmax::empty(HEAD_DIM, scale);
            part.update(&scores[block], v);
            merged = merged.merge(&part);
        }
        for (o, lse) in [state.finish(), merged.finish()] {
            prop_assert_eq!(o, vec![0.0; HEAD_DIM]);
            prop_assert_eq!(lse, f64::NEG_INFINITY);
        }
        prop_assert_eq!(two_pass(&scores, &values[..n * HEAD_DIM], HEAD_DIM, scale), (vec![0.0; HEAD_DIM], f64::NEG_INFINITY));
    }

    #[test]
    fn exp2_form_gives_the_natural_log_lse(row in row()) {
        let state = state_of(&row, 0..row.scores.len());
        let direct: f64 = row.scores.iter().map(|s| (row.scale * s).exp()).sum::<f64>().ln();
        check_close("LSE", &[state.lse()], &[direct], 1e-12, 1e-12)?;
    }
}
