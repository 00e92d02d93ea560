#include "models/sample_models.h"

#include "gluon/nn/basic_layers.h"
#include "gluon/nn/conv_layers.h"
#include "gluon/sequential.h"
#include "models/datasets.h"
#include "models/sample_images.h"
#include "tensor/random.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace opscope::samples {

using namespace gluon;

namespace {
nn::Conv::Options convOpts(std::optional<std::string> act, int64_t pad = 0, int64_t stride = 1, bool bias = true)
{
    nn::Conv::Options o;
    o.activation = std::move(act);
    o.padding = { pad, pad };
    o.strides = { stride, stride };
    o.use_bias = bias;
    return o;
}

// A (1, 1, 28, 28) input in [0, 1] from 28×28 gray levels.
Tensor imageInput(const std::array<uint8_t, 784>& pixels)
{
    Tensor t({ 1, 1, 28, 28 });
    for (size_t i = 0; i < pixels.size(); ++i)
        t.data()[i] = static_cast<float>(pixels[i]) / 255.0f;
    return t;
}

// conv-bn-relu-conv-bn + identity, relu (ResNet v1 basic block, same width).
struct ResidualUnit : HybridBlock {
    explicit ResidualUnit(int64_t channels)
        : HybridBlock("residualunit", std::nullopt)
    {
        auto scope = name_scope();
        conv1 = std::make_shared<nn::Conv2D>(channels, 3, convOpts(std::nullopt, 1, 1, false));
        bn1 = std::make_shared<nn::BatchNorm>();
        conv2 = std::make_shared<nn::Conv2D>(channels, 3, convOpts(std::nullopt, 1, 1, false));
        bn2 = std::make_shared<nn::BatchNorm>();
        for (BlockPtr b : std::initializer_list<BlockPtr> { conv1, bn1, conv2, bn2 })
            register_child(b);
    }
    std::vector<Value> hybrid_forward(const F& F, const std::vector<Value>& x) override
    {
        Value y = F.relu((*bn1)((*conv1)(x[0])));
        y = (*bn2)((*conv2)(y));
        return { F.relu(F.elemwise_add(y, x[0])) };
    }
    std::shared_ptr<nn::Conv2D> conv1, conv2;
    std::shared_ptr<nn::BatchNorm> bn1, bn2;
};

// Single-head self-attention with residual connections and a feed-forward layer.
struct TinyTransformer : HybridBlock {
    TinyTransformer(int64_t vocab, int64_t units)
        : HybridBlock("tinytransformer", std::nullopt)
        , m_units(units)
    {
        auto scope = name_scope();
        auto dense = [&](int64_t n, std::optional<std::string> act, const char* prefix) {
            return std::make_shared<nn::Dense>(n, std::move(act), true, false, nullptr, nullptr, 0, prefix);
        };
        embed = std::make_shared<nn::Embedding>(vocab, units);
        query = dense(units, std::nullopt, "query_");
        key = dense(units, std::nullopt, "key_");
        value = dense(units, std::nullopt, "value_");
        norm1 = std::make_shared<nn::LayerNorm>();
        ffn1 = dense(2 * units, "relu", "ffn1_");
        ffn2 = dense(units, std::nullopt, "ffn2_");
        norm2 = std::make_shared<nn::LayerNorm>();
        out = dense(vocab, std::nullopt, "out_");
        for (BlockPtr b : std::initializer_list<BlockPtr> { embed, query, key, value, norm1, ffn1, ffn2, norm2, out })
            register_child(b);
    }
    std::vector<Value> hybrid_forward(const F& F, const std::vector<Value>& x) override
    {
        Value h = (*embed)(x[0]); // (batch, seq, units)
        // Each value is computed right before its first use, so eager calls run in graph order
        // and report hooks in the same order as the hybridized graph.
        Value q = (*query)(h), k = (*key)(h);
        Value scores = F.mul_scalar(F.batch_dot(q, k, false, true), 1.0 / std::sqrt(static_cast<double>(m_units)));
        Value attn = F.softmax(scores, -1);
        Value ctx = F.batch_dot(attn, (*value)(h));
        h = (*norm1)(F.elemwise_add(h, ctx));
        Value f = (*ffn2)((*ffn1)(h));
        h = (*norm2)(F.elemwise_add(h, f));
        return { F.log_softmax((*out)(h), -1) };
    }
    int64_t m_units;
    std::shared_ptr<nn::Embedding> embed;
    std::shared_ptr<nn::Dense> query, key, value, ffn1, ffn2, out;
    std::shared_ptr<nn::LayerNorm> norm1, norm2;
};

// Dense → Dense (bias -1, so some values are negative) → log (NaN there) → Dense.
struct NanDemo : HybridBlock {
    NanDemo()
        : HybridBlock("nandemo", std::nullopt)
    {
        auto scope = name_scope();
        fc1 = std::make_shared<nn::Dense>(8, "relu");
        fc2 = std::make_shared<nn::Dense>(4, std::nullopt, true, true, nullptr, std::make_shared<Constant>(-1.0f));
        fc3 = std::make_shared<nn::Dense>(2);
        register_child(fc1);
        register_child(fc2);
        register_child(fc3);
    }
    std::vector<Value> hybrid_forward(const F& F, const std::vector<Value>& x) override
    {
        Value h = (*fc2)((*fc1)(x[0]));
        return { (*fc3)(F.log(h)) };
    }
    std::shared_ptr<nn::Dense> fc1, fc2, fc3;
};

// Strokes of each digit as polylines in a unit box (x right, y down).
const std::vector<std::vector<std::pair<float, float>>>& digitStrokes(int d)
{
    static const std::vector<std::vector<std::vector<std::pair<float, float>>>> kDigits = {
        { { { 0.5f, 0.0f }, { 0.15f, 0.2f }, { 0.1f, 0.5f }, { 0.15f, 0.8f }, { 0.5f, 1.0f }, { 0.85f, 0.8f },
            { 0.9f, 0.5f }, { 0.85f, 0.2f }, { 0.5f, 0.0f } } },
        { { { 0.3f, 0.2f }, { 0.55f, 0.0f }, { 0.55f, 1.0f } } },
        { { { 0.1f, 0.25f }, { 0.4f, 0.0f }, { 0.8f, 0.1f }, { 0.85f, 0.35f }, { 0.1f, 1.0f }, { 0.9f, 1.0f } } },
        { { { 0.1f, 0.1f }, { 0.5f, 0.0f }, { 0.85f, 0.2f }, { 0.45f, 0.5f }, { 0.9f, 0.75f }, { 0.5f, 1.0f },
            { 0.1f, 0.9f } } },
        { { { 0.7f, 1.0f }, { 0.7f, 0.0f }, { 0.1f, 0.7f }, { 0.95f, 0.7f } } },
        { { { 0.85f, 0.0f }, { 0.2f, 0.0f }, { 0.15f, 0.45f }, { 0.6f, 0.4f }, { 0.9f, 0.7f }, { 0.55f, 1.0f },
            { 0.1f, 0.9f } } },
        { { { 0.75f, 0.0f }, { 0.3f, 0.3f }, { 0.15f, 0.7f }, { 0.4f, 1.0f }, { 0.8f, 0.85f }, { 0.75f, 0.55f },
            { 0.3f, 0.55f }, { 0.18f, 0.7f } } },
        { { { 0.1f, 0.0f }, { 0.9f, 0.0f }, { 0.4f, 1.0f } } },
        { { { 0.5f, 0.5f }, { 0.15f, 0.25f }, { 0.5f, 0.0f }, { 0.85f, 0.25f }, { 0.5f, 0.5f }, { 0.1f, 0.75f },
            { 0.5f, 1.0f }, { 0.9f, 0.75f }, { 0.5f, 0.5f } } },
        { { { 0.85f, 0.45f }, { 0.5f, 0.55f }, { 0.15f, 0.3f }, { 0.5f, 0.0f }, { 0.85f, 0.3f }, { 0.8f, 0.7f },
            { 0.6f, 1.0f } } },
    };
    return kDigits[static_cast<size_t>(std::clamp(d, 0, 9))];
}
} // namespace

Tensor digitImage(int digit)
{
    Tensor img = Tensor::zeros(Shape({ 1, 1, 28, 28 }));
    const float box = 18.0f, off = 5.0f, halfWidth = 1.3f;
    for (const auto& stroke : digitStrokes(digit)) {
        for (size_t s = 0; s + 1 < stroke.size(); ++s) {
            const float ax = off + stroke[s].first * box * 0.8f + 2.0f, ay = off + stroke[s].second * box;
            const float bx = off + stroke[s + 1].first * box * 0.8f + 2.0f, by = off + stroke[s + 1].second * box;
            for (int y = 0; y < 28; ++y) {
                for (int x = 0; x < 28; ++x) {
                    const float px = x + 0.5f, py = y + 0.5f;
                    const float dx = bx - ax, dy = by - ay;
                    const float len2 = dx * dx + dy * dy;
                    const float t = len2 > 0 ? std::clamp(((px - ax) * dx + (py - ay) * dy) / len2, 0.0f, 1.0f) : 0.0f;
                    const float ex = ax + t * dx - px, ey = ay + t * dy - py;
                    const float dist = std::sqrt(ex * ex + ey * ey);
                    const float v = std::clamp(halfWidth + 0.5f - dist, 0.0f, 1.0f);
                    float& p = img.at(y * 28 + x);
                    p = std::max(p, v);
                }
            }
        }
    }
    return img;
}

Tensor spiralPoints(int n, uint64_t seed)
{
    Generator gen(seed);
    Tensor pts(Shape({ n, 2 }));
    for (int i = 0; i < n; ++i) {
        const int cls = i % 3;
        const float r = gen.uniform(0.05f, 1.0f);
        const float theta = r * 3.5f + cls * 2.0943951f + gen.normal(0.0f, 0.15f);
        pts.at(2 * i) = r * std::cos(theta);
        pts.at(2 * i + 1) = r * std::sin(theta);
    }
    return pts;
}

Sample makeMlp(uint64_t seed)
{
    auto net = std::make_shared<HybridSequential>();
    {
        auto scope = net->name_scope();
        net->add(std::make_shared<nn::Dense>(32, "relu"));
        net->add(std::make_shared<nn::Dense>(32, "relu"));
        net->add(std::make_shared<nn::Dense>(3));
    }
    net->initialize(std::make_shared<Xavier>());
    return { {}, {}, net, {}, { spiralPoints(12, seed + 1) } };
}

Sample makeLenet(uint64_t)
{
    auto net = std::make_shared<HybridSequential>();
    {
        auto scope = net->name_scope();
        net->add(std::make_shared<nn::Conv2D>(10, 5, convOpts("tanh")));
        net->add(std::make_shared<nn::MaxPool2D>(2));
        net->add(std::make_shared<nn::Conv2D>(25, 5, convOpts("tanh")));
        net->add(std::make_shared<nn::MaxPool2D>(2));
        net->add(std::make_shared<nn::Dense>(20, "tanh"));
        net->add(std::make_shared<nn::Dense>(10, "tanh"));
    }
    net->initialize(std::make_shared<Xavier>());
    // Its default input: a real MNIST 7.
    return { {}, {}, net, {}, { imageInput(kMnistSeven) } };
}

Sample makeFashion(uint64_t)
{
    auto net = std::make_shared<HybridSequential>();
    {
        auto scope = net->name_scope();
        net->add(std::make_shared<nn::Conv2D>(16, 3, convOpts("relu", 1)));
        net->add(std::make_shared<nn::MaxPool2D>(2));
        net->add(std::make_shared<nn::Conv2D>(32, 3, convOpts("relu", 1)));
        net->add(std::make_shared<nn::MaxPool2D>(2));
        net->add(std::make_shared<nn::Dense>(64, "relu"));
        net->add(std::make_shared<nn::Dense>(10));
    }
    net->initialize(std::make_shared<Xavier>());
    // Its default input: Fashion-MNIST's first test image, an ankle boot.
    return { {}, {}, net, {}, { imageInput(kFashionAnkleBoot) } };
}

Sample makeMiniResnet(uint64_t seed)
{
    auto net = std::make_shared<HybridSequential>();
    {
        auto scope = net->name_scope();
        net->add(std::make_shared<nn::Conv2D>(16, 3, convOpts(std::nullopt, 1, 1, false)));
        net->add(std::make_shared<nn::BatchNorm>());
        net->add(std::make_shared<nn::Activation>("relu"));
        net->add(std::make_shared<ResidualUnit>(16));
        net->add(std::make_shared<ResidualUnit>(16));
        net->add(std::make_shared<nn::GlobalAvgPool2D>());
        net->add(std::make_shared<nn::Dense>(10));
    }
    net->initialize(std::make_shared<Xavier>());
    Generator gen(seed + 2);
    return { {}, {}, net, {}, { Tensor::uniform(Shape({ 1, 3, 32, 32 }), 0, 1, &gen) } };
}

Sample makeTinyTransformer(uint64_t seed)
{
    auto net = std::make_shared<TinyTransformer>(50, 16);
    net->initialize(std::make_shared<Xavier>());
    Generator gen(seed + 3);
    Tensor tokens(Shape({ 1, 8 }));
    for (float& t : tokens.values())
        t = static_cast<float>(gen.next() % 50);
    return { {}, {}, net, {}, { tokens } };
}

Sample makeNanDemo(uint64_t seed)
{
    auto net = std::make_shared<NanDemo>();
    net->initialize(std::make_shared<Xavier>());
    Generator gen(seed + 4);
    return { {}, {}, net, {}, { Tensor::uniform(Shape({ 2, 6 }), 0, 1, &gen) } };
}

} // namespace opscope::samples
