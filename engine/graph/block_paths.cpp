#include "graph/block_paths.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace opscope {

namespace {

// A block (or the top level) with more direct ops than this is split into runs of consecutive ops.
constexpr size_t kMaxDirectOps = 150;
// Runs hold at least this many ops, and a split block gets at most kMaxRuns of them.
constexpr size_t kMinRunLength = 20;
constexpr size_t kMaxRuns = 60;

// "a//b/" gives "a/b".
std::string normalizePath(const std::string& raw)
{
    std::string out;
    size_t i = 0;
    while (i < raw.size()) {
        const size_t slash = raw.find('/', i);
        const size_t end = slash == std::string::npos ? raw.size() : slash;
        if (end > i) {
            if (!out.empty()) out += '/';
            out.append(raw, i, end - i);
        }
        i = end + 1;
    }
    return out;
}

std::vector<std::string> nameTokens(const std::string& name)
{
    std::vector<std::string> tokens;
    std::string cur;
    for (char c : name) {
        if (c == '_' || c == '/') {
            if (!cur.empty()) tokens.push_back(std::move(cur));
            cur.clear();
        } else {
            cur += c;
        }
    }
    if (!cur.empty()) tokens.push_back(std::move(cur));
    return tokens;
}

void deriveNamePaths(const Graph& graph, const std::vector<uint32_t>& ops, std::vector<std::string>& paths)
{
    std::vector<std::vector<std::string>> candidates(ops.size());
    std::unordered_map<std::string, int> counts;
    for (size_t i = 0; i < ops.size(); ++i) {
        const std::vector<std::string> tokens = nameTokens(graph.node(ops[i]).name);
        std::string component, path;
        for (size_t k = 0; k + 1 < tokens.size(); ++k) {
            component += (k ? "_" : "") + tokens[k];
            path += (k ? "/" : "") + component;
            candidates[i].push_back(path);
            ++counts[path];
        }
    }
    for (size_t i = 0; i < ops.size(); ++i) {
        std::string path;
        for (const std::string& p : candidates[i]) {
            if (counts[p] < 2) break;
            path = p;
        }
        paths[ops[i]] = path;
    }
}

void chunkLargeBlocks(const Graph& graph, std::vector<std::string>& paths)
{
    std::map<std::string, std::vector<uint32_t>> direct;
    std::vector<std::string> containers;
    for (uint32_t id = 0; id < graph.size(); ++id) {
        if (graph.node(id).isVariable()) continue;
        auto [it, inserted] = direct.try_emplace(paths[id]);
        if (inserted) containers.push_back(paths[id]);
        it->second.push_back(id);
    }
    for (const std::string& container : containers) {
        const std::vector<uint32_t>& ops = direct[container];
        const size_t n = ops.size();
        if (n <= kMaxDirectOps) continue;
        const size_t run = std::max(kMinRunLength, (n + kMaxRuns - 1) / kMaxRuns);
        for (size_t start = 0; start < n; start += run) {
            const size_t end = std::min(n, start + run);
            const std::string label = "ops " + std::to_string(start + 1) + "\u2013" + std::to_string(end);
            const std::string path = container.empty() ? label : container + "/" + label;
            for (size_t k = start; k < end; ++k)
                paths[ops[k]] = path;
        }
    }
}

} // namespace

bool pathWithin(const std::string& path, const std::string& base)
{
    if (base.empty()) return true;
    return path.size() >= base.size() && path.compare(0, base.size(), base) == 0
        && (path.size() == base.size() || path[base.size()] == '/');
}

std::vector<std::string> blockPaths(const Graph& graph)
{
    std::vector<std::string> paths(graph.size());
    std::vector<uint32_t> unplaced;
    for (uint32_t id = 0; id < graph.size(); ++id) {
        if (graph.node(id).isVariable()) continue;
        paths[id] = normalizePath(graph.node(id).blockPath);
        if (paths[id].empty()) unplaced.push_back(id);
    }
    if (unplaced.size() > kMaxDirectOps) deriveNamePaths(graph, unplaced, paths);
    chunkLargeBlocks(graph, paths);
    return paths;
}

std::vector<std::string> framePaths(const Graph& graph, const std::vector<std::string>& paths)
{
    // Ops per block, every level.
    std::unordered_map<std::string, int> ops;
    for (uint32_t id = 0; id < graph.size(); ++id) {
        if (graph.node(id).isVariable() || paths[id].empty()) continue;
        const std::string& p = paths[id];
        for (size_t slash = p.find('/'); slash != std::string::npos; slash = p.find('/', slash + 1))
            ++ops[p.substr(0, slash)];
        ++ops[p];
    }
    std::vector<std::string> frames(graph.size());
    for (uint32_t id = 0; id < graph.size(); ++id) {
        std::string p = paths[id];
        while (!p.empty() && ops[p] <= 1) {
            const size_t slash = p.rfind('/');
            p = slash == std::string::npos ? std::string() : p.substr(0, slash);
        }
        frames[id] = std::move(p);
    }
    return frames;
}

} // namespace opscope
