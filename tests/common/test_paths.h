#pragma once

#include <initializer_list>
#include <string>

namespace opscope::test {

/// tests/fixtures/<name>
std::string fixture(const std::string& name);
/// samples/onnx/<name>: the ONNX models the repository ships as samples.
std::string samplesOnnx(const std::string& name);
/// <shared>/<name>: real MXNet files that are not part of the repository. <shared> is the
/// environment's OPSCOPE_SHARED_DIR when set, else the folder `shared/` beside the checkout
/// (CMake option OPSCOPE_SHARED_DIR).
std::string shared(const std::string& name);
/// The shared folder in use (see shared()).
std::string sharedDir();
/// "" when every named shared file exists, else why a test that needs them is skipped: the first
/// missing path and how to provide it.
std::string missingShared(std::initializer_list<const char*> names);
/// build/bin/<name>
std::string binary(const std::string& name);

} // namespace opscope::test

/// Skips the current test (visibly, with the reason) when a shared file it reads is absent:
/// a clone of the repository alone has no ../shared. Use in a test body.
#define OPSCOPE_NEEDS_SHARED(...)                                                                                      \
    do {                                                                                                               \
        const std::string opscopeMissing_ = ::opscope::test::missingShared({ __VA_ARGS__ });                           \
        if (!opscopeMissing_.empty()) GTEST_SKIP() << opscopeMissing_;                                                 \
    } while (0)
