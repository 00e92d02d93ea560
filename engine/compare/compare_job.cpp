#include "compare/compare_job.h"

#include "core/error.h"
#include "debug/compare_match.h"
#include "load/model_loader.h"

#include <chrono>
#include <filesystem>
#include <future>
#include <mutex>

namespace opscope::debug {

namespace {
    std::vector<Tensor> inputsFor(const load::LoadedModel& m, const std::vector<Tensor>& inputs)
    {
        std::vector<Tensor> own;
        for (const Tensor& t : inputs)
            own.push_back(t.copy()); // a debug run may read the caller's tensors meanwhile
        return load::withLabels(m, std::move(own));
    }

    // Completes a block's deferred parameter initialisation for these inputs (what its first call
    // would do, drawing from the process's generator) on this thread.
    void initialise(const load::LoadedModel& m, const std::vector<Tensor>& inputs)
    {
        if (m.block->hasFixedGraph()) return;
        std::vector<Shape> shapes;
        for (const Tensor& t : inputs)
            shapes.push_back(t.shape());
        m.block->initializeFor(shapes);
    }
}

std::mutex& makingModels()
{
    static std::mutex making;
    return making;
}

std::shared_ptr<CompareOutcome> runComparison(const std::string& modelA, const std::string& paramsA,
    const std::vector<Tensor>& inputsA, const CompareRequest& request, uint64_t seed)
{
    const auto began = std::chrono::steady_clock::now();
    auto result = std::make_shared<CompareOutcome>();
    const std::vector<Tensor>& given = request.inputsA.empty() ? inputsA : request.inputsA;
    // Both models are made and their deferred parameters initialised here, one after the other
    // (making a sample seeds the process's generator); then B runs on a thread of its own while A
    // runs here. A saved run B is read after A: it is matched by A's names.
    std::unique_lock makingLock(makingModels());
    load::LoadedModel a = load::loadModel(modelA, paramsA, seed);
    const std::vector<Tensor> runInputs = inputsFor(a, given);
    initialise(a, runInputs);
    using Source = CompareRequest::Source;
    std::future<std::shared_ptr<const Graph>> futureB;
    if (request.source != Source::Saved) {
        const std::string& modelB = request.source == Source::OtherModel ? request.modelB : modelA;
        const std::string paramsB = !request.paramsB.empty() ? request.paramsB
            : request.source == Source::SameModel              ? paramsA
                                                               : std::string();
        auto b = std::make_shared<load::LoadedModel>(load::loadModel(modelB, paramsB, seed));
        auto inputsB = std::make_shared<const std::vector<Tensor>>(
            request.inputsB.empty() ? inputsFor(*b, given) : load::gatherInputs(*b, request.inputsB, seed));
        initialise(*b, *inputsB);
        makingLock.unlock();
        futureB = std::async(std::launch::async, [b, inputsB, &request, &result]() -> std::shared_ptr<const Graph> {
            return recordBlockRun(*b->block, *inputsB, request.kernelsB, request.precisionB, result->b, request.modeB);
        });
    }
    if (makingLock.owns_lock()) makingLock.unlock();
    try {
        result->graph = recordBlockRun(*a.block, runInputs, KernelKind::Auto, {}, result->a);
    } catch (...) {
        if (futureB.valid()) futureB.wait();
        throw;
    }
    if (futureB.valid()) {
        const std::shared_ptr<const Graph> graphB = futureB.get();
        // Another model: what its names do not meet is matched by position and operator.
        if (request.source == Source::OtherModel && graphB) {
            const auto byPosition = matchByPosition(*result->graph, result->a, *graphB, result->b);
            result->b = renamed(std::move(result->b), byPosition);
        }
    } else {
        std::error_code ec;
        result->b = std::filesystem::is_directory(request.savedB, ec) ? readDumpFolder(request.savedB, result->a)
                                                                      : readNpzRun(request.savedB);
    }
    if (!request.mapFile.empty())
        result->b = renamed(std::move(result->b), readNameMap(request.mapFile, *result->graph, result->a));
    result->comparison = compareRuns(*result->graph, result->a, result->b, request.tol);
    result->elapsedMs
        = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - began).count();
    return result;
}

Comparer comparerFor(std::string modelA, std::string paramsA, uint64_t seed, std::vector<Tensor> defaultInputs)
{
    auto inputs = std::make_shared<const std::vector<Tensor>>(std::move(defaultInputs));
    return [modelA = std::move(modelA), paramsA = std::move(paramsA), seed, inputs](const CompareRequest& request) {
        return runComparison(modelA, paramsA, *inputs, request, seed);
    };
}

} // namespace opscope::debug
