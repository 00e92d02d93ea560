#pragma once

#include "gluon/block.h"
#include "gluon/nn/basic_layers.h"

namespace opscope::gluon::nn {

/// MXNet's _Conv: Conv1D/Conv2D with kernel, strides, padding, dilation, groups, layout,
/// in_channels (0 defers), activation, use_bias; `F.Convolution(x, w, b, name="fwd", …)`, hint "conv".
class Conv : public HybridBlock {
public:
    struct Options {
        std::vector<int64_t> strides; ///< default all ones
        std::vector<int64_t> padding; ///< default all zeros
        std::vector<int64_t> dilation; ///< default all ones
        int64_t groups = 1;
        std::string layout; ///< default NCW / NCHW
        int64_t in_channels = 0;
        std::optional<std::string> activation;
        bool use_bias = true;
        InitPtr weight_initializer;
        InitPtr bias_initializer; ///< default zeros
    };
    Conv(int64_t channels, std::vector<int64_t> kernel_size, Options options, const std::optional<std::string>& prefix);
    std::vector<Value> hybrid_forward(const F& F, const std::vector<Value>& x) override;
    const ParamPtr& weight() const { return m_weight; }
    const ParamPtr& bias() const { return m_bias; }

private:
    AttrMap m_attrs;
    ParamPtr m_weight, m_bias;
    std::shared_ptr<Activation> m_act;
};

class Conv1D : public Conv {
public:
    Conv1D(int64_t channels, int64_t kernel_size, Options options = {},
        const std::optional<std::string>& prefix = std::nullopt)
        : Conv(channels, { kernel_size }, std::move(options), prefix)
    {
    }
};

class Conv2D : public Conv {
public:
    Conv2D(int64_t channels, std::vector<int64_t> kernel_size, Options options = {},
        const std::optional<std::string>& prefix = std::nullopt)
        : Conv(channels, kernel_size.size() == 1 ? std::vector<int64_t> { kernel_size[0], kernel_size[0] } : kernel_size,
            std::move(options), prefix)
    {
    }
    Conv2D(int64_t channels, int64_t kernel_size, Options options = {},
        const std::optional<std::string>& prefix = std::nullopt)
        : Conv2D(channels, std::vector<int64_t> { kernel_size, kernel_size }, std::move(options), prefix)
    {
    }
};

/// MXNet's _Pooling: `F.Pooling(x, name="fwd", kernel, stride (default = kernel), pad, global_pool,
/// pool_type, layout, pooling_convention "full" when ceil_mode else "valid", count_include_pad)`.
class Pooling : public HybridBlock {
public:
    struct Options {
        std::vector<int64_t> strides; ///< default: the pool size
        std::vector<int64_t> padding; ///< default zeros
        bool ceil_mode = false;
        std::string layout; ///< default NCW / NCHW
        std::optional<bool> count_include_pad;
    };
    Pooling(std::vector<int64_t> pool_size, bool global_pool, const std::string& pool_type, Options options,
        const std::optional<std::string>& prefix);
    std::vector<Value> hybrid_forward(const F& F, const std::vector<Value>& x) override;

private:
    AttrMap m_attrs;
};

class MaxPool1D : public Pooling {
public:
    explicit MaxPool1D(int64_t pool_size = 2, Options o = {}, const std::optional<std::string>& prefix = std::nullopt)
        : Pooling({ pool_size }, false, "max", std::move(o), prefix)
    {
    }
};
class MaxPool2D : public Pooling {
public:
    explicit MaxPool2D(std::vector<int64_t> pool_size = { 2, 2 }, Options o = {},
        const std::optional<std::string>& prefix = std::nullopt)
        : Pooling(pool_size.size() == 1 ? std::vector<int64_t> { pool_size[0], pool_size[0] } : pool_size, false, "max",
            std::move(o), prefix)
    {
    }
    explicit MaxPool2D(int64_t pool_size, Options o = {}, const std::optional<std::string>& prefix = std::nullopt)
        : MaxPool2D(std::vector<int64_t> { pool_size, pool_size }, std::move(o), prefix)
    {
    }
};
class AvgPool1D : public Pooling {
public:
    explicit AvgPool1D(int64_t pool_size = 2, Options o = defaults(), const std::optional<std::string>& prefix = std::nullopt)
        : Pooling({ pool_size }, false, "avg", std::move(o), prefix)
    {
    }
    static Options defaults()
    {
        Options o;
        o.count_include_pad = true;
        return o;
    }
};
class AvgPool2D : public Pooling {
public:
    explicit AvgPool2D(std::vector<int64_t> pool_size = { 2, 2 }, Options o = AvgPool1D::defaults(),
        const std::optional<std::string>& prefix = std::nullopt)
        : Pooling(pool_size.size() == 1 ? std::vector<int64_t> { pool_size[0], pool_size[0] } : pool_size, false, "avg",
            std::move(o), prefix)
    {
    }
    explicit AvgPool2D(int64_t pool_size, Options o = AvgPool1D::defaults(),
        const std::optional<std::string>& prefix = std::nullopt)
        : AvgPool2D(std::vector<int64_t> { pool_size, pool_size }, std::move(o), prefix)
    {
    }
};
/// MXNet: `_Pooling((1, 1), None, 0, True, True, "max"/"avg", layout)`.
class GlobalMaxPool2D : public Pooling {
public:
    explicit GlobalMaxPool2D(const std::optional<std::string>& prefix = std::nullopt)
        : Pooling({ 1, 1 }, true, "max", ceil(), prefix)
    {
    }
    static Options ceil()
    {
        Options o;
        o.ceil_mode = true;
        return o;
    }
};
class GlobalAvgPool2D : public Pooling {
public:
    explicit GlobalAvgPool2D(const std::optional<std::string>& prefix = std::nullopt)
        : Pooling({ 1, 1 }, true, "avg", GlobalMaxPool2D::ceil(), prefix)
    {
    }
};

} // namespace opscope::gluon::nn
