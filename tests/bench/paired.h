#pragma once

// Two pieces of work timed in pairs: each benchmark iteration runs both, alternating which goes
// first, and adds up each one's time. Both halves of a pair run in the same moment of the machine,
// so other work on it slows both alike, and their ratio stays steady where two separate runs drift.

#include <benchmark/benchmark.h>

#include <chrono>

namespace opscope::bench {

struct PairedTimes {
    double aNs = 0; // total over the iterations
    double bNs = 0;
};

template <typename A, typename B> PairedTimes timePaired(benchmark::State& state, A&& a, B&& b)
{
    using Clock = std::chrono::steady_clock;
    Clock::duration aTime {}, bTime {};
    bool aFirst = true;
    for (auto _ : state) {
        for (int half = 0; half < 2; ++half) {
            const bool first = (half == 0) == aFirst;
            const auto t0 = Clock::now();
            if (first)
                a();
            else
                b();
            (first ? aTime : bTime) += Clock::now() - t0;
        }
        aFirst = !aFirst;
    }
    const auto ns = [](Clock::duration d) {
        return static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
    };
    return { ns(aTime), ns(bTime) };
}

} // namespace opscope::bench
