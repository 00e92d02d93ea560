#include "debug/channel_profile.h"

#include "core/error.h"
#include "debug/node_attrs.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <set>

namespace opscope::debug {

namespace {

bool flag(const Node& n, const char* key)
{
    auto it = n.attrs.find(key);
    return it != n.attrs.end() && (it->second == "True" || it->second == "true" || it->second == "1");
}

// Operators whose output element (y, x) depends on their input's element (y, x) alone.
const std::set<std::string>& positionKeeping()
{
    static const std::set<std::string> ops { "Activation", "relu", "Relu", "sigmoid", "Sigmoid", "tanh", "Tanh",
        "BatchNorm", "BatchNormalization", "LeakyReLU", "LeakyRelu", "Dropout", "Clip", "clip", "identity", "_copy",
        "Identity", "elemwise_add", "Add", "_plus", "broadcast_add", "Mul", "elemwise_mul", "HardSigmoid", "Elu",
        "Selu", "Softplus", "Softsign", "Erf", "Gelu" };
    return ops;
}

void keepTop(std::vector<ChannelExample>& top, const ChannelExample& e, size_t k)
{
    if (top.size() == k && e.activation <= top.back().activation) return;
    auto at = std::upper_bound(top.begin(), top.end(), e,
        [](const ChannelExample& a, const ChannelExample& b) { return a.activation > b.activation; });
    top.insert(at, e);
    if (top.size() > k) top.pop_back();
}

} // namespace

std::optional<PixelRect> receptiveField(
    const Graph& graph, uint32_t node, int64_t y, int64_t x, int64_t inputHeight, int64_t inputWidth)
{
    int64_t y0 = y, y1 = y, x0 = x, x1 = x;
    uint32_t id = node;
    for (size_t guard = 0; guard <= graph.size(); ++guard) {
        const Node& n = graph.node(id);
        if (n.isVariable()) {
            auto clip = [](int64_t v, int64_t size) { return std::clamp<int64_t>(v, 0, size - 1); };
            if (y1 < 0 || x1 < 0 || y0 >= inputHeight || x0 >= inputWidth) return std::nullopt;
            return PixelRect { clip(y0, inputHeight), clip(x0, inputWidth), clip(y1, inputHeight), clip(x1, inputWidth) };
        }
        if (n.inputs.empty()) return std::nullopt;
        const std::string& op = n.opName();
        const bool conv = op == "Convolution" || op == "Conv";
        const bool pool = op == "Pooling" || op == "MaxPool" || op == "AveragePool";
        if (op == "GlobalAveragePool" || op == "GlobalMaxPool" || (op == "Pooling" && flag(n, "global_pool")))
            return PixelRect { 0, 0, inputHeight - 1, inputWidth - 1 };
        if ((conv || pool) && n.onnx && textOr(n, "auto_pad", "NOTSET") != "NOTSET" && textOr(n, "auto_pad", "NOTSET") != "VALID")
            return std::nullopt; // SAME padding depends on sizes the graph does not record here
        if (conv || pool) {
            std::vector<int64_t> k = tupleOr(n, n.onnx ? "kernel_shape" : "kernel", {});
            if (k.empty() && conv) {
                // The window from the weight's shape, where the graph records it.
                const uint32_t w = n.inputs.size() > 1 ? n.inputs[1].node : id;
                const std::vector<int64_t> ws = tupleOr(graph.node(w), "__shape__", {});
                if (ws.size() == 4) k = { ws[2], ws[3] };
            }
            if (k.size() != 2) return std::nullopt;
            const std::vector<int64_t> s = tupleOr(n, n.onnx ? "strides" : "stride", { 1, 1 });
            const std::vector<int64_t> d = tupleOr(n, n.onnx ? "dilations" : "dilate", { 1, 1 });
            const std::vector<int64_t> p = tupleOr(n, n.onnx ? "pads" : "pad", { 0, 0 });
            if (s.size() != 2 || d.size() != 2 || p.size() < 2) return std::nullopt;
            y0 = y0 * s[0] - p[0];
            y1 = y1 * s[0] - p[0] + (k[0] - 1) * d[0];
            x0 = x0 * s[1] - p[1];
            x1 = x1 * s[1] - p[1] + (k[1] - 1) * d[1];
        } else if (!positionKeeping().count(op)) {
            return std::nullopt;
        }
        id = n.inputs[0].node;
    }
    return std::nullopt;
}

LayerProfile profileLayer(gluon::HybridBlock& block, const Tensor& data, const Tensor& labels, const ProfileOptions& o)
{
    if (data.ndim() != 4 || labels.ndim() != 1 || labels.shape()[0] != data.shape()[0])
        throw UsageError("profiling a layer needs images (N, C, H, W) and N labels, not " + data.shape().str() + " and "
            + labels.shape().str());
    const int64_t n = data.shape()[0], per = data.size() / std::max<int64_t>(1, n);
    const int64_t batch = std::max<int64_t>(1, o.batch);
    LayerProfile prof;
    prof.layer = o.layer;
    prof.dataSet = o.dataSet;
    for (int64_t i = 0; i < n; ++i) {
        const float l = labels.at(i);
        if (!(l >= 0 && l < 100000 && l == std::floor(l)))
            throw UsageError("label " + std::to_string(i) + " is " + std::to_string(l) + ": not a class index");
        prof.classes = std::max<int64_t>(prof.classes, static_cast<int64_t>(l) + 1);
    }
    prof.countPerClass.assign(static_cast<size_t>(prof.classes), 0);
    std::vector<std::vector<double>> sums; // [channel][class]
    std::shared_ptr<const Graph> graph;
    std::optional<uint32_t> id;
    std::string outputName;
    Tensor captured;
    gluon::HookHandle hook;
    auto attach = [&] {
        graph = block.active() ? block.graph() : nullptr;
        if (!graph) throw UsageError("profiling a layer needs a hybridized block");
        id = graph->findNode(o.layer);
        if (!id || graph->node(*id).isVariable()) throw UsageError("the model has no operator node '" + o.layer + "'");
        outputName = graph->outputName(NodeEntry { *id, 0, 0 });
        hook = block.register_op_hook(
            [&](std::string_view name, std::string_view, const TensorView& t) {
                if (name == outputName) captured = Tensor::copyOf(t);
            },
            false);
    };
    try {
        for (int64_t start = 0; start < n; start += batch) {
            if (o.progress && !o.progress(start, n)) {
                prof.cancelled = true;
                break;
            }
            const int64_t m = std::min(batch, n - start);
            Shape s = data.shape();
            s[0] = m;
            Tensor xb(s);
            std::copy_n(data.data() + start * per, m * per, xb.data());
            captured = {};
            if (!graph) {
                block.call(xb); // traces the graph for this input's shape
                attach();
                block.call(xb);
            } else {
                block.call(xb);
            }
            if (!captured.defined()) throw UsageError("node '" + o.layer + "' did not run");
            const Tensor a = captured.dtype() == DType::Float32 ? captured : captured.astype(DType::Float32);
            if (a.ndim() != 4 || a.shape()[0] != m)
                throw UsageError("node '" + o.layer + "' gives " + a.shape().str() + "; its channels need (N, C, h, w)");
            const int64_t c = a.shape()[1], h = a.shape()[2], w = a.shape()[3];
            if (h * w == 0) throw UsageError("node '" + o.layer + "' gives empty maps " + a.shape().str());
            if (prof.channels.empty()) {
                prof.channels.resize(static_cast<size_t>(c));
                sums.assign(static_cast<size_t>(c), std::vector<double>(static_cast<size_t>(prof.classes), 0.0));
            }
            for (int64_t b = 0; b < m; ++b) {
                const auto label = static_cast<int64_t>(labels.at(start + b));
                ++prof.countPerClass[static_cast<size_t>(label)];
                for (int64_t ch = 0; ch < c; ++ch) {
                    const float* map = a.data() + (b * c + ch) * h * w;
                    int64_t best = 0;
                    double total = 0;
                    for (int64_t p = 0; p < h * w; ++p) {
                        total += map[p];
                        if (map[p] > map[best]) best = p;
                    }
                    sums[static_cast<size_t>(ch)][static_cast<size_t>(label)] += total / static_cast<double>(h * w);
                    ChannelExample e;
                    e.sample = start + b;
                    e.label = label;
                    e.activation = map[best];
                    e.y = best / w;
                    e.x = best % w;
                    keepTop(prof.channels[static_cast<size_t>(ch)].top, e, static_cast<size_t>(std::max(1, o.topK)));
                }
            }
            prof.samples += m;
        }
    } catch (...) {
        hook.remove();
        throw;
    }
    hook.remove();
    if (o.progress && !prof.cancelled) o.progress(n, n);
    for (size_t ch = 0; ch < prof.channels.size(); ++ch) {
        ChannelProfile& cp = prof.channels[ch];
        for (int64_t k = 0; k < prof.classes; ++k) {
            const int64_t count = prof.countPerClass[static_cast<size_t>(k)];
            cp.meanPerClass.push_back(count > 0 ? sums[ch][static_cast<size_t>(k)] / static_cast<double>(count) : 0.0);
        }
        for (ChannelExample& e : cp.top) {
            const auto f = receptiveField(*graph, *id, e.y, e.x, data.shape()[2], data.shape()[3]);
            e.field = f ? *f : PixelRect { 0, 0, data.shape()[2] - 1, data.shape()[3] - 1 };
        }
    }
    return prof;
}

std::string toJson(const LayerProfile& p)
{
    nlohmann::json j;
    j["layer"] = p.layer;
    j["data_set"] = p.dataSet;
    j["samples"] = p.samples;
    j["classes"] = p.classes;
    j["count_per_class"] = p.countPerClass;
    j["cancelled"] = p.cancelled;
    j["channels"] = nlohmann::json::array();
    for (const ChannelProfile& c : p.channels) {
        nlohmann::json cj;
        cj["mean_per_class"] = c.meanPerClass;
        cj["top"] = nlohmann::json::array();
        for (const ChannelExample& e : c.top)
            cj["top"].push_back({ { "sample", e.sample }, { "label", e.label }, { "activation", e.activation },
                { "y", e.y }, { "x", e.x }, { "field", { e.field.top, e.field.left, e.field.bottom, e.field.right } } });
        j["channels"].push_back(cj);
    }
    return j.dump();
}

LayerProfile layerProfileFromJson(const std::string& text, const std::string& name)
{
    try {
        const nlohmann::json j = nlohmann::json::parse(text);
        LayerProfile p;
        p.layer = j.at("layer").get<std::string>();
        p.dataSet = j.at("data_set").get<std::string>();
        p.samples = j.at("samples").get<int64_t>();
        p.classes = j.at("classes").get<int64_t>();
        p.countPerClass = j.at("count_per_class").get<std::vector<int64_t>>();
        p.cancelled = j.at("cancelled").get<bool>();
        for (const auto& cj : j.at("channels")) {
            ChannelProfile c;
            c.meanPerClass = cj.at("mean_per_class").get<std::vector<double>>();
            for (const auto& ej : cj.at("top")) {
                ChannelExample e;
                e.sample = ej.at("sample").get<int64_t>();
                e.label = ej.at("label").get<int64_t>();
                e.activation = ej.at("activation").get<float>();
                e.y = ej.at("y").get<int64_t>();
                e.x = ej.at("x").get<int64_t>();
                const auto f = ej.at("field").get<std::vector<int64_t>>();
                if (f.size() != 4) throw FileError(name + ": a receptive field needs 4 numbers");
                e.field = { f[0], f[1], f[2], f[3] };
                c.top.push_back(e);
            }
            p.channels.push_back(std::move(c));
        }
        return p;
    } catch (const nlohmann::json::exception& e) {
        throw FileError(name + ": not a layer profile: " + e.what());
    }
}

} // namespace opscope::debug
