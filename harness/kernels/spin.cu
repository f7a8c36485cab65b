// The timing's gate (harness/src/timing.rs): one thread that keeps the stream busy for
// `ns` nanoseconds, so that the timed launches queued behind it start back to back and
// no event pair measures the host's time to launch. (nvbench calls this its blocking
// kernel; PyTorch's torch.cuda._sleep is the same idea, in clock cycles.)
extern "C" __global__ void timing_spin(long long ns) {
    unsigned long long start;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    for (;;) {
        unsigned long long now;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if (static_cast<long long>(now - start) >= ns) break;
        __nanosleep(1000);
    }
}
