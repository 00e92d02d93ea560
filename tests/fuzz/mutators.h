#pragma once

// Mutations of model files for the end-to-end fuzzer: byte-level (flips, interesting integers,
// splices, truncation) for any file, and structure-aware ones that keep a file parseable enough to
// reach the deeper code: symbol JSON (operators, attributes, input entries, heads, nesting), the
// integer fields of .params records, and .npy headers (shapes, dtypes, lengths).

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace opscope::fuzz {

using Rng = std::mt19937_64;

/// Byte-level: one to four random edits (bit flip, byte set, an interesting integer written over
/// 1, 2, 4 or 8 bytes, a chunk duplicated, deleted or truncated, a dictionary token inserted).
std::string mutateBytes(const std::string& data, Rng& rng, const std::vector<std::string>& dictionary);

/// A symbol JSON file changed in its structure (nlohmann parses and writes it); falls back to byte
/// mutations when the input does not parse.
std::string mutateSymbolJson(const std::string& text, Rng& rng, const std::vector<std::string>& operators);

/// A .params file with its header or a record's integer fields (ndim, dimensions, type flag,
/// counts, name lengths) set to interesting values.
std::string mutateParams(const std::string& bytes, Rng& rng);

/// A .npy file with its header dictionary changed (shape, descr, fortran_order, header length) or
/// its data cut or extended.
std::string mutateNpy(const std::string& bytes, Rng& rng);

/// A well-formed .npy of a random shape (up to 6 dimensions, some 0) and dtype, whose values include
/// NaN, Inf and extremes.
std::string validNpy(Rng& rng);

/// Integers that find overflow and sign bugs: 0, 1, -1, 2^31-1, 2^31, 2^32, 2^62, 2^63-1, …
const std::vector<int64_t>& interestingIntegers();

} // namespace opscope::fuzz
