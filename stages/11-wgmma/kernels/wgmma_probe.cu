// wgmma_probe: one warpgroup records what wgmma really leaves in its registers, so a GPU
// test can hold layout-viz's wgmma atoms (the book's figures) to the hardware, as stage 3's
// fragment_probe does for mma.sync. Both operands are placed in shared memory by the
// kernels' own tile_offset_tma and read through the kernels' own descriptors, so a wrong
// descriptor shows up here too. Book: "Stage 11: wgmma".
//   c_ss: m64n64k16, A (64 x 16) and B (16 x 64) from shared memory, K-major, with
//         A(i, k) = {i, 1, 0...}[k] and B(k, j) = {1, 64 j, 0...}[k], so C(i, j) = i + 64 j
//         names its own coordinate. Out: [thread][32].
//   c_rs: m64n64k16, A from registers, B from shared memory MN-major (as V is read): each
//         thread's A register value v holds its own id 8 t + v (f16, exact to 2048) and B is
//         the identity on its first 16 columns, so C(i, j) for j < 16 is the id of the
//         (thread, value) the hardware took as A(i, j). Out: [thread][32].
#include <flashlab/smem_tile.cuh>
#include <flashlab/tma.cuh>
#include <flashlab/wgmma.cuh>

extern "C" __global__ void __launch_bounds__(128, 1) wgmma_probe(float* c_ss, float* c_rs) {
    using namespace flashlab;
    using T = __half;
    __shared__ __align__(1024) T a_smem[64 * 64];   // [64 rows][64 cols], K in cols 0..15
    __shared__ __align__(1024) T bt_smem[64 * 64];  // B^T: [64 cols j][64], K in cols 0..15
    __shared__ __align__(1024) T b_mn[16 * 64];     // B as V: [16 k rows][64 cols j]
    const int t = threadIdx.x;
    for (int i = t; i < 64 * 64; i += 128) {
        const int row = i / 64, col = i % 64;
        a_smem[tile_offset_tma<64>(row, col)] = __float2half(col == 0 ? row : col == 1 ? 1.f : 0.f);
        bt_smem[tile_offset_tma<64>(row, col)] = __float2half(col == 0 ? 1.f : col == 1 ? 64.f * row : 0.f);
    }
    for (int i = t; i < 16 * 64; i += 128) {
        const int k = i / 64, j = i % 64;
        b_mn[tile_offset_tma<16>(k, j)] = __float2half(k == j ? 1.f : 0.f);
    }
    // The operands were written by ordinary stores and are read by the async proxy.
    fence_proxy_async_smem();
    __syncthreads();

    float d[32];
    wgmma_fence();
    wgmma_ss<T, 64>(d, wgmma_desc_sw128(a_smem, 16, 1024), wgmma_desc_sw128(bt_smem, 16, 1024), false);
    wgmma_commit();
    wgmma_wait<0>();
    wgmma_fence_operands(d);
    for (int v = 0; v < 32; ++v) c_ss[t * 32 + v] = d[v];

    uint32_t a[4];
    for (int r = 0; r < 4; ++r) a[r] = pack2<T>(8 * t + 2 * r, 8 * t + 2 * r + 1);
    wgmma_fence();
    wgmma_rs_mn<T, 64>(d, a, wgmma_desc_sw128(b_mn, 16 * 128, 1024), false);
    wgmma_commit();
    wgmma_wait<0>();
    wgmma_fence_operands(d);
    for (int v = 0; v < 32; ++v) c_rs[t * 32 + v] = d[v];
}
