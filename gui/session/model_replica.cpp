#include "gui/session/model_replica.h"

#include "core/error.h"
#include "debug/engine.h"
#include "io/params_file.h"
#include "io/symbol_json.h"

#include <fstream>

#include <QTemporaryDir>

namespace opscope::gui {

ModelReplica replicateModel(debug::Engine& engine, const ModelInfo& remote, bool withInput)
{
    if (!remote.graph) throw UsageError("the server described no graph to copy");
    ModelReplica r;
    r.folder = std::make_shared<QTemporaryDir>();
    if (!r.folder->isValid()) throw FileError("cannot make a folder for the server's model: " + r.folder->errorString().toStdString());
    const std::string symbol = r.folder->filePath(QStringLiteral("model-symbol.json")).toStdString();
    const std::string params = r.folder->filePath(QStringLiteral("model-0000.params")).toStdString();
    {
        std::ofstream f(symbol, std::ios::binary);
        f << saveSymbolJson(*remote.graph);
        if (!f) throw FileError(symbol + ": cannot be written");
    }
    NamedTensors arrays;
    for (const std::string& name : remote.parameterNames) {
        std::optional<Tensor> t = engine.fetch(name);
        if (!t || !t->defined()) throw UsageError("the server has no value for its parameter " + name);
        arrays.emplace_back("arg:" + name, std::move(*t));
    }
    saveParams(params, arrays);
    if (withInput && !remote.inputNames.empty()) {
        std::optional<Tensor> x = engine.fetch(remote.inputNames.front());
        if (!x) throw UsageError("the server has no value for its input " + remote.inputNames.front());
        r.input = std::move(*x);
    }
    auto m = std::make_shared<ModelInfo>();
    m->spec = QString::fromStdString(symbol);
    m->paramsFile = QString::fromStdString(params);
    m->title = remote.title;
    m->description = remote.description;
    m->inputNames = remote.inputNames;
    m->labelNames = remote.labelNames;
    m->inputShapes = remote.inputShapes;
    m->inputTypes = remote.inputTypes;
    m->classNames = remote.classNames;
    m->graph = remote.graph;
    m->entryShapes = remote.entryShapes;
    r.model = std::move(m);
    return r;
}

} // namespace opscope::gui
