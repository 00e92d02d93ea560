#pragma once

// opscope-server as a child process of a test (the remote tests, the window's): started with its
// arguments, its address read from the first line of its stdout, killed or terminated on demand.

#include "common/test_paths.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace opscope::remote::test {

// opscope-server ARGS as a child process; its address from the first line of its stdout.
class ServerProcess {
public:
    explicit ServerProcess(std::vector<std::string> args)
    {
        int out[2];
        if (pipe(out) != 0) throw std::runtime_error("pipe");
        m_stderr = (std::filesystem::temp_directory_path() / ("opscope_server_stderr_" + std::to_string(getpid()))).string();
        // Everything the child needs is made before fork (other threads may hold the allocator's lock).
        const std::string bin = opscope::test::binary("opscope-server");
        std::vector<char*> argv;
        argv.push_back(const_cast<char*>(bin.c_str()));
        for (std::string& a : args)
            argv.push_back(a.data());
        argv.push_back(nullptr);
        const int err = ::open(m_stderr.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        m_pid = fork();
        if (m_pid == 0) {
            dup2(out[1], 1);
            dup2(err, 2);
            close(out[0]);
            execv(bin.c_str(), argv.data());
            _exit(127);
        }
        close(err);
        close(out[1]);
        m_out = fdopen(out[0], "r");
        char line[512] = {};
        if (fgets(line, sizeof line, m_out)) m_first = line;
        while (!m_first.empty() && m_first.back() == '\n') m_first.pop_back();
        const std::string prefix = "listening on ";
        if (m_first.rfind(prefix, 0) == 0) m_address = m_first.substr(prefix.size());
    }
    ~ServerProcess()
    {
        if (m_pid > 0) {
            kill(m_pid, SIGKILL);
            waitpid(m_pid, nullptr, 0);
        }
        if (m_out) fclose(m_out);
    }
    /// SIGTERM, then its exit status.
    int terminate()
    {
        kill(m_pid, SIGTERM);
        int st = 0;
        waitpid(m_pid, &st, 0);
        m_pid = -1;
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    }
    void killNow()
    {
        kill(m_pid, SIGKILL);
        waitpid(m_pid, nullptr, 0);
        m_pid = -1;
    }
    std::string errors() const
    {
        std::ifstream in(m_stderr);
        std::stringstream s;
        s << in.rdbuf();
        return s.str();
    }
    const std::string& address() const { return m_address; }
    const std::string& firstLine() const { return m_first; }

private:
    pid_t m_pid = -1;
    FILE* m_out = nullptr;
    std::string m_first, m_address, m_stderr;
};

} // namespace opscope::remote::test
