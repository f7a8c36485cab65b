// Stage 15's committed kernel and a host launcher for it.
#include <cuda_runtime.h>
#include "flash_decode_fused.cu"
void launch15(const flashlab::DecodeParams& p, dim3 grid, int smem) {
    static bool once = [] {
        cudaFuncSetAttribute(flash_decode_split_bf16_d128, cudaFuncAttributeMaxDynamicSharedMemorySize, (2 * 3 * 64 * 128 + 16 * 128) * 2);
        return true;
    }();
    (void)once;
    flash_decode_split_bf16_d128<<<grid, 128, smem>>>(p);
}
