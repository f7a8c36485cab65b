//! The wgmma figures against the hardware: what `wgmma.mma_async` really leaves in each
//! thread's accumulator registers, and which register of which thread it takes as each
//! element of A (recorded by `kernels/wgmma_probe.cu`), must be exactly layout-viz's
//! `wgmma_c` and `wgmma_a` atoms, from which the book's figures are drawn. The operands go
//! through the kernel's own descriptors and 128-byte swizzled layout.

use harness::testing::{Checked, Needs, Skipped};

mod common;

harness::test_main!(Needs::Stage(&stage11_wgmma::INFO) => [wgmma_accumulator_and_register_a_are_where_layout_viz_draws_them]);

fn run_probe() -> Result<(Vec<f32>, Vec<f32>), Skipped> {
    let mut out = harness::testing::run_probe(
        &stage11_wgmma::INFO,
        "wgmma_probe",
        128,
        &[128 * 32, 128 * 32],
    )?;
    let c_rs = out.pop().unwrap();
    Ok((out.pop().unwrap(), c_rs))
}

fn wgmma_accumulator_and_register_a_are_where_layout_viz_draws_them() -> Checked {
    let (c_ss, c_rs) = run_probe()?;
    // C(i, j) = i + 64 j: every accumulator register names its own cell.
    common::assert_accumulator_names_its_cells(&c_ss);
    let c = common::accumulator();
    // C(i, j) for j < 16 is the id 8 t + v of the A register the hardware used for A(i, j).
    let a = layout_viz::atoms::wgmma_a();
    for t in 0..128u32 {
        for v in 0..8u32 {
            let cell = a.coord(t, v);
            // Where that A element's product lands: row cell.row, column cell.col of C, whose
            // owner in the accumulator layout is found by searching c's (thread, value)s.
            let (ct, cv) = common::owner(&c, cell);
            assert_eq!(
                c_rs[(ct * 32 + cv) as usize],
                (8 * t + v) as f32,
                "register A: thread {t} value {v} should be A({}, {})",
                cell.row,
                cell.col
            );
        }
    }
    Ok(())
}
