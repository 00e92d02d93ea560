#pragma once

#include "gluon/parameter.h"
#include "gluon/value.h"
#include "ops/attrs.h"

#include <optional>
#include <string>
#include <vector>

namespace opscope::gluon {

class Tracer;

/// MXNet's `F` in `hybrid_forward(F, x, …)`: either runs operators now (eager, like `mx.nd`) or
/// records graph nodes (tracing, like `mx.sym`). A forward written once against F works both ways,
/// and both ways name the operators identically (MXNet's name scopes), so op hooks report the same
/// names whether or not the block is hybridized.
class F {
public:
    /// nullptr: eager.
    explicit F(Tracer* tracer = nullptr)
        : m_tracer(tracer)
    {
    }
    bool symbolic() const { return m_tracer != nullptr; }
    Tracer* tracer() const { return m_tracer; }

    /// Calls operator `op` (MXNet name) with string attributes; `name` as MXNet's `name=` argument
    /// (empty: `<op in lower case><k>`), prefixed by the current name scope. Returns the visible outputs.
    std::vector<Value> call(const std::string& op, const std::vector<Value>& inputs, const AttrMap& attrs = {},
        const std::string& name = {}) const;
    Value op(const std::string& op, const std::vector<Value>& inputs, const AttrMap& attrs = {},
        const std::string& name = {}) const
    {
        return call(op, inputs, attrs, name).at(0);
    }
    /// A parameter as a value: its tensor (eager) or its variable (tracing).
    Value param(const ParamPtr& p) const;

    // The operators layers and samples use, under MXNet's names and argument order.
    Value FullyConnected(const Value& x, const Value& weight, const std::optional<Value>& bias, int64_t num_hidden,
        bool flatten = true, const std::string& name = {}) const;
    Value Convolution(const Value& x, const Value& weight, const std::optional<Value>& bias, const AttrMap& attrs,
        const std::string& name = {}) const;
    Value Pooling(const Value& x, const AttrMap& attrs, const std::string& name = {}) const;
    Value Activation(const Value& x, const std::string& act_type, const std::string& name = {}) const;
    Value LeakyReLU(const Value& x, const std::string& act_type, double slope = 0.25, const std::string& name = {}) const;
    Value Flatten(const Value& x, const std::string& name = {}) const;
    Value Reshape(const Value& x, const std::vector<int64_t>& shape, const std::string& name = {}) const;
    Value transpose(const Value& x, const std::vector<int64_t>& axes = {}, const std::string& name = {}) const;
    Value expand_dims(const Value& x, int64_t axis, const std::string& name = {}) const;
    Value Concat(const std::vector<Value>& xs, int64_t dim = 1, const std::string& name = {}) const;
    Value softmax(const Value& x, int64_t axis = -1, const std::string& name = {}) const;
    Value log_softmax(const Value& x, int64_t axis = -1, const std::string& name = {}) const;
    Value elemwise_add(const Value& a, const Value& b, const std::string& name = {}) const;
    Value elemwise_mul(const Value& a, const Value& b, const std::string& name = {}) const;
    Value broadcast_add(const Value& a, const Value& b, const std::string& name = {}) const;
    Value broadcast_sub(const Value& a, const Value& b, const std::string& name = {}) const;
    Value broadcast_mul(const Value& a, const Value& b, const std::string& name = {}) const;
    Value broadcast_div(const Value& a, const Value& b, const std::string& name = {}) const;
    Value dot(const Value& a, const Value& b, bool transpose_a = false, bool transpose_b = false,
        const std::string& name = {}) const;
    Value batch_dot(const Value& a, const Value& b, bool transpose_a = false, bool transpose_b = false,
        const std::string& name = {}) const;
    Value mul_scalar(const Value& x, double scalar, const std::string& name = {}) const;
    Value plus_scalar(const Value& x, double scalar, const std::string& name = {}) const;
    Value relu(const Value& x, const std::string& name = {}) const { return Activation(x, "relu", name); }
    Value tanh(const Value& x, const std::string& name = {}) const { return Activation(x, "tanh", name); }
    Value sigmoid(const Value& x, const std::string& name = {}) const { return Activation(x, "sigmoid", name); }
    Value log(const Value& x, const std::string& name = {}) const { return op("log", { x }, {}, name); }
    Value sqrt(const Value& x, const std::string& name = {}) const { return op("sqrt", { x }, {}, name); }
    Value exp(const Value& x, const std::string& name = {}) const { return op("exp", { x }, {}, name); }

private:
    Tracer* m_tracer;
};

/// "%g"-style spelling of a float attribute.
std::string floatAttr(double v);

} // namespace opscope::gluon
