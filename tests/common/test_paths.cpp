#include "common/test_paths.h"

#include <cstdlib>
#include <filesystem>

namespace opscope::test {

std::string fixture(const std::string& name)
{
    return std::string(OPSCOPE_FIXTURES_DIR) + "/" + name;
}

std::string samplesOnnx(const std::string& name)
{
    return (std::filesystem::path(OPSCOPE_FIXTURES_DIR) / ".." / ".." / "samples" / "onnx" / name)
        .lexically_normal()
        .string();
}

std::string sharedDir()
{
    const char* env = std::getenv("OPSCOPE_SHARED_DIR");
    return env && *env ? std::string(env) : std::string(OPSCOPE_SHARED_DIR);
}

std::string shared(const std::string& name)
{
    return sharedDir() + "/" + name;
}

std::string missingShared(std::initializer_list<const char*> names)
{
    for (const char* name : names) {
        const std::string path = shared(name);
        std::error_code ec;
        if (!std::filesystem::exists(path, ec))
            return "skipped: needs " + path
                + " (real MXNet exports kept outside the repository; set OPSCOPE_SHARED_DIR to the folder that holds "
                  "models/)";
    }
    return {};
}

std::string binary(const std::string& name)
{
    return std::string(OPSCOPE_BIN_DIR) + "/" + name;
}

} // namespace opscope::test
