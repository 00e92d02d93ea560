#pragma once

// Private to tensor_stats.cpp and tensor_histogram.cpp: the instruction sets they choose between at
// run time, and the split of a long tensor over both cores.

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <thread>

#if defined(__GNUC__) && defined(__x86_64__)
#define OPSCOPE_STATS_X86 1
#define OPSCOPE_AVX2 "avx2,fma"
#define OPSCOPE_AVX512 "avx2,fma,avx512f,avx512bw,avx512dq,avx512vl"
#include <immintrin.h>
#endif

namespace opscope::debug::simd {

constexpr int64_t kParallelMin = 1 << 20; // values from which both cores work
constexpr float kInf = std::numeric_limits<float>::infinity();

enum class Isa { Portable, Avx2, Avx512 };

// The widest instruction set both the CPU and OPSCOPE_STATS_MAX_ISA (portable, avx2; read on each
// call, for tests) allow.
inline Isa isa()
{
#ifdef OPSCOPE_STATS_X86
    static const Isa best = !__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma") ? Isa::Portable
        : __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq")
            && __builtin_cpu_supports("avx512vl")
        ? Isa::Avx512
        : Isa::Avx2;
    const char* cap = std::getenv("OPSCOPE_STATS_MAX_ISA");
    if (cap && std::strcmp(cap, "portable") == 0) return Isa::Portable;
    if (cap && std::strcmp(cap, "avx2") == 0) return std::min(best, Isa::Avx2);
    return best;
#else
    return Isa::Portable;
#endif
}

template <class Fn> void parallelFor(int64_t n, Fn fn)
{
    const int threads
        = n >= kParallelMin ? static_cast<int>(std::min(2u, std::max(1u, std::thread::hardware_concurrency()))) : 1;
    if (threads == 1) {
        fn(0, 0, n);
        return;
    }
    // A multiple of every block size: the first half has no scalar tail.
    const int64_t half = (n / 2 + 16383) / 16384 * 16384;
    std::thread worker([&] { fn(1, half, n); });
    fn(0, 0, half);
    worker.join();
}

} // namespace opscope::debug::simd
