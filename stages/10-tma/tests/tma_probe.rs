//! The TMA figures against the hardware: the bytes a TMA load really writes into shared
//! memory under each swizzle mode (recorded by `kernels/tma_probe.cu`) must be exactly
//! what layout-viz's `TmaBox` model says, since the book's figures of a box landing, and
//! the kernels' `tile_offset_tma` (checked against the same model on the host), rest on it.

use harness::cudarc::driver::sys::{CUtensorMapDataType, CUtensorMapSwizzle};
use harness::cudarc::driver::{DeviceRepr, LaunchConfig, PushKernelArg};
use harness::tensor_map::TensorMap;
use harness::testing::{Checked, Needs};
use layout_viz::atoms::{TmaBox, TmaSwizzle};

/// A 40 x 104 tensor of 16-bit elements (rows of 208 bytes: a tensor map's strides must be
/// multiples of 16 bytes), each its own index + 1; the box starts at row 30 and column 48,
/// so its last 6 rows are past the tensor (zero fill) and, for the 64-column boxes, so are
/// its columns from 104 on.
const ROWS: u32 = 40;
const COLS: u32 = 104;
const ORIGIN: (u32, u32) = (30, 48);
const BOX_ROWS: u32 = 16;
const MODES: [(TmaSwizzle, CUtensorMapSwizzle, u32); 4] = [
    (
        TmaSwizzle::None,
        CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
        64,
    ),
    (
        TmaSwizzle::B32,
        CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_32B,
        16,
    ),
    (
        TmaSwizzle::B64,
        CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_64B,
        32,
    ),
    (
        TmaSwizzle::B128,
        CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
        64,
    ),
];

#[repr(C)]
#[derive(Clone, Copy)]
struct ProbeMaps([TensorMap; 4]);
// SAFETY: four tensor maps by value, as `TmaProbeMaps` in the probe.
unsafe impl DeviceRepr for ProbeMaps {}

harness::test_main!(Needs::Stage(&stage10_tma::INFO) => [tma_loads_land_where_layout_viz_draws_them]);

fn tma_loads_land_where_layout_viz_draws_them() -> Checked {
    let gpu = harness::testing::gpu_for(&stage10_tma::INFO)?;
    let stream = gpu.stream();
    let host: Vec<u16> = (0..ROWS * COLS).map(|i| (i + 1) as u16).collect();
    let tensor = stream.clone_htod(&host).unwrap();
    let ptr = {
        let (ptr, _guard) = harness::cudarc::driver::DevicePtr::device_ptr(&tensor, stream);
        ptr
    };
    let maps = MODES.map(|(_, swizzle, box_cols)| {
        TensorMap::tiled(
            ptr,
            CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT16,
            &[u64::from(COLS), u64::from(ROWS)],
            &[u64::from(COLS) * 2],
            &[box_cols, BOX_ROWS],
            swizzle,
        )
        .unwrap()
    });
    let mut out = stream.alloc_zeros::<u16>(4 * 1024).unwrap();
    let function = stage10_tma::KERNELS.function(&gpu, "tma_probe").unwrap();
    let cfg = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (32, 1, 1),
        shared_mem_bytes: 0,
    };
    let probe_maps = ProbeMaps(maps);
    let (col, row) = (ORIGIN.1 as i32, ORIGIN.0 as i32);
    let mut launch = stream.launch_builder(&function);
    launch.arg(&probe_maps).arg(&col).arg(&row).arg(&mut out);
    // SAFETY: the probe takes four maps by value, two ints and a pointer to 4 x 1024 u16.
    unsafe { launch.launch(cfg) }.unwrap();
    stream.synchronize().unwrap();
    let got = stream.clone_dtoh(&out).unwrap();

    for (m, (mode, _, box_cols)) in MODES.iter().enumerate() {
        let model = TmaBox::new((ROWS, COLS), (BOX_ROWS, *box_cols), ORIGIN, 2, *mode).unwrap();
        let smem = &got[m * 1024..(m + 1) * 1024];
        let mut expected = vec![0xFFFFu16; 1024];
        for cell in model.cells() {
            expected[(cell.smem_byte / 2) as usize] = match cell.global {
                Some((r, c)) => (r * COLS + c + 1) as u16,
                None => 0,
            };
        }
        let wrong: Vec<String> = (0..1024)
            .filter(|&i| smem[i] != expected[i])
            .take(8)
            .map(|i| {
                format!(
                    "element {i}: hardware {:#x}, model {:#x}",
                    smem[i], expected[i]
                )
            })
            .collect();
        assert!(wrong.is_empty(), "swizzle {mode:?}: {}", wrong.join("; "));
    }
    Ok(())
}
