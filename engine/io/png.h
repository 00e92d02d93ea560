#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace opscope {

/// Writes an 8-bit RGB PNG (no interlace; zlib deflate). `rgb` holds width × height × 3 bytes,
/// row-major. Throws FileError when the file cannot be written, UsageError for a size that does not
/// match.
void writePng(const std::string& path, int width, int height, const std::vector<uint8_t>& rgb);

} // namespace opscope
