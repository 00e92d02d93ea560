#include "load/input_hints.h"

#include "ops/attrs.h"

namespace opscope::load {

namespace {
// Dimension names by position for a shape of `ndim` dimensions whose first is the batch.
std::string roleName(int ndim, int i)
{
    if (i == 0) return "N";
    if (ndim >= 3 && i >= ndim - 2) return i == ndim - 2 ? "H" : "W";
    if (ndim == 5 && i == 2) return "D";
    return ndim == 2 ? "K" : "T";
}
} // namespace

std::string InputShapeHint::str() const
{
    std::string s = "(";
    for (int i = 0; i < shape.ndim(); ++i) {
        if (i) s += ", ";
        s += shape[i] > 0 ? std::to_string(shape[i]) : roleName(shape.ndim(), i);
    }
    return s + (shape.ndim() == 1 ? ",)" : ")");
}

std::string InputShapeHint::example() const
{
    std::string s;
    for (int i = 0; i < shape.ndim(); ++i) {
        if (i) s += "x";
        s += shape[i] > 0 ? std::to_string(shape[i]) : (i == 0 ? "1" : shape.ndim() >= 3 ? "28" : "8");
    }
    return s;
}

InputShapeHint inputShapeHint(const LoadedModel& m, size_t index)
{
    InputShapeHint hint;
    if (!m.block || index >= m.inputNames.size()) return hint;
    const std::shared_ptr<const Graph> g = m.block->graph();
    if (!g) return hint;
    const auto v = g->findNode(m.inputNames[index]);
    if (!v) return hint;
    const auto reader = g->firstReader(*v);
    if (!reader || reader->second != 0) return hint; // only where the input is the layer's data
    const Node& n = g->node(reader->first);
    const gluon::ParameterDict params = m.block->collect_params();
    auto weightShape = [&]() -> Shape {
        if (n.inputs.size() < 2) return {};
        const std::string& w = g->node(n.inputs[1].node).name;
        return params.contains(w) ? params.at(w)->shape() : Shape();
    };
    const Shape w = weightShape();
    if (!w.known()) return hint;
    if (n.op == "Convolution" || n.op == "Deconvolution") {
        int64_t groups = 1;
        if (auto it = n.attrs.find("num_group"); it != n.attrs.end()) {
            try {
                groups = parseIntAttr(it->second);
            } catch (const std::exception&) {
            }
        }
        Shape s;
        s.resize(w.ndim(), 0);
        s[1] = n.op == "Convolution" ? w[1] * groups : w[0];
        hint.shape = s;
    } else if (n.op == "FullyConnected" && w.ndim() == 2) {
        hint.shape = Shape({ 0, w[1] });
    } else if (n.op == "Embedding") {
        hint.shape = Shape({ 0, 0 });
    } else {
        return hint;
    }
    hint.reader = n.op + " '" + n.name + "'";
    return hint;
}

std::string shapeSuggestion(const LoadedModel& m, size_t index)
{
    const InputShapeHint h = inputShapeHint(m, index);
    if (h.empty()) return {};
    return " (" + h.reader + " suggests " + h.str() + ", e.g. " + h.example() + ")";
}

} // namespace opscope::load
