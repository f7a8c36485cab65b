// cluster.cuh: Hopper's thread block clusters, one small wrapper per PTX instruction. The
// blocks of a cluster run at the same time on one GPC, and each can read the others'
// shared memory (distributed shared memory): a merge among them goes SM to SM instead of
// through the L2. Only this experiment uses them (book: "Stage 15: the combine fused",
// "A cluster, tried and left").
#pragma once
#include <stdint.h>

namespace flashlab {

// ANCHOR: cluster
// This block's rank in its cluster, 0 .. cluster size - 1.
__device__ __forceinline__ uint32_t cluster_rank() {
    uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

// Every thread of every block of the cluster arrives, then waits for all the others.
// Release and acquire: what a block wrote to its shared memory before the barrier, every
// block of the cluster sees after it. Both halves are `.aligned`: the whole warp executes
// them together, as __syncthreads.
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\n"
                 "barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// The address, in the cluster's shared memory window, of the variable at shared memory
// address `addr` (this block's, from smem_addr) in the block of rank `rank`.
__device__ __forceinline__ uint32_t map_shared_rank(uint32_t addr, uint32_t rank) {
    uint32_t mapped;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(mapped) : "r"(addr), "r"(rank));
    return mapped;
}

// Loads from another block's shared memory (an address from map_shared_rank).
__device__ __forceinline__ float ld_shared_cluster(uint32_t addr) {
    float x;
    asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(x) : "r"(addr) : "memory");
    return x;
}
__device__ __forceinline__ float4 ld_shared_cluster_v4(uint32_t addr) {
    float4 x;
    asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(x.x), "=f"(x.y), "=f"(x.z), "=f"(x.w)
                 : "r"(addr)
                 : "memory");
    return x;
}
// ANCHOR_END: cluster

}  // namespace flashlab
