#pragma once

#include "gluon/block.h"

#include <string>

namespace opscope::gluon {

/// MXNet's `HybridBlock.export(path, epoch)` (`export` is a C++ keyword): writes the block's graph
/// to `<path>-symbol.json` and its parameters to `<path>-<epoch, 4 digits>.params`, both in MXNet
/// 1.x's form, parameters named `arg:<name>`, auxiliary states (BatchNorm's running statistics)
/// `aux:<name>`, in collect_params() order. Parameters the graph does not use are not written.
/// The block needs a graph: hybridize() it and call it once (or trace() it); otherwise UsageError
/// with MXNet's message. Throws FileError when a file cannot be written.
void export_(HybridBlock& block, const std::string& path, int epoch = 0);

} // namespace opscope::gluon
