#include "gluon/f.h"

#include "core/error.h"
#include "gluon/autograd.h"
#include "gluon/name_manager.h"
#include "gluon/op_hook.h"
#include "gluon/tape.h"
#include "gluon/tracer.h"
#include "ops/registry.h"
#include "tensor/random.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>

namespace opscope::gluon {

std::string floatAttr(double v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return buf;
}

namespace {
std::string lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

// Calls report with the views of n tensors, kept on the stack when there are few (no allocation
// per op).
template <class ViewOf, class Report> void withViews(size_t n, ViewOf viewOf, Report report)
{
    constexpr size_t kOnStack = 4;
    if (n == 1) { // most ops: one view, nothing else built
        const TensorView v = viewOf(0);
        report(std::span<const TensorView>(&v, 1));
        return;
    }
    if (n <= kOnStack) {
        std::array<TensorView, kOnStack> v;
        for (size_t k = 0; k < n; ++k)
            v[k] = viewOf(k);
        report(std::span<const TensorView>(v.data(), n));
        return;
    }
    std::vector<TensorView> v;
    v.reserve(n);
    for (size_t k = 0; k < n; ++k)
        v.push_back(viewOf(k));
    report(std::span<const TensorView>(v));
}

std::vector<Value> runEager(
    const OpDef& def, const std::string& name, const AttrMap& attrs, const std::vector<Value>& inputs)
{
    ParamsPtr params;
    try {
        params = def.parse(attrs);
    } catch (const Error& e) {
        throw AttributeError("node '" + name + "' (" + def.name + "): " + e.what());
    }
    std::vector<Shape> inShapes;
    std::vector<const Tensor*> in;
    for (const Value& v : inputs) {
        in.push_back(&v.tensor());
        inShapes.push_back(v.tensor().shape());
    }
    const int nin = def.numInputs(*params);
    if (static_cast<int>(inputs.size()) != nin)
        throw UsageError("node '" + name + "' (" + def.name + "): expected " + std::to_string(nin) + " inputs, got "
            + std::to_string(inputs.size()));
    const std::vector<Shape> given = inShapes;
    std::vector<Shape> outShapes(static_cast<size_t>(def.numOutputs(*params)));
    try {
        def.inferShape(*params, inShapes, outShapes);
    } catch (const Error& e) {
        throw ShapeError("node '" + name + "' (" + def.name + "): " + e.what());
    }
    for (size_t k = 0; k < given.size(); ++k)
        if (given[k] != inShapes[k])
            throw ShapeError("node '" + name + "' (" + def.name + "): input '" + def.inputSlotNames(*params)[k]
                + "': expected " + inShapes[k].str() + ", got " + given[k].str());
    std::vector<Tensor> outputs;
    std::vector<Tensor*> out;
    outputs.reserve(outShapes.size());
    for (const Shape& s : outShapes)
        outputs.emplace_back(s);
    for (Tensor& t : outputs)
        out.push_back(&t);
    auto kernel = def.makeKernel(*params, inShapes, outShapes, KernelKind::Auto);

    // Held for the whole op: a hook may change the active set.
    const ActiveHooks::Held held;
    const std::vector<OpHook>& hooks = held.hooks();
    if (std::any_of(hooks.begin(), hooks.end(), [](const OpHook& h) { return h.monitor_all; }))
        withViews(in.size(), [&](size_t k) { return in[k]->view(); },
            [&](std::span<const TensorView> v) {
                std::vector<std::string> slotsMade;
                reportEagerInputs(hooks, name, def.name, def.inputSlotNames(*params, in.size(), slotsMade), v);
            });
    RunContext ctx;
    ctx.rng = &globalGenerator();
    ctx.training = autograd::is_training();
    try {
        kernel->run(in, out, ctx);
    } catch (const Error& e) {
        throw Error("node '" + name + "' (" + def.name + "): " + e.what());
    }
    if (!hooks.empty()) {
        std::vector<std::string> slotsMade;
        const std::span<const std::string> slots = def.outputSlotNames(*params, outputs.size(), slotsMade);
        withViews(outputs.size(), [&](size_t k) { return outputs[k].view(); },
            [&](std::span<const TensorView> v) { reportEagerOutputs(hooks, name, def.name, slots, v); });
    }
    if (autograd::is_recording()) {
        std::vector<Tensor> ins;
        for (const Tensor* t : in)
            ins.push_back(*t);
        autograd::detail::Tape::current().recordOp(
            def, params, name, ins, outputs, hooks.empty() && ActiveHooks::any() ? ActiveHooks::collect() : hooks);
    }
    const int visible = def.visibleOutputs(*params);
    std::vector<Value> result;
    for (int k = 0; k < visible; ++k)
        result.emplace_back(outputs[static_cast<size_t>(k)]);
    return result;
}
} // namespace

std::vector<Value> F::call(
    const std::string& op, const std::vector<Value>& inputs, const AttrMap& attrs, const std::string& name) const
{
    const OpDef& def = OpRegistry::instance().get(op);
    const std::string nodeName = NameManager::get(name, lower(op));
    if (m_tracer) return m_tracer->addOp(op, nodeName, attrs, inputs);
    for (const Value& v : inputs)
        if (v.isSymbol())
            throw UsageError("operator " + op + " (" + nodeName + "): called eagerly with a symbol input");
    return runEager(def, nodeName, attrs, inputs);
}

Value F::param(const ParamPtr& p) const
{
    if (m_tracer) return m_tracer->param(p);
    if (autograd::is_recording()) autograd::detail::Tape::current().noteParameter(p);
    return Value(p->data());
}

Value F::FullyConnected(const Value& x, const Value& weight, const std::optional<Value>& bias, int64_t num_hidden,
    bool flatten, const std::string& name) const
{
    std::vector<Value> in { x, weight };
    if (bias) in.push_back(*bias);
    return op("FullyConnected", in,
        { { "flatten", boolAttr(flatten) }, { "no_bias", boolAttr(!bias) },
            { "num_hidden", std::to_string(num_hidden) } },
        name);
}

Value F::Convolution(const Value& x, const Value& weight, const std::optional<Value>& bias, const AttrMap& attrs,
    const std::string& name) const
{
    std::vector<Value> in { x, weight };
    if (bias) in.push_back(*bias);
    AttrMap a = attrs;
    a["no_bias"] = boolAttr(!bias);
    return op("Convolution", in, a, name);
}

Value F::Pooling(const Value& x, const AttrMap& attrs, const std::string& name) const
{
    return op("Pooling", { x }, attrs, name);
}

Value F::Activation(const Value& x, const std::string& act_type, const std::string& name) const
{
    return op("Activation", { x }, { { "act_type", act_type } }, name);
}

Value F::LeakyReLU(const Value& x, const std::string& act_type, double slope, const std::string& name) const
{
    return op("LeakyReLU", { x }, { { "act_type", act_type }, { "slope", floatAttr(slope) } }, name);
}

Value F::Flatten(const Value& x, const std::string& name) const
{
    return op("Flatten", { x }, {}, name);
}

Value F::Reshape(const Value& x, const std::vector<int64_t>& shape, const std::string& name) const
{
    return op("Reshape", { x }, { { "shape", tupleAttr(shape) } }, name);
}

Value F::transpose(const Value& x, const std::vector<int64_t>& axes, const std::string& name) const
{
    AttrMap a;
    if (!axes.empty()) a["axes"] = tupleAttr(axes);
    return op("transpose", { x }, a, name);
}

Value F::expand_dims(const Value& x, int64_t axis, const std::string& name) const
{
    return op("expand_dims", { x }, { { "axis", std::to_string(axis) } }, name);
}

Value F::Concat(const std::vector<Value>& xs, int64_t dim, const std::string& name) const
{
    return op("Concat", xs, { { "dim", std::to_string(dim) }, { "num_args", std::to_string(xs.size()) } }, name);
}

Value F::softmax(const Value& x, int64_t axis, const std::string& name) const
{
    return op("softmax", { x }, { { "axis", std::to_string(axis) } }, name);
}

Value F::log_softmax(const Value& x, int64_t axis, const std::string& name) const
{
    return op("log_softmax", { x }, { { "axis", std::to_string(axis) } }, name);
}

Value F::elemwise_add(const Value& a, const Value& b, const std::string& name) const
{
    return op("elemwise_add", { a, b }, {}, name);
}

Value F::elemwise_mul(const Value& a, const Value& b, const std::string& name) const
{
    return op("elemwise_mul", { a, b }, {}, name);
}

Value F::broadcast_add(const Value& a, const Value& b, const std::string& name) const
{
    return op("broadcast_add", { a, b }, {}, name);
}

Value F::broadcast_sub(const Value& a, const Value& b, const std::string& name) const
{
    return op("broadcast_sub", { a, b }, {}, name);
}

Value F::broadcast_mul(const Value& a, const Value& b, const std::string& name) const
{
    return op("broadcast_mul", { a, b }, {}, name);
}

Value F::broadcast_div(const Value& a, const Value& b, const std::string& name) const
{
    return op("broadcast_div", { a, b }, {}, name);
}

Value F::dot(const Value& a, const Value& b, bool transpose_a, bool transpose_b, const std::string& name) const
{
    return op(
        "dot", { a, b }, { { "transpose_a", boolAttr(transpose_a) }, { "transpose_b", boolAttr(transpose_b) } }, name);
}

Value F::batch_dot(const Value& a, const Value& b, bool transpose_a, bool transpose_b, const std::string& name) const
{
    return op("batch_dot", { a, b },
        { { "transpose_a", boolAttr(transpose_a) }, { "transpose_b", boolAttr(transpose_b) } }, name);
}

Value F::mul_scalar(const Value& x, double scalar, const std::string& name) const
{
    return op("_mul_scalar", { x }, { { "scalar", floatAttr(scalar) } }, name);
}

Value F::plus_scalar(const Value& x, double scalar, const std::string& name) const
{
    return op("_plus_scalar", { x }, { { "scalar", floatAttr(scalar) } }, name);
}

} // namespace opscope::gluon
