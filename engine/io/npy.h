#pragma once

#include "tensor/tensor.h"

#include <string>

namespace opscope {

/// Reads a NumPy .npy file (format versions 1, 2 and 3). Accepted dtypes: <f4 <f8 <f2 <i4 <i8 |u1
/// |b1 (also |i1), converted to float32. A Fortran-order array, another dtype, a malformed header
/// or a short file throws FileError naming the file, the byte offset and the reason.
/// A 0-d array is read as shape (1,).
Tensor readNpy(const std::string& path);
/// Parses an in-memory .npy image; `name` is used in error messages.
Tensor parseNpy(const std::string& bytes, const std::string& name);
/// Writes a version 1.0 .npy file of dtype <f4 (C order). Throws FileError on I/O failure.
void writeNpy(const std::string& path, const TensorView& tensor);
std::string serializeNpy(const TensorView& tensor);

} // namespace opscope
