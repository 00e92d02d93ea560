#include "load/model_loader.h"

#include "core/error.h"
#include "gluon/symbol_block.h"
#include "io/params_file.h"
#include "io/symbol_json.h"
#include "load/input_hints.h"
#include "load/input_spec.h"
#include "load/onnx_loader.h"
#include "io/onnx_model.h"
#include "models/registry.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

namespace opscope::load {

namespace fs = std::filesystem;

std::string findParamsBeside(const std::string& symbolFile)
{
    const std::string suffix = "-symbol.json";
    if (symbolFile.size() <= suffix.size()
        || symbolFile.compare(symbolFile.size() - suffix.size(), suffix.size(), suffix) != 0)
        return {};
    const fs::path prefix(symbolFile.substr(0, symbolFile.size() - suffix.size()));
    const fs::path dir = prefix.has_parent_path() ? prefix.parent_path() : fs::path(".");
    const std::string stem = prefix.filename().string() + "-";
    std::string best;
    long bestEpoch = -1;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        const std::string name = entry.path().filename().string();
        if (name.size() <= stem.size() + 7 || name.compare(0, stem.size(), stem) != 0
            || name.compare(name.size() - 7, 7, ".params") != 0)
            continue;
        const std::string epoch = name.substr(stem.size(), name.size() - stem.size() - 7);
        if (epoch.empty() || epoch.find_first_not_of("0123456789") != std::string::npos) continue;
        const long e = std::stol(epoch);
        if (e > bestEpoch) {
            bestEpoch = e;
            best = entry.path().string();
        }
    }
    return best;
}

namespace {
    // Per node: true when what it makes is used only as a loss's label (OpDef::labelInputs), directly
    // or through ops whose results are themselves used only so (a Reshape of the label); never for a
    // head. Nodes are in topological order, so readers come later.
    std::vector<bool> usedOnlyAsLabel(const Graph& g)
    {
        std::vector<bool> only(g.size(), false), read(g.size(), false);
        std::vector<bool> other(g.size(), false); // read some other way
        for (const NodeEntry& h : g.heads())
            other[h.node] = true;
        for (uint32_t id = static_cast<uint32_t>(g.size()); id-- > 0;) {
            const Node& n = g.node(id);
            only[id] = read[id] && !other[id];
            if (n.isVariable()) continue;
            const std::vector<int> labels = n.def->labelInputs ? n.def->labelInputs(*n.params) : std::vector<int> {};
            for (size_t k = 0; k < n.inputs.size(); ++k) {
                const uint32_t src = n.inputs[k].node;
                read[src] = true;
                const bool asLabel = std::find(labels.begin(), labels.end(), static_cast<int>(k)) != labels.end();
                if (!asLabel && !only[id]) other[src] = true;
            }
        }
        return only;
    }

    // The shape a loss expects at the label slot that variable `v` reaches (unknown when none).
    Shape labelSlotShape(const Graph& g, uint32_t v, const std::vector<Shape>& shapes)
    {
        std::vector<bool> reached(g.size(), false);
        reached[v] = true;
        for (uint32_t id = v + 1; id < g.size(); ++id) {
            const Node& n = g.node(id);
            const std::vector<int> labels = n.def && n.def->labelInputs ? n.def->labelInputs(*n.params) : std::vector<int> {};
            for (size_t k = 0; k < n.inputs.size(); ++k) {
                if (!reached[n.inputs[k].node]) continue;
                if (std::find(labels.begin(), labels.end(), static_cast<int>(k)) != labels.end())
                    return shapes[g.entryId(n.inputs[k])];
                reached[id] = true;
            }
        }
        return {};
    }

    // The losses whose label `name` becomes: "SoftmaxOutput 'softmax'".
    std::string lossesOf(const Graph& g, const std::string& name)
    {
        const auto v = g.findNode(name);
        if (!v) return {};
        std::vector<bool> reached(g.size(), false);
        reached[*v] = true;
        std::string out;
        for (uint32_t id = *v + 1; id < g.size(); ++id) {
            const Node& n = g.node(id);
            const std::vector<int> labels = n.def && n.def->labelInputs ? n.def->labelInputs(*n.params) : std::vector<int> {};
            for (size_t k = 0; k < n.inputs.size(); ++k) {
                if (!reached[n.inputs[k].node]) continue;
                if (std::find(labels.begin(), labels.end(), static_cast<int>(k)) != labels.end())
                    out += (out.empty() ? "" : ", ") + n.op + " '" + n.name + "'";
                else
                    reached[id] = true;
            }
        }
        return out;
    }
} // namespace

std::vector<std::string> blockInputNames(const LoadedModel& m)
{
    std::vector<std::string> names = m.inputNames;
    names.insert(names.end(), m.labelNames.begin(), m.labelNames.end());
    return names;
}

namespace {
    // The shapes of the graph's variables for these input shapes (one per blockInputNames, unknown
    // where not given), parameters as the block has them; labels not given get the shape the loss
    // reading them expects. Through a Reshape (MXNet 0.9's MLP flattens its label) only the number
    // of values is known, and the loss's own label shape has it.
    std::vector<Shape> variableShapes(const LoadedModel& m, const Graph& g, const std::vector<Shape>& inputShapes)
    {
        const gluon::ParameterDict params = m.block->collect_params();
        const std::vector<std::string> names = blockInputNames(m);
        std::vector<Shape> varShapes;
        for (uint32_t v : g.variables()) {
            const std::string& name = g.node(v).name;
            const auto it = std::find(names.begin(), names.end(), name);
            if (it != names.end()) {
                const size_t i = static_cast<size_t>(it - names.begin());
                varShapes.push_back(i < inputShapes.size() ? inputShapes[i] : Shape());
            } else {
                varShapes.push_back(params.contains(name) ? params.at(name)->shape() : Shape());
            }
        }
        bool missingLabel = false;
        for (size_t i = m.inputNames.size(); i < names.size(); ++i)
            missingLabel = missingLabel || i >= inputShapes.size() || !inputShapes[i].known();
        if (!missingLabel) return varShapes;
        const std::vector<Shape> shapes = g.inferShapesPartial(varShapes);
        for (size_t i = 0; i < g.variables().size(); ++i) {
            const uint32_t v = g.variables()[i];
            const std::string& name = g.node(v).name;
            if (varShapes[i].known() || std::find(m.labelNames.begin(), m.labelNames.end(), name) == m.labelNames.end())
                continue;
            Shape shape = shapes[g.entryId(v, 0)];
            if (!shape.known()) shape = labelSlotShape(g, v, shapes);
            if (!shape.known())
                throw ShapeError("input '" + name + "' (the label of " + lossesOf(g, name)
                    + "): its shape cannot be inferred; give it with --input " + name + "=SHAPE");
            varShapes[i] = shape;
        }
        return varShapes;
    }
} // namespace

std::vector<Tensor> withLabels(const LoadedModel& m, std::vector<Tensor> inputs, std::vector<std::string>* notes)
{
    const size_t n = m.inputNames.size();
    inputs.resize(n + m.labelNames.size());
    bool missing = false;
    for (size_t i = n; i < inputs.size(); ++i)
        missing = missing || !inputs[i].defined();
    if (!missing) return inputs;
    const std::shared_ptr<const Graph> g = m.block->graph();
    std::vector<Shape> given;
    for (const Tensor& t : inputs)
        given.push_back(t.defined() ? t.shape() : Shape());
    const std::vector<Shape> varShapes = variableShapes(m, *g, given);
    for (size_t i = n; i < inputs.size(); ++i) {
        if (inputs[i].defined()) continue;
        const std::string& name = m.labelNames[i - n];
        const auto& vars = g->variables();
        const size_t at = static_cast<size_t>(std::find(vars.begin(), vars.end(), *g->findNode(name)) - vars.begin());
        inputs[i] = Tensor::zeros(varShapes[at]);
        if (notes)
            notes->push_back("input '" + name + "' is only the label of " + lossesOf(*g, name)
                + ", which inference does not need: zeros of shape " + varShapes[at].str());
    }
    return inputs;
}

LoadedModel loadModel(const std::string& spec, const std::string& paramsFile, uint64_t seed, bool structureOnly)
{
    LoadedModel m;
    m.source = spec;
    if (spec.rfind("sample:", 0) == 0) {
        // A sample makes its own parameters (trained or from the seed): a file for them would be
        // silently ignored, so it is refused.
        if (!paramsFile.empty())
            throw LoadError(spec + ": a sample takes no parameter file (" + paramsFile
                + "); export it (opscope-cli train --save PREFIX) and open PREFIX-symbol.json with it");
        try {
            samples::Sample s = samples::makeSample(spec.substr(7), seed);
            m.block = s.block;
            m.inputNames = s.inputNames;
            m.defaultInputs = s.defaultInputs;
            m.classNames = s.classNames;
            m.format = "sample";
            for (const Tensor& t : s.defaultInputs) {
                m.inputShapeHints.push_back(t.shape());
                m.inputTypes.push_back(t.dtype()); // an ONNX sample's bool mask stays bool
            }
        } catch (const Error& e) {
            throw LoadError(e.what());
        } catch (const std::exception& e) {
            throw LoadError(spec + ": " + e.what());
        }
        return m;
    }
    m.fromFile = true;
    if (!fs::exists(spec)) throw LoadError(spec + ": no such file");
    if (isOnnxPath(spec)) {
        loadOnnx(spec, m);
        return m;
    }
    m.paramsFile = paramsFile.empty() ? findParamsBeside(spec) : paramsFile;
    try {
        Graph g = loadSymbolJson(spec);
        std::set<std::string> paramNames;
        if (!m.paramsFile.empty()) {
            for (const auto& [name, value] : loadParams(m.paramsFile))
                paramNames.insert(stripParamPrefix(name));
        }
        auto looksLikeParameter = [](const std::string& name) {
            for (const char* suffix : { "_weight", "_bias", "_gamma", "_beta", "_moving_mean", "_moving_var",
                     "_running_mean", "_running_var" }) {
                const std::string s(suffix);
                if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) return true;
            }
            return false;
        };
        const std::vector<bool> labelOnly = usedOnlyAsLabel(g);
        for (uint32_t v : g.variables()) {
            const Node& n = g.node(v);
            // A parameter the file lacks stays a parameter, so the import names it as missing.
            if (paramNames.count(n.name) || ((!m.paramsFile.empty() || structureOnly) && looksLikeParameter(n.name)))
                continue;
            if (labelOnly[v]) {
                m.labelNames.push_back(n.name);
                continue;
            }
            m.inputNames.push_back(n.name);
            Shape hint;
            auto it = n.attrs.find("__shape__");
            if (it != n.attrs.end()) {
                try {
                    const auto dims = parseTupleAttr(it->second);
                    hint = Shape(std::span<const int64_t>(dims));
                } catch (const std::exception&) {
                }
            }
            m.inputShapeHints.push_back(hint.known() ? hint : Shape());
        }
        if (m.paramsFile.empty() && !m.inputNames.empty() && !structureOnly) {
            // Without a params file every variable would be an input: say what is missing instead.
            std::string names;
            for (const auto& n : m.inputNames)
                if (n != "data") names += (names.empty() ? "" : ", ") + n;
            if (!names.empty())
                throw LoadError(spec + ": no .params file found beside it (looked for "
                    + spec.substr(0, spec.size() - 12) + "-NNNN.params); parameters without values: " + names);
        }
        m.block = gluon::SymbolBlock::imports(spec, blockInputNames(m), m.paramsFile);
    } catch (const LoadError&) {
        throw;
    } catch (const Error& e) {
        throw LoadError(e.what());
    } catch (const std::bad_alloc&) {
        throw LoadError(spec + ": out of memory while loading the model");
    } catch (const std::exception& e) {
        // Nothing the file holds may end the program: any other failure is a bad file too.
        throw LoadError(spec + ": " + e.what());
    }
    return m;
}

namespace {
    std::string onnxInputShapeText(const LoadedModel& m, size_t i)
    {
        return i < m.onnx->inputs().size() ? m.onnx->inputs()[i].describe() : std::string("(unknown)");
    }
}

// Inputs in model order: from --input specs, else the sample's default, else ones of the hinted shape.
std::vector<Tensor> gatherInputs(
    const LoadedModel& m, const std::vector<std::string>& specs, uint64_t seed, std::vector<std::string>* notes)
{
    const std::vector<std::string> all = blockInputNames(m);
    std::map<std::string, InputSpec> byName;
    for (const std::string& s : specs) {
        InputSpec spec = parseInputSpec(s);
        if (std::find(all.begin(), all.end(), spec.name) == all.end()) {
            std::string names;
            for (const auto& n : all)
                names += (names.empty() ? "" : ", ") + n;
            throw UsageError("--input " + spec.name + ": the model has no input of that name (inputs: " + names + ")");
        }
        byName[spec.name] = spec;
    }
    std::vector<Tensor> inputs;
    for (size_t i = 0; i < all.size(); ++i) {
        auto it = byName.find(all[i]);
        if (it != byName.end()) {
            const InputSpec& spec = it->second;
            try {
                Tensor t = makeInput(spec, seed + i);
                const DType want = i < m.inputTypes.size() ? m.inputTypes[i] : DType::Float32;
                const bool exactFill = spec.file.empty() && (spec.fill == "zeros" || spec.fill == "ones");
                if (t.dtype() != want && exactFill) {
                    t = t.astype(want); // zeros and ones are the same in every type
                } else if (t.dtype() != want) {
                    // Numbers become other numbers of their kind; fractions never silently become
                    // integers or truths.
                    if (spec.file.empty() && isFloatingType(t.dtype()) && !isFloatingType(want))
                        throw TypeError("input '" + spec.name + "' takes " + dtypeName(want) + ": a generated "
                            + spec.fill + " fill makes fractions; give :zeros or :ones, or a .npy file");
                    if (isFloatingType(t.dtype()) && !isFloatingType(want))
                        throw TypeError("input '" + spec.name + "' takes " + dtypeName(want) + ", the file holds "
                            + dtypeName(t.dtype()));
                    if (notes)
                        notes->push_back("input '" + spec.name + "': " + spec.file + " holds " + dtypeName(t.dtype())
                            + "; converted to " + dtypeName(want) + ", the type the model takes");
                    t = t.astype(want);
                }
                inputs.push_back(std::move(t));
            } catch (const FileError& e) {
                throw LoadError(e.what());
            } catch (const ResourceError& e) {
                // A generated input the machine cannot hold is a bad argument; a file's, a bad file.
                const std::string what = "input '" + spec.name + "': " + e.what();
                if (spec.file.empty()) throw UsageError(what);
                throw LoadError(spec.file + ": " + what);
            } catch (const std::exception& e) {
                if (spec.file.empty()) throw UsageError("input '" + spec.name + "': " + e.what());
                throw LoadError(spec.file + ": " + e.what());
            }
        } else if (i >= m.inputNames.size()) {
            inputs.emplace_back(); // a label: zeros below
        } else if (i < m.defaultInputs.size()) {
            inputs.push_back(m.defaultInputs[i]);
        } else if (i < m.inputShapeHints.size() && m.inputShapeHints[i].determined()) {
            inputs.push_back(Tensor::ones(m.inputShapeHints[i], i < m.inputTypes.size() ? m.inputTypes[i] : DType::Float32));
        } else if (m.onnx) {
            throw UsageError("input '" + all[i] + "' has symbolic dimensions " + onnxInputShapeText(m, i)
                + ": give it with --input " + all[i] + "=SHAPE or --input " + all[i] + "=FILE.npy");
        } else {
            throw UsageError("input '" + all[i] + "' needs a value: --input " + all[i] + "=FILE.npy or --input "
                + all[i] + "=SHAPE" + shapeSuggestion(m, i));
        }
    }
    return withLabels(m, std::move(inputs), notes);
}

ModelGraph graphOf(const LoadedModel& m, const std::vector<Shape>& inputShapes)
{
    bool known = inputShapes.size() == m.inputNames.size();
    for (const Shape& s : inputShapes)
        known = known && s.known();
    ModelGraph out;
    if (m.block->hasFixedGraph())
        out.graph = m.block->graph();
    else if (known)
        out.graph = m.block->trace(inputShapes);
    else
        throw UsageError(m.source + ": the input shapes are needed to trace the model");
    if (!known) return out;
    out.entryShapes = out.graph->inferShapes(variableShapes(m, *out.graph, inputShapes));
    return out;
}

} // namespace opscope::load
