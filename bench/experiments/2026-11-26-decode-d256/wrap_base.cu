// The committed stage 15 kernel at D256 (four warps, 128 threads) and its launcher.
#include "flash_decode_fused.cu"
void launch_base(const flashlab::DecodeParams& p, dim3 grid, int smem) {
    cudaFuncSetAttribute(flash_decode_split_bf16_d256, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    flash_decode_split_bf16_d256<<<grid, 128, smem>>>(p);
}
