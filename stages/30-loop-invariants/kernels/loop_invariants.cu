// Stage 30, what the loop does not change, computed before it: stage 29's kernel with the
// work that is the same on every tile taken out of the consumer's way from its turn to its
// wgmmas (book: "Stage 30: what the loop does not change"). A descriptor's high word is the
// same constant for every tile here, so each k-step's descriptor is one 32-bit add on its
// low word; each ring slot's low words are the first slot's plus a constant; and the first
// tile that needs the mask is found once, so a tile's test is one compare.
#include <flashlab/common.cuh>
#include <flashlab/hopper/epilogue.cuh>
#include <flashlab/hopper/mainloop.cuh>
#include <flashlab/hopper/producer.cuh>
#include <flashlab/hopper/scheduler.cuh>
#include <flashlab/hopper/softmax.cuh>
#include <flashlab/hopper/turns.cuh>
#include <flashlab/named_barrier.cuh>
#include <flashlab/setmaxnreg.cuh>
#include <flashlab/timeline.cuh>

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
// Keys per tile, the N of S's wgmma: S is 64 registers a consumer thread, 40 at D 256, where
// O takes 128 and shared memory holds Q (64 KiB) and two slots of 80-key K and V (160 KiB).
template <int D>
constexpr int BLOCK_KV = D == 256 ? 80 : 128;
constexpr int NSTAGES = 2;  // K/V ring slots: at D 128, Q 32 KiB + 2 x (K + V) 64 KiB = 160 KiB
// ANCHOR_END: tiles
FLASHLAB_SAME_AS_HOST(NSTAGES);
static_assert(BLOCK_KV<128> == FLASHLAB_HOST_BLOCK_KV && BLOCK_KV<256> == FLASHLAB_HOST_BLOCK_KV_D256,
              "the key tiles differ from the stage's src/tiles.rs");
static_assert(WARPGROUPS<128> * 4 == FLASHLAB_HOST_WARPS && BLOCK_Q<128> == FLASHLAB_HOST_BLOCK_Q,
              "the D 128 tile differs from the stage's src/tiles.rs");
static_assert(WARPGROUPS<64> * 4 == FLASHLAB_HOST_WARPS_D64 && BLOCK_Q<64> == FLASHLAB_HOST_BLOCK_Q_D64,
              "the D 64 tile differs from the stage's src/tiles.rs");

// ANCHOR: registers
// A block's registers are fixed at launch: every thread gets the cap 65536 / THREADS,
// rounded down to a multiple of 8 (168 at 384 threads, 128 at 512), and setmaxnreg only
// moves registers between the block's warpgroups. The producer, which only computes copy
// coordinates, drops to 24, the least there is (FlashAttention-3's choice); the consumers,
// which hold O (D / 2 floats), S (BLOCK_KV / 2) and P (BLOCK_KV / 4), rise to 240 (160 at D 64):
// 24 + 2 x 240 = 504 <= 3 x 168 and 24 + 3 x 160 = 504 <= 4 x 128. Asking for more than
// the block holds makes setmaxnreg.inc wait forever. The timeline build's producer, which
// also keeps its clock readings, needs 40 at D 128 (32 at D 64) and its consumers 232.
template <int D, bool TIMELINE>
constexpr int PRODUCER_REGS = !TIMELINE ? 24 : D == 64 ? 32 : 40;
template <int D, bool TIMELINE>
constexpr int CONSUMER_REGS = D == 64 ? 160 : TIMELINE ? 232 : 240;
template <int D, bool TIMELINE>
constexpr bool REGISTERS_FIT = PRODUCER_REGS<D, TIMELINE> + CONSUMERS<D> * CONSUMER_REGS<D, TIMELINE> <= WARPGROUPS<D> * (65536 / THREADS<D> / 8 * 8);
static_assert(REGISTERS_FIT<64, false> && REGISTERS_FIT<128, false> && REGISTERS_FIT<256, false> && REGISTERS_FIT<64, true> &&
                  REGISTERS_FIT<128, true> && REGISTERS_FIT<256, true>,
              "setmaxnreg can only share out the registers the block was launched with");
// ANCHOR_END: registers

// Named barriers (named_barrier.cuh); 0 is __syncthreads. CONSUMERS_WROTE_O and the
// turns' MMA_TURN + c are hopper/turns.cuh's, where the host's model of the turns reads them.

template <typename T, int D>
using Tiles = SharedTiles<T, D, BLOCK_Q<D>, BLOCK_KV<D>, NSTAGES>;

// ANCHOR: stepped
// The products with descriptors from their low words. Stage 26 stepped 64-bit descriptors
// built from the tile's address; a 64-bit add is two, with a carry ptxas cannot rule out,
// and the descriptor was built again from the slot's address on every tile. Here every
// descriptor's high word is one constant (SBO = 1024 bytes, the 128-byte swizzle:
// wgmma_desc_sw128), so a k-step adds its offset, in 16-byte units, to the 32-bit low word
// (the start address field, 14 bits: an address inside the tile, so no carry leaves it).
template <typename T, int D, int BQ, int BKV>
struct LowWordMma : WarpgroupMma<T, D, BQ, BKV> {
    using WarpgroupMma<T, D, BQ, BKV>::WarpgroupMma;
    static constexpr uint32_t DESC_HI = (1024 >> 4) | (1u << 30);
    static __device__ __forceinline__ uint64_t desc(uint32_t lo) { return (uint64_t(DESC_HI) << 32) | lo; }
    // K-major step kk of a [D/64][ROWS][64] tile: 32 bytes on inside a 64-column box, a box on every 4.
    static constexpr uint32_t k_major_step(int kk, int rows) { return uint32_t(((kk / 4) * rows * 64 + (kk % 4) * 16) * sizeof(T) / 16); }
    // A ring slot's tile starts this many 16-byte units after the one before it.
    static constexpr uint32_t SLOT_UNITS = BKV * D * sizeof(T) / 16;
    __device__ __forceinline__ void qk_issue(uint32_t q0, uint32_t k0) {
        wgmma_fence_operands(this->s);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk) wgmma_ss<T, BKV>(this->s, desc(q0 + k_major_step(kk, BQ)), desc(k0 + k_major_step(kk, BKV)), kk > 0);
        wgmma_commit();
    }
    // V's k-step kk: 16 rows of 128 bytes on.
    __device__ __forceinline__ void pv_issue(uint32_t v0) {
        wgmma_fence_operands(this->o);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BKV / 16; ++kk) wgmma_rs_mn<T, D>(this->o, this->p[kk], desc(v0 + uint32_t(kk * 16 * 64 * sizeof(T) / 16)), true);
        wgmma_commit();
    }
};
// ANCHOR_END: stepped

// ANCHOR: split_softmax
// The exponentials in two parts, values 0 .. SPLIT - 1 and SPLIT .. BLOCK_KV / 2 - 1 of each
// thread's scores (OnlineSoftmax::exponentiate_part), so that the wait for P V can stand
// between them: a quarter before it.
template <int D>
constexpr int SPLIT = BLOCK_KV<D> / 2 / 4;
// ANCHOR_END: split_softmax

// ANCHOR: load_in_order
// The producer: Q, K of tile 0, then for each tile t the K of tile t + 1 and the V of tile t,
// each into its slot once the consumers have released it. Stage 26 (hopper/producer.cuh's
// load) took K and V of one tile together, so K of tile t + 1 waited behind V of tile t's
// slot, which frees only when P V of tile t - 2 is complete; K's slot frees when S of tile
// t - 1 is, a whole product earlier. K and V walk the ring each with its own state.
template <typename T, int D, bool TIMELINE>
__device__ __forceinline__ void load_in_order(const AttnParams& p, const AttnTensorMaps& maps, const Tiles<T, D>& s, const BlockWork& w) {
    Timeline<TIMELINE> tl(p, 0);
    if (threadIdx.x == 0) {
        mbarrier_arrive_expect_tx(&s.bar->q_full, BLOCK_Q<D> * D * sizeof(T));
        tma_load_tile<D, BLOCK_Q<D>>(s.q, &maps.q, &s.bar->q_full, w.h, w.q_start, w.b);
        constexpr uint32_t TILE_BYTES = BLOCK_KV<D> * D * sizeof(T);
        auto k_st = pipeline_start<NSTAGES>(), v_st = pipeline_start<NSTAGES>();
        auto load_k = [&](int t) {
            FL_PHASE(tl, Phase::WaitEmpty, t, s.bar->k.producer_acquire(k_st));
            FL_PHASE(tl, Phase::Load, t, tma_load_tile<D, BLOCK_KV<D>>(s.k_slot(k_st), &maps.k, s.bar->k.producer_expect(k_st, TILE_BYTES), w.kv_head, t * BLOCK_KV<D>, w.b));
            k_st.advance();
        };
        if (w.n_tiles > 0) load_k(0);
        for (int t = 0; t < w.n_tiles; ++t) {
            if (t + 1 < w.n_tiles) load_k(t + 1);
            FL_PHASE(tl, Phase::WaitEmpty, t, s.bar->v.producer_acquire(v_st));
            FL_PHASE(tl, Phase::Load, t, tma_load_tile<D, BLOCK_KV<D>>(s.v_slot(v_st), &maps.v, s.bar->v.producer_expect(v_st, TILE_BYTES), w.kv_head, t * BLOCK_KV<D>, w.b));
            v_st.advance();
        }
    }
    tl.clock();
}
// ANCHOR_END: load_in_order

// ANCHOR: consumer
// A consumer warpgroup: for each tile S = Q K^T, the online softmax, O += P V, releasing
// each slot as soon as the wgmmas that read it are complete; then the epilogue.
template <typename T, int D, bool TIMELINE>
__device__ void consumer(const AttnParams& p, const AttnTensorMaps& maps, const Tiles<T, D>& s, const BlockWork& w, int wg) {
    Timeline<TIMELINE> tl(p, 1 + wg);
    LowWordMma<T, D, BLOCK_Q<D>, BLOCK_KV<D>> mma(s.q, wg);
    OnlineSoftmax<D, BLOCK_KV<D>, true> softmax;  // lazy at every D (book: "Why it pays here and not in stage 9")
    const int row[2] = {w.q_start + mma.row(0), w.q_start + mma.row(1)};
    // ANCHOR: invariants
    // What every tile shares, before the loop: Q's low word, the first slot's K and V low
    // words (a slot's is the first's plus its offset), and the first tile that needs the
    // mask: tile t needs it when (t + 1) BLOCK_KV keys reach past key_end (tile_needs_mask),
    // that is from t = key_end / BLOCK_KV on.
    using Mma = decltype(mma);
    const uint32_t q_lo = uint32_t(mma.q_desc(0)), k_lo = uint32_t(mma.k_desc(s.k, 0)), v_lo = uint32_t(mma.v_desc(s.v, 0));
    auto k_of = [&](PipelineState<NSTAGES> st) { return k_lo + uint32_t(st.index) * Mma::SLOT_UNITS; };
    auto v_of = [&](PipelineState<NSTAGES> st) { return v_lo + uint32_t(st.index) * Mma::SLOT_UNITS; };
    int key_end = p.seqlen_k;
    if (p.causal) key_end = min(key_end, causal_key_end(p, w.q_start));
    const int first_masked = max(0, key_end) / BLOCK_KV<D>;
    // ANCHOR_END: invariants
    // ANCHOR: turns
    // A consumer issues S = Q K^T only on its turn (bar.sync on its own barrier, which
    // completes when the consumer before it has arrived there too: 2 x 128 threads) and
    // hands the turn to the next as soon as the wgmmas are issued. The tensor cores run them
    // in issue order, so one consumer's product runs while the others, theirs done, run
    // their softmax. Consumer 0's first turn is free: it arrives on its own barrier once.
    auto take_turn = [&]() { named_barrier_sync(MMA_TURN + wg, TURN_THREADS); };
    auto pass_turn = [&]() { named_barrier_arrive(MMA_TURN + (wg + 1) % CONSUMERS<D>, TURN_THREADS); };
    if (wg == 0) named_barrier_arrive(MMA_TURN, TURN_THREADS);
    // ANCHOR_END: turns
    // ANCHOR: softmax_phase
    // The softmax of S up to the wait for P V: the mask, the max, a quarter of the exponentials.
    // The masked tile and the whole one are compiled apart (stage 8: "Masked tiles apart").
    auto softmax_of_s = [&](int t) {
        auto part = [&](auto MASKED) {
            if constexpr (decltype(MASKED)::value) mask_scores<BLOCK_KV<D>>(mma.s, p, t * BLOCK_KV<D>, row);
            softmax.max_get_scale(mma.s, p.scale_log2);
            softmax.template exponentiate_part<0, SPLIT<D>>(mma.s, p.scale_log2);
        };
        if (t >= first_masked) part(Int<1>{}); else part(Int<0>{});
    };
    // The rest of the exponentials, once P V is complete.
    auto rest_of_softmax = [&]() { softmax.template exponentiate_part<SPLIT<D>, BLOCK_KV<D> / 2>(mma.s, p.scale_log2); };
    // ANCHOR_END: softmax_phase
    // ANCHOR: consumer_loop
    // Tile 0: S alone, then its softmax. Tile t: S for t and P V for t - 1 on one turn, the
    // softmax of t while P V runs up to a quarter of its exponentials, then, P V complete,
    // the rest of them with P packed among them, and O's rescale. Last: P V.
    mbarrier_wait(&s.bar->q_full, 0);
    auto st = pipeline_start<NSTAGES>();
    if (w.n_tiles > 0) {
        FL_PHASE(tl, Phase::WaitFull, 0, s.bar->k.consumer_wait(st));
        FL_PHASE(tl, Phase::Sync, 0, take_turn());
        FL_PHASE(tl, Phase::Qk, 0, mma.qk_issue(q_lo, k_of(st)); pass_turn(); mma.template wait_s<0>(); s.bar->k.consumer_release(st));
        FL_PHASE(tl, Phase::Softmax, 0, softmax_of_s(0); rest_of_softmax());
        mma.p_from_s();  // O is all zeros: its rescale can wait
    }
    for (int t = 1; t < w.n_tiles; ++t) {
        const auto prev = st;  // tile t - 1's slot, whose V this turn's P V reads
        st.advance();
        FL_PHASE(tl, Phase::WaitFull, t, s.bar->k.consumer_wait(st));
        FL_PHASE(tl, Phase::Sync, t, take_turn());
        const uint64_t issued = tl.now();  // the timeline's Qk of t and Pv of t - 1 both start here
        mma.qk_issue(q_lo, k_of(st));
        s.bar->v.consumer_wait(prev);  // while S runs: P V reads V's tile, S does not
        mma.pv_issue(v_of(prev));
        pass_turn();
        mma.template wait_s<1>();  // S is complete; P V may still run
        s.bar->k.consumer_release(st);
        tl.record(Phase::Qk, t, issued);
        const uint64_t softmax_start = tl.now();
        softmax_of_s(t);
        mma.template wait_o<0>();  // P V is complete: O and P's registers are free
        s.bar->v.consumer_release(prev);
        tl.record(Phase::Pv, t - 1, issued);
        // One block: ptxas packs P's registers in the gaps between the last exponentials.
        rest_of_softmax();
        mma.p_from_s();
        tl.record(Phase::Softmax, t, softmax_start);
        softmax.rescale_o(mma.o);
    }
    if (w.n_tiles > 0) {
        FL_PHASE(tl, Phase::WaitFull, w.n_tiles - 1, s.bar->v.consumer_wait(st));
        FL_PHASE(tl, Phase::Pv, w.n_tiles - 1, mma.pv_issue(v_of(st)); mma.template wait_o<0>(); s.bar->v.consumer_release(st));
    }
    // ANCHOR_END: consumer_loop
    // Consumer 0 takes the turn the last consumer handed it, so no barrier is left half-arrived.
    if (wg == 0) named_barrier_sync(MMA_TURN, TURN_THREADS);
    // The epilogue: the consumers meet at a named barrier, which the producer never joins,
    // and one thread stores the whole tile.
    FL_PHASE(tl, Phase::Epilogue, w.n_tiles, {
        float o_factor[2], lse[2];
        softmax.finalize(o_factor, lse);
        const int tile_row[2] = {mma.row(0), mma.row(1)};
        epilogue_write<T, D, BLOCK_Q<D>>(p, s.q, mma.o, o_factor, lse, tile_row, w);
        named_barrier_sync(CONSUMERS_WROTE_O, CONSUMERS<D> * 128);
        if (threadIdx.x == 128) epilogue_store<T, D, BLOCK_Q<D>>(maps, s.q, w);
    });
    tl.clock();
}
// ANCHOR_END: consumer

template <typename T, int D, bool TIMELINE = false>
__device__ void loop_invariants_attention(const AttnParams& p, const AttnTensorMaps& maps) {
    __shared__ RingBarriers<NSTAGES> barriers;
    const Tiles<T, D> s(barriers);
    const BlockWork w = longest_first<BLOCK_Q<D>, BLOCK_KV<D>>(p);
    if (threadIdx.x == 0) barriers.init(CONSUMERS<D> * 4);
    __syncthreads();  // the last block-wide barrier: from here the roles meet only at mbarriers

    // ANCHOR: roles
    // Warp-uniform (every lane reads lane 0's): what is computed from it, Q's descriptors
    // among them, can live in uniform registers.
    const int wg = __shfl_sync(0xffffffff, threadIdx.x / 128, 0);
    if (wg == 0) {
        setmaxnreg_dec<PRODUCER_REGS<D, TIMELINE>>();
        load_in_order<T, D, TIMELINE>(p, maps, s, w);
    } else {
        setmaxnreg_inc<CONSUMER_REGS<D, TIMELINE>>();
        consumer<T, D, TIMELINE>(p, maps, s, w, wg - 1);
    }
    // ANCHOR_END: roles
}

}  // namespace flashlab

using flashlab::loop_invariants_attention;
FLASHLAB_EXPORT_ALL_TMA_PER_D_256(inv, loop_invariants_attention, flashlab::THREADS)
FLASHLAB_EXPORT_TIMELINE_TMA_PER_D_256(inv, loop_invariants_attention, flashlab::THREADS)
