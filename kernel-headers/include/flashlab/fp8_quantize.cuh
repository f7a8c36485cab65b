// fp8_quantize.cuh: the FP8 stages' preprocessing, bf16 (or f16) Q, K and V to E4M3 codes
// with one scale per (batch, head) of Q and per (batch, K/V head) of K and V, as
// FlashAttention-3's descale factors (or one per tensor, with a small kernel between). Two
// kernels: the first finds each slice's largest magnitude, the second casts and writes V
// transposed for P V (FP8 wgmma reads shared memory K-major only). With ROTATE (stage 21),
// Q's and K's rows are first multiplied by the same random orthogonal matrix, random signs
// then a Hadamard transform, in registers.
// Book: "Stage 20: FP8", section "The quantization kernel"; "Stage 21: incoherent processing".
#pragma once
#include <stdint.h>

#include "common.cuh"
#include "fp8.cuh"

namespace flashlab {

// The seed of stage 21's random signs (the host's reference uses the same).
constexpr uint64_t FP8_ROTATION_SEED = 0x666c6173686c6162ull;  // "flashlab"

// Rows of one (batch, head) slice a block takes, and its warps: a warp a row at a time.
constexpr int QUANT_ROWS = 64;
constexpr int QUANT_THREADS = 256;

// ANCHOR: rotation_signs
// The sign of coordinate `i` of the rotation: bit 0 of the i-th output of a SplitMix64 stream
// (`reference::fp8_attention::random_signs`, which the tests compare with).
__device__ __forceinline__ float rotation_sign(uint64_t seed, int i) {
    uint64_t z = seed + 0x9e3779b97f4a7c15ull * static_cast<uint64_t>(i + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (z & 1) ? -1.f : 1.f;
}
// ANCHOR_END: rotation_signs

// ANCHOR: rotate_row
// x <- x diag(signs) H / sqrt(D) for the row a warp holds, D / 32 consecutive coordinates a
// lane (lane l holds l D/32 .. l D/32 + D/32 - 1), `signs` the lane's own (rotation_sign,
// computed once a thread: they depend on the coordinate alone). The fast Walsh-Hadamard
// transform pairs coordinates e and e + h for h = 1, 2, 4, ..., D / 2: pairs inside a lane's
// own values first, then pairs across lanes, one shuffle each, log2(D) steps in all,
// O(D log D) work.
template <int D>
__device__ __forceinline__ void rotate_row(float (&x)[D / 32], const float (&signs)[D / 32], int lane) {
    constexpr int PER_LANE = D / 32;
#pragma unroll
    for (int i = 0; i < PER_LANE; ++i) x[i] *= signs[i];
#pragma unroll
    for (int h = 1; h < PER_LANE; h *= 2)
#pragma unroll
        for (int i = 0; i < PER_LANE; ++i)
            if ((i & h) == 0) {
                const float a = x[i], b = x[i + h];
                x[i] = a + b;
                x[i + h] = a - b;
            }
#pragma unroll
    for (int lanes = 1; lanes < 32; lanes *= 2)
#pragma unroll
        for (int i = 0; i < PER_LANE; ++i) {
            const float other = __shfl_xor_sync(0xffffffff, x[i], lanes);
            x[i] = (lane & lanes) ? other - x[i] : x[i] + other;
        }
    const float norm = rsqrtf(float(D));
#pragma unroll
    for (int i = 0; i < PER_LANE; ++i) x[i] *= norm;
}
// ANCHOR_END: rotate_row

// Which slice a block of either kernel takes: grid (row blocks, heads, batch x 3), z % 3
// naming Q, K or V. `valid` is false for a block past its tensor's rows or heads.
struct QuantSlice {
    int tensor, b, h, s0, seqlen, heads;
    const void* x;
    bool valid;
};
__device__ __forceinline__ QuantSlice quant_slice(const AttnParams& p, int rows_of_v) {
    QuantSlice s;
    s.tensor = blockIdx.z % 3;
    s.b = blockIdx.z / 3;
    s.h = blockIdx.y;
    s.s0 = blockIdx.x * QUANT_ROWS;
    s.seqlen = s.tensor == 0 ? p.seqlen_q : p.seqlen_k;
    s.heads = s.tensor == 0 ? p.heads : p.kv_heads;
    s.x = s.tensor == 0 ? p.q : s.tensor == 1 ? p.k : p.v;
    s.valid = s.h < s.heads && s.s0 < (s.tensor == 2 ? rows_of_v : s.seqlen);
    return s;
}

// This lane's signs of the rotation (1 where there is none).
template <int D, bool ROTATE>
__device__ __forceinline__ void lane_signs(int lane, float (&signs)[D / 32]) {
#pragma unroll
    for (int i = 0; i < D / 32; ++i) signs[i] = ROTATE ? rotation_sign(FP8_ROTATION_SEED, lane * (D / 32) + i) : 1.f;
}

// Row s of the slice into a warp's registers as floats (zeros past seqlen), rotated when
// ROTATE and the tensor is Q or K.
template <typename T, int D, bool ROTATE>
__device__ __forceinline__ void load_row(const QuantSlice& sl, int s, int lane, const float (&signs)[D / 32], float (&x)[D / 32]) {
    constexpr int PER_LANE = D / 32;
#pragma unroll
    for (int i = 0; i < PER_LANE; ++i) x[i] = 0.f;
    if (s < sl.seqlen) {
        const T* row = static_cast<const T*>(sl.x) + ((static_cast<long long>(sl.b) * sl.seqlen + s) * sl.heads + sl.h) * D;
        struct alignas(2 * PER_LANE) Chunk {
            T v[PER_LANE];
        };  // one 8- or 16-byte load a lane
        const Chunk c = *reinterpret_cast<const Chunk*>(row + lane * PER_LANE);
#pragma unroll
        for (int i = 0; i < PER_LANE; ++i) x[i] = to_float(c.v[i]);
    }
    if (ROTATE && sl.tensor < 2) rotate_row<D>(x, signs, lane);
}

// ANCHOR: amax
// Kernel 1: each block's largest |x| over its rows of one slice, into the slice's amax
// (zeroed by the host beforehand) with one atomicMax on the float's bits.
template <typename T, int D, bool ROTATE>
__device__ void fp8_amax(const AttnParams& p) {
    const QuantSlice sl = quant_slice(p, p.seqlen_k);
    if (!sl.valid) return;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    float signs[D / 32];
    lane_signs<D, ROTATE>(lane, signs);
    float m = 0.f;
    for (int r = warp; r < QUANT_ROWS; r += QUANT_THREADS / 32) {
        float x[D / 32];
        load_row<T, D, ROTATE>(sl, sl.s0 + r, lane, signs, x);
#pragma unroll
        for (int i = 0; i < D / 32; ++i) m = fmaxf(m, fabsf(x[i]));
    }
    __shared__ float warp_max[QUANT_THREADS / 32];
#pragma unroll
    for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, o));
    if (lane == 0) warp_max[warp] = m;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < QUANT_THREADS / 32; ++w) m = fmaxf(m, warp_max[w]);
        const Fp8Workspace ws = fp8_workspace(p);
        unsigned* amax = sl.tensor == 0 ? ws.amax_q : sl.tensor == 1 ? ws.amax_k : ws.amax_v;
        atomicMax(&amax[sl.b * sl.heads + sl.h], __float_as_uint(m));
    }
}
// ANCHOR_END: amax

// ANCHOR: amax_per_tensor
// Between the two kernels, for scales per tensor (`--fp8-scales tensor`): block x = 0, 1, 2
// (Q, K, V) replaces the amax of each of its tensor's slices with the largest of them, so
// every slice gets the tensor's one scale, and neither the cast nor the attention kernel,
// which both read their slice's amax, changes.
__device__ void fp8_amax_per_tensor(const AttnParams& p) {
    const Fp8Workspace ws = fp8_workspace(p);
    unsigned* amax = blockIdx.x == 0 ? ws.amax_q : blockIdx.x == 1 ? ws.amax_k : ws.amax_v;
    const int slices = p.batch * (blockIdx.x == 0 ? p.heads : p.kv_heads);
    __shared__ unsigned largest;  // f32 bits: non-negative floats order as their bits do
    if (threadIdx.x == 0) largest = 0;
    __syncthreads();
    unsigned m = 0;
    for (int i = threadIdx.x; i < slices; i += blockDim.x) m = max(m, amax[i]);
    atomicMax(&largest, m);
    __syncthreads();
    for (int i = threadIdx.x; i < slices; i += blockDim.x) amax[i] = largest;
}
// ANCHOR_END: amax_per_tensor

// ANCHOR: quantize
// Kernel 2: codes = round_e4m3(x * 448 / amax). Q and K keep their layout, a warp writing
// a row's D bytes. V goes out transposed, [head_dim][keys]: the block casts its 64 keys into
// a shared tile at the columns P V reads them in (fp8_pv_column), then writes the tile's
// rows, 64 bytes each; keys past seqlen_k are zeros, so P V adds nothing for them. Without
// V_TRANSPOSED (stage 24, whose attention kernel transposes V itself) V keeps its layout too.
template <typename T, int D, bool ROTATE, bool V_TRANSPOSED = true>
__device__ void fp8_quantize(const AttnParams& p) {
    const Fp8Workspace ws = fp8_workspace(p);
    const QuantSlice sl = quant_slice(p, V_TRANSPOSED ? ws.keys_padded : p.seqlen_k);
    if (!sl.valid) return;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    constexpr int PER_LANE = D / 32;
    constexpr int WORDS = (PER_LANE + 3) / 4;  // 32-bit words of codes a lane (half of one at d64)
    const unsigned* amax = sl.tensor == 0 ? ws.amax_q : sl.tensor == 1 ? ws.amax_k : ws.amax_v;
    const float to_codes = 1.f / fp8_descale(__uint_as_float(amax[sl.b * sl.heads + sl.h]));
    __shared__ __align__(16) uint8_t vt[D][QUANT_ROWS + 4];  // +4: rows land on different banks
    float signs[PER_LANE];
    lane_signs<D, ROTATE>(lane, signs);
    for (int r = warp; r < QUANT_ROWS; r += QUANT_THREADS / 32) {
        const int s = sl.s0 + r;
        float x[PER_LANE];
        load_row<T, D, ROTATE>(sl, s, lane, signs, x);
        uint32_t codes[WORDS];
#pragma unroll
        for (int i = 0; i < WORDS; ++i) {
            float c[4];
#pragma unroll
            for (int j = 0; j < 4; ++j) c[j] = 4 * i + j < PER_LANE ? x[min(4 * i + j, PER_LANE - 1)] * to_codes : 0.f;
            codes[i] = pack4_e4m3(c[0], c[1], c[2], c[3]);
        }
        if (sl.tensor < 2 || !V_TRANSPOSED) {
            if (s >= sl.seqlen) continue;
            uint8_t* out = (sl.tensor == 0 ? ws.q : sl.tensor == 1 ? ws.k : ws.vt) + ((static_cast<long long>(sl.b) * sl.seqlen + s) * sl.heads + sl.h) * D + lane * PER_LANE;
            if constexpr (PER_LANE >= 4) {
#pragma unroll
                for (int i = 0; i < WORDS; ++i) reinterpret_cast<uint32_t*>(out)[i] = codes[i];
            } else {
                *reinterpret_cast<uint16_t*>(out) = static_cast<uint16_t>(codes[0]);  // d64: 2 codes a lane
            }
        } else {
#pragma unroll
            for (int i = 0; i < PER_LANE; ++i) vt[lane * PER_LANE + i][fp8_pv_column(r)] = uint8_t(codes[i / 4] >> (8 * (i % 4)));
        }
    }
    if (sl.tensor < 2 || !V_TRANSPOSED) return;
    __syncthreads();
    uint8_t* out = ws.vt + (static_cast<long long>(sl.b) * p.kv_heads + sl.h) * D * ws.keys_padded + sl.s0;
    for (int w = threadIdx.x; w < D * QUANT_ROWS / 4; w += QUANT_THREADS) {
        const int d = w / (QUANT_ROWS / 4), c = w % (QUANT_ROWS / 4);
        reinterpret_cast<uint32_t*>(out + static_cast<long long>(d) * ws.keys_padded)[c] = reinterpret_cast<const uint32_t*>(vt[d])[c];
    }
}
// ANCHOR_END: quantize

}  // namespace flashlab

// An FP8 stage's three preparation kernels at head dim D, bf16 in: `<prefix>_amax_bf16_d<D>`,
// `<prefix>_amax_per_tensor_...` and `<prefix>_quantize_...`, from the stage's own `amax`,
// `amax_per_tensor` and `quantize` (which say whether Q and K are rotated).
#define FLASHLAB_EXPORT_FP8_PREP(prefix, D) \
    FLASHLAB_EXPORT_WITH(flashlab::AttnParams, prefix##_amax, amax, __nv_bfloat16, bf16, D, flashlab::QUANT_THREADS) \
    FLASHLAB_EXPORT_WITH(flashlab::AttnParams, prefix##_amax_per_tensor, amax_per_tensor, __nv_bfloat16, bf16, D, flashlab::QUANT_THREADS) \
    FLASHLAB_EXPORT_WITH(flashlab::AttnParams, prefix##_quantize, quantize, __nv_bfloat16, bf16, D, flashlab::QUANT_THREADS)
