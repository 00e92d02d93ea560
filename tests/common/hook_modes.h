#pragma once

// The modes an op-hook test runs a block in: eager, hybridized, static_alloc and static_shape.

#include "gluon/block.h"

#include <string>

namespace opscope::test {

enum class HookMode { Eager, Hybrid, StaticAlloc, StaticShape };

inline void applyMode(gluon::Block& b, HookMode m)
{
    switch (m) {
    case HookMode::Eager: break;
    case HookMode::Hybrid: b.hybridize(); break;
    case HookMode::StaticAlloc: b.hybridize(true, true); break;
    case HookMode::StaticShape: b.hybridize(true, true, true); break;
    }
}

inline std::string modeName(HookMode m)
{
    switch (m) {
    case HookMode::Eager: return "eager";
    case HookMode::Hybrid: return "hybrid";
    case HookMode::StaticAlloc: return "static_alloc";
    case HookMode::StaticShape: return "static_shape";
    }
    return "";
}

} // namespace opscope::test
