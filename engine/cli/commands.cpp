#include "cli/commands.h"

#include "load/input_spec.h"
#include "load/model_loader.h"
#include "core/error.h"
#include "debug/tensor_stats.h"
#include "io/file_names.h"
#include "io/npy.h"
#include "models/registry.h"

#include <nlohmann/json.hpp>

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

    nlohmann::json shapeJson(const Shape& s)
    {
        nlohmann::json a = nlohmann::json::array();
        for (int64_t d : s.dims())
            a.push_back(d);
        return a;
    }

    nlohmann::json number(double v)
    {
        return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
    }

    void applyMode(gluon::HybridBlock& b, const std::string& mode)
    {
        if (mode == "hybrid")
            b.hybridize();
        else if (mode == "static_alloc")
            b.hybridize(true, true);
        else if (mode == "static_shape")
            b.hybridize(true, true, true);
    }

    std::shared_ptr<const Graph> graphOf(LoadedModel& m, const std::vector<Shape>& shapes)
    {
        if (m.block->hasFixedGraph())
            return m.block->graph();
        return m.block->trace(shapes);
    }
}

int fail(int status, const std::string& message)
{
    std::cerr << "opscope-cli: " << message << "\n";
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
        inputs = gatherInputs(m, o.inputs, o.seed);
    } catch (const LoadError& e) {
        return fail(kBadFile, e.what());
    } catch (const std::exception& e) {
        return fail(kUsage, e.what());
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

int infoCommand(const std::string& model, const std::string& params, const std::vector<std::string>& inputSpecs)
{
    LoadedModel m;
    try {
        m = loadModel(model, params, 0);
    } catch (const std::exception& e) {
        return fail(kBadFile, e.what());
    }
    try {
        std::vector<Shape> shapes = m.inputShapeHints;
        shapes.resize(m.inputNames.size());
        for (const std::string& s : inputSpecs) {
            const size_t eq = s.find('=');
            if (eq == std::string::npos)
                throw UsageError("--input '" + s + "': expected NAME=SHAPE");
            const std::string name = s.substr(0, eq);
            auto it = std::find(m.inputNames.begin(), m.inputNames.end(), name);
            if (it == m.inputNames.end())
                throw UsageError("--input " + name + ": the model has no input of that name");
            shapes[static_cast<size_t>(it - m.inputNames.begin())] = parseShapeX(s.substr(eq + 1));
        }
        bool known = true;
        for (const Shape& s : shapes)
            known = known && s.known();
        std::shared_ptr<const Graph> g;
        if (m.block->hasFixedGraph())
            g = m.block->graph();
        else if (known)
            g = m.block->trace(shapes);
        else
            throw UsageError("give the input shapes with --input NAME=SHAPE");

        std::cout << "model: " << m.source << "\n";
        if (!m.paramsFile.empty())
            std::cout << "params: " << m.paramsFile << "\n";
        std::vector<Shape> entryShapes;
        if (known) {
            std::vector<Shape> varShapes;
            const gluon::ParameterDict p = m.block->collect_params();
            for (uint32_t v : g->variables()) {
                const std::string& name = g->node(v).name;
                auto it = std::find(m.inputNames.begin(), m.inputNames.end(), name);
                if (it != m.inputNames.end())
                    varShapes.push_back(shapes[static_cast<size_t>(it - m.inputNames.begin())]);
                else
                    varShapes.push_back(p.contains(name) ? p.at(name)->shape() : Shape());
            }
            entryShapes = g->inferShapes(varShapes);
        }
        auto shapeOf = [&](uint32_t node, uint32_t index) {
            return entryShapes.empty() ? std::string("?") : entryShapes[g->entryId(node, index)].str();
        };
        std::cout << "inputs:\n";
        for (size_t i = 0; i < m.inputNames.size(); ++i)
            std::cout << "  " << m.inputNames[i] << " " << (shapes[i].known() ? shapes[i].str() : "?") << "\n";
        std::cout << "outputs:\n";
        for (const NodeEntry& h : g->heads())
            std::cout << "  " << g->outputName(h) << " " << shapeOf(h.node, h.index) << "\n";
        std::map<std::string, int> opCounts;
        int ops = 0;
        for (const Node& n : g->nodes())
            if (!n.isVariable()) {
                ++opCounts[n.def->name];
                ++ops;
            }
        std::cout << "nodes: " << g->size() << " (" << ops << " operators, " << g->variables().size() << " variables)\n";
        std::cout << "operators:\n";
        for (const auto& [op, count] : opCounts)
            std::cout << "  " << op << " " << count << "\n";
        int64_t values = 0;
        size_t count = 0;
        for (uint32_t v : g->variables()) {
            const std::string& name = g->node(v).name;
            if (std::find(m.inputNames.begin(), m.inputNames.end(), name) != m.inputNames.end())
                continue;
            ++count;
            if (!entryShapes.empty())
                values += entryShapes[g->entryId(v, 0)].size();
        }
        std::cout << "parameters: " << count << " (" << values << " values, " << values * 4 << " bytes)\n";
        std::cout << "shapes:\n";
        for (uint32_t i = 0; i < g->size(); ++i) {
            const Node& n = g->node(i);
            std::cout << "  " << n.name << " " << (n.isVariable() ? "variable" : n.def->name);
            for (uint32_t k = 0; k < static_cast<uint32_t>(n.numOutputs); ++k)
                std::cout << " " << shapeOf(i, k);
            std::cout << "\n";
        }
        return kOk;
    } catch (const UsageError& e) {
        return fail(kUsage, e.what());
    } catch (const std::exception& e) {
        return fail(kBadFile, e.what());
    }
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
        applyMode(*m.block, o.mode);
        uint64_t seq = 0;
        std::string dumpError;
        FileNamer dumpNames; // tensor names come from the model: made safe file names inside DIR
        if (hookOut || !o.dump.empty()) {
            m.block->register_op_hook(
                [&](std::string_view name, std::string_view op, const TensorView& v) {
                    const std::string tensor(name);
                    if (hookOut) {
                        const debug::TensorStats s = debug::computeStats(v);
                        auto it = places.find(tensor);
                        nlohmann::json j;
                        j["seq"] = seq;
                        j["name"] = tensor;
                        j["op"] = std::string(op);
                        j["node"] = it != places.end() ? it->second.node : "";
                        j["slot"] = it != places.end() ? it->second.slot : "";
                        j["phase"] = it != places.end() ? it->second.phase : "output";
                        j["shape"] = shapeJson(v.shape());
                        j["min"] = number(s.min);
                        j["max"] = number(s.max);
                        j["mean"] = number(s.mean);
                        j["std"] = number(s.std);
                        j["nan"] = s.nan;
                        j["inf"] = s.inf();
                        j["zeros"] = s.zeros;
                        if (!o.dump.empty()) j["file"] = dumpNames.fileFor(tensor, ".npy");
                        *hookOut << j.dump() << "\n";
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
