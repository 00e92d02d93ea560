#pragma once

#include "graph/graph.h"

#include <string>
#include <vector>

namespace opscope {

/// The block hierarchy a graph is shown and stepped in, the same for the window's frames and the
/// debugger's Step Out. For each op node, its block path ('/'-separated, "" at the top level):
/// Node::blockPath as Gluon wrote it; where more than 150 ops have none (graphs loaded from files),
/// one derived from the names' `_`/`/`-separated prefixes ("resnet_stage1_conv0_fwd" suggests
/// resnet / resnet_stage1), kept where two or more ops share it; and a block (or the top level) holding
/// more than 150 ops directly is split into runs of consecutive ops named "ops 1–50", so that no level
/// is too large to lay out. Variables get "" (the window places parameters beside their readers).
std::vector<std::string> blockPaths(const Graph& graph);

/// Per node, the frame it is drawn in: the deepest prefix of its block path that holds more than one
/// op ("" when none does). `paths` is blockPaths(graph).
std::vector<std::string> framePaths(const Graph& graph, const std::vector<std::string>& paths);

/// True when `path` is `base` or lies below it ("a/b" is within "a"; every path is within "").
bool pathWithin(const std::string& path, const std::string& base);

} // namespace opscope
