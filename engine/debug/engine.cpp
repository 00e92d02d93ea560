#include "debug/engine.h"

#include "core/error.h"

#include <algorithm>

namespace opscope::debug {

PauseReport reportOf(const PauseEvent& event, bool statistics)
{
    PauseReport r;
    r.event = event;
    r.valuesHere = true;
    for (const PausedTensor& t : event.tensors) {
        r.shapes.push_back(t.values.shape());
        r.dtypes.push_back(t.values.dtype());
        if (statistics) r.stats.push_back(computeStats(t.values.view()));
    }
    return r;
}

std::optional<Breakpoint> Engine::breakpoint(int id)
{
    for (Breakpoint& b : breakpoints())
        if (b.id == id) return std::move(b);
    return std::nullopt;
}

bool Engine::setBreakpointEnabled(int id, bool enabled)
{
    std::optional<Breakpoint> b = breakpoint(id);
    if (!b) return false;
    if (b->enabled == enabled) return true;
    b->enabled = enabled;
    return updateBreakpoint(id, *b);
}

std::vector<Tensor> mergeInputs(std::vector<Tensor> own, const std::vector<std::optional<Tensor>>& given, size_t count)
{
    if (given.size() > count)
        throw UsageError(std::to_string(given.size()) + " inputs given to a model of " + std::to_string(count));
    own.resize(std::max(own.size(), count));
    for (size_t i = 0; i < given.size(); ++i) {
        if (given[i]) {
            own[i] = *given[i];
        } else if (!own[i].defined()) {
            throw UsageError("input " + std::to_string(i) + ": the engine has no value of its own for it");
        }
    }
    return own;
}

} // namespace opscope::debug
