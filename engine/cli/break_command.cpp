#include "cli/break_command.h"

#include "cli/pause_output.h"
#include "core/error.h"
#include "debug/compare_sources.h"
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
    bool needsReference = false;
    for (const debug::Breakpoint& b : breaks)
        needsReference = needsReference || b.condition.needsReference();
    if (needsReference && o.reference.empty())
        return fail(kUsage, "diff>T compares each tensor with a reference run: give --reference FILE.npz or DIR");
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

        // The reference run, by the op hooks' names of this graph's tensors.
        std::shared_ptr<debug::RecordedRun> reference;
        if (!o.reference.empty()) {
            try {
                if (fs::is_directory(o.reference)) {
                    debug::RecordedRun names;
                    for (uint32_t id = 0; id < g->size(); ++id) {
                        const Node& n = g->node(id);
                        if (n.isVariable()) continue;
                        for (size_t k = 0; k < n.inputs.size(); ++k)
                            names.order.push_back(g->inputName(id, k));
                        for (int k = 0; k < n.numOutputs; ++k)
                            names.order.push_back(g->outputName({ id, static_cast<uint32_t>(k), 0 }));
                    }
                    reference = std::make_shared<debug::RecordedRun>(debug::readDumpFolder(o.reference, names));
                } else {
                    reference = std::make_shared<debug::RecordedRun>(debug::readNpzRun(o.reference));
                }
            } catch (const std::exception& e) {
                return fail(kBadFile, e.what());
            }
        }

        WaitingListener listener;
        std::vector<debug::Breakpoint> added;
        {
            debug::Session session(&listener);
            debug::SessionOptions options = session.options();
            options.reference = reference;
            session.setOptions(options);
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
