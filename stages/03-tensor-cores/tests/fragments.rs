//! The diagrams against the hardware: what `ldmatrix` and `mma.m16n8k16` really leave in
//! each lane's registers (recorded by `kernels/fragment_probe.cu`) must be exactly what
//! layout-viz's atoms say, since the book's fragment figures are drawn from those atoms.

use harness::Gpu;
use harness::cudarc::driver::{LaunchConfig, PushKernelArg};

struct Probe {
    ld: Vec<u16>,
    ld_trans: Vec<u16>,
    c: Vec<f32>,
}

fn run_probe() -> Probe {
    let gpu = Gpu::open().unwrap_or_else(|e| panic!("{e}"));
    let function = stage03_tensor_cores::KERNELS
        .function(&gpu, "fragment_probe")
        .unwrap();
    let stream = gpu.stream();
    let mut ld = stream.alloc_zeros::<u16>(32 * 8).unwrap();
    let mut ld_trans = stream.alloc_zeros::<u16>(32 * 8).unwrap();
    let mut c = stream.alloc_zeros::<f32>(32 * 4).unwrap();
    let cfg = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (32, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut launch = stream.launch_builder(&function);
    launch.arg(&mut ld).arg(&mut ld_trans).arg(&mut c);
    // SAFETY: the probe takes three device pointers of the sizes allocated above.
    unsafe { launch.launch(cfg) }.unwrap();
    stream.synchronize().unwrap();
    Probe {
        ld: stream.clone_dtoh(&ld).unwrap(),
        ld_trans: stream.clone_dtoh(&ld_trans).unwrap(),
        c: stream.clone_dtoh(&c).unwrap(),
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU (compute capability 8.0+); `just test` runs it where one is present"]
fn ldmatrix_x4_and_trans_deliver_what_layout_viz_draws() {
    let probe = run_probe();
    for (trans, got) in [(false, &probe.ld), (true, &probe.ld_trans)] {
        let atom = layout_viz::atoms::ldmatrix(4, trans).unwrap().dst;
        for lane in 0..32u32 {
            for v in 0..8u32 {
                let cell = atom.coord(lane, v);
                let value = got[(lane * 8 + v) as usize] as u32;
                assert_eq!(
                    (value / 8, value % 8),
                    (cell.row, cell.col),
                    "ldmatrix.x4{}: lane {lane} value {v}",
                    if trans { ".trans" } else { "" }
                );
            }
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU (compute capability 8.0+); `just test` runs it where one is present"]
fn mma_m16n8k16_accumulator_is_where_layout_viz_draws_it() {
    let probe = run_probe();
    let atom = layout_viz::atoms::mma_m16n8_c("mma-m16n8k16-c", "C");
    for lane in 0..32u32 {
        for i in 0..4u32 {
            let cell = atom.coord(lane, i);
            let value = probe.c[(lane * 4 + i) as usize];
            assert_eq!(
                value,
                (cell.row + 16 * cell.col) as f32,
                "C: lane {lane} element {i}"
            );
        }
    }
    // The seed's fact, straight from the hardware: lane 0 holds (0,0), (0,1), (8,0), (8,1).
    assert_eq!(&probe.c[0..4], &[0.0, 16.0, 8.0, 24.0]);
}
