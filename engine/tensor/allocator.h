#pragma once

#include <cstddef>
#include <cstdint>

namespace opscope {

/// Counters of the engine's tensor allocator. Every tensor buffer comes from here, so tests can
/// check "no allocation after the first call" and "peak memory stays a few buffers".
struct AllocatorStats {
    uint64_t allocations = 0; ///< buffers allocated since start (never decreases)
    uint64_t liveBytes = 0; ///< bytes currently allocated
    uint64_t peakBytes = 0; ///< high-water mark of liveBytes since the last resetPeakBytes()
};

/// Snapshot of the process-wide counters (thread-safe).
AllocatorStats allocatorStats();
/// Sets the peak to the current live bytes, so a test can measure the peak of one run.
void resetPeakBytes();

namespace detail {
    /// 64-byte aligned buffer of `bytes` bytes; throws ResourceError when the system has no memory.
    void* allocateBuffer(size_t bytes);
    void freeBuffer(void* p, size_t bytes) noexcept;
}

} // namespace opscope
