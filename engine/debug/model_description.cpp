#include "debug/model_description.h"

#include "debug/session.h"

#include <algorithm>

namespace opscope::debug {

Shape ModelDescription::shapeOf(const std::string& node, size_t index) const
{
    auto it = shapes.find(node);
    if (it == shapes.end() || index >= it->second.size()) return {};
    return it->second[index];
}

ModelDescription describeSession(const Session& session, const std::string& source)
{
    ModelDescription d;
    d.source = source;
    d.graph = session.graph();
    if (!d.graph) return d;
    const Graph& g = *d.graph;
    const std::vector<Shape> entryShapes = session.graphShapes();
    for (uint32_t i = 0; i < g.size(); ++i) {
        const Node& n = g.node(i);
        std::vector<Shape>& out = d.shapes[n.name];
        for (int k = 0; k < n.numOutputs; ++k) {
            const size_t e = g.entryId(i, static_cast<uint32_t>(k));
            out.push_back(e < entryShapes.size() ? entryShapes[e] : Shape());
        }
    }
    const std::vector<std::string> inputs = session.inputNames();
    for (uint32_t v : g.variables()) {
        const std::string& name = g.node(v).name;
        const Shape s = d.shapeOf(name, 0);
        if (std::find(inputs.begin(), inputs.end(), name) != inputs.end())
            d.inputs.push_back({ name, s, {} });
        else
            d.parameters.emplace_back(name, s);
    }
    return d;
}

} // namespace opscope::debug
