#include "debug/engine.h"

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

} // namespace opscope::debug
