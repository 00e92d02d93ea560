#pragma once

#include <cstdint>
#include <optional>

namespace opscope {

/// Size arithmetic on numbers that come from files and command lines: every product or sum either
/// fits in int64 or is reported, never wrapped. Operands are expected to be 0 or more.
inline std::optional<int64_t> checkedMul(int64_t a, int64_t b)
{
    int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
    return r;
}

inline std::optional<int64_t> checkedAdd(int64_t a, int64_t b)
{
    int64_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
    return r;
}

} // namespace opscope
