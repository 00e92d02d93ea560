// opscope-cli info: what a model is, without running it. Works without a parameter file (the
// structure, and shapes where the inputs' shapes are known), shows the parameters' shapes and
// sizes from one when it is found, and suggests an input shape from the first layer's weights.

#include "cli/model_info.h"

#include "core/error.h"
#include "io/npy.h"
#include "load/input_hints.h"
#include "load/input_spec.h"
#include "load/onnx_loader.h"

#include <algorithm>
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

debug::ModelDescription describeShapes(LoadedModel& m, std::vector<Shape> shapes)
{
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
    debug::ModelDescription d;
    if (m.block->hasFixedGraph())
        d.graph = m.block->graph();
    else if (known)
        d.graph = m.block->trace(shapes);
    else
        throw UsageError("give the input shapes with --input NAME=SHAPE");
    const Graph& g = *d.graph;

    d.source = m.source;
    if (!m.description.empty()) d.headerLines.push_back("format: " + m.description);
    if (m.onnx) {
        for (const std::string& note : m.notes)
            d.headerLines.push_back("note: " + note);
        if (m.foldedNodes)
            d.headerLines.push_back(
                "folded: " + std::to_string(m.foldedNodes) + " nodes computed before the run (their inputs are known)");
    } else if (!m.paramsFile.empty())
        d.headerLines.push_back("params: " + m.paramsFile);
    else if (m.fromFile)
        d.headerLines.push_back("params: none found beside it (structure only; the model cannot run without them)");

    // Parameters' shapes: from the file where loaded, else from inference.
    const gluon::ParameterDict p = m.block->collect_params();
    std::vector<Shape> entryShapes;
    if (known) {
        std::vector<Shape> varShapes;
        for (uint32_t v : g.variables()) {
            const std::string& name = g.node(v).name;
            auto it = std::find(m.inputNames.begin(), m.inputNames.end(), name);
            if (it != m.inputNames.end())
                varShapes.push_back(shapes[static_cast<size_t>(it - m.inputNames.begin())]);
            else
                varShapes.push_back(p.contains(name) ? p.at(name)->shape() : Shape());
        }
        entryShapes = g.inferShapes(varShapes);
    }
    for (uint32_t i = 0; i < g.size(); ++i) {
        const Node& n = g.node(i);
        if (!entryShapes.empty()) {
            std::vector<Shape>& out = d.shapes[n.name];
            for (int k = 0; k < n.numOutputs; ++k)
                out.push_back(entryShapes[g.entryId(i, static_cast<uint32_t>(k))]);
        } else if (n.isVariable() && p.contains(n.name)) {
            d.shapes[n.name] = { p.at(n.name)->shape() };
        }
    }
    for (size_t i = 0; i < m.inputNames.size(); ++i) {
        debug::ModelDescription::Input in { m.inputNames[i], shapes[i], {} };
        const InputShapeHint hint = inputShapeHint(m, i);
        if (!shapes[i].known() && !hint.empty())
            in.hint = "(" + hint.reader + " suggests " + hint.str() + ", e.g. --input " + m.inputNames[i] + "="
                + hint.example() + ")";
        d.inputs.push_back(std::move(in));
    }
    d.labelNames = m.labelNames;
    d.classNames = m.classNames;
    const std::vector<std::string> inputs = blockInputNames(m);
    for (uint32_t v : g.variables())
        if (std::find(inputs.begin(), inputs.end(), g.node(v).name) == inputs.end())
            d.parameters.emplace_back(g.node(v).name, d.shapeOf(g.node(v).name, 0));
    return d;
}
} // namespace

debug::ModelDescription describeModel(LoadedModel& m, const std::vector<std::string>& inputSpecs)
{
    return describeShapes(m, givenShapes(m, inputSpecs));
}

debug::ModelDescription describeModel(LoadedModel& m, const std::vector<Tensor>& inputs)
{
    std::vector<Shape> shapes;
    for (size_t i = 0; i < m.inputNames.size() && i < inputs.size(); ++i)
        shapes.push_back(inputs[i].shape());
    shapes.resize(m.inputNames.size());
    return describeShapes(m, shapes);
}

void printModelInfo(std::ostream& out, const debug::ModelDescription& d)
{
    const Graph& g = *d.graph;
    auto text = [](const Shape& s) { return s.known() ? s.str() : std::string("?"); };
    out << "model: " << d.source << "\n";
    for (const std::string& line : d.headerLines)
        out << line << "\n";
    out << "inputs:\n";
    for (const auto& in : d.inputs) {
        out << "  " << in.name << " " << text(in.shape);
        if (!in.hint.empty()) out << " " << in.hint;
        out << "\n";
    }
    for (const std::string& label : d.labelNames)
        out << "  " << label << " (a loss's label, not needed for inference: zeros unless given)\n";
    out << "outputs:\n";
    for (const NodeEntry& h : g.heads())
        out << "  " << g.outputName(h) << " " << text(d.shapeOf(g.node(h.node).name, h.index)) << "\n";
    std::map<std::string, int> opCounts;
    int ops = 0;
    for (const Node& n : g.nodes())
        if (!n.isVariable()) {
            ++opCounts[n.opName()];
            ++ops;
        }
    out << "nodes: " << g.size() << " (" << ops << " operators, " << g.variables().size() << " variables)\n";
    out << "operators:\n";
    for (const auto& [op, count] : opCounts)
        out << "  " << op << " " << count << "\n";
    int64_t values = 0;
    size_t unknown = 0;
    for (const auto& [name, s] : d.parameters) {
        if (s.known())
            values += s.size();
        else
            ++unknown;
    }
    const size_t count = d.parameters.size();
    if (unknown)
        out << "parameters: " << count << " (" << values << " values, " << values * 4 << " bytes in the " << count - unknown
            << " of known shape; " << unknown << " need the inputs' shapes)\n";
    else
        out << "parameters: " << count << " (" << values << " values, " << values * 4 << " bytes)\n";
    for (const auto& [name, s] : d.parameters)
        out << "  " << name << " " << text(s) << "\n";
    out << "shapes:\n";
    for (uint32_t i = 0; i < g.size(); ++i) {
        const Node& n = g.node(i);
        out << "  " << n.name << " " << (n.isVariable() ? std::string("variable") : n.opName());
        for (uint32_t k = 0; k < static_cast<uint32_t>(n.numOutputs); ++k)
            out << " " << text(d.shapeOf(n.name, k));
        out << "\n";
    }
}

} // namespace opscope::cli
