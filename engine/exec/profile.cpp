#include "exec/profile.h"

#include <atomic>

namespace opscope {

uint64_t currentThreadNumber()
{
    static std::atomic<uint64_t> next { 1 };
    thread_local const uint64_t number = next.fetch_add(1, std::memory_order_relaxed);
    return number;
}

} // namespace opscope
