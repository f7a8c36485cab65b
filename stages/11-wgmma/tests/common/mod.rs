//! What both wgmma probes check: the m64n64 accumulator, whose every register names its own
//! cell (the probes make C(i, j) = i + 64 j), and where a cell of C lives in it.

use layout_viz::atoms::{RowCol, TvAtom};

/// layout-viz's m64n64 accumulator.
pub fn accumulator() -> TvAtom {
    layout_viz::atoms::wgmma_c(64).unwrap()
}

/// `c_ss[t * 32 + v]` is C(i, j) = i + 64 j at the cell layout-viz gives (thread t, value v).
pub fn assert_accumulator_names_its_cells(c_ss: &[f32]) {
    let c = accumulator();
    for t in 0..128u32 {
        for v in 0..32u32 {
            let cell = c.coord(t, v);
            assert_eq!(
                c_ss[(t * 32 + v) as usize],
                (cell.row + 64 * cell.col) as f32,
                "accumulator: thread {t} value {v}"
            );
        }
    }
}

/// The (thread, value) of the accumulator that holds `cell`.
pub fn owner(c: &TvAtom, cell: RowCol) -> (u32, u32) {
    (0..128u32)
        .flat_map(|ct| (0..32u32).map(move |cv| (ct, cv)))
        .find(|&(ct, cv)| c.coord(ct, cv) == cell)
        .expect("every cell of C has an owner")
}
