// Launching a kernel in thread block clusters along x, for wrap15.cu and wrap16.cu.
#pragma once
#include <cstdio>
#include <cuda_runtime.h>

// Lets `kernel` take `smem` bytes of dynamic shared memory and clusters of more than 8.
template <typename Kernel>
void allow_clusters(Kernel kernel, int smem) {
    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
}

// A launch configuration of 128 threads a block in clusters of `cluster` blocks along x.
// Not copyable: cfg points at attr.
struct ClusterConfig {
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[1];
    ClusterConfig(dim3 grid, int smem, int cluster) {
        cfg.gridDim = grid;
        cfg.blockDim = dim3(128);
        cfg.dynamicSmemBytes = smem;
        attr[0].id = cudaLaunchAttributeClusterDimension;
        attr[0].val.clusterDim.x = cluster, attr[0].val.clusterDim.y = 1, attr[0].val.clusterDim.z = 1;
        cfg.attrs = attr, cfg.numAttrs = 1;
    }
    ClusterConfig(const ClusterConfig&) = delete;
};

template <typename Kernel, typename Params>
cudaError_t launch_clustered(Kernel kernel, dim3 grid, int smem, int cluster, const Params& p) {
    ClusterConfig c(grid, smem, cluster);
    return cudaLaunchKernelEx(&c.cfg, kernel, p);
}

// How many clusters of `cluster` blocks can run at once (cudaOccupancyMaxActiveClusters).
template <typename Kernel>
int max_active_clusters(Kernel kernel, int smem, int cluster) {
    ClusterConfig c(dim3(cluster, 1, 64), smem, cluster);
    int n = -1;
    const cudaError_t e = cudaOccupancyMaxActiveClusters(&n, kernel, &c.cfg);
    if (e != cudaSuccess) printf("occupancy query: %s\n", cudaGetErrorString(e));
    return n;
}
