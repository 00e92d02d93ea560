#include "cli/commands.h"

#include "cli/hook_line.h"

#include "load/input_spec.h"
#include "load/model_loader.h"
#include "load/onnx_loader.h"
#include "core/error.h"
#include "debug/tensor_stats.h"
#include "io/file_names.h"
#include "io/npy.h"
#include "models/registry.h"


#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

namespace opscope::cli {

namespace fs = std::filesystem;
using namespace opscope::load;

namespace {

    // MXNet's op-hook tensor name -> (node, slot, phase), from the graph.
    struct TensorPlace {
        std::string node, slot, phase;
    };
    std::map<std::string, TensorPlace> tensorPlaces(const Graph& g)
    {
        std::map<std::string, TensorPlace> m;
        for (const Node& n : g.nodes()) {
            if (n.isVariable())
                continue;
            for (const auto& s : n.inputSlots)
                m.emplace(n.name + "_" + s, TensorPlace { n.name, s, "input" });
            for (const auto& s : n.outputSlots)
                m[n.name + "_" + s] = TensorPlace { n.name, s, "output" };
        }
        return m;
    }

    void applyMode(gluon::HybridBlock& b, const std::string& mode, bool fuse)
    {
        if (mode == "eager") return;
        ExecFlags flags;
        flags.static_alloc = mode == "static_alloc" || mode == "static_shape";
        flags.static_shape = mode == "static_shape";
        flags.fuse = fuse;
        b.hybridize(true, flags);
    }

    std::shared_ptr<const Graph> graphOf(LoadedModel& m, const std::vector<Shape>& shapes)
    {
        if (m.block->hasFixedGraph())
            return m.block->graph();
        return m.block->trace(shapes);
    }
}

KernelKind kernelKindOf(const std::string& name)
{
    return name == "reference" ? KernelKind::Reference : name == "onednn" ? KernelKind::Dnnl : KernelKind::Auto;
}

namespace {
    const char* g_program = "opscope-cli";
}

void setProgramName(const char* name)
{
    g_program = name;
}

int fail(int status, const std::string& message)
{
    std::cerr << g_program << ": " << message << "\n";
    return status;
}

int prepareRun(const RunOptions& o, LoadedModel& m, std::vector<Tensor>& inputs)
{
    try {
        m = loadModel(o.model, o.params, o.seed);
    } catch (const std::exception& e) {
        return fail(kBadFile, e.what());
    }
    try {
        std::vector<std::string> notes;
        inputs = gatherInputs(m, o.inputs, o.seed, &notes);
        for (const std::string& note : notes)
            std::cerr << g_program << ": note: " << note << "\n";
    } catch (const LoadError& e) {
        return fail(kBadFile, e.what());
    } catch (const std::exception& e) {
        return fail(kUsage, e.what());
    }
    try { // an ONNX model is built for the shapes of its inputs
        fitToInputs(m, inputs);
    } catch (const std::exception& e) { // an input the model contradicts (shape or type)
        return fail(kBadFile, e.what());
    }
    for (const std::string& dir : { o.dump, o.outputs }) {
        if (dir.empty()) continue;
        std::error_code ec;
        fs::create_directories(dir, ec);
        if (ec) return fail(kUsage, dir + ": cannot create directory: " + ec.message());
    }
    return kOk;
}



int listCommand()
{
    for (const std::string& n : samples::sampleNames())
        std::cout << "sample:" << n << "\t" << samples::sampleDescription(n) << "\t" << samples::sampleWeights(n)
                  << "\n";
    return kOk;
}

int runCommand(const RunOptions& o)
{
    LoadedModel m;
    std::vector<Tensor> inputs;
    if (const int status = prepareRun(o, m, inputs); status != kOk) return status;
    std::ofstream hookFile;
    std::ostream* hookOut = nullptr;
    if (o.hooks == "-") {
        hookOut = &std::cout;
    } else if (!o.hooks.empty()) {
        hookFile.open(o.hooks, std::ios::trunc);
        if (!hookFile)
            return fail(kUsage, o.hooks + ": cannot open for writing");
        hookOut = &hookFile;
    }
    std::ostream& report = hookOut == &std::cout ? std::cerr : std::cout;

    try {
        std::vector<Shape> shapes;
        for (const Tensor& t : inputs)
            shapes.push_back(t.shape());
        const auto places = tensorPlaces(*graphOf(m, shapes));
        applyMode(*m.block, o.mode, !o.noFuse);
        uint64_t seq = 0;
        std::string dumpError;
        FileNamer dumpNames; // tensor names come from the model: made safe file names inside DIR
        if (hookOut || !o.dump.empty()) {
            m.block->register_op_hook(
                [&](std::string_view name, std::string_view op, const TensorView& v) {
                    const std::string tensor(name);
                    if (hookOut) {
                        auto it = places.find(tensor);
                        HookLine line;
                        line.seq = seq;
                        line.name = tensor;
                        line.op = std::string(op);
                        line.node = it != places.end() ? it->second.node : "";
                        line.slot = it != places.end() ? it->second.slot : "";
                        line.phase = it != places.end() ? it->second.phase : "output";
                        line.shape = v.shape();
                        line.stats = debug::computeStats(v);
                        if (!o.dump.empty()) line.file = dumpNames.fileFor(tensor, ".npy");
                        *hookOut << hookLineJson(line) << "\n";
                    }
                    ++seq;
                    if (!o.dump.empty() && dumpError.empty()) {
                        try {
                            writeNpy((fs::path(o.dump) / dumpNames.fileFor(tensor, ".npy")).string(), v);
                        } catch (const Error& e) {
                            dumpError = e.what();
                        }
                    }
                },
                o.monitorAll);
        }
        std::vector<Tensor> outputs = m.block->call(inputs);
        if (hookOut)
            hookOut->flush();
        if (!dumpError.empty())
            return fail(kUsage, dumpError);
        for (size_t i = 0; i < outputs.size(); ++i) {
            const debug::TensorStats s = debug::computeStats(outputs[i].view());
            report << "output" << i << " " << outputs[i].shape().str() << " min " << s.min << " max " << s.max
                   << " mean " << s.mean << " nan " << s.nan << " inf " << s.inf() << "\n";
        }
        if (!o.output.empty() && !outputs.empty())
            writeNpy(o.output, outputs[0].view());
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
    return kOk;
}

} // namespace opscope::cli
