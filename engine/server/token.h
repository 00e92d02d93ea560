#pragma once

#include <string>

namespace opscope::server {

/// The token in `path` (its first line), or, when the file does not exist, a new random one (32
/// bytes from the system's random source, hex) written there with mode 0600; `created` tells which.
/// Throws UsageError naming the file when it cannot be read or written, or holds no token.
std::string loadOrCreateToken(const std::string& path, bool* created);

} // namespace opscope::server
