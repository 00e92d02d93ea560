#include "tensor/memory_limit.h"

#include "core/checked.h"
#include "core/error.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <sys/resource.h>
#include <unistd.h>

namespace opscope {

namespace {
std::atomic<int64_t> g_limit { 0 }; // 0: not set

int64_t parseLimit(const char* text)
{
    char* end = nullptr;
    const double v = std::strtod(text, &end);
    if (end == text || !(v > 0)) return 0;
    double scale = 1;
    switch (*end) {
    case 'k':
    case 'K':
        scale = 1024.0;
        break;
    case 'm':
    case 'M':
        scale = 1024.0 * 1024;
        break;
    case 'g':
    case 'G':
        scale = 1024.0 * 1024 * 1024;
        break;
    case 't':
    case 'T':
        scale = 1024.0 * 1024 * 1024 * 1024;
        break;
    default:
        break;
    }
    const double bytes = v * scale;
    return bytes >= 9.2e18 ? INT64_MAX : static_cast<int64_t>(bytes);
}

int64_t defaultLimit()
{
    if (const char* env = std::getenv("OPSCOPE_MEMORY_LIMIT"))
        if (const int64_t v = parseLimit(env); v > 0) return v;
    int64_t limit = INT64_MAX;
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && page > 0) limit = static_cast<int64_t>(pages) * page;
    rlimit as {};
    if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
        // Under an address-space limit, what the process has mapped already (libraries,
        // thread stacks) is not available to tensors.
        int64_t mapped = 0;
        if (FILE* f = std::fopen("/proc/self/statm", "r")) {
            long long pagesMapped = 0;
            if (std::fscanf(f, "%lld", &pagesMapped) == 1 && page > 0) mapped = pagesMapped * page;
            std::fclose(f);
        }
        const int64_t room = static_cast<int64_t>(as.rlim_cur) - mapped;
        if (room < limit) limit = std::max<int64_t>(room, 0);
    }
    // The program, its libraries and the window need some of it too.
    const int64_t reserve = std::min<int64_t>(limit / 4, int64_t(512) << 20);
    return limit - reserve;
}
} // namespace

int64_t memoryLimit()
{
    int64_t v = g_limit.load(std::memory_order_relaxed);
    if (v == 0) {
        v = defaultLimit();
        g_limit.store(v, std::memory_order_relaxed);
    }
    return v;
}

void setMemoryLimit(int64_t bytes)
{
    g_limit.store(bytes > 0 ? bytes : defaultLimit(), std::memory_order_relaxed);
}

std::string formatBytes(int64_t bytes)
{
    char buf[64];
    const double b = static_cast<double>(bytes);
    if (bytes < 1024)
        std::snprintf(buf, sizeof buf, "%lld bytes", static_cast<long long>(bytes));
    else if (bytes < (int64_t(1) << 20))
        std::snprintf(buf, sizeof buf, "%lld bytes (%.1f KiB)", static_cast<long long>(bytes), b / 1024);
    else if (bytes < (int64_t(1) << 30))
        std::snprintf(buf, sizeof buf, "%lld bytes (%.1f MiB)", static_cast<long long>(bytes), b / (1 << 20));
    else
        std::snprintf(buf, sizeof buf, "%lld bytes (%.1f GiB)", static_cast<long long>(bytes), b / (1 << 30));
    return buf;
}

int64_t tensorBytes(const Shape& shape, int64_t elementSize)
{
    int64_t n = elementSize;
    for (int64_t d : shape.dims()) {
        const auto r = checkedMul(n, d < 0 ? 0 : d);
        if (!r) return -1;
        n = *r;
    }
    return n;
}

void checkTensorFits(const Shape& shape, const std::string& what, int64_t elementSize)
{
    const int64_t bytes = tensorBytes(shape, elementSize);
    if (bytes < 0)
        throw ResourceError(what + ": shape " + shape.str() + " has more elements than 64-bit sizes can count");
    if (bytes > memoryLimit())
        throw ResourceError(what + ": shape " + shape.str() + " needs " + formatBytes(bytes)
            + ", more than the memory the engine may use (" + formatBytes(memoryLimit())
            + "; OPSCOPE_MEMORY_LIMIT sets it)");
}

} // namespace opscope
