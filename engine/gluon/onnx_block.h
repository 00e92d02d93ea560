#pragma once

// An ONNX model's graph as a Gluon block: a SymbolBlock whose parameters hold the initializers,
// Constants and folded values (integer ones without gradients).

#include "gluon/symbol_block.h"
#include "io/onnx_model.h"

namespace opscope::gluon {

/// Takes the graph and the constants of `built`. Throws GraphError naming a variable without a value.
std::shared_ptr<SymbolBlock> blockFromOnnx(OnnxGraph built, const std::string& source);

} // namespace opscope::gluon
