#pragma once

#include "debug/tensor_stats.h"
#include "tensor/shape.h"

#include <cstdint>
#include <string>

namespace opscope::cli {

/// One op-hook call as `run --hooks` writes it.
struct HookLine {
    uint64_t seq = 0;
    std::string name, op, node, slot, phase;
    Shape shape;
    debug::TensorStats stats;
    std::string file; ///< with --dump: the file the tensor went to
};

/// The line's JSON object, on one line (no newline): seq, name, op, node, slot, phase, shape, min,
/// max, mean, std (null where not finite), nan, inf, zeros, and file with --dump.
std::string hookLineJson(const HookLine& line);

} // namespace opscope::cli
