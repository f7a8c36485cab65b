// Session 18: stage 15 against make-poll.py's merge, which polls tagged partials as they
// arrive instead of counting and copying them back, timed as the trace instrument times
// (../2026-11-26-decode-trace/flushed_timer.h: the L2 flushed before each launch, events,
// median of 180), rounds interleaved, beside the read of the same bytes. Every run's O and
// LSE are checked against stage 15 at one split first, O poisoned with NaN before.
//   poll BATCH CACHE_LEN SPLITS ROUNDS
#include <cuda_runtime.h>
#include <flashlab/decode.cuh>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <vector>
#include "ceilings.cu"
#include "ck.h"
#include "decode_problem.h"
#include "flushed_timer.h"

void launch15(const flashlab::DecodeParams& p, dim3 grid, int smem);
void launch_poll(const flashlab::DecodeParams& p, dim3 grid, int smem);
bool poll_traced();
std::vector<unsigned long long> poll_trace(int blocks);

int main(int argc, char** argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: poll BATCH CACHE_LEN SPLITS ROUNDS\n");
        return 2;
    }
    const int batch = atoi(argv[1]), len = atoi(argv[2]), splits = atoi(argv[3]), rounds = atoi(argv[4]);
    const int heads = 32, kv_heads = 8, d = 128, max_splits = 32;
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    flashlab::DecodeParams p = random_decode_problem(batch, len, heads, kv_heads, d, max_splits);
    // The trial's own partials (64-bit tagged words) and launch numbers, all zero: a tag is
    // the row tile's launch number plus one, so no stale word carries the next one.
    flashlab::DecodeParams pp = p;
    const size_t q_elems = static_cast<size_t>(batch) * heads * d;
    unsigned long long *o_tagged, *lse_tagged;
    int* launches;
    CK(cudaMalloc(&o_tagged, max_splits * q_elems * 16));  // 8 a value, 12 in --smem's records
    CK(cudaMalloc(&lse_tagged, static_cast<size_t>(max_splits) * batch * heads * 8));
    CK(cudaMalloc(&launches, batch * kv_heads * 4));
    CK(cudaMemset(o_tagged, 0, max_splits * q_elems * 16));
    CK(cudaMemset(lse_tagged, 0, static_cast<size_t>(max_splits) * batch * heads * 8));
    CK(cudaMemset(launches, 0, batch * kv_heads * 4));
    pp.o_partial = reinterpret_cast<float*>(o_tagged), pp.lse_partial = reinterpret_cast<float*>(lse_tagged);
    pp.split_counters = launches;

    const int smem = (2 * 3 * 64 * d + 16 * d) * 2;
    const double bytes = static_cast<double>(batch) * len * kv_heads * d * 2 * 2;
    const FlushedTimer timer(prop);
    printf("shape batch %d cache %d splits %d (%.1f MB of K/V), %s\n", batch, len, splits, bytes / 1e6, prop.name);
    set_splits(p, 1);
    launch15(p, dim3(1, 1, batch * kv_heads), smem);
    CK(cudaDeviceSynchronize());
    const DecodeOutputs ref = fetch_outputs(p);
    set_splits(p, splits), set_splits(pp, splits);
    const dim3 grid(splits, 1, batch * kv_heads);
    auto check = [&](const char* what, flashlab::DecodeParams& q, auto launch) {
        poison_output(q);
        launch();
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        print_difference(what, splits, fetch_outputs(q), ref);
    };
    check("stage 15", p, [&] { launch15(p, grid, smem); });
    check("poll", pp, [&] { launch_poll(pp, grid, smem); });
    for (int r = 1; r <= rounds; ++r) {
        const float t15 = timer.median_us([&] { launch15(p, grid, smem); });
        const float tp = timer.median_us([&] { launch_poll(pp, grid, smem); });
        const float tr = timer.read_us(static_cast<size_t>(bytes));
        CK(cudaGetLastError());
        printf("  round %d: stage 15 %7.2f us %5.0f GB/s | poll %7.2f us %5.0f GB/s (%+.2f us) | read %7.2f us %5.0f GB/s\n", r, t15,
               bytes / t15 / 1e3, tp, bytes / tp / 1e3, tp - t15, tr, bytes / tr / 1e3);
    }
    // After every timed launch, one more check: the launch numbers went on counting.
    check("poll, after the timed launches", pp, [&] { launch_poll(pp, grid, smem); });
    if (poll_traced()) {
        // One launch as the timed ones (flush, first event, launch), then its stamps: per
        // row tile, when its last loop ended (any split's), when its producers' partials were
        // all stored, when the merger's own loop ended and when it had merged everything;
        // medians over the row tiles, us after the first block's entry.
        timer.median_us([&] { launch_poll(pp, grid, smem); });
        CK(cudaDeviceSynchronize());
        const int blocks = splits * batch * kv_heads;
        const std::vector<unsigned long long> t = poll_trace(blocks);
        unsigned long long t0 = ~0ull;
        for (int i = 0; i < blocks; ++i) t0 = std::min(t0, t[i * 4]);
        auto us = [&](int i, int e) { return (static_cast<double>(t[i * 4 + e]) - static_cast<double>(t0)) / 1000.0; };
        std::vector<double> last_loop, stored, merger_loop, merged, chain;
        for (int tile = 0; tile < batch * kv_heads; ++tile) {
            double ll = 0, st = 0;
            for (int s = 0; s < splits; ++s) {
                ll = std::max(ll, us(tile * splits + s, 1));
                if (s < splits - 1) st = std::max(st, us(tile * splits + s, 2));
            }
            const int m = tile * splits + splits - 1;
            last_loop.push_back(ll), stored.push_back(st), merger_loop.push_back(us(m, 1)), merged.push_back(us(m, 3));
            chain.push_back(us(m, 3) - ll);
        }
        auto med = [](std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; };
        printf("  trace (median row tile, us): last loop done %.2f, producers all stored %.2f, merger's loop done %.2f, "
               "all merged %.2f; after the last loop %.2f (max %.2f)\n",
               med(last_loop), med(stored), med(merger_loop), med(merged), med(chain), *std::max_element(chain.begin(), chain.end()));
        double merger_last = 0;
        for (size_t i = 0; i < merger_loop.size(); ++i) merger_last += merger_loop[i] >= last_loop[i];
        printf("  row tiles whose merger ended its loop last: %.0f of %zu; producer stores after their loop: median %.2f us\n",
               merger_last, merger_loop.size(), [&] {
                   std::vector<double> v;
                   for (int i = 0; i < blocks; ++i) if (i % splits != splits - 1) v.push_back(us(i, 2) - us(i, 1));
                   return med(v);
               }());
    }
    return 0;
}
