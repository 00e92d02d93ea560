#pragma once

// The end-to-end fuzzer's cases: a model (symbol JSON and .params) and an input (.npy), written to a
// folder and given to the same code that `opscope-cli run`, `run --break-on` and `info` run, in this
// process. A case passes when every command returns one of the documented exit statuses (0-4)
// with any exception turned into one; a crash, a sanitizer report or a hang is a failure.

#include "fuzz/mutators.h"

#include <filesystem>
#include <string>
#include <vector>

namespace opscope::fuzz {

/// One model with its input, as file contents.
struct Case {
    std::string name; ///< the seed it came from ("lenet", "mnist"…)
    std::string symbol; ///< -symbol.json
    std::string params; ///< .params ("" for a model without parameters)
    std::string npy; ///< the input
    /// An ONNX case: the model (symbol and params empty), the name of the input `npy` gives, and the
    /// --input specs of any other inputs ("mask=1x8:zeros"), written beside it as inputs.txt.
    std::string onnx;
    std::string onnxInput;
    std::vector<std::string> otherInputs;
};

/// Seeds made by the program itself (every built-in sample exported as MXNet files, with its default
/// input), the ONNX models under `onnxDirs` that load (with inputs of their declared shapes and
/// types), plus the real MXNet exports in `sharedModels` when that folder exists.
std::vector<Case> makeSeeds(const std::filesystem::path& sharedModels, const std::vector<std::filesystem::path>& onnxDirs);

/// A case as runCase wrote it to `dir` (for --replay).
Case readCase(const std::filesystem::path& dir);

/// A mutation of `seed`: its symbol, its parameters or its input (sometimes two of them).
Case mutate(const Case& seed, Rng& rng, const std::vector<std::string>& operators);

/// What the commands returned for a case.
struct Outcome {
    std::vector<int> statuses; ///< run, run --break-on naninf, info
    std::string problem; ///< "" when every status is documented; else what went wrong
    std::vector<std::string> messages; ///< what each command wrote on standard error
};

/// Writes the case to `dir` (model-symbol.json, model-0000.params, input.npy; or model.onnx,
/// input.npy, inputs.txt) and runs the commands on it, their output discarded.
Outcome runCase(const Case& c, const std::filesystem::path& dir, Rng& rng);

} // namespace opscope::fuzz
