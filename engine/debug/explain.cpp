#include "debug/explain.h"

#include "core/error.h"
#include "gluon/autograd.h"
#include "graph/graph.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace opscope::debug {

namespace {


// The class scores in `y`: (1, K) or (K).
std::vector<float> classScores(const Tensor& y, const char* what)
{
    const Shape& s = y.shape();
    const bool ok = (s.ndim() == 2 && s[0] == 1 && s[1] >= 1) || (s.ndim() == 1 && s[0] >= 1);
    if (!ok)
        throw UsageError(std::string(what) + ": the model's output has shape " + s.str()
            + "; explaining needs one row of class scores, (1, K) or (K)");
    const Tensor f = y.dtype() == DType::Float32 ? y : y.astype(DType::Float32);
    return { f.values().begin(), f.values().end() };
}

std::vector<std::pair<int64_t, float>> topOf(const std::vector<float>& scores, int k)
{
    std::vector<int64_t> idx(scores.size());
    std::iota(idx.begin(), idx.end(), 0);
    const auto n = std::min<size_t>(static_cast<size_t>(std::max(k, 1)), idx.size());
    // NaN ranks below everything (a diverged model's scores still order strictly).
    auto key = [&](int64_t i) { return std::isnan(scores[i]) ? -INFINITY : scores[i]; };
    std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(n), idx.end(),
        [&](int64_t a, int64_t b) { return key(a) > key(b) || (key(a) == key(b) && a < b); });
    std::vector<std::pair<int64_t, float>> out;
    for (size_t i = 0; i < n; ++i)
        out.emplace_back(idx[i], scores[static_cast<size_t>(idx[i])]);
    return out;
}

void checkInput(const Tensor& input, ExplainMethod m)
{
    if (input.ndim() < 2 || input.shape()[0] != 1)
        throw UsageError(std::string(methodName(m)) + ": the input has shape " + input.shape().str()
            + "; explaining needs one input (batch 1)");
    for (int64_t d = 0; d < input.ndim(); ++d)
        if (input.shape()[d] == 0)
            throw UsageError(std::string(methodName(m)) + ": the input " + input.shape().str() + " has no elements");
    if (input.dtype() != DType::Float32)
        throw UsageError(std::string(methodName(m)) + ": the input is " + dtypeName(input.dtype())
            + "; gradients and occlusion need a float32 input");
    if ((m == ExplainMethod::GradCam || m == ExplainMethod::Occlusion) && input.ndim() != 4)
        throw UsageError(std::string(methodName(m)) + ": the input has shape " + input.shape().str()
            + "; this method needs an image (1, C, H, W)");
}

int64_t pickClass(const std::vector<float>& scores, int64_t wanted, ExplainMethod m)
{
    const auto k = static_cast<int64_t>(scores.size());
    if (wanted >= k || wanted < -1)
        throw UsageError(std::string(methodName(m)) + ": class " + std::to_string(wanted) + " is outside the "
            + std::to_string(k) + " classes of the output (0 to " + std::to_string(k - 1) + ")");
    return wanted >= 0 ? wanted : topOf(scores, 1).front().first;
}

Explanation start(const std::vector<float>& scores, const ExplainOptions& o)
{
    Explanation e;
    e.method = o.method;
    e.classIndex = pickClass(scores, o.classIndex, o.method);
    e.score = scores[static_cast<size_t>(e.classIndex)];
    e.top = topOf(scores, o.topK);
    return e;
}

// One-hot head gradient selecting class k of an output of `shape`.
Tensor selectClass(const Shape& shape, int64_t k)
{
    Tensor g = Tensor::zeros(shape);
    g.data()[k] = 1.0f;
    return g;
}

Explanation gradientMethods(gluon::HybridBlock& block, const Tensor& input, const ExplainOptions& o)
{
    Tensor x = input.copy();
    Tensor g = Tensor::zeros(x.shape());
    autograd::clear_record();
    autograd::mark_variables({ x }, { g });
    Tensor y;
    {
        auto r = autograd::record(false);
        y = block.call(x);
    }
    Explanation e;
    try {
        e = start(classScores(y, methodName(o.method)), o);
        autograd::backward(y, selectClass(y.shape(), e.classIndex));
    } catch (...) {
        autograd::clear_record();
        throw;
    }
    autograd::clear_record();
    const Shape& s = x.shape();
    if (s.ndim() == 4) {
        const int64_t c = s[1], hw = s[2] * s[3];
        e.heat = Tensor::zeros({ s[2], s[3] });
        const float *gp = g.view().data(), *xp = x.view().data();
        float* heat = e.heat.data();
        for (int64_t p = 0; p < hw; ++p) {
            float v = 0;
            for (int64_t ch = 0; ch < c; ++ch) {
                const float gi = gp[ch * hw + p];
                v = o.method == ExplainMethod::Saliency ? std::max(v, std::fabs(gi)) : v + gi * xp[ch * hw + p];
            }
            heat[p] = v;
        }
    } else {
        std::vector<int64_t> dims(s.dims().begin() + 1, s.dims().end());
        e.heat = Tensor(Shape(dims));
        const float *gp = g.view().data(), *xp = x.view().data();
        float* heat = e.heat.data();
        for (int64_t i = 0; i < x.size(); ++i)
            heat[i] = o.method == ExplainMethod::Saliency ? std::fabs(gp[i]) : gp[i] * xp[i];
    }
    return e;
}

Explanation gradCam(gluon::HybridBlock& block, const Tensor& input, const ExplainOptions& o)
{
    // The graph's names: call once (a hybridized block traces; an eager one is traced for them).
    block.call(input);
    const std::shared_ptr<const Graph> graph = block.active() ? block.graph() : block.trace({ input.shape() });
    if (!graph) throw UsageError("gradcam: the model has no graph to find its layers in");
    const std::string layer = o.layer.empty() ? defaultCamLayer(*graph) : o.layer;
    if (layer.empty()) throw UsageError("gradcam: the model has no convolution; name a layer (--layer NODE)");
    const std::optional<uint32_t> id = graph->findNode(layer);
    if (!id || graph->node(*id).isVariable())
        throw UsageError("gradcam: the model has no operator node '" + layer + "'");
    const Node& node = graph->node(*id);
    const std::string forwardName = graph->outputName(NodeEntry { *id, 0, 0 });
    const std::string gradName = node.name + "_backward_" + node.outputSlots.at(0) + "_grad";
    Tensor maps, grads;
    gluon::HookHandle hook = block.register_op_hook(
        [&](std::string_view name, std::string_view, const TensorView& t) {
            if (name == forwardName) maps = Tensor::copyOf(t);
            else if (name == gradName) grads = Tensor::copyOf(t);
        },
        true);
    Explanation e;
    Tensor x = input.copy();
    Tensor g = Tensor::zeros(x.shape());
    try {
        autograd::clear_record();
        autograd::mark_variables({ x }, { g });
        Tensor y;
        {
            auto r = autograd::record(false);
            y = block.call(x);
        }
        e = start(classScores(y, "gradcam"), o);
        autograd::backward(y, selectClass(y.shape(), e.classIndex));
    } catch (...) {
        hook.remove();
        autograd::clear_record();
        throw;
    }
    hook.remove();
    autograd::clear_record();
    e.layer = layer;
    if (!maps.defined()) throw UsageError("gradcam: node '" + layer + "' did not run for this input");
    if (maps.ndim() != 4 || maps.shape()[0] != 1)
        throw UsageError("gradcam: node '" + layer + "' gives " + maps.shape().str()
            + "; Grad-CAM needs feature maps (1, C, h, w)");
    if (!grads.defined()) grads = Tensor::zeros(maps.shape()); // the class score does not depend on the layer
    if (grads.shape() != maps.shape())
        throw UsageError("gradcam: node '" + layer + "': its gradient " + grads.shape().str() + " does not match its maps "
            + maps.shape().str());
    const int64_t c = maps.shape()[1], h = maps.shape()[2], w = maps.shape()[3], hw = h * w;
    if (hw == 0) throw UsageError("gradcam: node '" + layer + "' gives empty maps " + maps.shape().str());
    const Tensor a = maps.dtype() == DType::Float32 ? maps : maps.astype(DType::Float32);
    const Tensor d = grads.dtype() == DType::Float32 ? grads : grads.astype(DType::Float32);
    e.raw = Tensor::zeros({ h, w });
    const float *ap = a.view().data(), *dp = d.view().data();
    float* raw = e.raw.data();
    for (int64_t ch = 0; ch < c; ++ch) {
        double alpha = 0;
        for (int64_t p = 0; p < hw; ++p)
            alpha += dp[ch * hw + p];
        alpha /= static_cast<double>(hw);
        for (int64_t p = 0; p < hw; ++p)
            raw[p] += static_cast<float>(alpha * ap[ch * hw + p]);
    }
    for (int64_t p = 0; p < hw; ++p)
        raw[p] = std::max(0.0f, raw[p]);
    e.heat = resizeBilinear(e.raw, input.shape()[2], input.shape()[3]);
    return e;
}

Explanation occlusion(gluon::HybridBlock& block, const Tensor& input, const ExplainOptions& o)
{
    const Shape& s = input.shape();
    const int64_t c = s[1], h = s[2], w = s[3], hw = h * w;
    const int64_t patch = o.patch > 0 ? o.patch : std::max<int64_t>(1, h / 7);
    const int64_t stride = o.stride > 0 ? o.stride : std::max<int64_t>(1, patch / 2);
    if (patch > h || patch > w)
        throw UsageError("occlusion: a patch of " + std::to_string(patch) + " pixels does not fit the input "
            + s.str());
    Explanation e = start(classScores(block.call(input), "occlusion"), o);
    // Patch corners: every stride, and the last row and column always covered.
    auto corners = [&](int64_t side) {
        std::vector<int64_t> v;
        for (int64_t p = 0; p + patch <= side; p += stride)
            v.push_back(p);
        if (v.back() + patch < side) v.push_back(side - patch);
        return v;
    };
    const std::vector<int64_t> ys = corners(h), xs = corners(w);
    std::vector<std::pair<int64_t, int64_t>> positions;
    for (int64_t y0 : ys)
        for (int64_t x0 : xs)
            positions.emplace_back(y0, x0);
    const auto total = static_cast<int64_t>(positions.size());
    std::vector<double> sum(static_cast<size_t>(hw), 0.0), count(static_cast<size_t>(hw), 0.0);
    int64_t batch = std::max<int64_t>(1, o.batch);
    for (int64_t done = 0; done < total;) {
        if (o.progress && !o.progress(done, total)) {
            e.cancelled = true;
            return e;
        }
        const int64_t n = std::min(batch, total - done);
        Tensor xb({ n, c, h, w });
        for (int64_t b = 0; b < n; ++b) {
            float* dst = xb.data() + b * c * hw;
            std::copy_n(input.data(), c * hw, dst);
            const auto [y0, x0] = positions[static_cast<size_t>(done + b)];
            for (int64_t ch = 0; ch < c; ++ch)
                for (int64_t yy = y0; yy < y0 + patch; ++yy)
                    std::fill_n(dst + ch * hw + yy * w + x0, patch, o.fill);
        }
        Tensor y;
        try {
            y = block.call(xb);
        } catch (const Error&) {
            if (n == 1) throw;
            batch = 1; // a model whose batch is fixed at 1 (an exported graph): one input at a time
            continue;
        }
        if (y.ndim() == 1 && n == 1) y = y.reshape({ 1, y.shape()[0] }); // (K): one row of scores
        if (y.ndim() != 2 || y.shape()[0] != n) {
            if (n > 1) { // a model that answers one row whatever the batch: one input at a time
                batch = 1;
                continue;
            }
            throw UsageError("occlusion: an input gave an output of shape " + y.shape().str()
                + "; explaining needs one row of class scores");
        }
        const Tensor f = y.dtype() == DType::Float32 ? y : y.astype(DType::Float32);
        const int64_t k = f.shape()[1];
        const float* scores = f.view().data();
        for (int64_t b = 0; b < n; ++b) {
            const double drop = e.score - scores[b * k + e.classIndex];
            const auto [y0, x0] = positions[static_cast<size_t>(done + b)];
            for (int64_t yy = y0; yy < y0 + patch; ++yy)
                for (int64_t xx = x0; xx < x0 + patch; ++xx) {
                    sum[static_cast<size_t>(yy * w + xx)] += drop;
                    count[static_cast<size_t>(yy * w + xx)] += 1;
                }
        }
        done += n;
    }
    if (o.progress) o.progress(total, total);
    e.heat = Tensor({ h, w });
    float* heat = e.heat.data();
    for (int64_t p = 0; p < hw; ++p)
        heat[p] = count[static_cast<size_t>(p)] > 0 ? static_cast<float>(sum[static_cast<size_t>(p)] / count[static_cast<size_t>(p)]) : 0.0f;
    return e;
}

} // namespace

Explanation explain(gluon::HybridBlock& block, const Tensor& input, const ExplainOptions& options)
{
    checkInput(input, options.method);
    switch (options.method) {
    case ExplainMethod::Saliency:
    case ExplainMethod::GradientTimesInput: return gradientMethods(block, input, options);
    case ExplainMethod::GradCam: return gradCam(block, input, options);
    case ExplainMethod::Occlusion: return occlusion(block, input, options);
    }
    throw UsageError("unknown explanation method");
}

const char* methodName(ExplainMethod m)
{
    switch (m) {
    case ExplainMethod::Saliency: return "saliency";
    case ExplainMethod::GradientTimesInput: return "gradient-x-input";
    case ExplainMethod::GradCam: return "gradcam";
    case ExplainMethod::Occlusion: return "occlusion";
    }
    return "?";
}

ExplainMethod parseMethod(const std::string& name)
{
    if (name == "saliency") return ExplainMethod::Saliency;
    if (name == "gradient-x-input" || name == "gradxinput") return ExplainMethod::GradientTimesInput;
    if (name == "gradcam" || name == "grad-cam") return ExplainMethod::GradCam;
    if (name == "occlusion") return ExplainMethod::Occlusion;
    throw UsageError("unknown explanation method '" + name + "' (known: saliency, gradient-x-input, gradcam, occlusion)");
}

std::string defaultCamLayer(const Graph& graph)
{
    std::optional<uint32_t> last;
    for (uint32_t i = 0; i < graph.size(); ++i) {
        const Node& n = graph.node(i);
        if (!n.isVariable() && (n.opName() == "Convolution" || n.opName() == "Conv")) last = i;
    }
    if (!last) return {};
    // The rectified maps, where one activation alone reads the convolution.
    std::optional<uint32_t> reader;
    int readers = 0;
    for (uint32_t i = 0; i < graph.size(); ++i)
        for (const NodeEntry& in : graph.node(i).inputs)
            if (in.node == *last) {
                ++readers;
                reader = i;
            }
    if (readers == 1) {
        const Node& r = graph.node(*reader);
        static const char* const kActivations[] = { "Activation", "relu", "Relu", "LeakyReLU", "LeakyRelu", "Clip",
            "Sigmoid", "Tanh", "sigmoid", "tanh" };
        for (const char* a : kActivations)
            if (r.opName() == a) return r.name;
    }
    return graph.node(*last).name;
}

void heatColour(double t, float rgb[3])
{
    if (t < 0) {
        rgb[0] = 0.1f, rgb[1] = 0.3f, rgb[2] = 1.0f;
        return;
    }
    const auto v = static_cast<float>(std::min(1.0, t));
    rgb[0] = std::min(1.0f, 0.4f + 1.2f * v);
    rgb[1] = std::clamp(2.0f * v - 0.8f, 0.0f, 1.0f);
    rgb[2] = 0.0f;
}

std::vector<uint8_t> heatOverlayRgb(const Tensor& input, const Tensor& heat, double opacity)
{
    if (input.ndim() != 4 || heat.ndim() != 2 || input.dtype() != DType::Float32 || heat.dtype() != DType::Float32
        || input.shape()[2] != heat.shape()[0] || input.shape()[3] != heat.shape()[1])
        return {};
    const int64_t c = input.shape()[1], hw = heat.size();
    std::vector<float> gray(static_cast<size_t>(hw), 0.0f);
    const float* in = input.view().data();
    for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t p = 0; p < hw; ++p)
            gray[static_cast<size_t>(p)] += in[ch * hw + p] / static_cast<float>(c);
    float lo = 0, hi = 0, peak = 0;
    bool first = true;
    for (float g : gray)
        if (std::isfinite(g)) {
            lo = first ? g : std::min(lo, g);
            hi = first ? g : std::max(hi, g);
            first = false;
        }
    const float* hp = heat.view().data();
    for (int64_t p = 0; p < hw; ++p)
        if (std::isfinite(hp[p])) peak = std::max(peak, std::fabs(hp[p]));
    const float span = hi > lo ? hi - lo : 1.0f;
    if (peak == 0) peak = 1;
    std::vector<uint8_t> rgb(static_cast<size_t>(hw) * 3);
    for (int64_t p = 0; p < hw; ++p) {
        const float g = std::isfinite(gray[static_cast<size_t>(p)]) ? (gray[static_cast<size_t>(p)] - lo) / span : 0.0f;
        const float raw = hp[p];
        const double v = std::isfinite(raw) ? raw / peak : 0.0;
        const double a = std::min(1.0, std::fabs(v)) * std::clamp(opacity, 0.0, 1.0);
        float colour[3];
        heatColour(v, colour);
        for (int k = 0; k < 3; ++k)
            rgb[static_cast<size_t>(p) * 3 + static_cast<size_t>(k)]
                = static_cast<uint8_t>(std::lround(255 * std::clamp((1 - a) * g + a * colour[k], 0.0, 1.0)));
    }
    return rgb;
}

Tensor resizeBilinear(const Tensor& map, int64_t height, int64_t width)
{
    const int64_t h = map.shape()[0], w = map.shape()[1];
    Tensor out({ height, width });
    const float* m = map.view().data();
    float* o = out.data();
    auto source = [](int64_t i, int64_t from, int64_t to) {
        const double v = (static_cast<double>(i) + 0.5) * static_cast<double>(from) / static_cast<double>(to) - 0.5;
        return std::clamp(v, 0.0, static_cast<double>(from - 1));
    };
    for (int64_t y = 0; y < height; ++y) {
        const double sy = source(y, h, height);
        const auto y0 = static_cast<int64_t>(sy);
        const int64_t y1 = std::min(y0 + 1, h - 1);
        const double fy = sy - static_cast<double>(y0);
        for (int64_t x = 0; x < width; ++x) {
            const double sx = source(x, w, width);
            const auto x0 = static_cast<int64_t>(sx);
            const int64_t x1 = std::min(x0 + 1, w - 1);
            const double fx = sx - static_cast<double>(x0);
            const double top = m[y0 * w + x0] * (1 - fx) + m[y0 * w + x1] * fx;
            const double bottom = m[y1 * w + x0] * (1 - fx) + m[y1 * w + x1] * fx;
            o[y * width + x] = static_cast<float>(top * (1 - fy) + bottom * fy);
        }
    }
    return out;
}

} // namespace opscope::debug
