// opscope-cli info: what a model is, without running it. Works without a parameter file (the
// structure, and shapes where the inputs' shapes are known), shows the parameters' shapes and
// sizes from one when it is found, and suggests an input shape from the first layer's weights.

#include "cli/commands.h"
#include "core/error.h"
#include "io/npy.h"
#include "load/input_hints.h"
#include "load/input_spec.h"
#include "load/onnx_loader.h"

#include <iostream>
#include <map>

namespace opscope::cli {

using namespace opscope::load;

namespace {
// The shapes the --input options give (a .npy file gives its own), by input position.
std::vector<Shape> givenShapes(const LoadedModel& m, const std::vector<std::string>& specs)
{
    std::vector<Shape> shapes = m.inputShapeHints;
    shapes.resize(m.inputNames.size());
    for (const std::string& text : specs) {
        const InputSpec spec = parseInputSpec(text);
        auto it = std::find(m.inputNames.begin(), m.inputNames.end(), spec.name);
        if (it == m.inputNames.end())
            throw UsageError("--input " + spec.name + ": the model has no input of that name");
        Shape s = spec.shape;
        if (!spec.file.empty()) {
            try {
                s = readNpy(spec.file).shape();
            } catch (const FileError& e) {
                throw LoadError(e.what());
            }
        }
        shapes[static_cast<size_t>(it - m.inputNames.begin())] = s;
    }
    return shapes;
}
} // namespace

int infoCommand(const std::string& model, const std::string& params, const std::vector<std::string>& inputSpecs)
{
    LoadedModel m;
    try {
        m = loadModel(model, params, 0, true);
    } catch (const std::exception& e) {
        return fail(kBadFile, e.what());
    }
    try {
        std::vector<Shape> shapes = givenShapes(m, inputSpecs);
        bool known = true;
        for (const Shape& s : shapes)
            known = known && s.known();
        if (m.onnx) { // built for the given shapes, or for the symbolic dimensions taken as 1
            if (known)
                fitToInputs(m, shapes);
            else
                shapes = m.builtShapes;
            known = true;
        }
        std::shared_ptr<const Graph> g;
        if (m.block->hasFixedGraph())
            g = m.block->graph();
        else if (known)
            g = m.block->trace(shapes);
        else
            throw UsageError("give the input shapes with --input NAME=SHAPE");

        std::cout << "model: " << m.source << "\n";
        if (!m.description.empty()) std::cout << "format: " << m.description << "\n";
        if (m.onnx) {
            for (const std::string& note : m.notes)
                std::cout << "note: " << note << "\n";
            if (m.foldedNodes)
                std::cout << "folded: " << m.foldedNodes << " nodes computed before the run (their inputs are known)\n";
        } else if (!m.paramsFile.empty())
            std::cout << "params: " << m.paramsFile << "\n";
        else if (m.fromFile)
            std::cout << "params: none found beside it (structure only; the model cannot run without them)\n";
        // Parameters' shapes: from the file where loaded, else from inference.
        const gluon::ParameterDict p = m.block->collect_params();
        std::vector<Shape> entryShapes;
        if (known) {
            const std::vector<std::string> names = blockInputNames(m);
            std::vector<Shape> varShapes;
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
        auto shapeOf = [&](uint32_t node, uint32_t index) -> Shape {
            if (!entryShapes.empty()) return entryShapes[g->entryId(node, index)];
            const Node& n = g->node(node);
            if (n.isVariable() && p.contains(n.name)) return p.at(n.name)->shape();
            return {};
        };
        auto text = [](const Shape& s) { return s.known() ? s.str() : std::string("?"); };

        std::cout << "inputs:\n";
        for (size_t i = 0; i < m.inputNames.size(); ++i) {
            std::cout << "  " << m.inputNames[i] << " " << text(shapes[i]);
            const InputShapeHint hint = inputShapeHint(m, i);
            if (!shapes[i].known() && !hint.empty())
                std::cout << " (" << hint.reader << " suggests " << hint.str() << ", e.g. --input " << m.inputNames[i]
                          << "=" << hint.example() << ")";
            std::cout << "\n";
        }
        for (const std::string& label : m.labelNames)
            std::cout << "  " << label << " (a loss's label, not needed for inference: zeros unless given)\n";
        std::cout << "outputs:\n";
        for (const NodeEntry& h : g->heads())
            std::cout << "  " << g->outputName(h) << " " << text(shapeOf(h.node, h.index)) << "\n";
        std::map<std::string, int> opCounts;
        int ops = 0;
        for (const Node& n : g->nodes())
            if (!n.isVariable()) {
                ++opCounts[n.opName()];
                ++ops;
            }
        std::cout << "nodes: " << g->size() << " (" << ops << " operators, " << g->variables().size()
                  << " variables)\n";
        std::cout << "operators:\n";
        for (const auto& [op, count] : opCounts)
            std::cout << "  " << op << " " << count << "\n";
        int64_t values = 0;
        size_t count = 0, unknown = 0;
        const std::vector<std::string> inputs = blockInputNames(m);
        std::vector<uint32_t> parameters;
        for (uint32_t v : g->variables()) {
            if (std::find(inputs.begin(), inputs.end(), g->node(v).name) != inputs.end()) continue;
            parameters.push_back(v);
            ++count;
            const Shape s = shapeOf(v, 0);
            if (s.known())
                values += s.size();
            else
                ++unknown;
        }
        if (unknown)
            std::cout << "parameters: " << count << " (" << values << " values, " << values * 4 << " bytes in the "
                      << count - unknown << " of known shape; " << unknown << " need the inputs' shapes)\n";
        else
            std::cout << "parameters: " << count << " (" << values << " values, " << values * 4 << " bytes)\n";
        for (uint32_t v : parameters)
            std::cout << "  " << g->node(v).name << " " << text(shapeOf(v, 0)) << "\n";
        std::cout << "shapes:\n";
        for (uint32_t i = 0; i < g->size(); ++i) {
            const Node& n = g->node(i);
            std::cout << "  " << n.name << " " << (n.isVariable() ? std::string("variable") : n.opName());
            for (uint32_t k = 0; k < static_cast<uint32_t>(n.numOutputs); ++k)
                std::cout << " " << text(shapeOf(i, k));
            std::cout << "\n";
        }
        return kOk;
    } catch (const LoadError& e) {
        return fail(kBadFile, e.what());
    } catch (const UsageError& e) {
        return fail(kUsage, e.what());
    } catch (const std::exception& e) {
        return fail(kBadFile, e.what());
    }
}

} // namespace opscope::cli
