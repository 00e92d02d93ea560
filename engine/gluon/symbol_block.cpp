#include "gluon/symbol_block.h"

#include "core/error.h"
#include "gluon/name_manager.h"
#include "gluon/tracer.h"
#include "io/params_file.h"
#include "io/symbol_json.h"

#include <algorithm>
#include <span>

namespace opscope::gluon {

namespace {
// A variable's `__shape__` hint; unknown (-1, NumPy style) dimensions become 0, MXNet 1.x's
// unknown. Shape() when absent or malformed.
Shape shapeHint(const Node& n)
{
    auto it = n.attrs.find("__shape__");
    if (it == n.attrs.end()) return {};
    try {
        std::vector<int64_t> dims = parseTupleAttr(it->second);
        for (int64_t& d : dims)
            d = d < 0 ? 0 : d;
        return Shape(std::span<const int64_t>(dims));
    } catch (const std::exception&) {
        return {};
    }
}

// Parameter::setShape's rule: same rank, and every known dimension equal.
bool compatible(const Shape& expected, const Shape& actual)
{
    if (expected.ndim() == 0) return true;
    if (expected.ndim() != actual.ndim()) return false;
    for (int i = 0; i < expected.ndim(); ++i)
        if (expected[i] != 0 && expected[i] != actual[i]) return false;
    return true;
}

std::string joined(const std::vector<std::string>& names)
{
    std::string s;
    for (const std::string& n : names)
        s += (s.empty() ? "" : ", ") + n;
    return s;
}
} // namespace

std::shared_ptr<SymbolBlock> SymbolBlock::imports(
    const std::string& symbol_file, const std::vector<std::string>& input_names, const std::string& param_file)
{
    auto block = std::make_shared<SymbolBlock>(loadSymbolJson(symbol_file), input_names);
    if (!param_file.empty()) block->load_parameters(param_file);
    return block;
}

SymbolBlock::SymbolBlock(Graph graph, std::vector<std::string> input_names, const std::optional<std::string>& prefix)
    : HybridBlock("symbolblock", prefix)
    , m_inputNames(std::move(input_names))
{
    if (!graph.finalized()) throw UsageError("SymbolBlock: the graph must be finalized");
    for (size_t i = 0; i < m_inputNames.size(); ++i)
        for (size_t j = 0; j < i; ++j)
            if (m_inputNames[i] == m_inputNames[j])
                throw UsageError("SymbolBlock: input '" + m_inputNames[i] + "' is named twice");
    auto g = std::make_shared<Graph>(std::move(graph));
    ParameterDict dict;
    m_inputIndex.assign(g->size(), -1);
    for (uint32_t id : g->variables()) {
        const Node& n = g->node(id);
        auto it = std::find(m_inputNames.begin(), m_inputNames.end(), n.name);
        if (it != m_inputNames.end()) {
            m_inputIndex[id] = static_cast<int>(it - m_inputNames.begin());
            continue;
        }
        if (dict.contains(n.name)) continue; // two variables of one name are one parameter, as in MXNet
        dict.add(std::make_shared<Parameter>(n.name, shapeHint(n), nullptr, g->isAuxiliary(id) ? "null" : "write"));
    }
    setFixedGraph(g, m_inputNames, dict);
    m_symbol = std::move(g);
}

void SymbolBlock::load_parameters(const std::string& filename, bool allow_missing, bool ignore_extra)
{
    const NamedTensors arrays = loadParams(filename);
    std::map<std::string, Tensor> byName;
    for (const auto& [name, t] : arrays) {
        if (name.empty())
            throw FileError(filename + ": the arrays have no names, so they cannot be matched to parameters");
        if (!byName.emplace(stripParamPrefix(name), t).second)
            throw FileError(filename + ": two arrays are named '" + stripParamPrefix(name) + "'");
    }
    std::vector<std::string> missing, extra;
    for (const ParamPtr& p : params().values())
        if (!byName.count(p->name())) missing.push_back(p->name());
    for (const auto& [name, t] : byName)
        if (!params().contains(name)) extra.push_back(name);
    if (!missing.empty() && !allow_missing)
        throw UsageError(filename + ": missing parameter" + (missing.size() > 1 ? "s" : "")
            + " that the graph needs: " + joined(missing));
    if (!extra.empty() && !ignore_extra)
        throw UsageError(filename + ": array" + (extra.size() > 1 ? "s" : "")
            + " not used by the graph: " + joined(extra) + " (pass ignore_extra to skip them)");

    std::map<std::string, Shape> loaded;
    for (const ParamPtr& p : params().values()) {
        auto it = byName.find(p->name());
        if (it == byName.end()) continue;
        const Tensor& t = it->second;
        if (!t.defined()) throw FileError(filename + ": parameter '" + p->name() + "' is an empty array");
        if (!compatible(p->shape(), t.shape()))
            throw ShapeError(filename + ": parameter '" + p->name() + "': the graph expects shape " + p->shape().str()
                + ", the file holds " + t.shape().str());
        loaded[p->name()] = t.shape();
    }

    // With every input's shape known from its `__shape__`, shape inference checks the values now.
    std::vector<Shape> inputShapes(m_inputNames.size());
    bool inputsKnown = true;
    for (uint32_t id : m_symbol->variables())
        if (m_inputIndex[id] >= 0) {
            inputShapes[static_cast<size_t>(m_inputIndex[id])] = shapeHint(m_symbol->node(id));
            inputsKnown = inputsKnown && inputShapes[static_cast<size_t>(m_inputIndex[id])].known();
        }
    if (inputsKnown) checkShapes(inputShapes, loaded, filename);

    for (const ParamPtr& p : params().values()) {
        auto it = byName.find(p->name());
        if (it == byName.end()) continue;
        p->set_data(it->second);
        m_loadedFrom[p->name()] = filename;
    }
    m_checkedShapes.clear();
    onParamsChanged();
}

void SymbolBlock::checkShapes(const std::vector<Shape>& inputShapes, const std::map<std::string, Shape>& values,
    const std::string& loadingFile) const
{
    const Graph& g = *m_symbol;
    std::vector<Shape> varShapes(g.variables().size());
    for (size_t v = 0; v < varShapes.size(); ++v) {
        const int in = m_inputIndex[g.variables()[v]];
        if (in >= 0 && static_cast<size_t>(in) < inputShapes.size())
            varShapes[v] = inputShapes[static_cast<size_t>(in)];
    }
    std::vector<Shape> inferred;
    try {
        inferred = g.inferShapes(varShapes);
    } catch (const Error&) {
        return; // the inputs alone do not determine every shape: the run itself will report
    }
    for (uint32_t id : g.variables()) {
        if (m_inputIndex[id] >= 0) continue;
        const std::string& name = g.node(id).name;
        auto it = values.find(name);
        const Shape& want = inferred[g.entryId(id, 0)];
        if (it == values.end() || !want.known() || it->second == want) continue;
        std::string inputs;
        for (size_t i = 0; i < m_inputNames.size() && i < inputShapes.size(); ++i)
            inputs += (inputs.empty() ? "" : ", ") + m_inputNames[i] + " " + inputShapes[i].str();
        std::string source = loadingFile;
        if (auto from = m_loadedFrom.find(name); source.empty() && from != m_loadedFrom.end()) source = from->second;
        throw ShapeError((source.empty() ? std::string() : source + ": ") + "parameter '" + name + "' has shape "
            + it->second.str() + ", but the graph needs " + want.str() + " for input shape"
            + (inputShapes.size() > 1 ? "s " : " ") + inputs);
    }
}

std::vector<Value> SymbolBlock::forward(const std::vector<Value>& inputs)
{
    const bool eager = !inputs.empty()
        && std::none_of(inputs.begin(), inputs.end(), [](const Value& v) { return v.isSymbol() || !v.defined(); });
    if (eager && inputs.size() == m_inputNames.size()) {
        // The shapes checked last time (inputs, then parameters) compared in place: a call with
        // the same shapes allocates nothing here.
        const std::vector<ParamPtr>& ps = params().values();
        static const Shape unknown;
        const auto shapeOf = [](const ParamPtr& p) -> const Shape& { return p->initialized() ? p->data().shape() : unknown; };
        bool same = m_checkedShapes.size() == inputs.size() + ps.size();
        for (size_t k = 0; same && k < inputs.size(); ++k)
            same = m_checkedShapes[k] == inputs[k].tensor().shape();
        for (size_t k = 0; same && k < ps.size(); ++k)
            same = m_checkedShapes[inputs.size() + k] == shapeOf(ps[k]);
        if (!same) {
            std::vector<Shape> inputShapes;
            for (const Value& v : inputs)
                inputShapes.push_back(v.tensor().shape());
            std::vector<Shape> key = inputShapes;
            std::map<std::string, Shape> values;
            for (const ParamPtr& p : ps) {
                key.push_back(shapeOf(p));
                if (p->initialized()) values[p->name()] = p->data().shape();
            }
            checkShapes(inputShapes, values, {});
            m_checkedShapes = std::move(key);
        }
    }
    return HybridBlock::forward(inputs);
}

std::vector<Value> SymbolBlock::hybrid_forward(const F& F, const std::vector<Value>& inputs)
{
    const Graph& g = *m_symbol;
    if (inputs.size() != m_inputNames.size())
        throw UsageError("SymbolBlock: expected " + std::to_string(m_inputNames.size()) + " input(s) ("
            + joined(m_inputNames) + "), got " + std::to_string(inputs.size()));
    // Exact node names: not under this block's (or a parent's) name scope.
    NameManager::PrefixScope exactNames("");
    std::vector<std::vector<Value>> outs(g.size());
    for (uint32_t id = 0; id < g.size(); ++id) {
        const Node& n = g.node(id);
        if (n.isVariable()) {
            const int in = m_inputIndex[id];
            outs[id] = { in >= 0 ? inputs[static_cast<size_t>(in)] : F.param(params().at(n.name)) };
            continue;
        }
        std::vector<Value> args;
        for (const NodeEntry& e : n.inputs) {
            if (e.index >= outs[e.node].size())
                throw UsageError("SymbolBlock: " + g.describe(id) + " reads output " + std::to_string(e.index) + " of "
                    + g.describe(e.node) + ", which is not visible when run operator by operator");
            args.push_back(outs[e.node][e.index]);
        }
        if (F.symbolic()) {
            Tracer* t = F.tracer();
            t->addOp(n.op, n.name, n.attrs, args);
            const auto made = static_cast<uint32_t>(t->graph().size() - 1);
            for (int k = 0; k < n.numOutputs; ++k)
                outs[id].emplace_back(t, NodeEntry { made, static_cast<uint32_t>(k), 0 });
        } else {
            outs[id] = F.call(n.op, args, n.attrs, n.name);
        }
    }
    std::vector<Value> result;
    for (const NodeEntry& h : g.heads()) {
        if (h.index >= outs[h.node].size())
            throw UsageError("SymbolBlock: output " + std::to_string(h.index) + " of " + g.describe(h.node)
                + " is not visible when run operator by operator");
        result.push_back(outs[h.node][h.index]);
    }
    return result;
}

} // namespace opscope::gluon
