#include "compare/explain_job.h"

#include "compare/compare_job.h"
#include "core/error.h"
#include "load/onnx_loader.h"

#include <chrono>
#include <memory>
#include <mutex>
#include <thread>

namespace opscope::debug {

gluon::HybridBlock& ExplainModel::blockFor(const std::string& model, const std::string& params, uint64_t seed, const Tensor& input)
{
    if (m_loaded.block && m_model == model && m_params == params && m_seed == seed && m_shape == input.shape())
        return *m_loaded.block;
    m_loaded = {};
    std::unique_lock making(makingModels()); // a sample seeds the process's generator
    load::LoadedModel m = load::loadModel(model, params, seed);
    if (m.inputNames.size() != 1)
        throw UsageError("the model takes " + std::to_string(m.inputNames.size()) + " inputs; explaining needs a model of one input");
    load::fitToInputs(m, std::vector<Tensor> { input });
    if (!m.block->hasFixedGraph()) m.block->initializeFor({ input.shape() });
    making.unlock();
    m.block->hybridize();
    m_loaded = std::move(m);
    m_model = model;
    m_params = params;
    m_seed = seed;
    m_shape = input.shape();
    return *m_loaded.block;
}

Explainer explainerFor(std::string model, std::string params, uint64_t seed)
{
    struct State {
        std::mutex mutex; // one explanation at a time uses the model
        ExplainModel model;
    };
    auto state = std::make_shared<State>();
    return [state, model = std::move(model), params = std::move(params), seed](
               const std::vector<Tensor>& inputs, const ExplainOptions& options) {
        if (inputs.empty()) throw UsageError("there is no input to explain (the engine has none yet)");
        const Tensor input = inputs.front().copy(); // a run may read the engine's tensor meanwhile
        // Waiting for another explanation, this one can be cancelled (progress(0, 0) asks). Polled
        // with try_lock: a timed lock (pthread_mutex_clocklock) is invisible to ThreadSanitizer.
        std::unique_lock lock(state->mutex, std::defer_lock);
        for (int waited = 0; !lock.try_lock(); ++waited) {
            if (waited % 5 == 0 && options.progress && !options.progress(0, 0)) {
                Explanation cancelled;
                cancelled.method = options.method;
                cancelled.cancelled = true;
                return cancelled;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        Explanation e = explain(state->model.blockFor(model, params, seed, input), input, options);
        e.input = input;
        return e;
    };
}

} // namespace opscope::debug
