//! The wgmma figures against the hardware: what `wgmma.mma_async` really leaves in each
//! thread's accumulator registers, and which register of which thread it takes as each
//! element of A (recorded by `kernels/wgmma_probe.cu`), must be exactly layout-viz's
//! `wgmma_c` and `wgmma_a` atoms, from which the book's figures are drawn. The operands go
//! through the kernel's own descriptors and 128-byte swizzled layout.

use harness::cudarc::driver::{LaunchConfig, PushKernelArg};
use harness::testing::{Checked, Needs, Skipped};

harness::test_main!(Needs::Stage(&stage11_wgmma::INFO) => [wgmma_accumulator_and_register_a_are_where_layout_viz_draws_them]);

fn run_probe() -> Result<(Vec<f32>, Vec<f32>), Skipped> {
    let gpu = harness::testing::gpu_for(&stage11_wgmma::INFO)?;
    let function = stage11_wgmma::KERNELS
        .function(&gpu, "wgmma_probe")
        .unwrap();
    let stream = gpu.stream();
    let mut c_ss = stream.alloc_zeros::<f32>(128 * 32).unwrap();
    let mut c_rs = stream.alloc_zeros::<f32>(128 * 32).unwrap();
    let cfg = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (128, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut launch = stream.launch_builder(&function);
    launch.arg(&mut c_ss).arg(&mut c_rs);
    // SAFETY: the probe takes two pointers to 128 x 32 floats.
    unsafe { launch.launch(cfg) }.unwrap();
    stream.synchronize().unwrap();
    Ok((
        stream.clone_dtoh(&c_ss).unwrap(),
        stream.clone_dtoh(&c_rs).unwrap(),
    ))
}

fn wgmma_accumulator_and_register_a_are_where_layout_viz_draws_them() -> Checked {
    let (c_ss, c_rs) = run_probe()?;
    // C(i, j) = i + 64 j: every accumulator register names its own cell.
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
    // C(i, j) for j < 16 is the id 8 t + v of the A register the hardware used for A(i, j).
    let a = layout_viz::atoms::wgmma_a();
    for t in 0..128u32 {
        for v in 0..8u32 {
            let cell = a.coord(t, v);
            // Where that A element's product lands: row cell.row, column cell.col of C, whose
            // owner in the accumulator layout is found by searching c's (thread, value)s.
            let (ct, cv) = (0..128u32)
                .flat_map(|ct| (0..32u32).map(move |cv| (ct, cv)))
                .find(|&(ct, cv)| c.coord(ct, cv) == cell)
                .expect("every cell of C has an owner");
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
