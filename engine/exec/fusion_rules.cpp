#include "exec/fusion_rules.h"

#include "ops/op.h"

namespace opscope::fusion {

bool isRelu(const Node& n)
{
    if (n.isVariable()) return false;
    if (n.onnx) return n.op == "Relu";
    if (n.def->name == "relu") return true;
    if (n.def->name != "Activation") return false;
    const auto it = n.attrs.find("act_type");
    return it != n.attrs.end() && it->second == "relu";
}

bool takesRelu(const Node& n)
{
    if (n.isVariable()) return false;
    return n.onnx ? n.op == "Conv" : n.def->name == "Convolution";
}

bool isAdd(const Node& n)
{
    if (n.isVariable() || n.inputs.size() != 2) return false;
    return n.onnx ? n.op == "Add" : n.def->name == "elemwise_add" || n.def->name == "broadcast_add";
}

} // namespace opscope::fusion
