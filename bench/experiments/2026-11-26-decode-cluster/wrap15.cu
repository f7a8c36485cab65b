// Stage 15's committed kernel and a host launcher for it.
#include "flash_decode_fused.cu"
void launch15(const flashlab::DecodeParams& p, dim3 grid, int smem) {
    static bool once = [] {
        cudaFuncSetAttribute(flash_decode_split_bf16_d128, cudaFuncAttributeMaxDynamicSharedMemorySize, (2 * 3 * 64 * 128 + 16 * 128) * 2);
        return true;
    }();
    (void)once;
    flash_decode_split_bf16_d128<<<grid, 128, smem>>>(p);
}
// The same kernel launched in clusters of `cluster` blocks along x, which it does not use:
// what cluster scheduling alone costs.
cudaError_t launch15_clustered(const flashlab::DecodeParams& p, dim3 grid, int smem, int cluster) {
    launch15(p, dim3(0, 0, 0), smem);  // sets the attribute once (an empty grid only fails)
    cudaGetLastError();
    cudaFuncSetAttribute(flash_decode_split_bf16_d128, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = dim3(128);
    cfg.dynamicSmemBytes = smem;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = cluster, attr[0].val.clusterDim.y = 1, attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr, cfg.numAttrs = 1;
    return cudaLaunchKernelEx(&cfg, flash_decode_split_bf16_d128, p);
}
