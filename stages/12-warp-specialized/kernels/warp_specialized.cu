// Stage 12, warp specialization: stage 11's products and softmax, with the block split
// into roles (book: "Stage 12: warp specialization"). A producer warpgroup, of which one
// thread issues every TMA copy, keeps the K/V ring full; two consumer warpgroups do the
// wgmmas and the softmax. They meet only at mbarriers: a "full" barrier per slot says a
// tile has landed, an "empty" one says every consumer is done with it. No block barrier
// in the loop: a consumer waits only for data, never for the other consumer, and the
// producer refills a slot as soon as it is free. The producer needs few registers and the
// consumers many, so setmaxnreg moves them. Kernel in roles: scheduler (which tile of
// which head), producer (load), consumer (mma, softmax, epilogue).
#include <flashlab/common.cuh>
#include <flashlab/fragments.cuh>
#include <flashlab/mbarrier.cuh>
#include <flashlab/mma.cuh>
#include <flashlab/named_barrier.cuh>
#include <flashlab/setmaxnreg.cuh>
#include <flashlab/smem_tile.cuh>
#include <flashlab/timeline.cuh>
#include <flashlab/tma.cuh>
#include <flashlab/wgmma.cuh>

namespace flashlab {

// ANCHOR: tiles
// Consumer warpgroups own 64 query rows each: three at D 64, two at D 128, as many as the
// registers allow (below). One producer warpgroup before them.
template <int D>
constexpr int CONSUMERS = D == 64 ? 3 : 2;
template <int D>
constexpr int WARPGROUPS = 1 + CONSUMERS<D>;  // warpgroup 0 is the producer
template <int D>
constexpr int THREADS = WARPGROUPS<D> * 128;
template <int D>
constexpr int BLOCK_Q = CONSUMERS<D> * 64;
constexpr int BLOCK_KV = 128;  // the N of S's wgmma: S is 64 registers a consumer thread
constexpr int NSTAGES = 2;     // K/V ring slots: at D 128, Q 32 KiB + 2 x (K + V) 64 KiB = 160 KiB
// ANCHOR_END: tiles
FLASHLAB_SAME_AS_HOST(NSTAGES);
FLASHLAB_SAME_AS_HOST(BLOCK_KV);
static_assert(WARPGROUPS<128> * 4 == FLASHLAB_HOST_WARPS && BLOCK_Q<128> == FLASHLAB_HOST_BLOCK_Q,
              "the D 128 tile differs from the stage's src/tiles.rs");
static_assert(WARPGROUPS<64> * 4 == FLASHLAB_HOST_WARPS_D64 && BLOCK_Q<64> == FLASHLAB_HOST_BLOCK_Q_D64,
              "the D 64 tile differs from the stage's src/tiles.rs");

// ANCHOR: registers
// A block's registers are fixed at launch: every thread gets the cap 65536 / THREADS,
// rounded down to a multiple of 8 (168 at 384 threads, 128 at 512), and setmaxnreg only
// moves registers between the block's warpgroups. The producer, which only computes copy
// coordinates, drops to 40 (32 at D 64); the consumers, which hold O (D / 2 floats), S (64)
// and P (32), rise to 232 (160): 40 + 2 x 232 = 3 x 168 and 32 + 3 x 160 = 4 x 128.
// Asking for more than the block holds makes setmaxnreg.inc wait forever. At D 64 a
// consumer needs about 130, so a third one fits; at D 128 about 170, so only two do.
// (FlashAttention-3 gives 24 and 240 at D 128; our producer's timeline build spills at 24.)
template <int D>
constexpr int LAUNCH_REGS = 65536 / THREADS<D> / 8 * 8;
template <int D>
constexpr int PRODUCER_REGS = D == 64 ? 32 : 40;
template <int D>
constexpr int CONSUMER_REGS = D == 64 ? 160 : 232;
static_assert(PRODUCER_REGS<64> + CONSUMERS<64> * CONSUMER_REGS<64> <= WARPGROUPS<64> * LAUNCH_REGS<64> &&
                  PRODUCER_REGS<128> + CONSUMERS<128> * CONSUMER_REGS<128> <= WARPGROUPS<128> * LAUNCH_REGS<128>,
              "setmaxnreg can only share out the registers the block was launched with");
// ANCHOR_END: registers

// Named barriers (named_barrier.cuh); 0 is __syncthreads.
enum NamedBarrier : int {
    CONSUMERS_WROTE_O = 1,  // both consumer warpgroups have put O in shared memory
};

// A compile-time int as a value, for the generic lambdas below.
template <int N>
struct Int {
    static constexpr int value = N;
};

// ANCHOR: scheduler
// Which rows of which head this block computes, and how many K/V tiles they see: both
// roles derive the same loop from it.
struct BlockWork {
    int q_start, h, b, kv_head, n_tiles;
};
template <int D>
__device__ BlockWork block_work(const AttnParams& p) {
    BlockWork w;
    w.q_start = blockIdx.x * BLOCK_Q<D>;
    w.h = blockIdx.y;
    w.b = blockIdx.z;
    w.kv_head = kv_head_of(p, w.h);
    int kv_end = p.seqlen_k;
    if (p.causal) kv_end = max(0, min(p.seqlen_k, causal_key_end(p, min(w.q_start + BLOCK_Q<D>, p.seqlen_q) - 1)));
    w.n_tiles = ceil_div(kv_end, BLOCK_KV);
    return w;
}
// ANCHOR_END: scheduler

// ANCHOR: smem
// The block's shared memory: Q (then O), the K and V rings, and their barriers. Each ring
// slot has two barriers a tensor: full (the producer's copy landed) and empty (every
// consumer warp is done reading it).
template <typename T, int D>
struct Shared {
    T* q;  // [D/64][BLOCK_Q<D>][64], then O on its way out
    T* k;  // [NSTAGES][D/64][BLOCK_KV][64]
    T* v;  // [NSTAGES][D/64][BLOCK_KV][64]
    uint64_t *q_full, *k_full, *v_full, *k_empty, *v_empty;
    __device__ T* k_slot(int tile) const { return k + (tile % NSTAGES) * BLOCK_KV * D; }
    __device__ T* v_slot(int tile) const { return v + (tile % NSTAGES) * BLOCK_KV * D; }
};
// An empty barrier's phase completes when every consumer warp has arrived.
template <int D>
constexpr int EMPTY_ARRIVALS = CONSUMERS<D> * 4;
// ANCHOR_END: smem

// ANCHOR: producer
// The producer: one thread issues Q, then each K and V tile into its ring slot, after
// waiting until the consumers released what the slot held before. Its n-th use of a slot
// waits for the (n-1)-th release, parity (n - 1) % 2; the first NSTAGES uses wait for none.
template <typename T, int D, bool TIMELINE>
__device__ void producer(const AttnParams& p, const AttnTensorMaps& maps, const Shared<T, D>& s, const BlockWork& w) {
    Timeline<TIMELINE> tl(p, 0);
    if (threadIdx.x == 0) {
        auto load_tile = [&](T* tile_smem, const TensorMap* map, uint64_t* bar, int rows, int head, int row0) {
#pragma unroll
            for (int c = 0; c < D / 64; ++c) tma_load_4d(tile_smem + c * rows * 64, map, bar, c * 64, head, row0, w.b);
        };
        mbarrier_arrive_expect_tx(s.q_full, BLOCK_Q<D> * D * sizeof(T));
        load_tile(s.q, &maps.q, s.q_full, BLOCK_Q<D>, w.h, w.q_start);
        for (int t = 0; t < w.n_tiles; ++t) {
            const int slot = t % NSTAGES, use = t / NSTAGES;
            uint64_t t0 = tl.now();
            if (use > 0) mbarrier_wait(&s.k_empty[slot], (use - 1) % 2);
            tl.record(Phase::WaitEmpty, t, t0);
            t0 = tl.now();
            mbarrier_arrive_expect_tx(&s.k_full[slot], BLOCK_KV * D * sizeof(T));
            load_tile(s.k_slot(t), &maps.k, &s.k_full[slot], BLOCK_KV, w.kv_head, t * BLOCK_KV);
            tl.record(Phase::Load, t, t0);
            t0 = tl.now();
            if (use > 0) mbarrier_wait(&s.v_empty[slot], (use - 1) % 2);
            tl.record(Phase::WaitEmpty, t, t0);
            t0 = tl.now();
            mbarrier_arrive_expect_tx(&s.v_full[slot], BLOCK_KV * D * sizeof(T));
            load_tile(s.v_slot(t), &maps.v, &s.v_full[slot], BLOCK_KV, w.kv_head, t * BLOCK_KV);
            tl.record(Phase::Load, t, t0);
        }
    }
    tl.clock();
}
// ANCHOR_END: producer

// The consumer warpgroup `cwg` (0 .. CONSUMERS - 1): S = Q K^T, the online softmax, O += P V for each
// tile, releasing each slot as soon as the wgmmas that read it are complete; then O.
template <typename T, int D, bool TIMELINE>
__device__ void consumer(const AttnParams& p, const AttnTensorMaps& maps, const Shared<T, D>& s, const BlockWork& w,
                         int cwg) {
    const int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
    const int q_start = w.q_start, h = w.h, b = w.b;
    T* q_smem = s.q;
    Timeline<TIMELINE> tl(p, 1 + cwg);

    // What pays at D = 128 but not at D = 64 (stage 9's measurements): the lazy rescale.
    constexpr bool LAZY = D >= 128;

    // The warpgroup's 64 x D block of O and 64 x BLOCK_KV block of S, in registers (stage 11).
    float o_rmem[D / 2] = {};
    float s_rmem[BLOCK_KV / 2];
    uint32_t p_rmem[BLOCK_KV / 16][4];
    float row_max[2] = {-CUDART_INF_F, -CUDART_INF_F};  // in scaled log2 units
    float row_sum[2] = {0.f, 0.f};                      // this thread's part; the quad's at the end
    float rescale_o[2] = {1.f, 1.f};                    // LAZY: O's factor, applied just before P V
    auto q_row = [&](int r) { return q_start + cwg * 64 + warp * 16 + quad_group(lane) + 8 * r; };

    auto q_desc = [&](int kk) {
        return wgmma_desc_sw128(q_smem + (kk / 4) * BLOCK_Q<D> * 64 + cwg * 64 * 64 + (kk % 4) * 16, 16, 1024);
    };
    auto k_desc = [&](const T* k_tile, int kk) { return wgmma_desc_sw128(k_tile + (kk / 4) * BLOCK_KV * 64 + (kk % 4) * 16, 16, 1024); };
    auto v_desc = [&](const T* v_tile, int kk) { return wgmma_desc_sw128(v_tile + kk * 16 * 64, BLOCK_KV * 64 * sizeof(T), 1024); };

    auto qk = [&](const T* k_tile) {
        wgmma_fence_operands(s_rmem);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk) wgmma_ss<T, BLOCK_KV>(s_rmem, q_desc(kk), k_desc(k_tile, kk), kk > 0);
        wgmma_commit();
        wgmma_wait<0>();
        wgmma_fence_operands(s_rmem);
    };

    // The online softmax of S: the mask (only where MASKED says so), the row max, the
    // rescale, and P in registers as P V's A operand, with its row sums.
    auto softmax = [&](auto MASKED, int kv_start) {
        float tile_max[2] = {-CUDART_INF_F, -CUDART_INF_F};
#pragma unroll
        for (int n = 0; n < BLOCK_KV / 8; ++n) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                if constexpr (decltype(MASKED)::value) {
                    const int j = kv_start + n * 8 + mma_m16n8_c(lane, e).col;
                    if (j >= p.seqlen_k || (p.causal && j >= causal_key_end(p, q_row(e / 2)))) s_rmem[4 * n + e] = -CUDART_INF_F;
                }
                tile_max[e / 2] = fmaxf(tile_max[e / 2], s_rmem[4 * n + e]);
            }
        }
        float m_base[2];  // what the exponent subtracts: the row max, 0 for a row with none
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            const float tile_max_scaled = quad_max(tile_max[r]) * p.scale_log2;
            float m_new = fmaxf(row_max[r], tile_max_scaled);
            if constexpr (LAZY) m_new = tile_max_scaled > row_max[r] + 8.f ? m_new : row_max[r];
            m_base[r] = m_new == -CUDART_INF_F ? 0.f : m_new;  // fully masked so far: avoid -inf - -inf
            const float rescale = fast_exp2(row_max[r] - m_base[r]);
            row_max[r] = m_new;
            row_sum[r] *= rescale;
            if constexpr (LAZY) {
                rescale_o[r] = rescale;
            } else {
#pragma unroll
                for (int n = 0; n < D / 8; ++n) {
                    o_rmem[4 * n + 2 * r] *= rescale;
                    o_rmem[4 * n + 2 * r + 1] *= rescale;
                }
            }
        }
#pragma unroll
        for (int kk = 0; kk < BLOCK_KV / 16; ++kk)
#pragma unroll
            for (int n = 2 * kk; n < 2 * kk + 2; ++n)
#pragma unroll
                for (int r = 0; r < 2; ++r) {
                    const float p0 = fast_exp2(fmaf(s_rmem[4 * n + 2 * r], p.scale_log2, -m_base[r]));
                    const float p1 = fast_exp2(fmaf(s_rmem[4 * n + 2 * r + 1], p.scale_log2, -m_base[r]));
                    row_sum[r] += p0 + p1;
                    p_rmem[kk][(n % 2) * 2 + r] = pack2<T>(p0, p1);
                }
    };

    // LAZY: O's rescale, before P V and only when some row of the warp needs it.
    auto rescale_o_lazily = [&]() {
        const bool needed = rescale_o[0] != 1.f || rescale_o[1] != 1.f;
        if (__any_sync(0xffffffff, needed)) {
#pragma unroll
            for (int n = 0; n < D / 8; ++n)
#pragma unroll
                for (int e = 0; e < 4; ++e) o_rmem[4 * n + e] *= rescale_o[e / 2];
        }
    };

    auto pv = [&](const T* v_tile) {
        wgmma_fence_operands(o_rmem);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BLOCK_KV / 16; ++kk) wgmma_rs_mn<T, D>(o_rmem, p_rmem[kk], v_desc(v_tile, kk), true);
        wgmma_commit();
        wgmma_wait<0>();
        wgmma_fence_operands(o_rmem);
    };

    auto needs_mask = [&](int kv_start) {
        return kv_start + BLOCK_KV > p.seqlen_k || (p.causal && kv_start + BLOCK_KV > causal_key_end(p, q_start));
    };

    // ANCHOR: release
    // A warp is done with a slot once its own wgmmas that read it have completed (the
    // wait above); one lane arrives for it. The slot is free when all consumer warps have.
    auto release = [&](uint64_t* empty) {
        if (lane == 0) mbarrier_arrive(empty);
    };
    // ANCHOR_END: release

    // ANCHOR: consumer_loop
    mbarrier_wait(s.q_full, 0);
    for (int t = 0; t < w.n_tiles; ++t) {
        const int slot = t % NSTAGES, use = t / NSTAGES;
        const int kv_start = t * BLOCK_KV;
        uint64_t t0 = tl.now();
        mbarrier_wait(&s.k_full[slot], use % 2);
        tl.record(Phase::WaitFull, t, t0);
        t0 = tl.now();
        qk(s.k_slot(t));
        release(&s.k_empty[slot]);
        tl.record(Phase::Qk, t, t0);
        t0 = tl.now();
        if (needs_mask(kv_start))
            softmax(Int<1>{}, kv_start);
        else
            softmax(Int<0>{}, kv_start);
        if constexpr (LAZY) rescale_o_lazily();
        tl.record(Phase::Softmax, t, t0);
        t0 = tl.now();
        mbarrier_wait(&s.v_full[slot], use % 2);
        tl.record(Phase::WaitFull, t, t0);
        t0 = tl.now();
        pv(s.v_slot(t));
        release(&s.v_empty[slot]);
        tl.record(Phase::Pv, t, t0);
    }
    // ANCHOR_END: consumer_loop

    // ANCHOR: epilogue
    // The epilogue: the row sums across the quad, O into this warpgroup's rows of Q's tile
    // (only its own wgmmas read them, all complete), the LSE straight to global memory. The
    // two consumers then meet at a named barrier, which the producer never joins, and one
    // thread stores the whole tile.
    const uint64_t t_epilogue = tl.now();
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const float sum = quad_sum(row_sum[r]);
        const float inv_sum = sum > 0.f ? 1.f / sum : 1.f;  // fully masked: O stays 0
        const int row = q_row(r) - q_start;
#pragma unroll
        for (int n = 0; n < D / 8; ++n) {
            const int col = n * 8 + mma_m16n8_c(lane, 0).col;
            *reinterpret_cast<uint32_t*>(q_smem + tile_offset_tma<BLOCK_Q<D>>(row, col)) =
                pack2<T>(o_rmem[4 * n + 2 * r] * inv_sum, o_rmem[4 * n + 2 * r + 1] * inv_sum);
        }
        if (q_row(r) < p.seqlen_q && quad_lane(lane) == 0)
            p.lse[lse_index(p, b, h, q_row(r))] = sum > 0.f ? (row_max[r] + log2f(sum)) * CUDART_LN2_F : -CUDART_INF_F;
    }
    fence_proxy_async_smem();
    named_barrier_sync(CONSUMERS_WROTE_O, CONSUMERS<D> * 128);
    if (threadIdx.x == 128) {
#pragma unroll
        for (int c = 0; c < D / 64; ++c) tma_store_4d(&maps.o, q_smem + c * BLOCK_Q<D> * 64, c * 64, h, q_start, b);
        tma_store_commit();
        tma_store_wait_read();
    }
    tl.record(Phase::Epilogue, w.n_tiles, t_epilogue);
    tl.clock();
    // ANCHOR_END: epilogue
}

template <typename T, int D, bool TIMELINE = false>
__device__ void warp_specialized_attention(const AttnParams& p, const AttnTensorMaps& maps) {
    // Tiles 1024-byte aligned for the 128-byte swizzle (stage 10).
    extern __shared__ unsigned char smem_unaligned[];
    unsigned char* smem = smem_unaligned + ((1024 - smem_addr(smem_unaligned) % 1024) % 1024);
    __shared__ uint64_t q_full, k_full[NSTAGES], v_full[NSTAGES], k_empty[NSTAGES], v_empty[NSTAGES];
    Shared<T, D> s;
    s.q = reinterpret_cast<T*>(smem);
    s.k = s.q + BLOCK_Q<D> * D;
    s.v = s.k + NSTAGES * BLOCK_KV * D;
    s.q_full = &q_full;
    s.k_full = k_full;
    s.v_full = v_full;
    s.k_empty = k_empty;
    s.v_empty = v_empty;
    const BlockWork w = block_work<D>(p);

    if (threadIdx.x == 0) {
        mbarrier_init(&q_full, 1);
#pragma unroll
        for (int i = 0; i < NSTAGES; ++i) {
            mbarrier_init(&k_full[i], 1);
            mbarrier_init(&v_full[i], 1);
            mbarrier_init(&k_empty[i], EMPTY_ARRIVALS<D>);
            mbarrier_init(&v_empty[i], EMPTY_ARRIVALS<D>);
        }
        mbarrier_init_fence();
    }
    __syncthreads();  // the last block-wide barrier: from here the roles meet only at mbarriers

    // ANCHOR: roles
    const int wg = threadIdx.x / 128;
    if (wg == 0) {
        setmaxnreg_dec<PRODUCER_REGS<D>>();
        producer<T, D, TIMELINE>(p, maps, s, w);
    } else {
        setmaxnreg_inc<CONSUMER_REGS<D>>();
        consumer<T, D, TIMELINE>(p, maps, s, w, wg - 1);
    }
    // ANCHOR_END: roles
}

}  // namespace flashlab

using flashlab::warp_specialized_attention;
FLASHLAB_EXPORT_ALL_TMA_PER_D(warp_specialized, warp_specialized_attention, flashlab::THREADS)
FLASHLAB_EXPORT_TIMELINE_TMA_PER_D(warp_specialized, warp_specialized_attention, flashlab::THREADS)
