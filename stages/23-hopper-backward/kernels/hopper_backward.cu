// Stage 23, the backward on Hopper: stage 22's backward (the five products, P recomputed
// from the LSE, dK and dV in registers for a block's keys, dQ added into an fp32
// accumulator, the deterministic order) as FlashAttention-3's hopper/ backward writes it
// (book: "Stage 23: the backward on Hopper"):
//   - The roles (book: "The roles"): a producer warpgroup, whose warp 0 loads K and V once
//     and then Q, dO and the rows' LSE and D for each query block into a two-slot ring
//     (hopper/backward_producer.cuh), and whose warp 1 writes dQ
//     (hopper/backward_epilogue.cuh); two MMA warpgroups, each owning 64 of the block's 128
//     keys, run the five products on wgmma (hopper/backward_mainloop.cuh). A query block is
//     BLOCK_M rows, per head dim as FlashAttention-3 sets its kBlockM: 128 at head dim 64,
//     64 at head dim 128.
//   - dQ by bulk reduce-add (book: "dQ by bulk reduce-add"): the MMA warpgroups write dQ's
//     fp32 tile to shared memory and the writer adds it to global memory with one
//     cp.reduce.async.bulk per query block, instead of one atomic per element.
//   - Causal blocks longest first (book: "Causal blocks longest first",
//     hopper/backward_scheduler.cuh).
// Three kernels, as in stage 22: bwd_preprocess (D; dQ's accumulator and the semaphores
// zeroed), bwd (the five products) and bwd_postprocess (dQ). The main kernel is also built
// as a timeline kernel (timeline.cuh; `flashlab timeline 23`): slot 0 the load warp, 1 the
// dQ writer warp, 2 and 3 the MMA warpgroups.
#include <flashlab/backward.cuh>
#include <flashlab/common.cuh>
#include <flashlab/hopper/backward_epilogue.cuh>
#include <flashlab/hopper/backward_mainloop.cuh>
#include <flashlab/hopper/backward_producer.cuh>
#include <flashlab/hopper/backward_scheduler.cuh>
#include <flashlab/hopper/backward_tiles.cuh>
#include <flashlab/hopper/pipeline.cuh>
#include <flashlab/mbarrier.cuh>
#include <flashlab/named_barrier.cuh>
#include <flashlab/setmaxnreg.cuh>
#include <flashlab/timeline.cuh>
#include <flashlab/tma.cuh>

namespace flashlab {

// ANCHOR: tiles
// One block per BLOCK_N keys of a K/V head; each step one query block of BLOCK_M<D> rows
// (book: "Shared memory and registers"): 128 at head dim 64, 64 at 128. Warpgroup 0 is the
// producer (warp 0 loads, warp 1 writes dQ), warpgroups 1 and 2 the MMA warpgroups, 64 keys
// each.
constexpr int BLOCK_N = 128;
constexpr int BLOCK_M_D64 = 128;
constexpr int BLOCK_M_D128 = 64;
template <int D>
constexpr int BLOCK_M = D == 64 ? BLOCK_M_D64 : BLOCK_M_D128;
constexpr int MMA_WARPGROUPS = 2;
constexpr int WARPS = 4 * (1 + MMA_WARPGROUPS);
constexpr int THREADS = WARPS * 32;
constexpr int NSTAGES = 2;  // Q/dO ring slots: step s + 1's tiles land during step s
template <typename T, int D>
using Tiles = BwdSharedTiles<T, D, BLOCK_M<D>, BLOCK_N, NSTAGES>;
// The dynamic shared memory, without the 1 KiB of alignment slack the launch adds: at D 128
// (64 rows), K and V 32 KiB each, two slots of Q and of dO 16 KiB each, two dS^T buffers
// 16 KiB each, the fp32 dQ tile 32 KiB and the row terms 1 KiB: 193 KiB. At D 64 (128
// rows): K and V 16 KiB each, two slots of Q and of dO 16 KiB each, two dS^T buffers 32 KiB
// each, the dQ tile 32 KiB and the row terms 2 KiB: 194 KiB.
template <int D>
constexpr int MAIN_SMEM_BYTES = Tiles<__nv_bfloat16, D>::BYTES;
constexpr int PRE_ROWS = 128, PRE_THREADS = 128;   // the preprocess: query rows and threads per block
constexpr int POST_ROWS = 64, POST_THREADS = 128;  // the postprocess: the same
// ANCHOR_END: tiles
constexpr int MAIN_SMEM_BYTES_D64 = MAIN_SMEM_BYTES<64>;
constexpr int MAIN_SMEM_BYTES_D128 = MAIN_SMEM_BYTES<128>;
FLASHLAB_SAME_AS_HOST(BLOCK_N);
FLASHLAB_SAME_AS_HOST(BLOCK_M_D64);
FLASHLAB_SAME_AS_HOST(BLOCK_M_D128);
FLASHLAB_SAME_AS_HOST(WARPS);
FLASHLAB_SAME_AS_HOST(NSTAGES);
FLASHLAB_SAME_AS_HOST(PRE_ROWS);
FLASHLAB_SAME_AS_HOST(PRE_THREADS);
FLASHLAB_SAME_AS_HOST(POST_ROWS);
FLASHLAB_SAME_AS_HOST(POST_THREADS);
FLASHLAB_SAME_AS_HOST(MAIN_SMEM_BYTES_D64);
FLASHLAB_SAME_AS_HOST(MAIN_SMEM_BYTES_D128);
static_assert(MAIN_SMEM_BYTES_D128 + 1024 <= 227 * 1024 && MAIN_SMEM_BYTES_D64 + 1024 <= 227 * 1024,
              "a block's shared memory, with the alignment slack, is at most 227 KiB");
static_assert(BLOCK_M<64> % 16 == 0 && BLOCK_M<128> % 16 == 0,
              "query blocks are no more than the semaphores, one per 16 rows: block m uses the m-th");
static_assert(PRE_ROWS % 16 == 0 && PRE_ROWS % BLOCK_M<64> == 0 && PRE_ROWS % BLOCK_M<128> == 0,
              "a preprocess block zeroes whole semaphores and whole dQ tiles");
static_assert(DQ_ACCUM_ROWS % PRE_ROWS == 0 && DQ_ACCUM_ROWS % BLOCK_M<64> == 0 && DQ_ACCUM_ROWS % BLOCK_M<128> == 0,
              "the accumulator's padding holds the last preprocess block and the last query block whole");
static_assert(MMA_THREADS == MMA_WARPGROUPS * 128, "the named barriers count both MMA warpgroups");

// ANCHOR: registers
// The block is launched with 65536 / 384 = 170 registers a thread, 168 after rounding to a
// multiple of 8 (book: "Shared memory and registers"). An MMA thread holds dK and dV (D / 2
// floats each), S^T and dP^T (BLOCK_M / 2 each), P^T and dS^T packed (BLOCK_M / 4 each) and
// its part of dQ (D / 4 floats at BLOCK_M 64, D / 2 at BLOCK_M 128: 32 either way):
// 64 + 64 + 32 + 32 + 16 + 16 + 32 = 256 at D = 128, 32 + 32 + 64 + 64 + 32 + 32 + 32 = 288
// at D = 64 with BLOCK_M 128, if all were live at once; they are not (S^T and dP^T die into
// P^T and dS^T before dQ is needed; at D = 64 the most at once is dK, dV, S^T as P^T's
// floats, P^T packed for dV's wgmma and dP^T: 224), and the MMA warpgroups rise to 240
// while the producer, which computes addresses and waits, drops to 24 (FlashAttention-3's
// split): 24 + 2 x 240 = 504 = 3 x 168. The timeline build also keeps its clock readings:
// at D 64 its MMA warpgroups take 224, which their products fit, and its producer warps 56,
// and ptxas spills one clock reading of the MMA warpgroups a step; at D 128 the MMA
// warpgroups need all 240 (at 232 ptxas serializes their wgmmas), so the producer warps
// stay at 24 and the load warp spills its recorder's fields (src/lib.rs: TOLERATED_SPILLS).
template <int D, bool TIMELINE>
constexpr int PRODUCER_REGS = TIMELINE && D == 64 ? 56 : 24;
template <int D, bool TIMELINE>
constexpr int MMA_REGS = TIMELINE && D == 64 ? 224 : 240;
template <int D, bool TIMELINE>
constexpr bool REGISTERS_FIT = PRODUCER_REGS<D, TIMELINE> + MMA_WARPGROUPS * MMA_REGS<D, TIMELINE> <= (1 + MMA_WARPGROUPS) * (65536 / THREADS / 8 * 8);
static_assert(REGISTERS_FIT<64, false> && REGISTERS_FIT<128, false> && REGISTERS_FIT<64, true> && REGISTERS_FIT<128, true>,
              "setmaxnreg can only share out the registers the block was launched with");
// ANCHOR_END: registers

// ANCHOR: preprocess
// D_i = sum_d dO_id O_id for the block's query rows, as stage 22 computes it: 8 lanes a row,
// 16 bytes of dO and of O at a time, three shuffles. The block also zeroes its rows of dQ's
// accumulator, PRE_ROWS whole rows of (b, h) even past seqlen_q (the padding the last query
// block's bulk add covers), and its semaphores.
template <typename T, int D>
__device__ void preprocess(const BwdParams& bp) {
    const AttnParams& p = bp.fwd;
    constexpr int LANES_PER_ROW = 8;
    constexpr int CHUNKS_PER_LANE = D / 8 / LANES_PER_ROW;  // 16-byte chunks: 1 at D = 64, 2 at D = 128
    constexpr int ROWS_PER_PASS = PRE_THREADS / LANES_PER_ROW;
    static_assert(D % (8 * LANES_PER_ROW) == 0 && PRE_ROWS % ROWS_PER_PASS == 0, "whole rows and chunks");
    const int row0 = blockIdx.x * PRE_ROWS, h = blockIdx.y, b = blockIdx.z;
    const int sub = threadIdx.x % LANES_PER_ROW;
#pragma unroll
    for (int pass = 0; pass < PRE_ROWS / ROWS_PER_PASS; ++pass) {
        const int i = row0 + pass * ROWS_PER_PASS + threadIdx.x / LANES_PER_ROW;
        float sum = 0.f;
        if (i < p.seqlen_q) {
            const T* d_o = static_cast<const T*>(bp.d_o) + q_row_offset(p, b, i, h);
            const T* o = static_cast<const T*>(p.o) + q_row_offset(p, b, i, h);
#pragma unroll
            for (int c = 0; c < CHUNKS_PER_LANE; ++c) {
                const int col = (sub + c * LANES_PER_ROW) * 8;
                const uint4 dov = *reinterpret_cast<const uint4*>(d_o + col);
                const uint4 ov = *reinterpret_cast<const uint4*>(o + col);
                const T* dos = reinterpret_cast<const T*>(&dov);
                const T* os = reinterpret_cast<const T*>(&ov);
#pragma unroll
                for (int e = 0; e < 8; ++e) sum = fmaf(to_float(dos[e]), to_float(os[e]), sum);
            }
        }
#pragma unroll
        for (int offset = LANES_PER_ROW / 2; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffff, sum, offset);
        if (sub == 0 && i < p.seqlen_q) bp.delta[lse_index(p, b, h, i)] = sum;
    }

    // The block's PRE_ROWS rows of the accumulator are one contiguous run: 16 bytes a store.
    float4* accum = reinterpret_cast<float4*>(dq_accum_rows<D>(bp, b, h, row0));
    static_assert(PRE_ROWS * D / 4 % PRE_THREADS == 0, "whole passes");
#pragma unroll
    for (int pass = 0; pass < PRE_ROWS * D / 4 / PRE_THREADS; ++pass)
        accum[pass * PRE_THREADS + threadIdx.x] = make_float4(0.f, 0.f, 0.f, 0.f);
    const int sems = ceil_div(p.seqlen_q, 16);
    const int sem = blockIdx.x * (PRE_ROWS / 16) + threadIdx.x;
    if (threadIdx.x < PRE_ROWS / 16 && sem < sems) bp.dq_semaphore[(static_cast<long long>(b) * p.heads + h) * sems + sem] = 0;
}
// ANCHOR_END: preprocess

// ANCHOR: mma
// An MMA warpgroup: for each query block, the five products, with the elementwise work
// between them while the tensor cores run the last one issued; then dK and dV.
template <typename T, int D, bool TIMELINE>
__device__ void mma(const BwdParams& bp, const Tiles<T, D>& s, const BwdWork& w, int wg) {
    const AttnParams& p = bp.fwd;
    Timeline<TIMELINE> tl(p, 2 + wg);  // slots 2 and 3
    constexpr int BM = BLOCK_M<D>;
    using Mma = BackwardMma<T, D, BM, BLOCK_N>;
    Mma warpgroup(wg);
    const int key0 = w.n_start + wg * Mma::KEYS;  // the warpgroup's first key
    mbarrier_wait(&s.bar->kv_full, 0);
    auto st = pipeline_start<NSTAGES>();
    for_each_query_block(w, [&](int, int m, int step) {
        const int q_start = m * BM;
        FL_PHASE(tl, Phase::WaitFull, step, s.bar->qdo.consumer_wait(st));
        const T* q = s.q_slot(st);
        const T* d_o = s.do_slot(st);
        const float* rows = s.rows_slot(st);  // the LSE (log2 units) of the query rows, then their D
        // S^T = K Q^T and dP^T = V dO^T, both in flight; P^T once S^T is in.
        const uint64_t scores = tl.now();  // the timeline's BwdScores: from here until dP^T is complete
        warpgroup.s_issue(s.k, q);
        warpgroup.dp_issue(s.v, d_o);
        warpgroup.wait_s();
        FL_PHASE(tl, Phase::BwdP, step, masked_or_not<Mma::KEYS>(p, key0, q_start, [&](auto MASKED) {
            warpgroup.template p_from_s<decltype(MASKED)::value>(p, rows, w.n_start, q_start);
        }));
        // dV += P^T dO. BLOCK_M 64: issued here, it runs while dS^T is computed from dP^T.
        // BLOCK_M 128 (Mma::PACK_P_LATE): issued once dS^T is computed, with P^T packed after
        // it (FlashAttention-3's order): with dV in flight here, P^T's floats, P^T packed and
        // dP^T would not fit the registers together.
        uint64_t grads = 0;  // the timeline's BwdGrads: from dV's issue until dV, dK and dQ are complete
        const auto dv_issue = [&] {
            grads = tl.now();
            warpgroup.dv_issue(d_o);
        };
        if constexpr (!Mma::PACK_P_LATE) dv_issue();
        warpgroup.wait_dp();
        tl.record(Phase::BwdScores, step, scores);
        T* ds_tile = s.ds_buffer(step);
        FL_PHASE(tl, Phase::BwdDs, step, warpgroup.ds_from_dp(rows + BM); if constexpr (Mma::PACK_P_LATE) dv_issue();
                 warpgroup.store_ds(ds_tile));
        // dQ's tile to the writer, once it has read the last step's.
        const auto dq_to_writer = [&] {
            FL_PHASE(tl, Phase::Sync, step, named_barrier_sync(DQ_EMPTY, DQ_THREADS));
            FL_PHASE(tl, Phase::DqStore, step, {
                warpgroup.store_dq(s.dq);
                fence_proxy_async_smem();  // before the bulk reduce reads the tile
                named_barrier_arrive(DQ_FULL, DQ_THREADS);
            });
        };
        // dQ = dS K reads both warpgroups' dS^T rows: the two warpgroups meet first. dK += dS^T Q
        // goes before the meeting at BLOCK_M 128, so that it runs while they wait for each
        // other, and after dQ at BLOCK_M 64 (Mma::DQ_FIRST), so that dQ's tile is stored
        // while it runs.
        if constexpr (!Mma::DQ_FIRST) warpgroup.dk_issue(q);
        fence_proxy_async_smem();  // this thread's dS^T stores, before the wgmma reads them
        FL_PHASE(tl, Phase::Sync, step, named_barrier_sync(DS_WRITTEN, MMA_THREADS));
        warpgroup.dq_issue(ds_tile, s.k);
        if constexpr (Mma::DQ_FIRST) {
            warpgroup.dk_issue(q);
            warpgroup.wait_dq();
            dq_to_writer();
        }
        warpgroup.wait_all();
        tl.record(Phase::BwdGrads, step, grads);
        // Q, dO and the row terms read: the producer may refill the slot. Every thread arrives
        // on the slot's empty barrier, which counts them all (BwdBarriers), where Pipeline's
        // consumer_release has lane 0 of each warp arrive: every lane read row terms
        // (p_from_s, ds_from_dp) with plain loads, which the producer's lanes overwrite with
        // plain stores once the barrier completes, and a lane's own arrival, a release,
        // orders its reads before them. compute-sanitizer's racecheck reported those stores
        // racing with the reads under lane 0's arrival alone, though the DS_WRITTEN barrier
        // between the reads and the arrival orders them too in PTX's memory model; a
        // __syncwarp() before lane 0's arrival compiles to a NOP here (the warp is converged).
        mbarrier_arrive(&s.bar->qdo.empty[st.index]);
        if constexpr (!Mma::DQ_FIRST) dq_to_writer();
        st.advance();
    });
    // dK and dV through K's and V's tiles, once the other warpgroup's last dQ = dS K, which
    // reads every key's row of K, is complete too.
    FL_PHASE(tl, Phase::Epilogue, w.steps(), named_barrier_sync(KV_READ, MMA_THREADS);
             store_dk_dv<T, D>(bp, warpgroup.dk, warpgroup.dv, key0, w, s.k, s.v));
    tl.clock();
}
// ANCHOR_END: mma

template <typename T, int D, bool TIMELINE = false>
__device__ void hopper_backward(const BwdParams& bp, const BwdTensorMaps& maps) {
    __shared__ BwdBarriers<NSTAGES> barriers;
    // The block's work, found once and read by every role from shared memory: a field is
    // loaded where it is used instead of holding a register through the whole loop, which
    // the producer's 24 could not spare (ptxas spilled them when each role kept its own).
    __shared__ BwdWork work;
    if (threadIdx.x == 0) {
        barriers.init();
        work = bwd_longest_first<BLOCK_M<D>, BLOCK_N>(bp.fwd);
    }
    __syncthreads();  // the last block-wide barrier: from here the roles meet at mbarriers and named barriers

    // ANCHOR: roles
    // Each role carves its tiles out of shared memory after setmaxnreg, so that no pointer
    // computed before has to live through the change of register count.
    const int wg = threadIdx.x / 128, warp = threadIdx.x / 32 % 4;
    if (wg == 0) {
        setmaxnreg_dec<PRODUCER_REGS<D, TIMELINE>>();
        const Tiles<T, D> s(barriers);
        if (warp == 0) load<T, D, BLOCK_M<D>, BLOCK_N, NSTAGES, TIMELINE>(bp, maps, s, work);
        if (warp == 1) dq_writer<D, BLOCK_M<D>, TIMELINE>(bp, s.dq, work);
    } else {
        setmaxnreg_inc<MMA_REGS<D, TIMELINE>>();
        const Tiles<T, D> s(barriers);
        mma<T, D, TIMELINE>(bp, s, work, wg - 1);
    }
    // ANCHOR_END: roles
}

// ANCHOR: postprocess
// dQ = scale times its fp32 accumulator, rounded to the dtype: 8 elements a thread at a
// time, two 16-byte loads (the 8 columns stay together under dq_tile_offset's swizzle) and
// one 16-byte store.
template <typename T, int D>
__device__ void postprocess(const BwdParams& bp) {
    const AttnParams& p = bp.fwd;
    constexpr int CHUNKS = D / 8;
    const int row0 = blockIdx.x * POST_ROWS, h = blockIdx.y, b = blockIdx.z;
    const int rows = min(POST_ROWS, p.seqlen_q - row0);
    const float* accum = dq_accum_rows<D>(bp, b, h, row0);
    static_assert(POST_ROWS * CHUNKS % POST_THREADS == 0, "whole passes");
#pragma unroll
    for (int pass = 0; pass < POST_ROWS * CHUNKS / POST_THREADS; ++pass) {
        const int idx = pass * POST_THREADS + threadIdx.x, r = idx / CHUNKS, c = (idx % CHUNKS) * 8;
        if (r >= rows) continue;
        const float* from = accum + dq_tile_offset<D>(r, c);  // rows of the run: r mod 4 is (row0 + r) mod 4
        const float4 lo = *reinterpret_cast<const float4*>(from);
        const float4 hi = *reinterpret_cast<const float4*>(from + 4);
        const float s = p.scale;
        *reinterpret_cast<uint4*>(static_cast<T*>(bp.dq) + q_row_offset(p, b, row0 + r, h) + c) =
            make_uint4(pack2<T>(lo.x * s, lo.y * s), pack2<T>(lo.z * s, lo.w * s), pack2<T>(hi.x * s, hi.y * s), pack2<T>(hi.z * s, hi.w * s));
    }
}
// ANCHOR_END: postprocess

}  // namespace flashlab

using flashlab::hopper_backward;
using flashlab::postprocess;
using flashlab::preprocess;
FLASHLAB_EXPORT_BACKWARD(bwd_preprocess, preprocess, flashlab::PRE_THREADS)
FLASHLAB_EXPORT_BACKWARD_TMA(bwd, hopper_backward, flashlab::THREADS)
FLASHLAB_EXPORT_BACKWARD_TIMELINE_TMA(bwd, hopper_backward, flashlab::THREADS)
FLASHLAB_EXPORT_BACKWARD(bwd_postprocess, postprocess, flashlab::POST_THREADS)
