// fragment_probe: one warp records what the hardware really delivers, so a GPU test can
// hold the fragment diagrams (layout-viz's atoms) to it. Book: "Stage 3: tensor cores".
//   ld, ld_trans: ldmatrix.x4 (and .trans) of a 32 x 8 tile whose element (r, c) holds
//                 r * 8 + c; lane l gives row l. Out: [lane][2 * reg + half].
//   c:            mma.m16n8k16 with A(i, k) = {i, 1, 0...}[k] and B(k, j) = {1, 16 j, 0...}[k],
//                 so C(i, j) = i + 16 j names its own coordinate. Out: [lane][4].
#include <flashlab/mma.cuh>

extern "C" __global__ void fragment_probe(unsigned short* ld, unsigned short* ld_trans, float* c) {
    using namespace flashlab;
    __shared__ __align__(16) unsigned short tile[32 * 8];
    __shared__ __align__(16) __nv_bfloat16 a_smem[16 * 16];  // [row i][k]
    __shared__ __align__(16) __nv_bfloat16 b_smem[8 * 16];   // [col j][k], as K tiles are stored
    const int lane = threadIdx.x;
    for (int i = lane; i < 32 * 8; i += 32) tile[i] = i;
    for (int i = lane; i < 16 * 16; i += 32) {
        const int row = i / 16, k = i % 16;
        a_smem[i] = __float2bfloat16(k == 0 ? row : k == 1 ? 1.f : 0.f);
    }
    for (int i = lane; i < 8 * 16; i += 32) {
        const int col = i / 16, k = i % 16;
        b_smem[i] = __float2bfloat16(k == 0 ? 1.f : k == 1 ? 16.f * col : 0.f);
    }
    __syncwarp();

    uint32_t r[4];
    ldmatrix_x4(r, smem_addr(tile + lane * 8));
    for (int m = 0; m < 4; ++m) {
        ld[lane * 8 + 2 * m] = r[m] & 0xffff;
        ld[lane * 8 + 2 * m + 1] = r[m] >> 16;
    }
    ldmatrix_x4_trans(r, smem_addr(tile + lane * 8));
    for (int m = 0; m < 4; ++m) {
        ld_trans[lane * 8 + 2 * m] = r[m] & 0xffff;
        ld_trans[lane * 8 + 2 * m + 1] = r[m] >> 16;
    }

    // The same addressing as the attention kernels: A by ldmatrix.x4, B by ldmatrix.x2.
    uint32_t a[4], b0, b1;
    ldmatrix_x4(a, smem_addr(a_smem + (lane % 16) * 16 + (lane / 16) * 8));
    ldmatrix_x2(b0, b1, smem_addr(b_smem + (lane % 8) * 16 + ((lane / 8) % 2) * 8));
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
    mma_m16n8k16<__nv_bfloat16>(acc, a, b0, b1);
    for (int i = 0; i < 4; ++i) c[lane * 4 + i] = acc[i];
}
