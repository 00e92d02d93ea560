#pragma once

// Matching the tensors of two different graphs (a model and its export, a model before and after
// an edit) where their names differ: by graph position and operator type.

#include "debug/compare.h"

#include <map>
#include <string>

namespace opscope::debug {

/// The operator's family, so that MXNet's and ONNX's names of the same computation meet:
/// Convolution and Conv are "conv", FullyConnected, Gemm and MatMul "dense", Activation(relu),
/// relu and Relu "relu", BatchNorm and BatchNormalization "batchnorm", the adds "add", …
std::string opFamily(const Node& node);

/// Pairs the op nodes of A and B in graph order by operator family (the longest common
/// subsequence of their families: a node one side lacks, a BatchNorm folded away, is skipped), and
/// maps each of B's tensors of a paired node whose name A lacks (its outputs by position, its inputs
/// by slot position) to A's tensor at the same place when A has it and it was not matched by name.
/// Returns B's name → A's name.
std::map<std::string, std::string> matchByPosition(
    const Graph& graphA, const RecordedRun& a, const Graph& graphB, const RecordedRun& b);

} // namespace opscope::debug
