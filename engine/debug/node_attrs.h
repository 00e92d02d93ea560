#pragma once

// A node's attributes read leniently, for views that explain a node (its anatomy, its receptive
// field): a missing or malformed attribute gives the default instead of an error.

#include "graph/graph.h"
#include "ops/attrs.h"

#include <string>
#include <vector>

namespace opscope::debug {

inline std::vector<int64_t> tupleOr(const Node& n, const char* key, std::vector<int64_t> otherwise)
{
    auto it = n.attrs.find(key);
    if (it == n.attrs.end() || it->second.empty()) return otherwise;
    try {
        return parseTupleAttr(it->second);
    } catch (const std::exception&) {
        return otherwise;
    }
}

inline double numberOr(const Node& n, const char* key, double otherwise)
{
    auto it = n.attrs.find(key);
    if (it == n.attrs.end()) return otherwise;
    try {
        return parseFloatAttr(it->second);
    } catch (const std::exception&) {
        return otherwise;
    }
}

inline std::string textOr(const Node& n, const char* key, const std::string& otherwise)
{
    auto it = n.attrs.find(key);
    return it == n.attrs.end() ? otherwise : it->second;
}

} // namespace opscope::debug
