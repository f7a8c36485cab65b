// Stage 28, three consumers: stage 27's FP8 kernel with three consumer warpgroups at head
// dims 64 and 128 (book: "Stage 28: three consumers"). The overlap inside a warpgroup (stage
// 16) needs S, O, one tile's P V and P live at once; at 8 bits the fold's P V costs D / 2
// registers more, so two consumers of 240 registers are all a block can hold with it. In
// order (S, its softmax, P V, the fold), a consumer holds O with S or with one tile's P V,
// not both, and fits in 160: a third consumer, whose tiles hide the other two's latencies
// as the overlap hid them. Head dim 256 (O alone is 128 registers) is stage 27's kernel.
#include <flashlab/common.cuh>
#include <flashlab/fp8_quantize.cuh>
#include <flashlab/hopper/epilogue.cuh>
#include <flashlab/hopper/mainloop_fp8.cuh>
#include <flashlab/hopper/producer.cuh>
#include <flashlab/hopper/scheduler.cuh>
#include <flashlab/hopper/softmax.cuh>
#include <flashlab/hopper/turns.cuh>
#include <flashlab/named_barrier.cuh>
#include <flashlab/setmaxnreg.cuh>
#include <flashlab/timeline.cuh>

namespace flashlab {

// ANCHOR: tiles
// Consumer warpgroups of 64 query rows each and one producer warpgroup: three consumers at
// head dims 64 and 128, stage 27's two at 256, where O alone is 128 registers a thread.
template <int D>
constexpr int CONSUMERS = D == 256 ? 2 : 3;
template <int D>
constexpr int WARPGROUPS = 1 + CONSUMERS<D>;  // warpgroup 0 is the producer
template <int D>
constexpr int THREADS = WARPGROUPS<D> * 128;
template <int D>
constexpr int BLOCK_Q = CONSUMERS<D> * 64;
// Keys per tile, the N of S's wgmma, and the width of V^T's rows: stage 27's, 192 at d64
// (three boxes of 64, FP8_VT_BOX), 128 at d128 and d256. Shared memory at d64: Q 12 KiB +
// 2 x (K + V^T) 24 KiB + O's bf16 tile 24 KiB = 84 KiB; at d128 Q 24 KiB + 2 x 32 KiB + 48
// KiB = 136 KiB; at d256 stage 27's 224 KiB.
template <int D>
constexpr int BLOCK_KV = D == 64 ? 192 : 128;
// O's columns one P V product makes (mainloop_fp8.cuh): at d128 two halves of 64, so that a
// tile's P V is 32 registers, not 64 (book: "Stage 28", section "The registers in order");
// at d256 two parts of 128, as in stage 20; at d64 all of O's 64.
template <int D>
constexpr int PV_PART = D == 256 ? 128 : 64;
constexpr int NSTAGES = 2;
// ANCHOR_END: tiles
FLASHLAB_SAME_AS_HOST(NSTAGES);
static_assert(BLOCK_KV<128> == FLASHLAB_HOST_BLOCK_KV && BLOCK_KV<64> == FLASHLAB_HOST_BLOCK_KV_D64 &&
                  PV_PART<128> == FLASHLAB_HOST_PV_PART_D128,
              "the tile differs from the stage's src/tiles.rs");
static_assert(WARPGROUPS<128> * 4 == FLASHLAB_HOST_WARPS && BLOCK_Q<128> == FLASHLAB_HOST_BLOCK_Q &&
                  WARPGROUPS<64> * 4 == FLASHLAB_HOST_WARPS && BLOCK_Q<64> == FLASHLAB_HOST_BLOCK_Q &&
                  WARPGROUPS<256> * 4 == FLASHLAB_HOST_WARPS_D256 && BLOCK_Q<256> == FLASHLAB_HOST_BLOCK_Q_D256,
              "the tile differs from the stage's src/tiles.rs");

// ANCHOR: registers
// A block's registers are fixed at launch: every thread gets the cap 65536 / THREADS,
// rounded down to a multiple of 8 (128 at 512 threads, 168 at 384), and setmaxnreg only
// moves registers between the block's warpgroups. Three consumers and the producer at 24:
// 24 + 3 x 160 = 504 <= 4 x 128 (the timeline build, whose producer keeps its clock
// readings: 32 + 3 x 160 = 512). In order, a consumer thread holds O (D / 2 floats) with S
// (BLOCK_KV / 2) while it runs the softmax, then O with P (BLOCK_KV / 8) and one half's
// P V (32): at d128 64 + 64 = 128, then 64 + 16 + 32 = 112; at d64, 192 keys, 32 + 96,
// then 32 + 24 + 32. With the overlap it would hold all four (stage 27's 208 and 184).
// At d256, stage 27's two consumers of 240: 24 + 2 x 240 = 504 <= 3 x 168.
template <int D, bool TIMELINE>
constexpr int PRODUCER_REGS = !TIMELINE ? 24 : CONSUMERS<D> == 3 ? 32 : 40;
template <int D, bool TIMELINE>
constexpr int CONSUMER_REGS = CONSUMERS<D> == 3 ? 160 : TIMELINE ? 232 : 240;
template <int D, bool TIMELINE>
constexpr bool REGISTERS_FIT = PRODUCER_REGS<D, TIMELINE> + CONSUMERS<D> * CONSUMER_REGS<D, TIMELINE> <= WARPGROUPS<D> * (65536 / THREADS<D> / 8 * 8);
static_assert(REGISTERS_FIT<64, false> && REGISTERS_FIT<64, true> && REGISTERS_FIT<128, false> && REGISTERS_FIT<128, true> &&
                  REGISTERS_FIT<256, false>,
              "setmaxnreg can only share out the registers the block was launched with");
// ANCHOR_END: registers

// Named barriers (named_barrier.cuh); 0 is __syncthreads. CONSUMERS_WROTE_O and the
// turns' MMA_TURN + c are hopper/turns.cuh's, where the host's model of the turns reads them.

// The tiles hold codes, a byte each: Q, then the K and V^T rings (V^T's [D][BLOCK_KV] slot is
// as large as K's [BLOCK_KV][D]); O's bf16 tile after them.
template <int D>
using Tiles = SharedTiles<uint8_t, D, BLOCK_Q<D>, BLOCK_KV<D>, NSTAGES>;
template <typename T, int D>
__device__ __forceinline__ T* o_tile(const Tiles<D>& s) {
    return reinterpret_cast<T*>(s.v + NSTAGES * BLOCK_KV<D> * D);
}

// ANCHOR: load_fp8
// The producer, as load() (hopper/producer.cuh) but for codes: Q's and K's rows are D / 128
// boxes of 128 codes (one box of 64 at d64), and a V^T tile is BLOCK_KV / VT_BOX boxes of D
// rows of VT_BOX keys from key t BLOCK_KV on: one box at d128 and d256, three of 64 keys at
// d64, one after the other in the slot, all signalling the slot's one barrier.
template <int D, int ROWS>
__device__ __forceinline__ void tma_load_codes(uint8_t* tile, const TensorMap* map, uint64_t* bar, int head, int row0, int b) {
    constexpr int BOX = FP8_QK_BOX<D>;
#pragma unroll
    for (int c = 0; c < D / BOX; ++c) tma_load_4d(tile + c * ROWS * BOX, map, bar, c * BOX, head, row0, b);
}
template <int D>
__device__ __forceinline__ void tma_load_vt(uint8_t* tile, const TensorMap* map, uint64_t* bar, int key0, int kv_head, int b) {
    constexpr int BOX = FP8_VT_BOX<BLOCK_KV<D>>;
#pragma unroll
    for (int c = 0; c < BLOCK_KV<D> / BOX; ++c) tma_load_4d(tile + c * D * BOX, map, bar, key0 + c * BOX, 0, kv_head, b);
}
template <int D, bool TIMELINE>
__device__ __forceinline__ void load_fp8(const AttnParams& p, const AttnTensorMaps& maps, const Tiles<D>& s, const BlockWork& w) {
    Timeline<TIMELINE> tl(p, 0);
    if (threadIdx.x == 0) {
        mbarrier_arrive_expect_tx(&s.bar->q_full, BLOCK_Q<D> * D);
        tma_load_codes<D, BLOCK_Q<D>>(s.q, &maps.q, &s.bar->q_full, w.h, w.q_start, w.b);
        constexpr uint32_t TILE_BYTES = BLOCK_KV<D> * D;
        auto st = pipeline_start<NSTAGES>();
        for (int t = 0; t < w.n_tiles; ++t, st.advance()) {
            FL_PHASE(tl, Phase::WaitEmpty, t, s.bar->k.producer_acquire(st));
            FL_PHASE(tl, Phase::Load, t, tma_load_codes<D, BLOCK_KV<D>>(s.k_slot(st), &maps.k, s.bar->k.producer_expect(st, TILE_BYTES), w.kv_head, t * BLOCK_KV<D>, w.b));
            FL_PHASE(tl, Phase::WaitEmpty, t, s.bar->v.producer_acquire(st));
            FL_PHASE(tl, Phase::Load, t, tma_load_vt<D>(s.v_slot(st), &maps.v, s.bar->v.producer_expect(st, TILE_BYTES), t * BLOCK_KV<D>, w.kv_head, w.b));
        }
    }
    tl.clock();
}
// ANCHOR_END: load_fp8

// ANCHOR: consumer
// A consumer warpgroup: for each tile S = Q K^T, the online softmax, O += P V, releasing
// each slot as soon as the wgmmas that read it are complete; then the epilogue.
template <typename T, int D, bool TIMELINE>
__device__ void consumer(const AttnParams& p, const AttnTensorMaps& maps, const Tiles<D>& s, const BlockWork& w, int wg) {
    Timeline<TIMELINE> tl(p, 1 + wg);
    WarpgroupMmaFp8<D, BLOCK_Q<D>, BLOCK_KV<D>, PV_PART<D>> mma(s.q, wg);
    // P times 2^8 (book: "Where the scales enter"), so not lazy: P must stay below 448.
    OnlineSoftmax<D, BLOCK_KV<D>, false, 8> softmax;
    const int row[2] = {w.q_start + mma.row(0), w.q_start + mma.row(1)};
    // ANCHOR: descales
    // The codes' scales: S's fold into the exponent's factor, V's into O's final one.
    const Fp8Workspace ws = fp8_workspace(p);
    const float descale_q = fp8_descale(__uint_as_float(ws.amax_q[w.b * p.heads + w.h]));
    const float descale_k = fp8_descale(__uint_as_float(ws.amax_k[w.b * p.kv_heads + w.kv_head]));
    const float descale_v = fp8_descale(__uint_as_float(ws.amax_v[w.b * p.kv_heads + w.kv_head]));
    const float scale_log2 = p.scale_log2 * descale_q * descale_k;
    // ANCHOR_END: descales
    // ANCHOR: turns
    // A consumer issues S = Q K^T only on its turn (bar.sync on its own barrier, which
    // completes when the consumer before it has arrived there too: 2 x 128 threads) and
    // hands the turn to the next as soon as the wgmmas are issued. The tensor cores run them
    // in issue order, so one consumer's product runs while the others, theirs done, run
    // their softmax. Consumer 0's first turn is free: it arrives on its own barrier once.
    // Three consumers wait at it more often than two, and still gain by it at d128 (book:
    // "Stage 28", tried and left: without the turns 0.95-0.97).
    auto take_turn = [&]() { named_barrier_sync(MMA_TURN + wg, TURN_THREADS); };
    auto pass_turn = [&]() { named_barrier_arrive(MMA_TURN + (wg + 1) % CONSUMERS<D>, TURN_THREADS); };
    if (wg == 0) named_barrier_arrive(MMA_TURN, TURN_THREADS);
    // ANCHOR_END: turns
    // ANCHOR: softmax_phase
    // The softmax of S, without O's rescale: the fold takes O to the new max (o_scale).
    auto softmax_of_s = [&](int kv_start) {
        masked_or_not<BLOCK_KV<D>>(p, kv_start, w.q_start, [&](auto MASKED) {
            if constexpr (decltype(MASKED)::value) mask_scores<BLOCK_KV<D>>(mma.s, p, kv_start, row);
            softmax.max_get_scale(mma.s, scale_log2);
            softmax.exponentiate(mma.s, scale_log2);
        });
    };
    // ANCHOR_END: softmax_phase
    // ANCHOR: consumer_loop
    mbarrier_wait(&s.bar->q_full, 0);
    auto st = pipeline_start<NSTAGES>();
    // In order (book: "Stage 28: three consumers", section "The loop in order"): tile t's S
    // on the consumer's turn, its softmax, P; then P V a part at a time, each folded into O
    // once complete. The other two consumers' products run under this one's softmax and
    // folds, as the next tile's S ran under them in stage 27's overlap.
    for (int t = 0; t < w.n_tiles; ++t, st.advance()) {
        FL_PHASE(tl, Phase::WaitFull, t, s.bar->k.consumer_wait(st));
        FL_PHASE(tl, Phase::Sync, t, take_turn());
        FL_PHASE(tl, Phase::Qk, t, mma.qk_issue(s.k_slot(st)); pass_turn(); mma.template wait_s<0>(); s.bar->k.consumer_release(st));
        FL_PHASE(tl, Phase::Softmax, t, softmax_of_s(t * BLOCK_KV<D>));
        mma.p_from_s();  // O holds the tiles before t against max t - 1; o_scale takes it to max t
        FL_PHASE(tl, Phase::WaitFull, t, s.bar->v.consumer_wait(st));
        FL_PHASE(tl, Phase::Pv, t, mma.pv_in_parts(s.v_slot(st), softmax.o_scale); s.bar->v.consumer_release(st));
    }
    // ANCHOR_END: consumer_loop
    // Consumer 0 takes the turn the last consumer handed it, so no barrier is left half-arrived.
    if (wg == 0) named_barrier_sync(MMA_TURN, TURN_THREADS);
    // The epilogue: the consumers meet at a named barrier, which the producer never joins,
    // and one thread stores the whole tile.
    FL_PHASE(tl, Phase::Epilogue, w.n_tiles, {
        float o_factor[2], lse[2];
        softmax.finalize(o_factor, lse);
        o_factor[0] *= descale_v;
        o_factor[1] *= descale_v;
        const int tile_row[2] = {mma.row(0), mma.row(1)};
        epilogue_write<T, D, BLOCK_Q<D>>(p, o_tile<T>(s), mma.o, o_factor, lse, tile_row, w);
        named_barrier_sync(CONSUMERS_WROTE_O, CONSUMERS<D> * 128);
        if (threadIdx.x == 128) epilogue_store<T, D, BLOCK_Q<D>>(maps, o_tile<T>(s), w);
    });
    tl.clock();
}
// ANCHOR_END: consumer

template <typename T, int D, bool TIMELINE = false>
__device__ void fp8_attention(const AttnParams& p, const AttnTensorMaps& maps) {
    __shared__ RingBarriers<NSTAGES> barriers;
    const Tiles<D> s(barriers);
    const BlockWork w = longest_first<BLOCK_Q<D>, BLOCK_KV<D>>(p);
    if (threadIdx.x == 0) barriers.init(CONSUMERS<D> * 4);
    __syncthreads();  // the last block-wide barrier: from here the roles meet only at mbarriers

    // ANCHOR: roles
    const int wg = threadIdx.x / 128;
    if (wg == 0) {
        setmaxnreg_dec<PRODUCER_REGS<D, TIMELINE>>();
        load_fp8<D, TIMELINE>(p, maps, s, w);
    } else {
        setmaxnreg_inc<CONSUMER_REGS<D, TIMELINE>>();
        consumer<T, D, TIMELINE>(p, maps, s, w, wg - 1);
    }
    // ANCHOR_END: roles
}

}  // namespace flashlab

// ANCHOR: quantize_kernels
// The preprocessing, bf16 to codes (fp8_quantize.cuh): amax, made the tensor's for scales per tensor, then the cast. No rotation.
template <typename T, int D>
__device__ void amax(const flashlab::AttnParams& p) {
    flashlab::fp8_amax<T, D, false>(p);
}
template <typename T, int D>
__device__ void amax_per_tensor(const flashlab::AttnParams& p) {
    flashlab::fp8_amax_per_tensor(p);
}
template <typename T, int D>
__device__ void quantize(const flashlab::AttnParams& p) {
    flashlab::fp8_quantize<T, D, false>(p);
}
// ANCHOR_END: quantize_kernels
FLASHLAB_EXPORT_FP8_PREP(three_consumers, 64)
FLASHLAB_EXPORT_FP8_PREP(three_consumers, 128)
FLASHLAB_EXPORT_FP8_PREP(three_consumers, 256)

using flashlab::fp8_attention;
FLASHLAB_EXPORT_TMA(three_consumers, fp8_attention, __nv_bfloat16, bf16, 64, flashlab::THREADS<64>)
FLASHLAB_EXPORT_TMA(three_consumers, fp8_attention, __nv_bfloat16, bf16, 128, flashlab::THREADS<128>)
FLASHLAB_EXPORT_TMA(three_consumers, fp8_attention, __nv_bfloat16, bf16, 256, flashlab::THREADS<256>)
FLASHLAB_EXPORT_TIMELINE_TMA_1(three_consumers, fp8_attention, 64, flashlab::THREADS<64>)
FLASHLAB_EXPORT_TIMELINE_TMA_1(three_consumers, fp8_attention, 128, flashlab::THREADS<128>)
