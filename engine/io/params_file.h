#pragma once

#include "tensor/tensor.h"

#include <string>
#include <utility>
#include <vector>

namespace opscope {

/// Named arrays as MXNet's `nd.save` / `nd.load` hold them, in file order. A file without names
/// (`nd.save(fname, [a, b])`) gives empty names.
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

/// Reads an MXNet NDArray list file (`.params`, `nd.save`): the framing (magic 0x112, reserved,
/// count, records, names) and every record format MXNet wrote: V3 (0xF993faca, NumPy shapes),
/// V2 (0xF993fac9), V1 (0xF993fac8) and the legacy record whose first word is the ndim.
/// Every dense dtype (float32/64/16, bfloat16, the int and uint types, bool) is converted to
/// float32. Names keep their `arg:`/`aux:` prefixes (see stripParamPrefix). An empty array (ndim 0
/// in V1/V2 and legacy records, -1 in V3, or an unknown dimension) gives an undefined Tensor; a V3
/// scalar (ndim 0) gives shape (1,). The file must be read exactly to its end: anything missing or
/// left over, sparse storage, an unknown magic, dtype or device, or more than 6 dimensions throws
/// FileError naming the file, the byte offset and what was expected there. Sizes are checked
/// against the bytes left before anything is allocated.
NamedTensors loadParams(const std::string& path);
/// Parses an in-memory file image; `name` is used in error messages.
NamedTensors parseParams(const std::string& bytes, const std::string& name);

/// Writes arrays as MXNet 1.x's `nd.save` does with a dict: V2 records (dense, cpu(0), float32),
/// then the names. An undefined or zero-size tensor is written as an empty array. When every name
/// is empty no names are written (MXNet's list form). Throws FileError on I/O failure.
void saveParams(const std::string& path, const NamedTensors& arrays);
std::string serializeParams(const NamedTensors& arrays);

/// "arg:conv0_weight" → "conv0_weight"; "aux:…" likewise; other names are returned unchanged.
std::string stripParamPrefix(const std::string& name);

} // namespace opscope
