#!/usr/bin/env python3
"""Writes OUT/flash_decode_poll.cu: stage 15's kernel (the working tree's) with its merge
replaced by one that polls (session 18's trial of "the merge of partials as they arrive").

Stage 15: every split writes its partial O and LSE, counts itself on its row tile's
counter (an atomic with release and acquire), and the split that counts last copies every
split's partials back from the L2 and merges them: after the last block's loop, a chain
of about 3.3 us at batch 1 (../2026-11-26-decode-trace, session 17).
Here the last split of each row tile (the highest blockIdx.x, dispatched after the others)
is the merger, chosen before the launch. The others write their partial O and LSE as
64-bit words, each value's bits beside a tag, the launch's number for that row tile, and
stop: no fence, no count. The merger keeps its own partial in registers and polls the
others' words with relaxed loads at GPU scope, merging each split's four columns as soon
as all of its words carry this launch's tag; a word is one single-copy-atomic 64-bit store,
so a tagged value is this launch's. The launch's number is the row tile's counter plus
one: every block reads the counter as it starts, and the merger, last, stores the number
there for the next launch.
The merger asks for eight splits' words at once, then merges those that are ready; with
--backoff=NS it sleeps NS ns after a pass that found nothing new; with --serial, the first form: one split's words, then its merge, then the next split's.
With --smem, the producers write 48-byte records (the LSE and four columns, each tagged) and
the merger copies every pending record into shared memory (cp.async) each pass.
Usage: make-poll.py [--serial | --group=N --backoff=NS | --smem] [--trace] OUT_DIR (run from anywhere)."""
import os
import sys

root = os.path.abspath(os.path.join(os.path.dirname(__file__), "../../.."))
src = open(os.path.join(root, "stages/15-fused-combine/kernels/flash_decode_fused.cu")).read()
out = src


def rep(old, new):
    global out
    assert out.count(old) == 1, old
    out = out.replace(old, new)


# --backoff=NS: after a pass over the pending splits that found none ready, the merger
# sleeps NS nanoseconds before asking again (0: it asks at once).
# --group=N: the splits whose words are asked for in one trip (8 unless said; at most 16).
GROUP = next((int(a.split("=")[1]) for a in sys.argv[1:] if a.startswith("--group=")), 8)
BACKOFF = next((int(a.split("=")[1]) for a in sys.argv[1:] if a.startswith("--backoff=")), 0)

SMEM_PRODUCER = """            unsigned long long* rec = o_tagged + ((split * lse_stride + lse_at) * (D / 4) + col / 4) * 6;
            store_tagged(rec, lse), store_tagged(rec + 1, o.x), store_tagged(rec + 2, o.y), store_tagged(rec + 3, o.z), store_tagged(rec + 4, o.w);
"""
SMEM_MERGER = """    // (poll, shared-memory form) Every pass copies each pending split's record of each of
    // this thread's tasks into shared memory (cp.async, through the L2: one trip for all of
    // them, no registers held), then merges the records that carry this launch's tag. A
    // thread reads back only its own copies: no barrier between the copies and the reads.
    __syncthreads();  // every thread is done with the warps' merge buffers: the polls reuse them
    {
        constexpr int SMEM_BYTES = (2 * NSTAGES * BLOCK_KV * D + ROWS * D) * static_cast<int>(sizeof(T));
        unsigned long long* const poll_buf = reinterpret_cast<unsigned long long*>(smem);  // [chunk][tasks][6]
        const int others = p.num_splits - 1, chunk = max(1, min(others, SMEM_BYTES / (tasks * 48)));
        unsigned pending[TASKS];
        long long lse_at_k[TASKS];
        int col_k[TASKS];
#pragma unroll
        for (int k = 0; k < TASKS; ++k) {
            const int task = threadIdx.x + k * NT;
            pending[k] = task < tasks ? (1u << others) - 1u : 0u;
            const int row = min(task, tasks - 1) / (D / 4);
            const PackedRow pr = unpack_row(p, kv_head, row0 + row);
            lse_at_k[k] = lse_index(p.attn, b, pr.head, pr.token);
            col_k[k] = min(task, tasks - 1) % (D / 4) * 4;
        }
        auto any_pending = [&] {
            unsigned a = 0;
#pragma unroll
            for (int k = 0; k < TASKS; ++k) a |= pending[k];
            return a != 0;
        };
        while (any_pending()) {
            for (int s0 = 0; s0 < others; s0 += chunk) {
                const int n = min(chunk, others - s0);
#pragma unroll
                for (int k = 0; k < TASKS; ++k) {
                    const int task = threadIdx.x + k * NT;
                    for (int j = 0; j < n; ++j) {
                        if (!(pending[k] >> (s0 + j) & 1u)) continue;
                        const unsigned long long* rec = o_tagged + (((s0 + j) * lse_stride + lse_at_k[k]) * (D / 4) + col_k[k] / 4) * 6;
                        const uint32_t dst = smem_addr(poll_buf + (j * tasks + task) * 6);
                        cp_async_16(dst, rec), cp_async_16(dst + 16, rec + 2), cp_async_16(dst + 32, rec + 4);
                    }
                }
                cp_async_commit();
                cp_async_wait<0>();
#pragma unroll
                for (int k = 0; k < TASKS; ++k) {
                    const int task = threadIdx.x + k * NT;
                    for (int j = 0; j < n; ++j) {
                        if (!(pending[k] >> (s0 + j) & 1u)) continue;
                        const unsigned long long* w = poll_buf + (j * tasks + task) * 6;
                        bool ready = true;
#pragma unroll
                        for (int c = 0; c < 5; ++c) ready &= static_cast<unsigned>(w[c] >> 32) == tag;
                        if (!ready) continue;
                        pending[k] &= ~(1u << (s0 + j));
                        const float lse_s = __uint_as_float(static_cast<unsigned>(w[0]));
                        const float m = fmaxf(run_max[k], lse_s);
                        const float m_base = m == -CUDART_INF_F ? 0.f : m;
                        const float rescale = __expf(run_max[k] - m_base), wt = __expf(lse_s - m_base);
                        run_max[k] = m;
                        run_sum[k] = run_sum[k] * rescale + wt;
                        acc[k].x = acc[k].x * rescale + wt * __uint_as_float(static_cast<unsigned>(w[1]));
                        acc[k].y = acc[k].y * rescale + wt * __uint_as_float(static_cast<unsigned>(w[2]));
                        acc[k].z = acc[k].z * rescale + wt * __uint_as_float(static_cast<unsigned>(w[3]));
                        acc[k].w = acc[k].w * rescale + wt * __uint_as_float(static_cast<unsigned>(w[4]));
                    }
                }
            }
        }
    }
#pragma unroll
    for (int k = 0; k < TASKS; ++k) {
        const int task = threadIdx.x + k * NT;
        if (task >= tasks) break;
        const int row = task / (D / 4), col = task % (D / 4) * 4;
        const PackedRow pr = unpack_row(p, kv_head, row0 + row);
        const long long at = q_row_offset(p.attn, b, pr.token, pr.head) + col;
        const float inv = run_sum[k] > 0.f ? 1.f / run_sum[k] : 0.f;
        *reinterpret_cast<uint2*>(static_cast<T*>(p.attn.o) + at) =
            make_uint2(pack2<T>(acc[k].x * inv, acc[k].y * inv), pack2<T>(acc[k].z * inv, acc[k].w * inv));
        if (col == 0) p.attn.lse[lse_index(p.attn, b, pr.head, pr.token)] = run_sum[k] > 0.f ? run_max[k] + __logf(run_sum[k]) : -CUDART_INF_F;
    }
"""

SERIAL = """        unsigned pending = (1u << (p.num_splits - 1)) - 1u;  // splits 0 .. num_splits - 2
        while (pending) {
#pragma unroll 4
            for (int s = 0; s < 31; ++s) {
                if (!(pending >> s & 1u)) continue;
                unsigned long long word[5];
                const unsigned long long* src = o_tagged + s * o_stride + at;
                asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(word[0]) : "l"(lse_tagged + s * lse_stride + lse_at) : "memory");
#pragma unroll
                for (int c = 0; c < 4; ++c)
                    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(word[1 + c]) : "l"(src + c) : "memory");
                bool ready = true;
#pragma unroll
                for (int c = 0; c < 5; ++c) ready &= static_cast<unsigned>(word[c] >> 32) == tag;
                if (!ready) continue;
                pending &= ~(1u << s);
                const float lse_s = __uint_as_float(static_cast<unsigned>(word[0]));
                const float m = fmaxf(run_max[k], lse_s);
                const float m_base = m == -CUDART_INF_F ? 0.f : m;
                const float rescale = __expf(run_max[k] - m_base), w = __expf(lse_s - m_base);
                run_max[k] = m;
                run_sum[k] = run_sum[k] * rescale + w;
                const float4 o_s = make_float4(__uint_as_float(static_cast<unsigned>(word[1])), __uint_as_float(static_cast<unsigned>(word[2])),
                                               __uint_as_float(static_cast<unsigned>(word[3])), __uint_as_float(static_cast<unsigned>(word[4])));
                acc[k].x = acc[k].x * rescale + w * o_s.x, acc[k].y = acc[k].y * rescale + w * o_s.y;
                acc[k].z = acc[k].z * rescale + w * o_s.z, acc[k].w = acc[k].w * rescale + w * o_s.w;
            }
        }
"""
GROUPED = """        unsigned pending = (1u << (p.num_splits - 1)) - 1u;  // splits 0 .. num_splits - 2
        auto merge_word = [&](const unsigned long long (&word)[5]) {
            const float lse_s = __uint_as_float(static_cast<unsigned>(word[0]));
            const float m = fmaxf(run_max[k], lse_s);
            const float m_base = m == -CUDART_INF_F ? 0.f : m;
            const float rescale = __expf(run_max[k] - m_base), w = __expf(lse_s - m_base);
            run_max[k] = m;
            run_sum[k] = run_sum[k] * rescale + w;
            acc[k].x = acc[k].x * rescale + w * __uint_as_float(static_cast<unsigned>(word[1]));
            acc[k].y = acc[k].y * rescale + w * __uint_as_float(static_cast<unsigned>(word[2]));
            acc[k].z = acc[k].z * rescale + w * __uint_as_float(static_cast<unsigned>(word[3]));
            acc[k].w = acc[k].w * rescale + w * __uint_as_float(static_cast<unsigned>(word[4]));
        };
        // Eight splits' words asked for at once, then looked at: one trip to the L2 per eight
        // splits polled (the form that merged a split per trip was 4-8 us slower).
        while (pending) {
            const unsigned before = pending;
            for (int g = 0; g < p.num_splits - 1; g += GROUP) {
                if (!(pending >> g & ((1u << GROUP) - 1u))) continue;
                unsigned long long word[GROUP][5];
#pragma unroll
                for (int j = 0; j < GROUP; ++j) {
                    const int s = g + j;
                    if (s < p.num_splits - 1 && (pending >> s & 1u)) {
                        const unsigned long long* src = o_tagged + s * o_stride + at;
                        asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(word[j][0]) : "l"(lse_tagged + s * lse_stride + lse_at));
#pragma unroll
                        for (int c = 0; c < 4; ++c)
                            asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(word[j][1 + c]) : "l"(src + c));
                    } else {
#pragma unroll
                        for (int c = 0; c < 5; ++c) word[j][c] = 0ull;  // tag 0: never this launch's
                    }
                }
#pragma unroll
                for (int j = 0; j < GROUP; ++j) {
                    bool ready = true;
#pragma unroll
                    for (int c = 0; c < 5; ++c) ready &= static_cast<unsigned>(word[j][c] >> 32) == tag;
                    if (!ready) continue;
                    pending &= ~(1u << (g + j));
                    merge_word(word[j]);
                }
            }
            if (BACKOFF_NS > 0 && pending == before) __nanosleep(BACKOFF_NS);  // nothing new: wait before asking again
        }
"""

# The launch's number, read with the sequence's length (both loads in flight at once).
rep("""    const int seqlen_k = p.seqlens_k[b], seqlen_q = p.attn.seqlen_q;
""", """    const int seqlen_k = p.seqlens_k[b], seqlen_q = p.attn.seqlen_q;
    int* const launch_counter = p.split_counters + blockIdx.z * gridDim.y + blockIdx.y;
    const unsigned tag = p.num_splits > 1 ? static_cast<unsigned>(__ldcg(launch_counter)) + 1u : 0u;
""")

start = out.index("    // ANCHOR: epilogue\n")
# Stage 15's own weighting of the warps' shares, from the row and columns of a task to its
# normalized O and LSE (the epilogue's loop body up to the writes), kept as the kernel has it.
w0 = out.index("        const int row = task / (D / 4), col = task % (D / 4) * 4;\n        float m = -CUDART_INF_F;\n", start)
w1 = out.index("        if (final_result) {\n", w0)
WEIGHTING = out[w0:w1]
end = out.index("    // ANCHOR_END: merge_splits\n")
out = out[:start] + """    // ANCHOR: epilogue
    // (poll) One split: O and the LSE are final. Several: the merger (the last split) keeps
    // its normalized O and LSE as the running merge; the others write theirs tagged.
    const bool final_result = p.num_splits == 1, merger = split == p.num_splits - 1;
    unsigned long long* const o_tagged = reinterpret_cast<unsigned long long*>(p.o_partial);
    unsigned long long* const lse_tagged = reinterpret_cast<unsigned long long*>(p.lse_partial);
    const long long lse_stride = static_cast<long long>(p.attn.batch) * p.attn.heads * seqlen_q, o_stride = lse_stride * D;
    const unsigned long long tag_hi = static_cast<unsigned long long>(tag) << 32;
    auto store_tagged = [&](unsigned long long* at, float x) {
        asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(at), "l"(tag_hi | __float_as_uint(x)) : "memory");
    };
    constexpr int TASKS = ROWS * D / 4 / NT;  // (row, four columns) tasks per thread, at most
    const int tasks = rows * D / 4;
    float4 acc[TASKS];
    float run_max[TASKS], run_sum[TASKS];
#pragma unroll
    for (int k = 0; k < TASKS; ++k) {
        const int task = threadIdx.x + k * NT;
        if (task >= tasks) break;
""" + WEIGHTING + """        if (final_result) {
            *reinterpret_cast<uint2*>(static_cast<T*>(p.attn.o) + at) = make_uint2(pack2<T>(o.x, o.y), pack2<T>(o.z, o.w));
            if (col == 0) p.attn.lse[lse_at] = lse;
        } else if (!merger) {
            unsigned long long* dst = o_tagged + split * o_stride + at;
            store_tagged(dst, o.x), store_tagged(dst + 1, o.y), store_tagged(dst + 2, o.z), store_tagged(dst + 3, o.w);
            if (col == 0) store_tagged(lse_tagged + split * lse_stride + lse_at, lse);
        } else {
            const bool live = lse != -CUDART_INF_F;
            run_max[k] = lse, run_sum[k] = live ? 1.f : 0.f;
            acc[k] = live ? o : make_float4(0.f, 0.f, 0.f, 0.f);
        }
    }
    // ANCHOR_END: epilogue
    if (final_result || !merger) return;

    // (poll) The merger: each thread polls, for each of its tasks, the other splits' words
    // and merges a split's four columns once all five of its words carry this launch's tag.
#pragma unroll
    for (int k = 0; k < TASKS; ++k) {
        const int task = threadIdx.x + k * NT;
        if (task >= tasks) break;
        const int row = task / (D / 4), col = task % (D / 4) * 4;
        const PackedRow pr = unpack_row(p, kv_head, row0 + row);
        const long long at = q_row_offset(p.attn, b, pr.token, pr.head) + col;
        const long long lse_at = lse_index(p.attn, b, pr.head, pr.token);
POLL_LOOP        const float inv = run_sum[k] > 0.f ? 1.f / run_sum[k] : 0.f;
        *reinterpret_cast<uint2*>(static_cast<T*>(p.attn.o) + at) =
            make_uint2(pack2<T>(acc[k].x * inv, acc[k].y * inv), pack2<T>(acc[k].z * inv, acc[k].w * inv));
        if (col == 0) p.attn.lse[lse_at] = run_sum[k] > 0.f ? run_max[k] + __logf(run_sum[k]) : -CUDART_INF_F;
    }
    __syncthreads();  // every task merged: no split of this launch reads the counter again
    if (threadIdx.x == 0) *launch_counter = static_cast<int>(tag);
""".replace("POLL_LOOP", SERIAL if "--serial" in sys.argv[1:] else GROUPED.replace("BACKOFF_NS", str(BACKOFF)).replace("GROUP", str(GROUP))) + out[end:]
# --smem: the producers' records and the merger's shared-memory polls (SMEM_PRODUCER,
# SMEM_MERGER) in place of the tagged words polled into registers.
if "--smem" in sys.argv[1:]:
    producer = """            unsigned long long* dst = o_tagged + split * o_stride + at;
            store_tagged(dst, o.x), store_tagged(dst + 1, o.y), store_tagged(dst + 2, o.z), store_tagged(dst + 3, o.w);
            if (col == 0) store_tagged(lse_tagged + split * lse_stride + lse_at, lse);
"""
    assert out.count(producer) == 1
    out = out.replace(producer, SMEM_PRODUCER)
    m0 = out.index("    // (poll) The merger: each thread polls")
    m1 = out.index("    __syncthreads();  // every task merged")
    out = out[:m0] + SMEM_MERGER + out[m1:]

# --trace: thread 0 of each block stamps %globaltimer (POLL_TRACE, defined in wrap_poll.cu)
# at its entry (0), its loop's end (1), its partial stored or kept (2, after a barrier) and,
# in the merger, every split merged and O written (3).
if "--trace" in sys.argv[1:]:
    for after, text in [
        ("    extern __shared__ __align__(128) unsigned char smem[];\n", "    POLL_TRACE(0);\n"),
        ("    __syncthreads();  // the ring is free: the merge below reuses it\n", "    POLL_TRACE(1);\n"),
        ("    // ANCHOR_END: epilogue\n", "    __syncthreads();\n    POLL_TRACE(2);\n"),
        ("    __syncthreads();  // every task merged: no split of this launch reads the counter again\n", "    POLL_TRACE(3);\n"),
    ]:
        assert out.count(after) == 1, after
        out = out.replace(after, after + text)
else:
    out = "#define POLL_TRACE(i)\n" + out
# The names, so that it links beside stage 15's kernel.
o = next((a for a in sys.argv[1:] if not a.startswith("--")), ".")
open(os.path.join(o, "flash_decode_poll.cu"), "w").write(out)
