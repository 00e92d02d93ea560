#pragma once

#include "tensor/tensor.h"

#include <string>

namespace opscope {

/// Reads an IDX file (the format of MNIST and Fashion-MNIST: a big-endian magic 0x0000TTDD, D
/// dimension sizes, then the values row-major), plain or gzip-compressed (recognised by its first
/// two bytes). Element types: 0x08 unsigned byte (DType::UInt8), 0x09 signed byte (Int8), 0x0B
/// short and 0x0C int (Int32), 0x0D float (Float32), 0x0E double (Float64).
///
/// A bad magic, an unknown type, a size the memory limit refuses, data shorter or longer than the
/// header says, or a damaged gzip stream throws FileError naming the file and the byte offset (of
/// the decompressed data for a gzip file, and saying so).
Tensor readIdx(const std::string& path);
/// Parses an IDX image already in memory (decompressed); `name` is used in error messages.
Tensor parseIdx(const std::string& bytes, const std::string& name);

} // namespace opscope
