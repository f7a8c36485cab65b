//! The 8-bit wgmma against the hardware: what `wgmma.mma_async ... .e4m3.e4m3` leaves in the
//! accumulator, and which byte of which thread's registers it takes as each element of A
//! (recorded by `kernels/wgmma_fp8_probe.cu`), must be layout-viz's `wgmma_c` and
//! `wgmma_a_fp8`, from which the book's figures are drawn and on which `fp8_pv_key` (the
//! order an FP8 kernel gives V's keys so P needs no exchange) rests.

use harness::cudarc::driver::{LaunchConfig, PushKernelArg};
use harness::testing::{Checked, Needs, Skipped};

harness::test_main!(Needs::Stage(&stage11_wgmma::INFO) => [fp8_wgmma_accumulator_and_register_a_are_where_layout_viz_draws_them]);

fn run_probe() -> Result<(Vec<f32>, Vec<f32>), Skipped> {
    let gpu = harness::testing::gpu_for(&stage11_wgmma::INFO)?;
    let function = stage11_wgmma::KERNELS
        .function(&gpu, "wgmma_fp8_probe")
        .unwrap();
    let stream = gpu.stream();
    let mut c_ss = stream.alloc_zeros::<f32>(128 * 32).unwrap();
    let mut c_rs = stream.alloc_zeros::<f32>(3 * 128 * 32).unwrap();
    let cfg = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (128, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut launch = stream.launch_builder(&function);
    launch.arg(&mut c_ss).arg(&mut c_rs);
    // SAFETY: the probe takes pointers to 128 x 32 and 3 x 128 x 32 floats.
    unsafe { launch.launch(cfg) }.unwrap();
    stream.synchronize().unwrap();
    Ok((
        stream.clone_dtoh(&c_ss).unwrap(),
        stream.clone_dtoh(&c_rs).unwrap(),
    ))
}

fn fp8_wgmma_accumulator_and_register_a_are_where_layout_viz_draws_them() -> Checked {
    let (c_ss, c_rs) = run_probe()?;
    // C(i, j) = i + 64 j: every accumulator register names its own cell, as at 16 bits.
    let c = layout_viz::atoms::wgmma_c(64).unwrap();
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
    // C(i, j) for j < 32, over the three runs, is the id 16 t + v of the byte the hardware
    // used as A(i, j).
    let a = layout_viz::atoms::wgmma_a_fp8();
    for t in 0..128u32 {
        for v in 0..16u32 {
            let cell = a.coord(t, v);
            let (ct, cv) = (0..128u32)
                .flat_map(|ct| (0..32u32).map(move |cv| (ct, cv)))
                .find(|&(ct, cv)| c.coord(ct, cv) == cell)
                .expect("every cell of C has an owner");
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
