#pragma once

// An explanation computed with a model of its own (debug/explain.h): the model loaded again from
// where it came from, away from a debug session's block, so that a run going on is untouched.

#include "debug/explain.h"
#include "load/model_loader.h"

#include <cstdint>
#include <string>

namespace opscope::debug {

/// A model loaded again to explain with: loaded at the first use, again only when the model, its
/// parameters, the seed or the input's shape change. One user at a time.
class ExplainModel {
public:
    /// The block for explaining `input` with `model` (a -symbol.json, an .onnx, sample:NAME) and
    /// `params` (empty: its own; a sample's drawn with `seed`). Throws UsageError for a model of
    /// more than one input, and what loading throws.
    gluon::HybridBlock& blockFor(const std::string& model, const std::string& params, uint64_t seed, const Tensor& input);

private:
    std::string m_model, m_params;
    uint64_t m_seed = 0;
    Shape m_shape;
    load::LoadedModel m_loaded;
};

/// What an engine whose model is `model` (loaded with `params` and `seed`) explains with: its first
/// input explained by a model of the explainer's own (one explanation at a time; Explanation::input
/// is the input explained).
Explainer explainerFor(std::string model, std::string params, uint64_t seed = 0);

} // namespace opscope::debug
