#pragma once

// Runs the real opscope-cli executable for the CLI tests: its exit status, its standard output, and
// (per test process, as ctest runs tests in parallel) its standard error.

#include "common/test_paths.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace opscope::test {

struct Result {
    int status;
    std::string out;
};

inline std::string stderrPath()
{
    return (std::filesystem::temp_directory_path() / ("opscope_cli_stderr_" + std::to_string(getpid()))).string();
}

/// `opscope-cli ARGS` through the shell (ARGS may quote); `prefix` runs before it in the same shell
/// (e.g. "ulimit -v 4194304; ").
inline Result run(const std::string& args, const std::string& prefix = {})
{
    const std::string cmd = prefix + test::binary("opscope-cli") + " " + args + " 2>" + stderrPath();
    FILE* p = popen(cmd.c_str(), "r");
    std::string out;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0)
        out.append(buf, n);
    const int st = pclose(p);
    return { WIFEXITED(st) ? WEXITSTATUS(st) : (WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1), out };
}

/// The last line of a command's output (its verdict).
inline std::string lastLine(const std::string& out)
{
    std::string s = out;
    while (!s.empty() && s.back() == '\n')
        s.pop_back();
    return s.substr(s.rfind('\n') + 1);
}

inline std::string lastStderr()
{
    std::ifstream in(stderrPath());
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

inline std::filesystem::path tempDir(const std::string& name)
{
    namespace fs = std::filesystem;
    fs::path d = fs::temp_directory_path() / ("opscope_cli_" + name + "_" + std::to_string(getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

} // namespace opscope::test
