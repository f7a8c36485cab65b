// The variant of colsplit.patch at D256 (eight warps, two per 16 keys, each with half of
// O's columns; 256 threads) and its launcher.
#include "flash_decode_colsplit.cu"
void launch_colsplit(const flashlab::DecodeParams& p, dim3 grid, int smem) {
    cudaFuncSetAttribute(flash_decode_col_bf16_d256, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    flash_decode_col_bf16_d256<<<grid, flashlab::threads_for<256>(), smem>>>(p);
}
