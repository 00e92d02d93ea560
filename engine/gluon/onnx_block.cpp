#include "gluon/onnx_block.h"

#include "core/error.h"

namespace opscope::gluon {

std::shared_ptr<SymbolBlock> blockFromOnnx(OnnxGraph built, const std::string& source)
{
    auto block = std::make_shared<SymbolBlock>(std::move(built.graph), built.inputNames);
    for (const ParamPtr& p : block->collect_params().values()) {
        auto it = built.constants.find(p->name());
        if (it == built.constants.end()) throw GraphError(source + ": variable '" + p->name() + "' has no value");
        if (!isFloatingType(it->second.dtype())) p->set_grad_req("null");
        p->set_data(it->second);
    }
    return block;
}

} // namespace opscope::gluon
