// wgmma.cuh: Hopper's warpgroup matrix multiply, one wrapper per PTX instruction. A
// warpgroup (4 consecutive warps, the first a multiple of 4) issues one wgmma.mma_async
// for a 64 x N x 16 product; B always comes from shared memory through a 64-bit matrix
// descriptor, A from shared memory too (SS) or from registers (RS). The products run
// asynchronously: fence, commit and wait order them against ordinary instructions.
// Book: "Stage 11: wgmma", sections "A warpgroup" and "The descriptor".
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include <type_traits>

#include "mma.cuh"  // smem_addr

namespace flashlab {

// ANCHOR: descriptor
// The matrix descriptor of a tile in shared memory that TMA wrote with the 128-byte swizzle
// (smem_tile.cuh: tile_offset_tma): its start address, two strides, the swizzle mode. All
// four fields count 16-byte units. The pattern is 8 rows of 128 bytes (1024 bytes), which
// is why tiles start 1024-byte aligned and the "base offset" bits stay 0.
//   K-major (the reduction dimension contiguous: Q and K for S = Q K^T): an instruction
//     reads 16 elements, 32 bytes, of each row, inside one 128-byte row, so only the stride
//     between 8-row groups matters (SBO = 1024 bytes); LBO is unused, by convention 1.
//     The next k-step starts 32 bytes further; the next 64 columns, a whole box further.
//   MN-major (N contiguous: V for O = P V, with the keys as rows): 8 keys of 128 bytes
//     make a group (SBO = 1024 bytes between groups of keys), and each 64 columns of N is
//     a box of its own (LBO = the box's size, from one 64-column group to the next).
__device__ __forceinline__ uint64_t wgmma_desc_sw128(const void* tile_smem, uint32_t lbo_bytes, uint32_t sbo_bytes) {
    const uint64_t start = (smem_addr(tile_smem) & 0x3FFFF) >> 4;
    return start | (uint64_t((lbo_bytes >> 4) & 0x3FFF) << 16) | (uint64_t((sbo_bytes >> 4) & 0x3FFF) << 32) |
           (uint64_t(1) << 62);  // layout type 1: the 128-byte swizzle
}
// ANCHOR_END: descriptor

// ANCHOR: descriptor_sw64
// The same for a tile TMA wrote with the 64-byte swizzle, whose rows are 64 bytes (FP8 codes
// at head dim 64, book: "Stage 20: FP8", section "Head dims 64 and 128"): the pattern is 8
// rows of 64 bytes, 512 bytes, so K-major tiles have SBO = 512 and start 512-byte aligned.
__device__ __forceinline__ uint64_t wgmma_desc_sw64(const void* tile_smem, uint32_t lbo_bytes, uint32_t sbo_bytes) {
    const uint64_t start = (smem_addr(tile_smem) & 0x3FFFF) >> 4;
    return start | (uint64_t((lbo_bytes >> 4) & 0x3FFF) << 16) | (uint64_t((sbo_bytes >> 4) & 0x3FFF) << 32) |
           (uint64_t(2) << 62);  // layout type 2: the 64-byte swizzle
}
// ANCHOR_END: descriptor_sw64

// ANCHOR: ordering
// Before the first wgmma of a batch: the registers it reads (A, and the accumulators that
// ordinary instructions just rescaled) are final, and earlier shared-memory writes are seen.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
// Closes the wgmmas issued since the last commit into one group.
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
// Waits until at most N committed groups are still running.
template <int N>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
// The compiler sees each wgmma write its accumulators at once, when it is issued; this
// empty statement "rewrites" them after the wait, so no read of an accumulator is moved
// above the wait_group that makes it valid (and no write below the fence).
template <int R>
__device__ __forceinline__ void wgmma_fence_operands(float (&d)[R]) {
#pragma unroll
    for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
// ANCHOR_END: ordering

// The instructions. PTX names every accumulator register, so their operand lists are
// spelled out once here: 64 x N fp32 over 128 threads is N / 2 registers a thread, laid out
// per warp as mma.sync's m16n8 C fragment repeated over N / 8 columns (fragments.cuh).
#define FL_WGMMA_D32 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define FL_WGMMA_OUT32(d) "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define FL_WGMMA_D64 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"
#define FL_WGMMA_OUT64(d) "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define FL_WGMMA_D40 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39}"
#define FL_WGMMA_OUT40(d) "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39])
#define FL_WGMMA_D96 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95}"
#define FL_WGMMA_OUT96(d) "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
#define FL_WGMMA_D128 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}"
#define FL_WGMMA_OUT128(d) "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
#define FL_WGMMA_SS_N64_BF16(d, desc_a, desc_b, acc) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n" \
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 " FL_WGMMA_D32 ", %32, %33, p, 1, 1, 0, 0;\n}\n" \
                 : FL_WGMMA_OUT32(d) : "l"(desc_a), "l"(desc_b), "r"(acc))
#define FL_WGMMA_SS_N64_F16(d, desc_a, desc_b, acc) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n" \
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 " FL_WGMMA_D32 ", %32, %33, p, 1, 1, 0, 0;\n}\n" \
                 : FL_WGMMA_OUT32(d) : "l"(desc_a), "l"(desc_b), "r"(acc))
#define FL_WGMMA_RS_N64_BF16(d, a, desc_b, acc) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n" \
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 " FL_WGMMA_D32 ", {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n" \
                 : FL_WGMMA_OUT32(d) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(acc))
#define FL_WGMMA_RS_N64_F16(d, a, desc_b, acc) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n" \
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 " FL_WGMMA_D32 ", {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n" \
                 : FL_WGMMA_OUT32(d) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(acc))
#define FL_WGMMA_SS_N128_BF16(d, desc_a, desc_b, acc) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n" \
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 " FL_WGMMA_D64 ", %64, %65, p, 1, 1, 0, 0;\n}\n" \
                 : FL_WGMMA_OUT64(d) : "l"(desc_a), "l"(desc_b), "r"(acc))
#define FL_WGMMA_SS_N128_F16(d, desc_a, desc_b, acc) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n" \
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 " FL_WGMMA_D64 ", %64, %65, p, 1, 1, 0, 0;\n}\n" \
                 : FL_WGMMA_OUT64(d) : "l"(desc_a), "l"(desc_b), "r"(acc))
#define FL_WGMMA_RS_N128_BF16(d, a, desc_b, acc) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n" \
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 " FL_WGMMA_D64 ", {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}\n" \
                 : FL_WGMMA_OUT64(d) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(acc))
#define FL_WGMMA_RS_N128_F16(d, a, desc_b, acc) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n" \
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 " FL_WGMMA_D64 ", {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}\n" \
                 : FL_WGMMA_OUT64(d) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(acc))
#define FL_WGMMA_SS_N80_BF16(d, desc_a, desc_b, acc) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %42, 0;\n" \
                 "wgmma.mma_async.sync.aligned.m64n80k16.f32.bf16.bf16 " FL_WGMMA_D40 ", %40, %41, p, 1, 1, 0, 0;\n}\n" \
                 : FL_WGMMA_OUT40(d) : "l"(desc_a), "l"(desc_b), "r"(acc))
#define FL_WGMMA_SS_N80_F16(d, desc_a, desc_b, acc) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %42, 0;\n" \
                 "wgmma.mma_async.sync.aligned.m64n80k16.f32.f16.f16 " FL_WGMMA_D40 ", %40, %41, p, 1, 1, 0, 0;\n}\n" \
                 : FL_WGMMA_OUT40(d) : "l"(desc_a), "l"(desc_b), "r"(acc))
#define FL_WGMMA_RS_N256_BF16(d, a, desc_b, acc) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n" \
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 " FL_WGMMA_D128 ", {%128, %129, %130, %131}, %132, p, 1, 1, 1;\n}\n" \
                 : FL_WGMMA_OUT128(d) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(acc))
#define FL_WGMMA_RS_N256_F16(d, a, desc_b, acc) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n" \
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 " FL_WGMMA_D128 ", {%128, %129, %130, %131}, %132, p, 1, 1, 1;\n}\n" \
                 : FL_WGMMA_OUT128(d) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(acc))

// FP8 (E4M3): k is 32 per instruction, and both operands in shared memory must be K-major,
// so these forms take no transpose flags.
#define FL_WGMMA_SS_N64_E4M3(d, desc_a, desc_b, acc) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n" \
                 "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 " FL_WGMMA_D32 ", %32, %33, p, 1, 1;\n}\n" \
                 : FL_WGMMA_OUT32(d) : "l"(desc_a), "l"(desc_b), "r"(acc))
#define FL_WGMMA_RS_N64_E4M3(d, a, desc_b, acc) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n" \
                 "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 " FL_WGMMA_D32 ", {%32, %33, %34, %35}, %36, p, 1, 1;\n}\n" \
                 : FL_WGMMA_OUT32(d) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(acc))

#define FL_WGMMA_SS_N128_E4M3(d, desc_a, desc_b, acc) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n" \
                 "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 " FL_WGMMA_D64 ", %64, %65, p, 1, 1;\n}\n" \
                 : FL_WGMMA_OUT64(d) : "l"(desc_a), "l"(desc_b), "r"(acc))
#define FL_WGMMA_SS_N192_E4M3(d, desc_a, desc_b, acc) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %98, 0;\n" \
                 "wgmma.mma_async.sync.aligned.m64n192k32.f32.e4m3.e4m3 " FL_WGMMA_D96 ", %96, %97, p, 1, 1;\n}\n" \
                 : FL_WGMMA_OUT96(d) : "l"(desc_a), "l"(desc_b), "r"(acc))
#define FL_WGMMA_RS_N128_E4M3(d, a, desc_b, acc) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n" \
                 "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 " FL_WGMMA_D64 ", {%64, %65, %66, %67}, %68, p, 1, 1;\n}\n" \
                 : FL_WGMMA_OUT64(d) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(acc))
#define FL_WGMMA_RS_N256_E4M3(d, a, desc_b, acc) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n" \
                 "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3 " FL_WGMMA_D128 ", {%128, %129, %130, %131}, %132, p, 1, 1;\n}\n" \
                 : FL_WGMMA_OUT128(d) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(acc))

// ANCHOR: wgmma
// D (64 x N) = A B (+ D when `accumulate`): A (64 x 16) and B (16 x N) in shared memory,
// both K-major, through their descriptors.
template <typename T, int N>
__device__ __forceinline__ void wgmma_ss(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b, bool accumulate) {
    static_assert(N == 64 || N == 80 || N == 128, "wgmma.cuh spells out SS for N = 64, 80 (S at head dim 256) and 128");
    const int acc = accumulate;
    if constexpr (N == 80 && std::is_same_v<T, __nv_bfloat16>) FL_WGMMA_SS_N80_BF16(d, desc_a, desc_b, acc);
    if constexpr (N == 80 && std::is_same_v<T, __half>) FL_WGMMA_SS_N80_F16(d, desc_a, desc_b, acc);
    if constexpr (N == 64 && std::is_same_v<T, __nv_bfloat16>) FL_WGMMA_SS_N64_BF16(d, desc_a, desc_b, acc);
    if constexpr (N == 64 && std::is_same_v<T, __half>) FL_WGMMA_SS_N64_F16(d, desc_a, desc_b, acc);
    if constexpr (N == 128 && std::is_same_v<T, __nv_bfloat16>) FL_WGMMA_SS_N128_BF16(d, desc_a, desc_b, acc);
    if constexpr (N == 128 && std::is_same_v<T, __half>) FL_WGMMA_SS_N128_F16(d, desc_a, desc_b, acc);
}
// D (64 x N) = A B (+ D): A (64 x 16) in registers, four 32-bit pairs a thread in
// mma.sync's A layout per warp; B (16 x N) in shared memory, MN-major (transposed).
template <typename T, int N>
__device__ __forceinline__ void wgmma_rs_mn(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t desc_b, bool accumulate) {
    static_assert(N == 64 || N == 128 || N == 256, "wgmma.cuh spells out RS for N = 64, 128 and 256 (O at head dim 256)");
    const int acc = accumulate;
    if constexpr (N == 256 && std::is_same_v<T, __nv_bfloat16>) FL_WGMMA_RS_N256_BF16(d, a, desc_b, acc);
    if constexpr (N == 256 && std::is_same_v<T, __half>) FL_WGMMA_RS_N256_F16(d, a, desc_b, acc);
    if constexpr (N == 64 && std::is_same_v<T, __nv_bfloat16>) FL_WGMMA_RS_N64_BF16(d, a, desc_b, acc);
    if constexpr (N == 64 && std::is_same_v<T, __half>) FL_WGMMA_RS_N64_F16(d, a, desc_b, acc);
    if constexpr (N == 128 && std::is_same_v<T, __nv_bfloat16>) FL_WGMMA_RS_N128_BF16(d, a, desc_b, acc);
    if constexpr (N == 128 && std::is_same_v<T, __half>) FL_WGMMA_RS_N128_F16(d, a, desc_b, acc);
}
// ANCHOR_END: wgmma

// ANCHOR: wgmma_mn
// The backward's dQ = dS K (book: "Stage 23: the backward on Hopper"): both operands in
// shared memory MN-major, the last two immediates (transpose A, transpose B) set. A = dS
// is stored as dS^T, [keys][queries] with the queries contiguous, so M (the queries) is the
// contiguous dimension; B = K is stored [keys][D], N (D) contiguous. Only the 16-bit types
// may transpose. N is D / 2: each of the two MMA warpgroups takes half of dQ's columns.
#define FL_WGMMA_D16 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}"
#define FL_WGMMA_OUT16(d) "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
#define FL_WGMMA_SS_MN_N32_BF16(d, desc_a, desc_b, acc) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n" \
                 "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 " FL_WGMMA_D16 ", %16, %17, p, 1, 1, 1, 1;\n}\n" \
                 : FL_WGMMA_OUT16(d) : "l"(desc_a), "l"(desc_b), "r"(acc))
#define FL_WGMMA_SS_MN_N32_F16(d, desc_a, desc_b, acc) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n" \
                 "wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 " FL_WGMMA_D16 ", %16, %17, p, 1, 1, 1, 1;\n}\n" \
                 : FL_WGMMA_OUT16(d) : "l"(desc_a), "l"(desc_b), "r"(acc))
#define FL_WGMMA_SS_MN_N64_BF16(d, desc_a, desc_b, acc) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n" \
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 " FL_WGMMA_D32 ", %32, %33, p, 1, 1, 1, 1;\n}\n" \
                 : FL_WGMMA_OUT32(d) : "l"(desc_a), "l"(desc_b), "r"(acc))
#define FL_WGMMA_SS_MN_N64_F16(d, desc_a, desc_b, acc) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n" \
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 " FL_WGMMA_D32 ", %32, %33, p, 1, 1, 1, 1;\n}\n" \
                 : FL_WGMMA_OUT32(d) : "l"(desc_a), "l"(desc_b), "r"(acc))

// D (64 x N) = A B (+ D): A (64 x 16) and B (16 x N) in shared memory, both MN-major
// (transposed), through descriptors of the MN-major form (V's in P V: wgmma_desc_sw128).
template <typename T, int N>
__device__ __forceinline__ void wgmma_ss_mn(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b, bool accumulate) {
    static_assert(N == 32 || N == 64, "wgmma.cuh spells out SS with both operands MN-major for N = 32 and 64 (dQ's halves at D 64, 128)");
    const int acc = accumulate;
    if constexpr (N == 32 && std::is_same_v<T, __nv_bfloat16>) FL_WGMMA_SS_MN_N32_BF16(d, desc_a, desc_b, acc);
    if constexpr (N == 32 && std::is_same_v<T, __half>) FL_WGMMA_SS_MN_N32_F16(d, desc_a, desc_b, acc);
    if constexpr (N == 64 && std::is_same_v<T, __nv_bfloat16>) FL_WGMMA_SS_MN_N64_BF16(d, desc_a, desc_b, acc);
    if constexpr (N == 64 && std::is_same_v<T, __half>) FL_WGMMA_SS_MN_N64_F16(d, desc_a, desc_b, acc);
}
// ANCHOR_END: wgmma_mn

// ANCHOR: wgmma_fp8
// The same at 8 bits (E4M3 codes, 4 a 32-bit register): A (64 x 32) from shared memory or
// from registers (four 32-bit registers a thread: 4 consecutive k a register, rows r and
// r + 8, k and k + 16), B (32 x N) in shared memory, K-major. The accumulator is the 16-bit
// forms' (wgmma_c).
template <int N>
__device__ __forceinline__ void wgmma_ss_e4m3(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b, bool accumulate) {
    static_assert(N == 64 || N == 128 || N == 192, "wgmma.cuh spells out FP8 SS for N = 64 (the probe's), 128 (S) and 192 (stage 27's S at d64)");
    const int acc = accumulate;
    if constexpr (N == 64) FL_WGMMA_SS_N64_E4M3(d, desc_a, desc_b, acc);
    if constexpr (N == 128) FL_WGMMA_SS_N128_E4M3(d, desc_a, desc_b, acc);
    if constexpr (N == 192) FL_WGMMA_SS_N192_E4M3(d, desc_a, desc_b, acc);
}
template <int N>
__device__ __forceinline__ void wgmma_rs_e4m3(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t desc_b, bool accumulate) {
    static_assert(N == 64 || N == 128 || N == 256, "wgmma.cuh spells out FP8 RS for N = 64 (the probe's), 128 and 256 (O)");
    const int acc = accumulate;
    if constexpr (N == 64) FL_WGMMA_RS_N64_E4M3(d, a, desc_b, acc);
    if constexpr (N == 128) FL_WGMMA_RS_N128_E4M3(d, a, desc_b, acc);
    if constexpr (N == 256) FL_WGMMA_RS_N256_E4M3(d, a, desc_b, acc);
}
// ANCHOR_END: wgmma_fp8

}  // namespace flashlab
