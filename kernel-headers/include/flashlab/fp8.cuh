// fp8.cuh: E4M3, the 8-bit float of the FP8 stages (1 sign bit, 4 exponent bits, 3 mantissa
// bits; largest finite value 448, no infinity). The conversion from f32 is one PTX
// instruction for two values (cvt.rn.satfinite.e4m3x2.f32, F2FP in SASS): round to nearest
// even, and a value past 448 saturates to 448 instead of becoming NaN. Also the FP8 stages'
// workspace, which their quantization kernel writes and their attention kernel reads. The
// order of V's keys that lets P stay in registers is fragments.cuh's fp8_pv_column.
// Book: "Stage 20: FP8", sections "E4M3, bit by bit" and "P in the 8-bit A layout".
#pragma once
#include <stdint.h>

#include "common.cuh"
#include "fragments.cuh"  // fp8_pv_column, V's key order
#include "hostdev.cuh"

namespace flashlab {

// ANCHOR: pack4_e4m3
// Four floats as four E4M3 codes in one 32-bit register, `a` in the lowest byte. The PTX
// instruction puts its first operand in the upper byte of each 16-bit half.
__device__ __forceinline__ uint32_t pack4_e4m3(float a, float b, float c, float d) {
    uint32_t lo, hi;
    asm("{\n.reg .b16 t;\ncvt.rn.satfinite.e4m3x2.f32 t, %2, %1;\ncvt.u32.u16 %0, t;\n}" : "=r"(lo) : "f"(a), "f"(b));
    asm("{\n.reg .b16 t;\ncvt.rn.satfinite.e4m3x2.f32 t, %2, %1;\ncvt.u32.u16 %0, t;\n}" : "=r"(hi) : "f"(c), "f"(d));
    return lo | (hi << 16);
}
// ANCHOR_END: pack4_e4m3

// E4M3's largest finite value: a tensor's scale maps its largest magnitude here.
constexpr float E4M3_MAX = 448.f;

// ANCHOR: descale
// The factor that takes codes back to values: amax / 448, or 1 for an all-zero slice (whose
// codes are all zero anyway), so no 0 / 0 reaches a kernel.
FL_HOST_DEVICE float fp8_descale(float amax) { return amax > 0.f ? amax / E4M3_MAX : 1.f; }
// ANCHOR_END: descale


// ANCHOR: workspace
// The FP8 stages' workspace, carved out of AttnParams::scratch (the stage's Rust side computes
// the same offsets, `src/workspace.rs`). Each FP8 tensor starts 256-byte aligned, as TMA wants
// its global addresses 16-byte aligned.
//   amax: the largest |x| of each slice as f32 bits (atomicMax on the bits orders non-negative
//         floats): Q's per (batch, head), then K's and V's per (batch, K/V head);
//   q, k: [batch][seqlen][heads][head_dim] E4M3 codes, Q's and K's layout in bytes;
//   vt:   [batch][kv_head][head_dim][keys_padded] E4M3 codes: V transposed, keys in
//         fp8_pv_column order, padded with zeros to a multiple of FP8_KEY_PAD keys (stage
//         24, which transposes V in its kernel, keeps V's codes here in K's layout).
constexpr int FP8_KEY_PAD = 64;
struct Fp8Workspace {
    unsigned* amax_q;
    unsigned* amax_k;
    unsigned* amax_v;
    uint8_t* q;
    uint8_t* k;
    uint8_t* vt;
    int keys_padded;
};
FL_HOST_DEVICE long long fp8_align256(long long bytes) { return (bytes + 255) / 256 * 256; }
__device__ __forceinline__ Fp8Workspace fp8_workspace(const AttnParams& p) {
    const long long bh = static_cast<long long>(p.batch) * p.heads, bkv = static_cast<long long>(p.batch) * p.kv_heads;
    const int keys_padded = (p.seqlen_k + FP8_KEY_PAD - 1) / FP8_KEY_PAD * FP8_KEY_PAD;
    uint8_t* base = reinterpret_cast<uint8_t*>(p.scratch);
    const long long q_at = fp8_align256(4 * (bh + 2 * bkv));
    const long long k_at = q_at + fp8_align256(bh * p.seqlen_q * p.head_dim);
    const long long vt_at = k_at + fp8_align256(bkv * p.seqlen_k * p.head_dim);
    unsigned* amax = reinterpret_cast<unsigned*>(base);
    return {amax, amax + bh, amax + bh + bkv, base + q_at, base + k_at, base + vt_at, keys_padded};
}
// ANCHOR_END: workspace

}  // namespace flashlab
