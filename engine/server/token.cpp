#include "server/token.h"

#include "core/error.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>

namespace opscope::server {

std::string loadOrCreateToken(const std::string& path, bool* created)
{
    *created = false;
    if (std::ifstream f(path); f) {
        std::string token;
        std::getline(f, token);
        while (!token.empty() && (token.back() == '\r' || token.back() == ' ')) token.pop_back();
        if (token.empty()) throw UsageError("--token-file " + path + ": the file holds no token (its first line is empty)");
        return token;
    }
    std::random_device random; // /dev/urandom
    static const char* hex = "0123456789abcdef";
    std::string token;
    for (int i = 0; i < 32; ++i) {
        const unsigned byte = random() & 0xff;
        token += hex[byte >> 4];
        token += hex[byte & 15];
    }
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0) throw UsageError("--token-file " + path + ": cannot create it: " + std::strerror(errno));
    const std::string line = token + "\n";
    const bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
    ::close(fd);
    if (!ok) throw UsageError("--token-file " + path + ": cannot write it");
    *created = true;
    return token;
}

} // namespace opscope::server
