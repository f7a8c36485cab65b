// tma_probe: records the bytes a TMA load writes into shared memory, so a GPU test can hold
// layout-viz's TMA model (the book's figures of a box landing) to the hardware. The tensor
// is 2-D, 16-bit, each element holding its own index + 1 (0 marks zero fill); one box is
// loaded under each swizzle mode, none, 32, 64 and 128 bytes (maps[0..3], built by the
// test), and shared memory is copied out byte for byte. Book: "Stage 10: TMA and mbarriers".
//   out: [mode][2048 bytes as 1024 u16], the 2 KiB at the (1024-aligned) destination.
#include <flashlab/mbarrier.cuh>
#include <flashlab/tma.cuh>

struct TmaProbeMaps {
    flashlab::TensorMap mode[4];
};

extern "C" __global__ void __launch_bounds__(32, 1)
    tma_probe(const __grid_constant__ TmaProbeMaps maps, int origin_col, int origin_row, unsigned short* out) {
    using namespace flashlab;
    __shared__ __align__(1024) unsigned short box[4][1024];
    __shared__ uint64_t full;
    for (int m = 0; m < 4; ++m)
        for (int i = threadIdx.x; i < 1024; i += 32) box[m][i] = 0xFFFF;  // not written by the copy: visible
    fence_proxy_async_smem();
    if (threadIdx.x == 0) {
        mbarrier_init(&full, 1);
        mbarrier_init_fence();
    }
    __syncwarp();
    for (int m = 0; m < 4; ++m) {
        if (threadIdx.x == 0) {
            // The box is 16 rows of the swizzle's span (128 bytes when unswizzled).
            constexpr uint32_t row_bytes[4] = {128, 32, 64, 128};
            mbarrier_arrive_expect_tx(&full, 16 * row_bytes[m]);
            tma_load_2d(box[m], &maps.mode[m], &full, origin_col, origin_row);
        }
        mbarrier_wait(&full, m % 2);
    }
    for (int m = 0; m < 4; ++m)
        for (int i = threadIdx.x; i < 1024; i += 32) out[m * 1024 + i] = box[m][i];
}
