#pragma once

// Reduced precision, emulated: a node computing "in float16" or "in bfloat16" rounds its float32
// inputs to that type, runs its float32 kernel, and rounds its float32 outputs, the way mixed
// precision lists (MXNet's AMP, PyTorch's autocast) cast around an operator. The numbers are those
// of the narrower type at every node boundary; what happens inside the kernel stays float32.

#include "ops/op.h"

#include <memory>
#include <optional>
#include <string_view>

namespace opscope {

enum class Precision : uint8_t { Float32, Float16, BFloat16 };

/// "float32", "float16", "bfloat16".
const char* precisionName(Precision p);

/// Rounds every element of a float32 tensor to `p` in place (other element types are left alone).
void roundToPrecision(const Tensor& t, Precision p);

/// `inner` with its float32 inputs rounded to `p` (into buffers of its own: the tensors it reads
/// are not changed) and its float32 outputs rounded in place after it runs. It takes no post-ops
/// (a fused node would skip the rounding). Float32: `inner` itself.
std::unique_ptr<Kernel> withPrecision(std::unique_ptr<Kernel> inner, Precision p);

} // namespace opscope
