#pragma once

// opscope-cli diff: two runs of a network compared tensor by tensor (engine/debug/compare.h).

#include <cstdint>
#include <string>
#include <vector>

namespace opscope::cli {

struct DiffOptions {
    std::string modelA, paramsA;
    std::vector<std::string> inputsA;
    std::string kernelsA = "auto";
    /// Run B: another model (or the same one when empty), its parameters, inputs and kernels; or
    /// the tensors an earlier `run --dump DIR` wrote; or an .npz archive of arrays by name.
    std::string modelB, paramsB, dumpB, npzB;
    std::vector<std::string> inputsB;
    std::string kernelsB = "auto";
    /// How each run executes: eager, hybrid (default), static_alloc or static_shape.
    std::string modeA = "hybrid", modeB = "hybrid";
    /// Nodes of a run computing in float16 / bfloat16, emulated (a node name, an operator's name
    /// or "all"; exec/precision_rules.h).
    std::vector<std::string> halfA, halfB, bf16A, bf16B;
    /// A JSON object from B's tensor names to A's (cli/diff_sources.h).
    std::string map;
    uint64_t seed = 0;
    double rtol = 1e-3, atol = 1e-5;
    std::string json;
    /// Google Model Explorer node data: each node's divergence by `metric` (debug::Metric names).
    std::string overlay;
    std::string metric = "rel_l2";
};

/// Prints every matched tensor in A's order with its metrics, the tensors one side lacks, the
/// top-1 agreement of classifier heads, and on the last line the first divergent node or that
/// everything agrees. Exit status 0 (within the tolerance), 1 (something diverges), else 2/3/4 as
/// `run`.
int diffCommand(const DiffOptions& options);

} // namespace opscope::cli
