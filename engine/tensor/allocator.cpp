#include "tensor/allocator.h"

#include "core/error.h"

#include <atomic>
#include <string>
#include <new>

namespace opscope {

namespace {
    std::atomic<uint64_t> g_allocations { 0 };
    std::atomic<uint64_t> g_live { 0 };
    std::atomic<uint64_t> g_peak { 0 };
    constexpr std::align_val_t kAlign { 64 };
}

AllocatorStats allocatorStats()
{
    return { g_allocations.load(std::memory_order_relaxed), g_live.load(std::memory_order_relaxed),
        g_peak.load(std::memory_order_relaxed) };
}

void resetPeakBytes()
{
    g_peak.store(g_live.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

namespace detail {
    void* allocateBuffer(size_t bytes)
    {
        // Round up to the alignment so vectorised tails may read a whole register.
        const size_t rounded = (bytes + 63) / 64 * 64;
        void* p = ::operator new(rounded == 0 ? 64 : rounded, kAlign, std::nothrow);
        if (!p)
            throw ResourceError("out of memory: cannot allocate " + std::to_string(bytes) + " bytes for a tensor");
        g_allocations.fetch_add(1, std::memory_order_relaxed);
        const uint64_t live = g_live.fetch_add(bytes, std::memory_order_relaxed) + bytes;
        uint64_t peak = g_peak.load(std::memory_order_relaxed);
        while (live > peak && !g_peak.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
        }
        return p;
    }

    void freeBuffer(void* p, size_t bytes) noexcept
    {
        if (!p)
            return;
        g_live.fetch_sub(bytes, std::memory_order_relaxed);
        ::operator delete(p, kAlign);
    }
}

} // namespace opscope
