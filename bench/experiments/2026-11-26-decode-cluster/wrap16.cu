// The prototype (stage 15 with cluster-merge.patch; "stage 16" in cluster.cu's output) and
// a host launcher for it: one cluster per row tile, of its splits.
#include "cluster_launch.h"
// Renamed, so that it links beside stage 15's kernel of the same name.
#define flash_decode_split flash_decode_cluster
#include "flash_decode_cluster.cu"
int max_clusters16(int splits, int smem) {
    allow_clusters(flash_decode_cluster_bf16_d128, smem);
    return max_active_clusters(flash_decode_cluster_bf16_d128, smem, splits);
}
cudaError_t launch16(const flashlab::DecodeParams& p, dim3 grid, int smem) {
    return launch_clustered(flash_decode_cluster_bf16_d128, grid, smem, grid.x, p);
}
