#include "debug/compare_match.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace opscope::debug {

std::string opFamily(const Node& node)
{
    std::string op = node.opName();
    if (op == "Activation") {
        const auto it = node.attrs.find("act_type");
        op = it == node.attrs.end() ? "relu" : it->second;
    } else if (op == "LeakyReLU") {
        const auto it = node.attrs.find("act_type");
        op = it == node.attrs.end() ? "leakyrelu" : it->second;
    }
    std::string lower;
    for (char c : op)
        lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    static const std::map<std::string, std::string> families {
        { "convolution", "conv" },
        { "conv", "conv" },
        { "fullyconnected", "dense" },
        { "gemm", "dense" },
        { "matmul", "dense" },
        { "batchnorm", "batchnorm" },
        { "batchnormalization", "batchnorm" },
        { "elemwise_add", "add" },
        { "broadcast_add", "add" },
        { "_plus", "add" },
        { "add", "add" },
        { "pooling", "pool" },
        { "maxpool", "pool" },
        { "averagepool", "pool" },
        { "globalaveragepool", "pool" },
        { "globalmaxpool", "pool" },
        { "softmaxoutput", "softmax" },
        { "softmaxactivation", "softmax" },
        { "softmax", "softmax" },
        { "flatten", "flatten" },
    };
    const auto it = families.find(lower);
    return it == families.end() ? lower : it->second;
}

namespace {

// Indexes into `ops` of the pairs of the longest common subsequence of the two family sequences;
// past a size that makes the table too large, pairs in order greedily.
std::vector<std::pair<size_t, size_t>> align(const std::vector<std::string>& fa, const std::vector<std::string>& fb)
{
    std::vector<std::pair<size_t, size_t>> pairs;
    const size_t n = fa.size(), m = fb.size();
    if (n * m > 40'000'000) {
        size_t j = 0;
        for (size_t i = 0; i < n && j < m; ++i) {
            size_t k = j;
            while (k < m && fb[k] != fa[i])
                ++k;
            if (k < m) {
                pairs.emplace_back(i, k);
                j = k + 1;
            }
        }
        return pairs;
    }
    // len[i][j]: the LCS of fa[i..] and fb[j..].
    std::vector<uint32_t> len((n + 1) * (m + 1), 0);
    auto at = [&](size_t i, size_t j) -> uint32_t& { return len[i * (m + 1) + j]; };
    for (size_t i = n; i-- > 0;)
        for (size_t j = m; j-- > 0;)
            at(i, j) = fa[i] == fb[j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
    size_t i = 0, j = 0;
    while (i < n && j < m) {
        if (fa[i] == fb[j]) {
            pairs.emplace_back(i, j);
            ++i;
            ++j;
        } else if (at(i + 1, j) >= at(i, j + 1)) {
            ++i;
        } else {
            ++j;
        }
    }
    return pairs;
}

} // namespace

std::map<std::string, std::string> matchByPosition(
    const Graph& graphA, const RecordedRun& a, const Graph& graphB, const RecordedRun& b)
{
    std::vector<uint32_t> opsA, opsB;
    std::vector<std::string> famA, famB;
    for (uint32_t id = 0; id < graphA.size(); ++id)
        if (!graphA.node(id).isVariable()) {
            opsA.push_back(id);
            famA.push_back(opFamily(graphA.node(id)));
        }
    for (uint32_t id = 0; id < graphB.size(); ++id)
        if (!graphB.node(id).isVariable()) {
            opsB.push_back(id);
            famB.push_back(opFamily(graphB.node(id)));
        }
    // A's tensors B already has by name are taken.
    std::set<std::string> taken;
    for (const std::string& name : b.order)
        if (a.tensors.count(name)) taken.insert(name);
    std::map<std::string, std::string> map;
    auto pair = [&](const std::string& nameB, const std::string& nameA) {
        if (a.tensors.count(nameB) || !b.tensors.count(nameB) || !a.tensors.count(nameA) || taken.count(nameA)) return;
        if (map.count(nameB)) return;
        map[nameB] = nameA;
        taken.insert(nameA);
    };
    for (const auto& [i, j] : align(famA, famB)) {
        const Node& na = graphA.node(opsA[i]);
        const Node& nb = graphB.node(opsB[j]);
        for (int k = 0; k < std::min(na.numOutputs, nb.numOutputs); ++k)
            pair(graphB.outputName({ opsB[j], static_cast<uint32_t>(k), 0 }),
                graphA.outputName({ opsA[i], static_cast<uint32_t>(k), 0 }));
        for (size_t k = 0; k < std::min(na.inputs.size(), nb.inputs.size()); ++k)
            pair(graphB.inputName(opsB[j], k), graphA.inputName(opsA[i], k));
    }
    return map;
}

} // namespace opscope::debug
