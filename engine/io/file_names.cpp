#include "io/file_names.h"

#include <cstdio>
#include <functional>

namespace opscope {

namespace {
constexpr size_t kMaxStem = 200;

bool safeChar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_'
        || c == '-';
}
} // namespace

std::string safeFileName(const std::string& name)
{
    std::string out;
    out.reserve(name.size() + 1);
    for (unsigned char c : name)
        out += safeChar(c) ? static_cast<char>(c) : '_';
    if (out.empty() || out.front() == '.') out.insert(out.begin(), '_');
    if (out.size() > kMaxStem) {
        char hash[24];
        std::snprintf(hash, sizeof hash, "~%016zx", std::hash<std::string> {}(name));
        out = out.substr(0, kMaxStem - 17) + hash;
    }
    return out;
}

std::string FileNamer::fileFor(const std::string& name, const std::string& suffix)
{
    const std::string key = name + '\n' + suffix;
    if (auto it = m_byName.find(key); it != m_byName.end()) return it->second;
    const std::string stem = safeFileName(name);
    std::string file = stem + suffix;
    for (int n = 2; m_used.count(file); ++n)
        file = stem + "~" + std::to_string(n) + suffix;
    m_used.insert(file);
    m_byName.emplace(key, file);
    return file;
}

} // namespace opscope
