#include "gui/session/model_info.h"

#include <algorithm>

#include "load/model_loader.h"
#include "load/onnx_loader.h"
#include "models/registry.h"

#include <QFileInfo>
#include <QStringList>

namespace opscope::gui {

namespace {
std::vector<fusion::Chain> chainsOf(const Graph& g, const std::vector<Shape>& shapes)
{
    if (shapes.empty()) return {};
    for (const Shape& s : shapes)
        if (!s.known()) return {};
    try {
        return fusion::chains(g, shapes, g.inferTypes(), false);
    } catch (const Error&) { // types the graph cannot infer alone: nothing shown
        return {};
    }
}
}

ModelInfoPtr loadModelInfo(const QString& spec, uint64_t seed)
{
    load::LoadedModel m = load::loadModel(spec.toStdString(), {}, seed);
    auto info = std::make_shared<ModelInfo>();
    info->spec = spec;
    info->block = m.block;
    info->inputNames = m.inputNames;
    info->labelNames = m.labelNames;
    info->defaultInputs = m.defaultInputs;
    info->classNames = m.classNames;
    info->inputTypes = m.inputTypes;
    info->onnx = m.onnx;
    info->builtShapes = m.builtShapes;
    info->paramsFile = QString::fromStdString(m.paramsFile);
    if (info->isSample()) {
        const std::string name = spec.mid(7).toStdString();
        info->title = QString::fromStdString(name);
        info->description = QString::fromStdString(samples::sampleDescription(name));
        info->weights = QString::fromStdString(samples::sampleWeights(name));
    } else if (m.onnx) {
        info->title = QFileInfo(spec).fileName();
        info->description = QString::fromStdString(m.description);
        for (const std::string& note : m.notes)
            info->description += QStringLiteral(" · ") + QString::fromStdString(note);
    } else {
        info->title = QFileInfo(spec).fileName();
        info->description = info->paramsFile.isEmpty()
            ? QStringLiteral("MXNet symbol file")
            : QStringLiteral("MXNet symbol file with %1").arg(QFileInfo(info->paramsFile).fileName());
    }
    for (size_t i = 0; i < m.inputNames.size(); ++i) {
        Shape s = i < m.defaultInputs.size() ? m.defaultInputs[i].shape() : Shape();
        if (!s.known() && i < m.inputShapeHints.size()) s = m.inputShapeHints[i];
        if (!s.determined() && i < m.builtShapes.size()) s = m.builtShapes[i]; // symbolic dimensions taken as 1
        info->inputShapes.push_back(s);
    }
    const load::ModelGraph g = load::graphOf(m, info->inputShapes);
    info->graph = g.graph;
    info->entryShapes = g.entryShapes;
    info->fusionChains = chainsOf(*g.graph, g.entryShapes);
    for (const Node& n : g.graph->nodes())
        if (!n.isVariable()) ++info->opCount;
    for (const gluon::ParamPtr& p : m.block->collect_params().values())
        if (p->shape().known()) info->parameterCount += p->shape().size();
    return info;
}

load::LoadedModel ModelInfo::loaded() const
{
    load::LoadedModel m;
    m.source = spec.toStdString();
    m.block = block;
    m.inputNames = inputNames;
    m.labelNames = labelNames;
    m.defaultInputs = defaultInputs;
    m.inputTypes = inputTypes;
    m.onnx = onnx;
    m.builtShapes = builtShapes;
    m.format = onnx ? "onnx" : isSample() ? "sample" : "mxnet";
    m.paramsFile = paramsFile.toStdString();
    m.fromFile = !isSample();
    return m;
}

ModelInfoPtr remoteModelInfo(const debug::ModelDescription& d, const QString& server)
{
    auto info = std::make_shared<ModelInfo>();
    info->server = server;
    info->spec = QStringLiteral("%1 (on %2)").arg(QString::fromStdString(d.source), server);
    info->title = QString::fromStdString(d.source);
    QStringList lines;
    for (const std::string& l : d.headerLines)
        lines << QString::fromStdString(l);
    lines << QStringLiteral("runs on %1").arg(server);
    info->description = lines.join(QStringLiteral(" · "));
    for (const debug::ModelDescription::Input& in : d.inputs) {
        info->inputNames.push_back(in.name);
        info->inputShapes.push_back(in.shape);
        info->inputTypes.push_back(DType::Float32);
    }
    info->labelNames = d.labelNames;
    info->classNames = d.classNames;
    info->graph = d.graph;
    if (d.graph) {
        const Graph& g = *d.graph;
        info->entryShapes.resize(g.numEntries());
        bool known = true;
        for (uint32_t i = 0; i < g.size(); ++i) {
            if (!g.node(i).isVariable()) ++info->opCount;
            for (int k = 0; k < g.node(i).numOutputs; ++k) {
                const Shape s = d.shapeOf(g.node(i).name, static_cast<size_t>(k));
                known = known && s.known();
                info->entryShapes[g.entryId(i, static_cast<uint32_t>(k))] = s;
            }
        }
        if (!known) info->entryShapes.clear();
    }
    for (const auto& [name, shape] : d.parameters) {
        info->parameterNames.push_back(name);
        info->parameterShapes.push_back(shape);
        if (shape.known()) info->parameterCount += shape.size();
    }
    return info;
}

Shape ModelInfo::parameterShape(const std::string& name) const
{
    const auto it = std::find(parameterNames.begin(), parameterNames.end(), name);
    const size_t i = static_cast<size_t>(it - parameterNames.begin());
    return i < parameterShapes.size() ? parameterShapes[i] : Shape();
}

bool ModelInfo::isParameter(const std::string& name) const
{
    if (block) return block->collect_params().contains(name);
    return std::find(parameterNames.begin(), parameterNames.end(), name) != parameterNames.end();
}

ModelInfoPtr withInputShapes(const ModelInfo& model, const std::vector<Shape>& inputShapes)
{
    auto info = std::make_shared<ModelInfo>(model);
    load::LoadedModel m = model.loaded();
    if (m.onnx) { // built again for these shapes
        load::fitToInputs(m, inputShapes);
        info->block = m.block;
        info->builtShapes = m.builtShapes;
        info->opCount = 0;
        for (const Node& n : m.block->graph()->nodes())
            if (!n.isVariable()) ++info->opCount;
    }
    const load::ModelGraph g = load::graphOf(m, inputShapes);
    info->inputShapes = inputShapes;
    info->graph = g.graph;
    info->entryShapes = g.entryShapes;
    info->fusionChains = chainsOf(*g.graph, g.entryShapes);
    return info;
}

} // namespace opscope::gui
