// Stage 15's committed kernel and host launchers for it.
#include "cluster_launch.h"
#include "flash_decode_fused.cu"
void launch15(const flashlab::DecodeParams& p, dim3 grid, int smem) {
    static bool once = [] {
        allow_clusters(flash_decode_split_bf16_d128, (2 * 3 * 64 * 128 + 16 * 128) * 2);
        return true;
    }();
    (void)once;
    flash_decode_split_bf16_d128<<<grid, 128, smem>>>(p);
}
// The same kernel launched in clusters of `cluster` blocks along x, which it does not use:
// what cluster scheduling alone costs.
cudaError_t launch15_clustered(const flashlab::DecodeParams& p, dim3 grid, int smem, int cluster) {
    allow_clusters(flash_decode_split_bf16_d128, smem);
    return launch_clustered(flash_decode_split_bf16_d128, grid, smem, cluster, p);
}
