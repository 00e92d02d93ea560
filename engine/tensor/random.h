#pragma once

#include <cstdint>
#include <random>

namespace opscope {

/// The engine's seedable random generator. Every random fill, initializer and dropout mask draws
/// from one of these, so a run is reproducible from its seed. Not thread-safe: one per thread.
class Generator {
public:
    explicit Generator(uint64_t seed = 0)
        : m_engine(seed)
    {
    }
    void seed(uint64_t s) { m_engine.seed(s); }
    /// Uniform in [lo, hi).
    float uniform(float lo, float hi);
    float normal(float mean, float stddev);
    uint64_t next() { return m_engine(); }

private:
    std::mt19937_64 m_engine;
};

/// Process-wide generator used when the caller passes none (seeded with 0; reseed with seed()).
Generator& globalGenerator();

} // namespace opscope
