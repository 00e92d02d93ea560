#pragma once

// NumPy .npz archives: a zip file of .npy members (numpy.savez stores them, numpy.savez_compressed
// deflates them; both write zip64 records, which are read).

#include "tensor/tensor.h"

#include <string>
#include <utility>
#include <vector>

namespace opscope {

/// The arrays of an .npz file in the archive's order, named as numpy.load names them (the member's
/// name without ".npy"). A member stored or deflated is read; anything else (another compression
/// method, encryption, a multi-disk archive, a CRC or size that does not match, a member that is
/// not a valid .npy, a duplicate name) throws FileError naming the file, the member and the byte
/// offset. A member larger than memoryLimit() is a ResourceError.
std::vector<std::pair<std::string, Tensor>> readNpz(const std::string& path);

/// Writes the arrays as numpy.savez does (members stored, "<name>.npy"). Throws FileError on I/O
/// failure.
void writeNpz(const std::string& path, const std::vector<std::pair<std::string, TensorView>>& arrays);

} // namespace opscope
