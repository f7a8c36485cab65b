// The trial (make-poll.py's kernel), renamed so that it links beside stage 15's. Built
// with make-poll.py --trace (build.sh passes -DPOLL_TRACE_BUILD), thread 0 of each block
// stamps %globaltimer into g_poll_trace at the points make-poll.py names.
#include <cuda_runtime.h>
#include <vector>
__device__ unsigned long long g_poll_trace[4096][4];
#ifdef POLL_TRACE_BUILD
#define POLL_TRACE(i)                                                                                 \
    do {                                                                                              \
        if (threadIdx.x == 0) {                                                                       \
            unsigned long long t;                                                                     \
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));                                     \
            g_poll_trace[(blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x][i] = t;      \
        }                                                                                             \
    } while (0)
#endif
#define flash_decode_split flash_decode_poll
#include "flash_decode_poll.cu"
void launch_poll(const flashlab::DecodeParams& p, dim3 grid, int smem) {
    static bool once = [] {
        cudaFuncSetAttribute(flash_decode_poll_bf16_d128, cudaFuncAttributeMaxDynamicSharedMemorySize, (2 * 3 * 64 * 128 + 16 * 128) * 2);
        return true;
    }();
    (void)once;
    flash_decode_poll_bf16_d128<<<grid, 128, smem>>>(p);
}
bool poll_traced() {
#ifdef POLL_TRACE_BUILD
    return true;
#else
    return false;
#endif
}
// The stamps of the last launch, block by block (x fastest), four each.
std::vector<unsigned long long> poll_trace(int blocks) {
    std::vector<unsigned long long> t(static_cast<size_t>(blocks) * 4);
    cudaMemcpyFromSymbol(t.data(), g_poll_trace, t.size() * sizeof(unsigned long long));
    return t;
}
