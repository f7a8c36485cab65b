// Stage 16's kernel and a host launcher for it: one cluster per row tile, its splits.
#include <cstdio>
// Renamed, so that it links beside stage 15's kernel of the same name.
#define flash_decode_split flash_decode_cluster
#include "flash_decode_cluster.cu"
int max_clusters16(int splits, int smem) {
    cudaFuncSetAttribute(flash_decode_cluster_bf16_d128, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    cudaFuncSetAttribute(flash_decode_cluster_bf16_d128, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(splits, 1, 64);
    cfg.blockDim = dim3(128);
    cfg.dynamicSmemBytes = smem;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = splits, attr[0].val.clusterDim.y = 1, attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr, cfg.numAttrs = 1;
    int n = -1;
    cudaError_t e = cudaOccupancyMaxActiveClusters(&n, flash_decode_cluster_bf16_d128, &cfg);
    if (e != cudaSuccess) printf("occupancy query: %s\n", cudaGetErrorString(e));
    return n;
}
cudaError_t launch16(const flashlab::DecodeParams& p, dim3 grid, int smem) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = dim3(128);
    cfg.dynamicSmemBytes = smem;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = grid.x, attr[0].val.clusterDim.y = 1, attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr, cfg.numAttrs = 1;
    return cudaLaunchKernelEx(&cfg, flash_decode_cluster_bf16_d128, p);
}
