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

std::vector<Tensor> invokeBackward(const std::string& op, const AttrMap& attrs, const std::vector<Tensor>& inputs,
    const std::vector<Tensor>& outputs, const std::vector<Tensor>& outGrads, std::vector<bool> wanted, RunContext* ctx)
{
    const OpDef& def = OpRegistry::instance().get(op);
    if (!def.backward) throw UsageError("operator " + def.name + " has no gradient");
    ParamsPtr params = def.parse(attrs);
    if (wanted.empty()) wanted.assign(inputs.size(), true);
    if (wanted.size() != inputs.size() || outputs.size() != static_cast<size_t>(def.numOutputs(*params)))
        throw UsageError("operator " + def.name + ": backward needs one flag per input and every forward output");
    std::vector<const Tensor*> in, out, og;
    for (const Tensor& t : inputs)
        in.push_back(&t);
    for (const Tensor& t : outputs)
        out.push_back(&t);
    for (size_t i = 0; i < outputs.size(); ++i) {
        const bool given = i < outGrads.size() && outGrads[i].defined();
        if (given && outGrads[i].shape() != outputs[i].shape())
            shapeMismatch("operator " + def.name + ": gradient of output " + std::to_string(i), outputs[i].shape(),
                outGrads[i].shape());
        og.push_back(given ? &outGrads[i] : nullptr);
    }
    std::vector<Tensor> grads(inputs.size());
    std::vector<Tensor*> ig;
    for (size_t i = 0; i < inputs.size(); ++i) {
        if (wanted[i]) grads[i] = Tensor(inputs[i].shape());
        ig.push_back(wanted[i] ? &grads[i] : nullptr);
    }
    RunContext local;
    local.rng = &globalGenerator();
    local.training = true;
    def.backward(BackwardArgs { *params, in, out, og, ig, ctx ? *ctx : local });
    return grads;
}

} // namespace opscope
