#pragma once

// A comparison computed (debug/compare_request.h): run A, the model loaded again from where it came
// from, and run B, recorded at the same time on threads of their own (no ops are shared with a
// debug run going on), then compared.

#include "debug/compare_request.h"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace opscope::debug {

/// Loads `modelA` (with `paramsA`, empty for its own; a sample's parameters drawn with `seed`) and
/// compares it, on `inputsA` (the request's own inputs when it has some), with run B (B's inputs
/// given by a source drawn with `seed` too). Throws what loading or running throws.
std::shared_ptr<CompareOutcome> runComparison(const std::string& modelA, const std::string& paramsA,
    const std::vector<Tensor>& inputsA, const CompareRequest& request, uint64_t seed = 0);

/// What an engine whose model is `modelA` (loaded with `paramsA` and `seed`) compares with:
/// runComparison on the request's inputs, else on `defaultInputs`.
Comparer comparerFor(std::string modelA, std::string paramsA, uint64_t seed = 0, std::vector<Tensor> defaultInputs = {});

/// Held while a model is made for a job: making a sample seeds the process's generator and deferred
/// initialisation draws from it, so two jobs (a server may be asked for two at once) make theirs one
/// after the other.
std::mutex& makingModels();

} // namespace opscope::debug
