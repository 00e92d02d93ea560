#pragma once

#include <map>
#include <set>
#include <string>

namespace opscope {

/// `name` as a file name that stays inside the folder it is written to: every character outside
/// [A-Za-z0-9._-] (a '/', '\', ':' or control character included) becomes '_', a name that is empty or
/// starts with '.' gets a leading '_', and a name longer than 200 bytes is cut and ends with a hash
/// of the whole name. Node and tensor names come from model files, so they may be anything.
std::string safeFileName(const std::string& name);

/// Safe file names for the tensors written to one folder (`--dump`, `--outputs`, exports): two
/// names that become the same file name get `~2`, `~3`… so no file overwrites another.
class FileNamer {
public:
    /// The file name for `name` plus `suffix` (".npy"); the same name asked twice gets the same
    /// file name.
    std::string fileFor(const std::string& name, const std::string& suffix);

private:
    std::set<std::string> m_used;
    std::map<std::string, std::string> m_byName;
};

} // namespace opscope
