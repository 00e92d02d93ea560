#pragma once

// A comparison as an engine is asked for one (Engine::compare): run A is the engine's model on its
// inputs, run B the same model computing otherwise, another model or checkpoint, or a saved run;
// files named here are read where the engine runs. What it answers: both runs and their
// comparison (debug/compare.h).

#include "debug/compare.h"
#include "debug/compare_sources.h"
#include "exec/precision_rules.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace opscope::debug {

struct CompareRequest {
    enum class Source : uint8_t { SameModel, OtherModel, Saved };
    Source source = Source::SameModel;
    std::string modelB; ///< OtherModel: a .onnx, a -symbol.json or sample:NAME
    std::string paramsB; ///< a checkpoint for B's model (empty: the model's own parameters)
    std::string savedB; ///< Saved: a folder `run --dump` wrote, or an .npz archive
    KernelKind kernelsB = KernelKind::Auto;
    RunMode modeB = RunMode::Hybrid; ///< run A is hybridized
    /// B's own inputs as NAME=SOURCE (a .npy file or SHAPE[:fill], as opscope-cli's --input);
    /// empty: A's.
    std::vector<std::string> inputsB;
    std::vector<PrecisionRule> precisionB; ///< nodes of B computing in float16 / bfloat16
    std::string mapFile; ///< B's names to A's (readNameMap); empty: none
    CompareTolerance tol;
    /// Run A's inputs; empty: the engine's own. Only an engine in this process takes them (a
    /// server runs on its own inputs).
    std::vector<Tensor> inputsA;
};

/// Both runs and their comparison. Where the engine runs elsewhere the runs hold their names in
/// order but no values (`valuesHere` false): Engine::fetchCompared gets a tensor.
struct CompareOutcome {
    std::shared_ptr<const Graph> graph; ///< A's graph, which the comparison's nodes belong to
    RecordedRun a, b;
    Comparison comparison;
    int64_t elapsedMs = 0;
    bool valuesHere = true;
    /// Which comparison of its engine this is (ComparisonSlot's ticket): a tensor fetched for it
    /// (Engine::fetchCompared) comes from it or not at all.
    uint64_t id = 0;
};

/// Computes a comparison for an engine; whoever loaded the engine's model gives it one (it knows
/// where the model came from). Throws what loading or running throws.
using Comparer = std::function<std::shared_ptr<CompareOutcome>(const CompareRequest&)>;

/// Which run of a comparison a tensor is fetched from.
enum class CompareSide : uint8_t { A, B };

} // namespace opscope::debug
