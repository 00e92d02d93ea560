#pragma once

#include "core/error.h"
#include "graph/graph.h"

#include <filesystem>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>
#include <sstream>
#include <string>
#include <vector>

namespace opscope::test {

inline std::string readBytes(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    EXPECT_TRUE(in) << "cannot read " << path;
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

inline void writeBytes(const std::string& path, const std::string& bytes)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    ASSERT_TRUE(out.good()) << "cannot write " << path;
}

/// A fresh path under the system's temporary folder, unique per test and process (the suite also
/// runs whole in another process beside its single tests: WithoutShared).
inline std::string tempPath(const std::string& leaf)
{
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    return ::testing::TempDir() + "opscope_io_" + std::to_string(::getpid()) + "_" + info->test_suite_name() + "_"
        + info->name() + "_" + leaf;
}

/// At the end of the test program, removes what its tests wrote under tempPath.
struct TempSweeper {
    ~TempSweeper()
    {
        const std::string prefix = "opscope_io_" + std::to_string(::getpid()) + "_";
        std::error_code ec;
        for (const auto& entry : std::filesystem::directory_iterator(::testing::TempDir(), ec))
            if (entry.path().filename().string().starts_with(prefix)) std::filesystem::remove(entry.path(), ec);
    }
};
inline const TempSweeper tempSweeper;

/// Little-endian byte image builder for hand-made .params files.
class Bytes {
public:
    template <class T> Bytes& put(T v)
    {
        char b[sizeof(T)];
        std::memcpy(b, &v, sizeof(T));
        m_s.append(b, sizeof(T));
        return *this;
    }
    Bytes& u32(uint32_t v) { return put(v); }
    Bytes& i32(int32_t v) { return put(v); }
    Bytes& u64(uint64_t v) { return put(v); }
    Bytes& i64(int64_t v) { return put(v); }
    Bytes& raw(const std::string& s)
    {
        m_s += s;
        return *this;
    }
    Bytes& name(const std::string& s) { return u64(s.size()).raw(s); }
    const std::string& str() const { return m_s; }
    size_t size() const { return m_s.size(); }

private:
    std::string m_s;
};

/// Same operators (canonical names), node names, attributes, inputs and heads, node by node.
inline ::testing::AssertionResult sameGraph(const Graph& a, const Graph& b)
{
    if (a.size() != b.size()) return ::testing::AssertionFailure() << a.size() << " nodes vs " << b.size();
    for (uint32_t i = 0; i < a.size(); ++i) {
        const Node& x = a.node(i);
        const Node& y = b.node(i);
        const std::string opX = x.def ? x.def->name : "null";
        const std::string opY = y.def ? y.def->name : "null";
        if (opX != opY || x.name != y.name)
            return ::testing::AssertionFailure()
                << "node " << i << ": " << opX << " '" << x.name << "' vs " << opY << " '" << y.name << "'";
        if (x.attrs != y.attrs)
            return ::testing::AssertionFailure() << "node " << i << " '" << x.name << "': attributes differ";
        if (x.inputs != y.inputs)
            return ::testing::AssertionFailure() << "node " << i << " '" << x.name << "': inputs differ";
    }
    if (a.heads() != b.heads()) return ::testing::AssertionFailure() << "heads differ";
    return ::testing::AssertionSuccess();
}

/// Runs `fn`, expecting an exception of type E whose message contains every one of `parts`.
template <class E, class Fn>::testing::AssertionResult throwsWith(Fn&& fn, const std::vector<std::string>& parts)
{
    try {
        fn();
    } catch (const E& e) {
        const std::string what = e.what();
        for (const std::string& p : parts)
            if (what.find(p) == std::string::npos)
                return ::testing::AssertionFailure() << "message lacks \"" << p << "\": " << what;
        return ::testing::AssertionSuccess();
    } catch (const std::exception& e) {
        return ::testing::AssertionFailure() << "wrong exception type: " << e.what();
    }
    return ::testing::AssertionFailure() << "nothing was thrown";
}

} // namespace opscope::test
