#pragma once

// ONNX Clip's comparison, in its order: below the lower bound gives the lower bound, else above the
// upper gives the upper, else the value. NaN compares false both times and stays NaN. Shared by
// Clip's kernel and a clip fused into the kernel before it, so the two cannot drift apart.

namespace opscope {

template <class T> constexpr T clipValue(T v, T lo, T hi)
{
    return v < lo ? lo : (v > hi ? hi : v);
}

} // namespace opscope
