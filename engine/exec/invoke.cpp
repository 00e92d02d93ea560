#include "exec/invoke.h"

#include "core/error.h"
#include "ops/registry.h"
#include "tensor/random.h"

namespace opscope {

namespace {
    std::vector<Shape> inferWith(const OpDef& def, const OpParams& params, std::vector<Shape>& inShapes)
    {
        const int nin = def.numInputs(params);
        if (static_cast<int>(inShapes.size()) != nin)
            throw UsageError("operator " + def.name + ": expected " + std::to_string(nin) + " inputs, got "
                + std::to_string(inShapes.size()));
        std::vector<Shape> out(static_cast<size_t>(def.numOutputs(params)));
        try {
            def.inferShape(params, inShapes, out);
        } catch (const ShapeError& e) {
            throw ShapeError("operator " + def.name + ": " + e.what());
        }
        return out;
    }
}

std::vector<Shape> inferOpShapes(const std::string& op, const AttrMap& attrs, std::vector<Shape>& inShapes)
{
    const OpDef& def = OpRegistry::instance().get(op);
    ParamsPtr params = def.parse(attrs);
    return inferWith(def, *params, inShapes);
}

std::vector<Tensor> invokeOp(
    const std::string& op, const AttrMap& attrs, const std::vector<Tensor>& inputs, KernelKind kind, RunContext* ctx)
{
    const OpDef& def = OpRegistry::instance().get(op);
    ParamsPtr params = def.parse(attrs);
    std::vector<Shape> inShapes;
    for (const Tensor& t : inputs)
        inShapes.push_back(t.shape());
    const std::vector<Shape> given = inShapes;
    std::vector<Shape> outShapes = inferWith(def, *params, inShapes);
    for (size_t i = 0; i < given.size(); ++i)
        if (given[i] != inShapes[i])
            shapeMismatch("operator " + def.name + ": input " + std::to_string(i), inShapes[i], given[i]);
    std::vector<Tensor> outputs;
    for (const Shape& s : outShapes)
        outputs.emplace_back(s);
    auto kernel = def.makeKernel(*params, inShapes, outShapes, kind);
    std::vector<const Tensor*> in;
    for (const Tensor& t : inputs)
        in.push_back(&t);
    std::vector<Tensor*> out;
    for (Tensor& t : outputs)
        out.push_back(&t);
    RunContext local;
    local.rng = &globalGenerator();
    kernel->run(in, out, ctx ? *ctx : local);
    return outputs;
}

} // namespace opscope
