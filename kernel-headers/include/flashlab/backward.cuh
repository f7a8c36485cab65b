// backward.cuh: the one argument of the backward stages' kernels. The forward's AttnParams
// (Q, K, V, its O and LSE, the shape and the scale) followed by what only the backward
// reads and writes. Book: "Stage 22: the backward pass".
#pragma once
#include "common.cuh"

namespace flashlab {

// Mirrors harness/src/backward/params.rs field for field (its test pins the layout).
// d_o, dq: [batch, seqlen_q, heads, head_dim] like Q and O; dk, dv: [batch, seqlen_k,
// kv_heads, head_dim] like K and V (with GQA, summed over the heads that share a K/V head).
struct BwdParams {
    AttnParams fwd;  // fwd.o and fwd.lse are the forward's outputs; fwd.scratch is unused
    const void* d_o;
    void* dq;
    void* dk;
    void* dv;
    // fp32, batch * heads * (seqlen_q rounded up to 128) * head_dim elements, laid out as
    // the stage chooses (stage 22: Q's layout, [batch, seqlen_q, heads, head_dim]): dQ's sum
    // over the key blocks, added to by every block whose keys a query row sees, then scaled
    // and rounded by the postprocess.
    float* dq_accum;
    // fp32 [batch, heads, seqlen_q]: D = rowsum(dO o O), the softmax Jacobian's row term.
    float* delta;
    // [batch, heads, ceil(seqlen_q / 16)]: with `deterministic`, how many key blocks have
    // added their share to each query block's dQ, so they add in a fixed order.
    int* dq_semaphore;
    int deterministic;
};
static_assert(offsetof(BwdParams, d_o) == 104 && offsetof(BwdParams, dq) == 112 && offsetof(BwdParams, dk) == 120 &&
                  offsetof(BwdParams, dv) == 128 && offsetof(BwdParams, dq_accum) == 136 &&
                  offsetof(BwdParams, delta) == 144 && offsetof(BwdParams, dq_semaphore) == 152 &&
                  offsetof(BwdParams, deterministic) == 160 && sizeof(BwdParams) == 168,
              "BwdParams differs from harness/src/backward/params.rs");

// The backward kernels' exports: `<prefix>_<bf16|f16>_d<64|128>` taking BwdParams.
#define FLASHLAB_EXPORT_BACKWARD(prefix, body, threads) FLASHLAB_EXPORT_ALL_WITH(flashlab::BwdParams, prefix, body, threads)

}  // namespace flashlab
