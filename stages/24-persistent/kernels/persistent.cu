// Stage 24, a persistent kernel: stage 19's roles, turns and ring in a grid of one block an
// SM, each block walking a list of work tiles (book: "Stage 24: a persistent kernel"). The
// producer loads the next work tile's Q, K and V while the consumers finish and store this
// one, so a new tile's first products wait neither for a block to start nor for its
// first copies; O leaves through a shared tile of its own where there is room for one.
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
// O's own shared tile, so the next Q can land while this O is stored: at D 64 and 128
// (192 KiB at 128). At 256 there is no room (Q and the ring take 224 of the 227 KiB), and O
// leaves through Q's tile, as in stage 19: the next Q then waits for that store.
template <int D>
constexpr bool O_OWN_TILE = D <= FLASHLAB_HOST_O_OWN_TILE_UP_TO;
// ANCHOR_END: tiles
FLASHLAB_SAME_AS_HOST(NSTAGES);
static_assert((2 * BLOCK_Q<128> + 2 * NSTAGES * BLOCK_KV<128>) * 128 * 2 + 1024 <= 227 * 1024 &&
                  (2 * BLOCK_Q<64> + 2 * NSTAGES * BLOCK_KV<64>) * 64 * 2 + 1024 <= 227 * 1024 && !O_OWN_TILE<256>,
              "O's own tile must fit beside Q and the ring, where the stage's src/tiles.rs gives it one");
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
// O_TILE_FREE comes after the turns of up to three consumers: every consumer waits there,
// before writing O, until the last work tile's store has read O's tile.
constexpr int O_TILE_FREE = MMA_TURN + 3;

template <typename T, int D>
using Tiles = SharedTiles<T, D, BLOCK_Q<D>, BLOCK_KV<D>, NSTAGES>;

// ANCHOR: persistent_tiles
// Stage 19's tiles, O's own after the rings (or Q's, at D 256), and the barrier whose phases
// free Q's tile for the next work tile: each consumer warp arrives once its last S = Q K^T
// is complete, or, where O leaves through Q's tile, the storing thread once the store has read it.
template <typename T, int D>
struct PersistentTiles : Tiles<T, D> {
    T* o;
    uint64_t* q_empty;
    __device__ PersistentTiles(RingBarriers<NSTAGES>& barriers, uint64_t& q_empty_barrier)
        : Tiles<T, D>(barriers), o(O_OWN_TILE<D> ? this->v + NSTAGES * BLOCK_KV<D> * D : this->q), q_empty(&q_empty_barrier) {}
};
template <int D>
constexpr int Q_EMPTY_ARRIVALS = O_OWN_TILE<D> ? CONSUMERS<D> * 4 : 1;
// ANCHOR_END: persistent_tiles

// ANCHOR: consumer
// A consumer warpgroup: for each work tile of the block's walk, stage 19's loop (S = Q K^T,
// the online softmax, O += P V, each slot released as soon as the wgmmas that read it are
// complete), then the epilogue; the ring's state and the turns go on from one work tile to
// the next.
template <typename T, int D, bool TIMELINE>
__device__ void consumer(const AttnParams& p, const AttnTensorMaps& maps, const PersistentTiles<T, D>& s, int wg) {
    Timeline<TIMELINE> tl(p, 1 + wg);
    const PersistentScheduler<BLOCK_Q<D>, BLOCK_KV<D>> scheduler(p);
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
    auto release_q = [&]() {
        if (O_OWN_TILE<D> && threadIdx.x % 32 == 0) mbarrier_arrive(s.q_empty);
    };
    auto st = pipeline_start<NSTAGES>();  // the slot of the next K/V tile
    int first_iteration = 0;              // the timeline numbers K/V tiles across the walk
    for (int i = 0, rank = scheduler.rank(p, 0); !scheduler.done(rank); rank = scheduler.rank(p, ++i)) {
        const BlockWork w = scheduler.work(p, rank);
        WarpgroupMma<T, D, BLOCK_Q<D>, BLOCK_KV<D>> mma(s.q, wg);
        OnlineSoftmax<D, BLOCK_KV<D>, true> softmax;
        const int row[2] = {w.q_start + mma.row(0), w.q_start + mma.row(1)};
        // The softmax of S, without O's rescale: O is still being accumulated by the P V in flight.
        auto softmax_of_s = [&](int kv_start) {
            masked_or_not<BLOCK_KV<D>>(p, kv_start, w.q_start, [&](auto MASKED) {
                if constexpr (decltype(MASKED)::value) mask_scores<BLOCK_KV<D>>(mma.s, p, kv_start, row);
                softmax.max_get_scale(mma.s, p.scale_log2);
                softmax.exponentiate(mma.s, p.scale_log2);
            });
        };
        // ANCHOR: consumer_loop
        // Stage 19's loop, Q's tile released after the last S = Q K^T: the producer may then
        // load the next work tile's Q under this one's last P V and epilogue.
        const int it = first_iteration;
        mbarrier_wait(&s.bar->q_full, i % 2);
        if (w.n_tiles == 0) release_q();
        if (w.n_tiles > 0) {
            FL_PHASE(tl, Phase::WaitFull, it, s.bar->k.consumer_wait(st));
            FL_PHASE(tl, Phase::Sync, it, take_turn());
            FL_PHASE(tl, Phase::Qk, it, mma.qk_issue(s.k_slot(st)); pass_turn(); mma.template wait_s<0>(); s.bar->k.consumer_release(st));
            if (w.n_tiles == 1) release_q();
            FL_PHASE(tl, Phase::Softmax, it, softmax_of_s(0));
            mma.p_from_s();  // O is all zeros: its rescale can wait
        }
        for (int t = 1; t < w.n_tiles; ++t) {
            const auto prev = st;  // tile t - 1's slot, whose V this turn's P V reads
            st.advance();
            FL_PHASE(tl, Phase::WaitFull, it + t, s.bar->k.consumer_wait(st); s.bar->v.consumer_wait(prev));
            FL_PHASE(tl, Phase::Sync, it + t, take_turn());
            const uint64_t issued = tl.now();  // the timeline's Qk of t and Pv of t - 1 both start here
            mma.qk_issue(s.k_slot(st));
            mma.pv_issue(s.v_slot(prev));
            pass_turn();
            mma.template wait_s<1>();  // S is complete; P V may still run
            s.bar->k.consumer_release(st);
            if (t == w.n_tiles - 1) release_q();
            tl.record(Phase::Qk, it + t, issued);
            FL_PHASE(tl, Phase::Softmax, it + t, softmax_of_s(t * BLOCK_KV<D>));
            mma.template wait_o<0>();  // P V is complete: O and P's registers are free
            s.bar->v.consumer_release(prev);
            tl.record(Phase::Pv, it + t - 1, issued);
            softmax.rescale_o(mma.o);
            mma.p_from_s();
        }
        if (w.n_tiles > 0) {
            FL_PHASE(tl, Phase::WaitFull, it + w.n_tiles - 1, s.bar->v.consumer_wait(st));
            FL_PHASE(tl, Phase::Pv, it + w.n_tiles - 1, mma.pv_issue(s.v_slot(st)); mma.template wait_o<0>(); s.bar->v.consumer_release(st));
            st.advance();
        }
        // ANCHOR_END: consumer_loop
        // ANCHOR: epilogue
        // The epilogue: the consumers meet at a named barrier, which the producer never joins,
        // and one thread stores the whole tile without waiting for it to be read. It waits
        // before the next work tile's O is written (O_TILE_FREE), or, where O went out
        // through Q's tile, before the next Q may land there (q_empty).
        FL_PHASE(tl, Phase::Epilogue, it + w.n_tiles, {
            float o_factor[2], lse[2];
            softmax.finalize(o_factor, lse);
            const int tile_row[2] = {mma.row(0), mma.row(1)};
            if constexpr (O_OWN_TILE<D>) {
                if (threadIdx.x == 128) tma_store_wait_read();
                named_barrier_sync(O_TILE_FREE, CONSUMERS<D> * 128);
            }
            epilogue_write<T, D, BLOCK_Q<D>>(p, s.o, mma.o, o_factor, lse, tile_row, w);
            named_barrier_sync(CONSUMERS_WROTE_O, CONSUMERS<D> * 128);
            if (threadIdx.x == 128) {
                epilogue_store_issue<T, D, BLOCK_Q<D>>(maps, s.o, w);
                if constexpr (!O_OWN_TILE<D>) {
                    tma_store_wait_read();
                    mbarrier_arrive(s.q_empty);
                }
            }
        });
        // ANCHOR_END: epilogue
        first_iteration += w.n_tiles;
    }
    // Consumer 0 takes the turn the last consumer handed it, so no barrier is left half-arrived;
    // the last store must have read O's tile before the block exits.
    if (wg == 0) named_barrier_sync(MMA_TURN, TURN_THREADS);
    if (threadIdx.x == 128) tma_store_wait_read();
    tl.clock();
}
// ANCHOR_END: consumer

template <typename T, int D, bool TIMELINE = false>
__device__ void persistent_attention(const AttnParams& p, const AttnTensorMaps& maps) {
    __shared__ RingBarriers<NSTAGES> barriers;
    __shared__ uint64_t q_empty;
    const PersistentTiles<T, D> s(barriers, q_empty);
    if (threadIdx.x == 0) {
        mbarrier_init(&q_empty, Q_EMPTY_ARRIVALS<D>);
        barriers.init(CONSUMERS<D> * 4);  // its fence publishes q_empty's init too
    }
    __syncthreads();  // the last block-wide barrier: from here the roles meet only at mbarriers

    // ANCHOR: roles
    const int wg = threadIdx.x / 128;
    if (wg == 0) {
        setmaxnreg_dec<PRODUCER_REGS<D, TIMELINE>>();
        load_persistent<T, D, BLOCK_Q<D>, BLOCK_KV<D>, NSTAGES, TIMELINE>(p, maps, s, s.q_empty);
    } else {
        setmaxnreg_inc<CONSUMER_REGS<D, TIMELINE>>();
        consumer<T, D, TIMELINE>(p, maps, s, wg - 1);
    }
    // ANCHOR_END: roles
}

}  // namespace flashlab

using flashlab::persistent_attention;
FLASHLAB_EXPORT_ALL_TMA_PER_D_256(persistent, persistent_attention, flashlab::THREADS)
FLASHLAB_EXPORT_TIMELINE_TMA_PER_D_256(persistent, persistent_attention, flashlab::THREADS)
