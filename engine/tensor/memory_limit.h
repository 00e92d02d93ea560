#pragma once

#include "tensor/shape.h"

#include <cstdint>
#include <string>

namespace opscope {

/// The most bytes the engine lets one tensor, and one run's plan, take. Checked before anything is
/// allocated (Tensor's constructor, Graph::inferShapes, the executor's plan), so an input, a file or
/// an attribute that asks for more memory than the machine has is refused with a message naming the
/// shape and the bytes, instead of ending the process.
///
/// Default: the machine's physical memory, or the address-space limit (ulimit -v) when lower, less a
/// reserve for the program itself. The environment variable OPSCOPE_MEMORY_LIMIT (bytes, or with a
/// K, M, G or T suffix) or setMemoryLimit() sets another. Any thread may read it.
int64_t memoryLimit();
/// Sets the limit (bytes > 0); 0 restores the default.
void setMemoryLimit(int64_t bytes);

/// "40000000000 bytes (37.3 GiB)".
std::string formatBytes(int64_t bytes);

/// Bytes of a tensor of `shape` with elements of `elementSize` bytes, or -1 when the count overflows.
int64_t tensorBytes(const Shape& shape, int64_t elementSize = 4);

/// Throws ResourceError when a tensor of `shape` would exceed the limit (or its size overflows);
/// `what` says whose tensor it is ("node 'x' (Pooling): output 0").
void checkTensorFits(const Shape& shape, const std::string& what, int64_t elementSize = 4);

} // namespace opscope
