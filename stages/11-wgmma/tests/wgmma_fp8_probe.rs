//! The 8-bit wgmma against the hardware: what `wgmma.mma_async ... .e4m3.e4m3` leaves in the
//! accumulator, and which byte of which thread's registers it takes as each element of A
//! (recorded by `kernels/wgmma_fp8_probe.cu`), must be layout-viz's `wgmma_c` and
//! `wgmma_a_fp8`, from which the book's figures are drawn and on which `fp8_pv_key` (the
//! order an FP8 kernel gives V's keys so P needs no exchange) rests.

use harness::testing::{Checked, Needs, Skipped};

mod common;

harness::test_main!(Needs::Stage(&stage11_wgmma::INFO) => [fp8_wgmma_accumulator_and_register_a_are_where_layout_viz_draws_them]);

fn run_probe() -> Result<(Vec<f32>, Vec<f32>), Skipped> {
    let mut out = harness::testing::run_probe(
        &stage11_wgmma::INFO,
        "wgmma_fp8_probe",
        128,
        &[128 * 32, 3 * 128 * 32],
    )?;
    let c_rs = out.pop().unwrap();
    Ok((out.pop().unwrap(), c_rs))
}

fn fp8_wgmma_accumulator_and_register_a_are_where_layout_viz_draws_them() -> Checked {
    let (c_ss, c_rs) = run_probe()?;
    // C(i, j) = i + 64 j: every accumulator register names its own cell, as at 16 bits.
    common::assert_accumulator_names_its_cells(&c_ss);
    let c = common::accumulator();
    // C(i, j) for j < 32, over the three runs, is the id 16 t + v of the byte the hardware
    // used as A(i, j).
    let a = layout_viz::atoms::wgmma_a_fp8();
    for t in 0..128u32 {
        for v in 0..16u32 {
            let cell = a.coord(t, v);
            let (ct, cv) = common::owner(&c, cell);
            let digit = |d: u32| c_rs[((d * 128 + ct) * 32 + cv) as usize];
            let id = digit(0) + 16.0 * digit(1) + 256.0 * digit(2);
            assert_eq!(
                id,
                (16 * t + v) as f32,
                "register A: thread {t} byte {v} should be A({}, {})",
                cell.row,
                cell.col
            );
        }
    }
    Ok(())
}
