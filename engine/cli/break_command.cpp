#include "cli/break_command.h"

#include "cli/pause_output.h"
#include "core/error.h"
#include "debug/session.h"
#include "io/npy.h"

#include <filesystem>
#include <iostream>

namespace opscope::cli {

namespace fs = std::filesystem;
using namespace opscope::load;

int runWithBreakpoints(const RunOptions& o)
{
    std::vector<debug::Breakpoint> breaks;
    try {
        for (const std::string& b : o.breaks)
            breaks.push_back(debug::parseBreakSpec(b));
        for (const std::string& c : o.breakOn)
            breaks.push_back(debug::Breakpoint::watch(debug::Condition::parse(c)));
    } catch (const Error& e) {
        return fail(kUsage, e.what());
    }
    if (!o.hooks.empty()) return fail(kUsage, "--hooks cannot be combined with --break or --break-on");
    for (const debug::Breakpoint& b : breaks)
        if (b.condition.gradientsOnly)
            return fail(kUsage, "--break-on '" + b.condition.str()
                    + "': gradient conditions test a training step's backward pass; use them with opscope-cli train");

    LoadedModel m;
    std::vector<Tensor> inputs;
    if (const int status = prepareRun(o, m, inputs); status != kOk) return status;

    try {
        // Unknown nodes are usage errors, not breakpoints that silently never hit.
        std::vector<Shape> shapes;
        for (const Tensor& t : inputs)
            shapes.push_back(t.shape());
        std::shared_ptr<const Graph> g = m.block->hasFixedGraph() ? m.block->graph() : m.block->trace(shapes);
        for (const debug::Breakpoint& b : breaks) {
            if (b.kind != debug::Breakpoint::Kind::Node) continue;
            auto id = g->findNode(b.location);
            if (!id) return fail(kUsage, "--break " + b.location + ": the model has no node of that name");
            // A variable breaks before the first op that reads it.
            if (g->node(*id).isVariable() && !g->firstReader(*id))
                return fail(kUsage, "--break " + b.location + ": no operator reads this variable");
        }
        if (o.mode == "static_alloc")
            m.block->hybridize(true, true);
        else if (o.mode == "static_shape")
            m.block->hybridize(true, true, true);
        else
            m.block->hybridize(); // the session runs the graph; eager and hybrid give the same events

        WaitingListener listener;
        std::vector<debug::Breakpoint> added;
        {
            debug::Session session(&listener);
            session.load(m.block, blockInputNames(m));
            session.setInputs(inputs);
            for (const debug::Breakpoint& b : breaks)
                session.addBreakpoint(b);
            added = session.breakpoints();
            session.start();
            listener.waitPausedOrDone();
            if (listener.m_pause) session.stop();
            listener.waitDone();
        }
        if (listener.m_pause) {
            const debug::PauseEvent& e = *listener.m_pause;
            printPause(std::cout, e, added);
            dumpPause(e, o.dump);
            return kOk;
        }
        if (!listener.m_error.empty()) return fail(kRunFailed, listener.m_error);
        const std::vector<Tensor>& outputs = listener.m_outputs;
        for (size_t i = 0; i < outputs.size(); ++i) {
            const debug::TensorStats s = debug::computeStats(outputs[i].view());
            std::cout << "output" << i << " " << outputs[i].shape().str() << " min " << s.min << " max " << s.max
                      << " mean " << s.mean << " nan " << s.nan << " inf " << s.inf() << "\n";
        }
        if (!o.output.empty() && !outputs.empty()) writeNpy(o.output, outputs[0].view());
        if (!o.outputs.empty())
            for (size_t i = 0; i < outputs.size(); ++i)
                writeNpy((fs::path(o.outputs) / ("output" + std::to_string(i) + ".npy")).string(), outputs[i].view());
    } catch (const FileError& e) {
        return fail(kUsage, e.what());
    } catch (const std::bad_alloc&) {
        return fail(kRunFailed, "out of memory while running the model");
    } catch (const std::exception& e) {
        return fail(kRunFailed, e.what());
    }
    // Scripts ask "did it stop" (was there a NaN?) by the exit status.
    std::cout << "no breakpoint hit\n";
    return kNoHit;
}

} // namespace opscope::cli
