#include "debug/unit_anatomy.h"

#include "core/error.h"
#include "debug/node_attrs.h"

#include <algorithm>
#include <cmath>

namespace opscope::debug {

namespace {

Tensor asFloat(const Tensor& t)
{
    return t.dtype() == DType::Float32 ? t : t.astype(DType::Float32);
}

void checkIndex(const Tensor& out, const std::vector<int64_t>& index, const std::string& node)
{
    bool ok = static_cast<int64_t>(index.size()) == out.ndim();
    for (size_t i = 0; ok && i < index.size(); ++i)
        ok = index[i] >= 0 && index[i] < out.shape()[static_cast<int64_t>(i)];
    if (!ok) {
        std::string text;
        for (int64_t v : index)
            text += (text.empty() ? "" : ", ") + std::to_string(v);
        throw UsageError("node '" + node + "': (" + text + ") is not an element of its output " + out.shape().str());
    }
}

UnitAnatomy convolution(const Node& n, const std::vector<Tensor>& in, const Tensor& out, const std::vector<int64_t>& idx)
{
    if (in.size() < 2) throw UsageError("node '" + n.name + "': the convolution's data and weight are needed");
    const Tensor x = asFloat(in[0]), w = asFloat(in[1]);
    if (x.ndim() != 4 || w.ndim() != 4 || out.ndim() != 4)
        throw UsageError("node '" + n.name + "': only 2-D convolutions are explained (data " + x.shape().str()
            + ", weight " + w.shape().str() + ")");
    checkIndex(out, idx, n.name);
    const bool onnx = n.onnx;
    const int64_t cIn = x.shape()[1], inH = x.shape()[2], inW = x.shape()[3];
    const int64_t kh = w.shape()[2], kw = w.shape()[3];
    const auto stride = tupleOr(n, onnx ? "strides" : "stride", { 1, 1 });
    const auto dilate = tupleOr(n, onnx ? "dilations" : "dilate", { 1, 1 });
    std::vector<int64_t> pad = tupleOr(n, "pads", {});
    if (!onnx) pad = tupleOr(n, "pad", { 0, 0 });
    const auto groups = static_cast<int64_t>(numberOr(n, onnx ? "group" : "num_group", 1));
    if (stride.size() != 2 || dilate.size() != 2 || groups < 1)
        throw UsageError("node '" + n.name + "': its attributes are not a 2-D convolution's");
    int64_t padTop = pad.size() >= 2 ? pad[0] : 0, padLeft = pad.size() >= 2 ? pad[1] : 0;
    const std::string autoPad = textOr(n, "auto_pad", "NOTSET");
    if (onnx && (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER")) {
        auto begin = [&](int64_t inSize, int64_t outSize, int64_t s, int64_t k, int64_t d) {
            const int64_t total = std::max<int64_t>(0, (outSize - 1) * s + (k - 1) * d + 1 - inSize);
            return autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
        };
        padTop = begin(inH, out.shape()[2], stride[0], kh, dilate[0]);
        padLeft = begin(inW, out.shape()[3], stride[1], kw, dilate[1]);
    } else if (onnx && autoPad == "VALID") {
        padTop = padLeft = 0;
    }
    const int64_t cOut = w.shape()[0], perGroupIn = w.shape()[1];
    if (cOut % groups != 0 || perGroupIn * groups != cIn || out.shape()[1] != cOut)
        throw UsageError("node '" + n.name + "': weight " + w.shape().str() + " does not fit data " + x.shape().str()
            + " in " + std::to_string(groups) + " group(s)");
    if (idx[0] >= x.shape()[0])
        throw UsageError("node '" + n.name + "': output row " + std::to_string(idx[0]) + " has no input row in data "
            + x.shape().str());
    UnitAnatomy a;
    a.kernelH = kh;
    a.kernelW = kw;
    const int64_t b = idx[0], c = idx[1], y = idx[2], xx = idx[3];
    const int64_t g = c / (cOut / groups);
    for (int64_t k = 0; k < perGroupIn; ++k) {
        const int64_t ch = g * perGroupIn + k;
        a.channels.push_back(ch);
        for (int64_t ky = 0; ky < kh; ++ky)
            for (int64_t kx = 0; kx < kw; ++kx) {
                AnatomyTerm t;
                t.channel = ch;
                t.ky = ky;
                t.kx = kx;
                t.iy = y * stride[0] - padTop + ky * dilate[0];
                t.ix = xx * stride[1] - padLeft + kx * dilate[1];
                t.padding = t.iy < 0 || t.ix < 0 || t.iy >= inH || t.ix >= inW;
                t.input = t.padding ? 0.0f : x.data()[((b * cIn + ch) * inH + t.iy) * inW + t.ix];
                t.weight = w.data()[((c * perGroupIn + k) * kh + ky) * kw + kx];
                t.product = static_cast<double>(t.input) * t.weight;
                a.sum += t.product;
                a.terms.push_back(t);
            }
    }
    if (in.size() > 2 && in[2].defined()) {
        const Tensor bias = asFloat(in[2]);
        if (bias.size() != cOut) throw UsageError("node '" + n.name + "': bias " + bias.shape().str() + " has not one value per output channel");
        a.bias = bias.data()[c];
    }
    return a;
}

UnitAnatomy dense(const Node& n, const std::vector<Tensor>& in, const Tensor& out, const std::vector<int64_t>& idx)
{
    if (in.size() < 2) throw UsageError("node '" + n.name + "': the layer's data and weight are needed");
    const Tensor x = asFloat(in[0]), w = asFloat(in[1]);
    if (out.ndim() != 2) throw UsageError("node '" + n.name + "': only an output (N, units) is explained, not " + out.shape().str());
    checkIndex(out, idx, n.name);
    const bool gemm = n.onnx;
    const int64_t rows = x.shape()[0];
    const int64_t k = rows > 0 ? x.size() / rows : 0;
    if (gemm && numberOr(n, "transA", 0) != 0) throw UsageError("node '" + n.name + "': a Gemm with transA is not explained");
    const bool transB = gemm ? numberOr(n, "transB", 0) != 0 : true; // FullyConnected's weight is (units, in)
    const int64_t units = out.shape()[1];
    if (w.ndim() != 2 || (transB ? w.shape()[1] : w.shape()[0]) != k || (transB ? w.shape()[0] : w.shape()[1]) != units)
        throw UsageError("node '" + n.name + "': weight " + w.shape().str() + " does not fit data " + x.shape().str()
            + " and output " + out.shape().str());
    if (idx[0] >= rows)
        throw UsageError("node '" + n.name + "': output row " + std::to_string(idx[0]) + " has no input row in data "
            + x.shape().str());
    UnitAnatomy a;
    const int64_t b = idx[0], u = idx[1];
    for (int64_t i = 0; i < k; ++i) {
        AnatomyTerm t;
        t.channel = i;
        t.input = x.data()[b * k + i];
        t.weight = transB ? w.data()[u * k + i] : w.data()[i * units + u];
        t.product = static_cast<double>(t.input) * t.weight;
        a.sum += t.product;
        a.terms.push_back(t);
    }
    std::stable_sort(a.terms.begin(), a.terms.end(),
        [](const AnatomyTerm& l, const AnatomyTerm& r) { return std::fabs(l.product) > std::fabs(r.product); });
    a.scale = gemm ? numberOr(n, "alpha", 1.0) : 1.0;
    if (in.size() > 2 && in[2].defined()) {
        const Tensor bias = asFloat(in[2]);
        const double beta = gemm ? numberOr(n, "beta", 1.0) : 1.0;
        // A Gemm's C broadcasts: one value, one per unit, or the whole (N, units).
        const bool perRow = bias.ndim() == 2 && bias.shape()[1] == 1 && bias.shape()[0] == rows && rows > 1;
        const float v = bias.size() == 1 ? bias.data()[0]
            : perRow                     ? bias.data()[b]
            : bias.size() == units       ? bias.data()[u]
            : bias.size() == rows * units ? bias.data()[b * units + u]
                                         : throw UsageError("node '" + n.name + "': bias " + bias.shape().str()
                                               + " does not broadcast to the output " + out.shape().str());
        a.bias = beta * v;
    }
    return a;
}

} // namespace

bool hasUnitAnatomy(const Node& node)
{
    const std::string& op = node.opName();
    return !node.isVariable() && (op == "Convolution" || op == "Conv" || op == "FullyConnected" || op == "Gemm");
}

UnitAnatomy unitAnatomy(const Graph& graph, uint32_t id, const std::vector<Tensor>& inputs, const Tensor& output,
    const std::vector<int64_t>& index)
{
    const Node& n = graph.node(id);
    if (!hasUnitAnatomy(n))
        throw UsageError("node '" + n.name + "' (" + n.opName()
            + "): only a convolution's or a fully connected layer's values are explained");
    const bool conv = n.opName() == "Convolution" || n.opName() == "Conv";
    UnitAnatomy a = conv ? convolution(n, inputs, output, index) : dense(n, inputs, output, index);
    a.node = n.name;
    a.op = n.opName();
    a.index = index;
    a.total = a.scale * a.sum + a.bias;
    const Tensor out = asFloat(output);
    int64_t flat = 0;
    for (size_t i = 0; i < index.size(); ++i)
        flat = flat * out.shape()[static_cast<int64_t>(i)] + index[i];
    a.tensorValue = out.data()[flat];
    if (auto act = soleActivation(graph, id)) {
        a.activation = *act;
        a.activated = applyActivation(*act, a.tensorValue);
    }
    return a;
}

std::optional<std::string> soleActivation(const Graph& graph, uint32_t id)
{
    std::optional<uint32_t> reader;
    int readers = 0;
    for (uint32_t i = 0; i < graph.size(); ++i)
        for (const NodeEntry& e : graph.node(i).inputs)
            if (e.node == id) ++readers, reader = i;
    if (readers != 1) return std::nullopt;
    const Node& r = graph.node(*reader);
    const std::string& op = r.opName();
    if (op == "Activation") return textOr(r, "act_type", "relu");
    if (op == "relu" || op == "Relu") return std::string("relu");
    if (op == "sigmoid" || op == "Sigmoid") return std::string("sigmoid");
    if (op == "tanh" || op == "Tanh") return std::string("tanh");
    if (op == "LeakyReLU" && textOr(r, "act_type", "leaky") == "leaky")
        return "leaky:" + std::to_string(numberOr(r, "slope", 0.25));
    if (op == "LeakyRelu") return "leaky:" + std::to_string(numberOr(r, "alpha", 0.01));
    return std::nullopt;
}

double applyActivation(const std::string& a, double v)
{
    if (a == "relu") return std::max(0.0, v);
    if (a == "sigmoid") return 1.0 / (1.0 + std::exp(-v));
    if (a == "tanh") return std::tanh(v);
    if (a == "softrelu") return std::log1p(std::exp(v));
    if (a == "softsign") return v / (1.0 + std::fabs(v));
    if (a.rfind("leaky:", 0) == 0) return v >= 0 ? v : std::stod(a.substr(6)) * v;
    return v;
}

} // namespace opscope::debug
