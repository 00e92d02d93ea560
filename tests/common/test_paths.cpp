#include "common/test_paths.h"

namespace opscope::test {

std::string fixture(const std::string& name)
{
    return std::string(OPSCOPE_FIXTURES_DIR) + "/" + name;
}

std::string shared(const std::string& name)
{
    return std::string(OPSCOPE_SHARED_DIR) + "/" + name;
}

std::string binary(const std::string& name)
{
    return std::string(OPSCOPE_BIN_DIR) + "/" + name;
}

} // namespace opscope::test
