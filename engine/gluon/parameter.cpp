#include "gluon/parameter.h"

#include "core/error.h"
#include "tensor/random.h"

#include <cstdio>

namespace opscope::gluon {

Parameter::Parameter(std::string name, Shape shape, InitPtr init, std::string grad_req, bool differentiable)
    : m_name(std::move(name))
    , m_shape(shape)
    , m_init(std::move(init))
    , m_gradReq(std::move(grad_req))
    , m_differentiable(differentiable)
{
    set_grad_req(m_gradReq);
}

void Parameter::set_grad_req(const std::string& req)
{
    if (req != "write" && req != "add" && req != "null")
        throw UsageError("parameter '" + m_name + "': grad_req must be 'write', 'add' or 'null', got '" + req + "'");
    m_gradReq = m_differentiable ? req : "null";
    if (m_gradReq == "null")
        m_grad = Tensor();
    else if (m_data.defined() && !m_grad.defined())
        m_grad = Tensor::zeros(m_shape);
}

void Parameter::setShape(const Shape& shape)
{
    if (m_shape.ndim() != 0) {
        bool ok = m_shape.ndim() == shape.ndim();
        for (int i = 0; ok && i < shape.ndim(); ++i)
            ok = m_shape[i] == 0 || shape[i] == 0 || m_shape[i] == shape[i];
        if (!ok)
            throw ShapeError("parameter '" + m_name + "': expected shape " + m_shape.str() + ", got " + shape.str());
        for (int i = 0; i < shape.ndim(); ++i)
            if (m_shape[i] == 0)
                m_shape[i] = shape[i];
        return;
    }
    m_shape = shape;
}

void Parameter::initialize(const InitPtr& defaultInit, bool force_reinit)
{
    if (m_data.defined() && !force_reinit)
        return;
    InitPtr init = m_init ? m_init : defaultInit;
    if (!init)
        init = std::make_shared<Uniform>();
    if (!m_shape.known()) {
        m_data = Tensor();
        m_grad = Tensor();
        m_deferredInit = init;
        return;
    }
    m_deferredInit = init;
    finishDeferredInit();
}

void Parameter::finishDeferredInit()
{
    if (!m_deferredInit)
        return;
    if (!m_shape.known())
        throw ShapeError("parameter '" + m_name + "': cannot initialise, shape " + m_shape.str()
            + " is still unknown (call the block on data first)");
    Tensor t(m_shape);
    Generator& gen = globalGenerator();
    if (m_init)
        m_init->initWeight(m_name, t, gen);
    else
        (*m_deferredInit)(m_name, t, gen);
    m_data = t;
    m_grad = m_gradReq == "null" ? Tensor() : Tensor::zeros(m_shape);
    m_deferredInit.reset();
}

const Tensor& Parameter::data() const
{
    if (!m_data.defined()) {
        if (m_deferredInit)
            throw UsageError("parameter '" + m_name + "' has not been initialised yet: its shape " + m_shape.str()
                + " is inferred on the first forward call");
        throw UsageError("parameter '" + m_name + "' has not been initialised; call initialize() first");
    }
    return m_data;
}

void Parameter::set_data(const Tensor& value)
{
    setShape(value.shape());
    if (m_shape != value.shape())
        throw ShapeError("parameter '" + m_name + "': expected shape " + m_shape.str() + ", got " + value.shape().str());
    m_data = value;
    m_deferredInit.reset();
    if (m_gradReq != "null" && (!m_grad.defined() || m_grad.shape() != m_shape || m_grad.dtype() != value.dtype()))
        m_grad = Tensor::zeros(m_shape, value.dtype());
}

const Tensor& Parameter::grad() const
{
    if (!m_grad.defined())
        throw UsageError("parameter '" + m_name + "' has no gradient (grad_req is '" + m_gradReq
            + "' or it is not initialised)");
    return m_grad;
}

void Parameter::zero_grad()
{
    if (m_grad.defined())
        m_grad.fill(0.0f);
}

AttrMap Parameter::varAttrs() const
{
    char buf[32];
    AttrMap a;
    a["__dtype__"] = "0";
    std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(lr_mult));
    a["__lr_mult__"] = buf;
    std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(wd_mult));
    a["__wd_mult__"] = buf;
    std::vector<int64_t> dims(m_shape.dims().begin(), m_shape.dims().end());
    a["__shape__"] = tupleAttr(dims);
    a["__storage_type__"] = "0";
    if (m_init)
        a["__init__"] = m_init->dumps();
    return a;
}

ParamPtr ParameterDict::get(
    const std::string& name, const Shape& shape, InitPtr init, const std::string& grad_req, bool differentiable)
{
    const std::string full = m_prefix + name;
    auto it = m_params.find(full);
    if (it != m_params.end()) {
        if (shape.ndim())
            it->second->setShape(shape);
        return it->second;
    }
    auto p = std::make_shared<Parameter>(full, shape, std::move(init), grad_req, differentiable);
    add(p);
    return p;
}

void ParameterDict::add(const ParamPtr& p)
{
    auto [it, inserted] = m_params.emplace(p->name(), p);
    if (!inserted) {
        if (it->second != p)
            throw UsageError("two different parameters are named '" + p->name() + "'");
        return;
    }
    m_order.push_back(p);
}

void ParameterDict::update(const ParameterDict& other)
{
    for (const ParamPtr& p : other.values())
        add(p);
}

void ParameterDict::initialize(InitPtr init, bool force_reinit)
{
    if (!init)
        init = std::make_shared<Uniform>();
    for (const ParamPtr& p : m_order)
        p->initialize(init, force_reinit);
}

void ParameterDict::zero_grad()
{
    for (const ParamPtr& p : m_order)
        p->zero_grad();
}

void ParameterDict::setattr_grad_req(const std::string& req)
{
    for (const ParamPtr& p : m_order)
        p->set_grad_req(req);
}

ParamPtr ParameterDict::at(const std::string& fullName) const
{
    auto it = m_params.find(fullName);
    if (it == m_params.end())
        throw UsageError("no parameter named '" + fullName + "'");
    return it->second;
}

std::vector<std::string> ParameterDict::keys() const
{
    std::vector<std::string> k;
    for (const ParamPtr& p : m_order)
        k.push_back(p->name());
    return k;
}

} // namespace opscope::gluon
