#pragma once

#include "tensor/tensor.h"

#include <string>

namespace opscope {

/// Reads a NumPy .npy file (format versions 1, 2 and 3) into a tensor of the file's type: <f4 <f8
/// <f2 <i8 <i4 |i1 |u1 |b1 (little-endian or native). A Fortran-order array, another dtype, a
/// malformed header or a short file throws FileError naming the file, the byte offset and the
/// reason. A 0-d array is a scalar (Shape::scalar()).
Tensor readNpy(const std::string& path);
/// Parses an in-memory .npy image; `name` is used in error messages.
Tensor parseNpy(const std::string& bytes, const std::string& name);
/// Writes a version 1.0 .npy file of the tensor's type (C order). Throws FileError on I/O failure.
void writeNpy(const std::string& path, const TensorView& tensor);
std::string serializeNpy(const TensorView& tensor);

} // namespace opscope
