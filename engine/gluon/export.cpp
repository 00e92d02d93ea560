#include "gluon/export.h"

#include "core/error.h"
#include "io/params_file.h"
#include "io/symbol_json.h"

#include <cstdio>
#include <fstream>
#include <unordered_map>

namespace opscope::gluon {

void export_(HybridBlock& block, const std::string& path, int epoch)
{
    const std::shared_ptr<const Graph> graph = block.graph();
    if (!graph)
        throw UsageError("Please first call block.hybridize() and then run forward with this block at least once "
                         "before calling export.");
    std::unordered_map<std::string, uint32_t> variables;
    for (uint32_t id : graph->variables())
        variables.emplace(graph->node(id).name, id);
    NamedTensors arrays;
    const ParameterDict params = block.collect_params();
    for (const ParamPtr& p : params.values()) {
        auto it = variables.find(p->name());
        if (it == variables.end()) continue;
        arrays.emplace_back((graph->isAuxiliary(it->second) ? "aux:" : "arg:") + p->name(), p->data());
    }

    const std::string symbolFile = path + "-symbol.json";
    const std::string text = saveSymbolJson(*graph);
    std::ofstream out(symbolFile, std::ios::binary | std::ios::trunc);
    if (!out) throw FileError(symbolFile + ": cannot open for writing");
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out) throw FileError(symbolFile + ": write failed");

    char suffix[32];
    std::snprintf(suffix, sizeof suffix, "-%04d.params", epoch);
    saveParams(path + suffix, arrays);
}

} // namespace opscope::gluon
