#pragma once

#include "gluon/initializer.h"
#include "ops/attrs.h"
#include "tensor/tensor.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace opscope::gluon {

/// A Gluon Parameter: a named tensor owned by a block. Its shape may be partly unknown (0 dims)
/// until the first forward call infers it (deferred initialisation, as `Dense(2)` learning its
/// in_units). Not thread-safe: a model is used by one thread at a time.
class Parameter {
public:
    Parameter(std::string name, Shape shape, InitPtr init = nullptr, std::string grad_req = "write",
        bool differentiable = true);

    const std::string& name() const { return m_name; }
    const Shape& shape() const { return m_shape; }
    /// Sets or completes the shape; a known dimension that changes is an error naming the parameter.
    void setShape(const Shape& shape);
    const InitPtr& init() const { return m_init; }
    const std::string& grad_req() const { return m_gradReq; }
    void set_grad_req(const std::string& req);
    float lr_mult = 1.0f;
    float wd_mult = 1.0f;

    /// Initialises now if the shape is known, otherwise defers until finishDeferredInit().
    /// `defaultInit` is used when the parameter has no initializer of its own.
    void initialize(const InitPtr& defaultInit, bool force_reinit = false);
    bool initialized() const { return m_data.defined(); }
    bool deferred() const { return m_deferredInit != nullptr; }
    /// Completes a deferred initialisation once the shape is known.
    void finishDeferredInit();

    /// The value; throws UsageError naming the parameter when not initialised (or deferred).
    const Tensor& data() const;
    /// Replaces the value (shape must match the known dimensions).
    void set_data(const Tensor& value);
    /// Gradient buffer (allocated with the data unless grad_req is "null").
    const Tensor& grad() const;
    void zero_grad();

    /// MXNet's variable attributes (`__shape__`, `__dtype__`, `__lr_mult__`, …) for tracing.
    AttrMap varAttrs() const;

private:
    std::string m_name;
    Shape m_shape;
    InitPtr m_init;
    std::string m_gradReq;
    bool m_differentiable;
    InitPtr m_deferredInit;
    Tensor m_data;
    Tensor m_grad;
};
using ParamPtr = std::shared_ptr<Parameter>;

/// Ordered name → Parameter map with a prefix (MXNet's ParameterDict).
class ParameterDict {
public:
    explicit ParameterDict(std::string prefix = {})
        : m_prefix(std::move(prefix))
    {
    }
    const std::string& prefix() const { return m_prefix; }

    /// Gets `prefix + name`, creating it with the given shape and initializer if absent.
    ParamPtr get(const std::string& name, const Shape& shape = {}, InitPtr init = nullptr,
        const std::string& grad_req = "write", bool differentiable = true);
    void add(const ParamPtr& p);
    void update(const ParameterDict& other);

    /// Initialises every parameter (`init` defaults to Uniform(0.07), MXNet's default).
    void initialize(InitPtr init = nullptr, bool force_reinit = false);
    void zero_grad();
    void setattr_grad_req(const std::string& req);

    size_t size() const { return m_order.size(); }
    bool contains(const std::string& fullName) const { return m_params.count(fullName) != 0; }
    ParamPtr at(const std::string& fullName) const;
    /// Parameters in insertion order.
    const std::vector<ParamPtr>& values() const& { return m_order; }
    /// By value on a temporary, so `for (auto& p : block.collect_params().values())` is safe.
    std::vector<ParamPtr> values() && { return std::move(m_order); }
    std::vector<std::string> keys() const;

private:
    std::string m_prefix;
    std::map<std::string, ParamPtr> m_params;
    std::vector<ParamPtr> m_order;
};

} // namespace opscope::gluon
