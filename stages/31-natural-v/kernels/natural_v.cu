// Stage 31, V as it comes: stage 28's kernel, whose preparation no longer transposes V
// (book: "Stage 31: V as it comes"). Three consumers that take their tiles in order leave
// the producer warpgroup's warps 1-3 idle, as stage 20's two did; here they turn each V tile
// around in shared memory with stage 30's transpose (ldmatrix.trans, byte permutes,
// stmatrix), a copy held to stage 30's by a test. Head dim 128 alone, the width the
// transpose is written for; the constants at 64 and 256 are stage 28's, unused. The rest is
// stage 28's.
#include <flashlab/common.cuh>
#include <flashlab/fp8_quantize.cuh>
#include <flashlab/hopper/epilogue.cuh>
#include <flashlab/hopper/mainloop_fp8.cuh>
#include <flashlab/hopper/producer.cuh>
#include <flashlab/hopper/scheduler.cuh>
#include <flashlab/hopper/softmax.cuh>
#include <flashlab/hopper/turns.cuh>
#include <flashlab/mma.cuh>
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
// V's codes as they land, keys x D, in a ring of their own after O's tile: 2 x 16 KiB more,
// 168 KiB at d128.
constexpr int TRANSPOSERS = 3;  // warps 1-3 of the producer warpgroup; warp 0 issues the copies
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
// V_TRANSPOSED, after the three consumers' turns: the transposing warps have all written a
// V^T tile.
constexpr int V_TRANSPOSED = MMA_TURN + 3;

// The tiles hold codes, a byte each: Q, then the K and V^T rings (V^T's [D][BLOCK_KV] slot is
// as large as K's [BLOCK_KV][D]); O's bf16 tile after them.
template <int D>
using Tiles = SharedTiles<uint8_t, D, BLOCK_Q<D>, BLOCK_KV<D>, NSTAGES>;
template <typename T, int D>
__device__ __forceinline__ T* o_tile(const Tiles<D>& s) {
    return reinterpret_cast<T*>(s.v + NSTAGES * BLOCK_KV<D> * D);
}

template <int D>
__device__ __forceinline__ uint8_t* v_in_slot(const Tiles<D>& s, PipelineState<NSTAGES> st) {
    return reinterpret_cast<uint8_t*>(o_tile<__nv_bfloat16>(s) + BLOCK_Q<D> * D) + st.index * BLOCK_KV<D> * D;
}

// ANCHOR: load_fp8
// The producer, as load() (hopper/producer.cuh) but for codes: Q's, K's and V's rows are
// D / 128 boxes of 128 codes. V's tile goes to the ring `v_in`, whose slots the transposing
// warps free (stage 30's load_fp8).
template <int D, int ROWS>
__device__ __forceinline__ void tma_load_codes(uint8_t* tile, const TensorMap* map, uint64_t* bar, int head, int row0, int b) {
    constexpr int BOX = FP8_QK_BOX<D>;
#pragma unroll
    for (int c = 0; c < D / BOX; ++c) tma_load_4d(tile + c * ROWS * BOX, map, bar, c * BOX, head, row0, b);
}
template <int D, bool TIMELINE>
__device__ __forceinline__ void load_fp8(const AttnParams& p, const AttnTensorMaps& maps, const Tiles<D>& s, Pipeline<NSTAGES>& v_in, const BlockWork& w) {
    Timeline<TIMELINE> tl(p, 0);
    if (threadIdx.x == 0) {
        mbarrier_arrive_expect_tx(&s.bar->q_full, BLOCK_Q<D> * D);
        tma_load_codes<D, BLOCK_Q<D>>(s.q, &maps.q, &s.bar->q_full, w.h, w.q_start, w.b);
        constexpr uint32_t TILE_BYTES = BLOCK_KV<D> * D;
        auto st = pipeline_start<NSTAGES>();
        for (int t = 0; t < w.n_tiles; ++t, st.advance()) {
            FL_PHASE(tl, Phase::WaitEmpty, t, s.bar->k.producer_acquire(st));
            FL_PHASE(tl, Phase::Load, t, tma_load_codes<D, BLOCK_KV<D>>(s.k_slot(st), &maps.k, s.bar->k.producer_expect(st, TILE_BYTES), w.kv_head, t * BLOCK_KV<D>, w.b));
            FL_PHASE(tl, Phase::WaitEmpty, t, v_in.producer_acquire(st));
            FL_PHASE(tl, Phase::Load, t, tma_load_codes<D, BLOCK_KV<D>>(v_in_slot(s, st), &maps.v, v_in.producer_expect(st, TILE_BYTES), w.kv_head, t * BLOCK_KV<D>, w.b));
        }
    }
    tl.clock();
}
// ANCHOR_END: load_fp8

// ANCHOR: transpose_v
// Warps 1-3 of the producer warpgroup: each V tile, once it has landed and the consumers are
// done with the V^T slot it goes to, turned around: V^T's row d holds column d of V, its keys
// in fp8_pv_column's order, so that P's 8-bit A registers stay a plain packing of S (book:
// "P in the 8-bit A layout"). A block is 16 keys by 32 head dims: one ldmatrix.x4.trans (2 x
// 2 codes a register), two byte permutes a pair of registers (4 keys of one dim a register)
// and one stmatrix.x4. Which rows each lane addresses is fragments.cuh's fp8_vt_ldsm_row and
// fp8_vt_stsm_row, a lane's constant and steps: from one block to the next the load's rows
// move 2048 bytes, an immediate, and the store's chunk index is XOR-ed with 1, one LOP3.
// No bank conflicts either way.
template <int D>
__device__ void transpose_v(const Tiles<D>& s, Pipeline<NSTAGES>& v_in, const BlockWork& w) {
    static_assert(D == 128 && BLOCK_KV<D> == 128, "a tile is 128 rows of 128 codes, 4 x 8 blocks");
    const int warp = threadIdx.x / 32 - 1, lane = threadIdx.x % 32;
    const uint32_t even = fp8_vt_perm(lane, 0), odd = fp8_vt_perm(lane, 1);  // registers 2 and 3 permute as 0 and 1
    auto st = pipeline_start<NSTAGES>();
    for (int t = 0; t < w.n_tiles; ++t, st.advance()) {
        v_in.consumer_wait(st);         // V's codes have landed
        s.bar->v.producer_acquire(st);  // and the consumers are done with the V^T slot
        const uint32_t in = smem_addr(v_in_slot(s, st)) + fp8_vt_ldsm_lane(lane), out = smem_addr(s.v_slot(st)) + fp8_vt_stsm_lane(lane);
        // Eight halves of the tile's columns of blocks (32 dims, keys 0-63 or 64-127) over the
        // three warps: each half's first block, then its four blocks from there (kb0 is 0 or
        // 4, so kb0 + j is kb0 ^ j and the store's two XORs make one).
        for (int half = warp; half < 8; half += TRANSPOSERS) {
            const int g = half / 2, kb0 = 4 * (half % 2);
            const uint32_t ld = fp8_vt_ldsm_step(in, g, kb0), sto = fp8_vt_stsm_step(out, g, kb0);
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                uint32_t x[4];
                ldmatrix_x4_trans(x, fp8_vt_ldsm_step(ld, 0, j));
                const uint32_t y[4] = {__byte_perm(x[0], x[1], even), __byte_perm(x[0], x[1], odd),
                                       __byte_perm(x[2], x[3], even), __byte_perm(x[2], x[3], odd)};
                stmatrix_x4(y, fp8_vt_stsm_step(sto, 0, j));
            }
        }
        // The consumers' wgmmas read V^T through the async proxy: these writes must be
        // visible to it before the slot is marked full, by one thread once all have written.
        fence_proxy_async_smem();
        named_barrier_sync(V_TRANSPOSED, TRANSPOSERS * 32);
        if (threadIdx.x == 32) {
            mbarrier_arrive(&v_in.empty[st.index]);
            mbarrier_arrive(&s.bar->v.full[st.index]);
        }
    }
}
// ANCHOR_END: transpose_v

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
    __shared__ Pipeline<NSTAGES> v_in;  // V's codes as they land: full by TMA, empty by the transposers
    const Tiles<D> s(barriers);
    if (threadIdx.x == 0) {
        v_in.init(1);
        barriers.init(CONSUMERS<D> * 4);  // V^T's full barrier: one arrival, by a transposer
    }
    __syncthreads();  // the last block-wide barrier: from here the roles meet only at mbarriers

    // ANCHOR: roles
    // The block's work is found after setmaxnreg, so that nothing computed before it has to
    // fit in the producer's 24 registers across the change.
    const int wg = threadIdx.x / 128;
    if (wg == 0) {
        setmaxnreg_dec<PRODUCER_REGS<D, TIMELINE>>();
        const BlockWork w = longest_first<BLOCK_Q<D>, BLOCK_KV<D>>(p);
        if (threadIdx.x < 32)
            load_fp8<D, TIMELINE>(p, maps, s, v_in, w);
        else
            transpose_v<D>(s, v_in, w);
    } else {
        setmaxnreg_inc<CONSUMER_REGS<D, TIMELINE>>();
        consumer<T, D, TIMELINE>(p, maps, s, longest_first<BLOCK_Q<D>, BLOCK_KV<D>>(p), wg - 1);
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
    flashlab::fp8_quantize<T, D, false, false>(p);  // V as it comes: the kernel transposes it
}
// ANCHOR_END: quantize_kernels
FLASHLAB_EXPORT_FP8_PREP(natural_v, 128)

using flashlab::fp8_attention;
FLASHLAB_EXPORT_TMA(natural_v, fp8_attention, __nv_bfloat16, bf16, 128, flashlab::THREADS<128>)
FLASHLAB_EXPORT_TIMELINE_TMA_1(natural_v, fp8_attention, 128, flashlab::THREADS<128>)
