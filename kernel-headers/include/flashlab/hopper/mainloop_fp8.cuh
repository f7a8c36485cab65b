// hopper/mainloop_fp8.cuh: mainloop.cuh at 8 bits. A consumer warpgroup's S = Q K^T and
// O += P V on FP8 wgmma (QGMMA in SASS, k = 32 a step), whose shared-memory operands must be
// K-major: Q and K are (the head dim is their reduction), and V comes transposed, [head_dim]
// rows of BLOCK_KV keys, so that P V reduces over contiguous keys too. P is packed from S's
// accumulator into the 8-bit A layout in place, four codes a register.
// Book: "Stage 20: FP8", sections "Why V is transposed" and "P in the 8-bit A layout".
#pragma once
#include "../common.cuh"
#include "../fp8.cuh"
#include "../fragments.cuh"
#include "../wgmma.cuh"

namespace flashlab {

// Codes in a row of a Q or K box: 128, the 128-byte swizzle's span, or at head dim 64 the
// whole 64-byte row under the 64-byte swizzle. The producer's copies (the stages'
// tma_load_codes) and the descriptors below both read it; the host's tensor maps take the
// same rule (harness::fp8::box_codes).
template <int D>
constexpr int FP8_QK_BOX = D < 128 ? D : 128;
// Keys in a box of a V^T tile: the whole 128-byte row of a 128-key tile, or 64 keys under
// the 64-byte swizzle where the tile is no multiple of 128 keys (stage 27: 192 at head dim
// 64). The producers' copies and the descriptors below read it; the host's tensor map takes
// the same rule (harness::fp8::vt_box_keys).
template <int BLOCK_KV>
constexpr int FP8_VT_BOX = BLOCK_KV % 128 == 0 ? 128 : 64;

// ANCHOR: warpgroup_mma_fp8
// Per thread: O's 64 x D block is D / 2 floats and S's 64 x BLOCK_KV block BLOCK_KV / 2, as at
// 16 bits; P is half as many registers, four codes each, one 64 x 32 k-step per [kk]. And one
// tile's P V, D / 2 floats more: an FP8 wgmma adds into its accumulator with fewer bits than
// f32 keeps, so P V starts from zero on each tile and O, in f32, adds it (fold). At D = 256
// that would be 128 floats more: P V is then made in two parts of 128 columns, one after the
// other, each folded into its half of O before the next is issued.
// PV_PART: O's columns one P V product makes, 128 at most (a 64 x 256 accumulator would be
// 128 registers).
template <int D, int BLOCK_Q, int BLOCK_KV, int PV_PART = (D < 128 ? D : 128)>
struct WarpgroupMmaFp8 {
    static constexpr int PART = PV_PART;  // O's columns one P V product makes
    static constexpr int PARTS = D / PART;
    float o[D / 2] = {};
    float o_tile[PART / 2];
    float s[BLOCK_KV / 2];
    uint32_t p[BLOCK_KV / 32][4];
    const uint8_t* q_smem;  // [D/BOX][BLOCK_Q][BOX] codes, swizzled over BOX bytes (TMA's layout)
    int wg;

    __device__ WarpgroupMmaFp8(const uint8_t* q, int warpgroup) : q_smem(q), wg(warpgroup) {}

    __device__ __forceinline__ int row(int r) const {
        return wg * 64 + threadIdx.x % 128 / 32 * 16 + quad_group(threadIdx.x % 32) + 8 * r;
    }

    // ANCHOR: descriptors_fp8
    // A 128-byte row holds 128 codes, so a box is 128 columns of the head dim, and a k-step
    // of 32 codes is 32 bytes: the same bytes as a 16-bit k-step of 16. Q and K: the step
    // 32 bytes further inside a box, a whole box further every 4 steps. At head dim 64 a row
    // of codes is 64 bytes, one box under the 64-byte swizzle (2 steps; 8 rows, 512 bytes,
    // between groups). V^T: [D] rows of BLOCK_KV keys in boxes of VT_BOX: one box of 128
    // keys, its k-steps (32 keys) walking along the row the same way; or, where the tile is
    // no multiple of 128 keys (stage 27's 192), boxes of 64 keys under the 64-byte swizzle,
    // one after the other, 2 k-steps each.
    static constexpr int BOX = FP8_QK_BOX<D>;  // bytes (codes) of a Q or K box row
    __device__ __forceinline__ static uint64_t qk_desc(const uint8_t* rows, int tile_rows, int kk) {
        constexpr int STEPS = BOX / 32;  // k-steps in one box row
        const uint8_t* at = rows + (kk / STEPS) * tile_rows * BOX + (kk % STEPS) * 32;
        if constexpr (BOX == 128) return wgmma_desc_sw128(at, 16, 1024);
        static_assert(BOX == 128 || BOX == 64, "Q's and K's rows of codes are 64 bytes or multiples of 128");
        return wgmma_desc_sw64(at, 16, 512);
    }
    __device__ __forceinline__ uint64_t q_desc(int kk) const { return qk_desc(q_smem + wg * 64 * BOX, BLOCK_Q, kk); }
    __device__ __forceinline__ static uint64_t k_desc(const uint8_t* k_tile, int kk) { return qk_desc(k_tile, BLOCK_KV, kk); }
    static constexpr int VT_BOX = FP8_VT_BOX<BLOCK_KV>;
    static_assert(BLOCK_KV % 64 == 0, "V^T's tile is whole boxes of 64 or 128 keys");
    // `rows`: the tile, or at d256 the first of a part's rows (PART rows into each box).
    __device__ __forceinline__ static uint64_t vt_desc(const uint8_t* rows, int kk) {
        const uint8_t* at = rows + (kk * 32 / VT_BOX) * D * VT_BOX + (kk * 32) % VT_BOX;
        if constexpr (VT_BOX == 128) return wgmma_desc_sw128(at, 16, 1024);
        return wgmma_desc_sw64(at, 16, 512);
    }
    // ANCHOR_END: descriptors_fp8

    __device__ __forceinline__ void qk_issue(const uint8_t* k_tile) {
        wgmma_fence_operands(s);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < D / 32; ++kk) wgmma_ss_e4m3<BLOCK_KV>(s, q_desc(kk), k_desc(k_tile, kk), kk > 0);
        wgmma_commit();
    }
    // ANCHOR: pv_fp8
    // One tile's P V into o_tile, from zero (the first k-step does not accumulate): O's
    // columns part PART .. part PART + PART - 1, from V^T's rows of the same numbers.
    __device__ __forceinline__ void pv_issue(const uint8_t* vt_tile, int part = 0) {
        wgmma_fence_operands(o_tile);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BLOCK_KV / 32; ++kk)
            wgmma_rs_e4m3<PART>(o_tile, p[kk], vt_desc(vt_tile + part * PART * VT_BOX, kk), kk > 0);
        wgmma_commit();
    }
    // Once it is complete: O = O * scale + o_tile, one FFMA an element, where `scale` takes O
    // from the max the tiles before were exponentiated against to this tile's. A part's
    // columns are its own registers of O: the accumulator's registers run 8 columns at a time.
    __device__ __forceinline__ void fold(const float (&scale)[2], int part = 0) {
#pragma unroll
        for (int i = 0; i < PART / 2; ++i) o[part * PART / 2 + i] = fmaf(o[part * PART / 2 + i], scale[i % 4 / 2], o_tile[i]);
    }
    // Head dim 256: P V a part at a time, each folded into O once complete, so that one
    // part's registers serve both.
    __device__ __forceinline__ void pv_in_parts(const uint8_t* vt_tile, const float (&scale)[2]) {
#pragma unroll
        for (int part = 0; part < PARTS; ++part) {
            pv_issue(vt_tile, part);
            wait_o<0>();
            fold(scale, part);
        }
    }
    // ANCHOR_END: pv_fp8
    template <int N>
    __device__ __forceinline__ void wait_s() {
        wgmma_wait<N>();
        wgmma_fence_operands(s);
    }
    template <int N>
    __device__ __forceinline__ void wait_o() {
        wgmma_wait<N>();
        wgmma_fence_operands(o_tile);
    }

    // ANCHOR: p_from_s_fp8
    // Register r of k-step kk holds 4 consecutive k of one row: row g for r = 0, 2 and g + 8
    // for r = 1, 3, k 4t .. 4t + 3 (r < 2) or 16 + 4t .. 19 + 4t. The thread's S values of
    // that row in keys 32 kk .. 32 kk + 31 are, per 8-key column block n, keys 2t and 2t + 1:
    // with V's keys in fp8_pv_column order, k 4t .. 4t + 3 are blocks 2 (r / 2) and 2 (r / 2)
    // + 1, so the register packs S values 16 kk + 8 (r / 2) + 2 (r % 2) + {0, 1, 4, 5}.
    __device__ __forceinline__ void p_from_s() {
#pragma unroll
        for (int kk = 0; kk < BLOCK_KV / 32; ++kk)
#pragma unroll
            for (int r = 0; r < 4; ++r) {
                const float* v = s + 16 * kk + 8 * (r / 2) + 2 * (r % 2);
                p[kk][r] = pack4_e4m3(v[0], v[1], v[4], v[5]);
            }
    }
    // ANCHOR_END: p_from_s_fp8
};
// ANCHOR_END: warpgroup_mma_fp8

}  // namespace flashlab
