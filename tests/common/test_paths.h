#pragma once

#include <string>

namespace opscope::test {

/// tests/fixtures/<name>
std::string fixture(const std::string& name);
/// ../shared/<name> (real MXNet files; CI has shared/ beside the checkout)
std::string shared(const std::string& name);
/// build/bin/<name>
std::string binary(const std::string& name);

} // namespace opscope::test
