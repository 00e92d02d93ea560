#include "gluon/nn/conv_layers.h"

#include "core/error.h"

namespace opscope::gluon::nn {

namespace {
    std::vector<int64_t> orFill(const std::vector<int64_t>& v, size_t n, int64_t fill, const char* what)
    {
        if (v.empty())
            return std::vector<int64_t>(n, fill);
        if (v.size() == 1 && n > 1)
            return std::vector<int64_t>(n, v[0]);
        if (v.size() != n)
            throw UsageError(std::string(what) + " must have " + std::to_string(n) + " elements, got "
                + std::to_string(v.size()));
        return v;
    }
}

Conv::Conv(int64_t channels, std::vector<int64_t> kernel_size, Options o, const std::optional<std::string>& prefix)
    : HybridBlock("conv", prefix)
{
    const size_t n = kernel_size.size();
    if (n != 1 && n != 2)
        throw UsageError("Conv: kernel_size must have 1 or 2 elements");
    if (channels <= 0)
        throw UsageError("Conv: channels must be positive, got " + std::to_string(channels));
    if (o.groups <= 0 || (o.in_channels > 0 && o.in_channels % o.groups != 0))
        throw UsageError("Conv: in_channels must be divisible by groups");
    const std::string layout = o.layout.empty() ? (n == 1 ? "NCW" : "NCHW") : o.layout;
    m_attrs = { { "kernel", tupleAttr(kernel_size) }, { "stride", tupleAttr(orFill(o.strides, n, 1, "strides")) },
        { "dilate", tupleAttr(orFill(o.dilation, n, 1, "dilation")) },
        { "pad", tupleAttr(orFill(o.padding, n, 0, "padding")) }, { "num_filter", std::to_string(channels) },
        { "num_group", std::to_string(o.groups) }, { "layout", layout } };
    auto scope = name_scope();
    Shape w({ channels, o.in_channels / o.groups });
    for (int64_t k : kernel_size)
        w.push_back(k);
    m_weight = addParam("weight", w, std::move(o.weight_initializer));
    if (o.use_bias)
        m_bias = addParam("bias", Shape({ channels }),
            o.bias_initializer ? std::move(o.bias_initializer) : std::make_shared<Zero>());
    if (o.activation) {
        m_act = std::make_shared<Activation>(*o.activation, *o.activation + "_");
        register_child(m_act);
    }
}

std::vector<Value> Conv::hybrid_forward(const F& F, const std::vector<Value>& x)
{
    const Value weight = F.param(m_weight);
    std::optional<Value> bias;
    if (m_bias)
        bias = F.param(m_bias);
    Value y = F.Convolution(x.at(0), weight, bias, m_attrs, "fwd");
    if (m_act)
        y = (*m_act)(y);
    return { y };
}

Pooling::Pooling(std::vector<int64_t> pool_size, bool global_pool, const std::string& pool_type, Options o,
    const std::optional<std::string>& prefix)
    : HybridBlock("pool", prefix)
{
    const size_t n = pool_size.size();
    const std::string layout = o.layout.empty() ? (n == 1 ? "NCW" : "NCHW") : o.layout;
    m_attrs = { { "kernel", tupleAttr(pool_size) },
        { "stride", tupleAttr(o.strides.empty() ? pool_size : orFill(o.strides, n, 1, "strides")) },
        { "pad", tupleAttr(orFill(o.padding, n, 0, "padding")) }, { "global_pool", boolAttr(global_pool) },
        { "pool_type", pool_type }, { "layout", layout },
        { "pooling_convention", o.ceil_mode ? "full" : "valid" } };
    if (o.count_include_pad)
        m_attrs["count_include_pad"] = boolAttr(*o.count_include_pad);
}

std::vector<Value> Pooling::hybrid_forward(const F& F, const std::vector<Value>& x)
{
    return { F.Pooling(x.at(0), m_attrs, "fwd") };
}

} // namespace opscope::gluon::nn
