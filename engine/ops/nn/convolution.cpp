#include "ops/nn/convolution.h"

#include "core/error.h"
#include "ops/dnnl/dnnl_common.h"
#include "ops/register_all.h"
#include "ops/registry.h"

#include <string>

namespace opscope {

namespace {

// A tuple attribute of the kernel's rank, every element at least `minValue`; `fill` when absent.
std::vector<int64_t> readSpatialTuple(const AttrReader& r, const char* key, size_t rank, int64_t fill, int64_t minValue)
{
    std::vector<int64_t> v = r.getTuple(key, {});
    if (v.empty()) return std::vector<int64_t>(rank, fill);
    if (v.size() != rank) r.fail(key, "must have the kernel's " + std::to_string(rank) + " dimension(s)");
    for (int64_t x : v)
        if (x < minValue) r.fail(key, "every element must be at least " + std::to_string(minValue));
    return v;
}

ParamsPtr parseConvolution(const AttrMap& attrs)
{
    AttrReader r(attrs, "Convolution");
    auto p = std::make_shared<ConvolutionParams>();
    p->kernel = r.getTuple("kernel");
    if (p->kernel.size() != 1 && p->kernel.size() != 2)
        r.fail("kernel", "only 1-D (w,) and 2-D (h, w) kernels are supported");
    for (int64_t k : p->kernel)
        if (k < 1) r.fail("kernel", "every element must be at least 1");
    const size_t rank = p->kernel.size();
    p->stride = readSpatialTuple(r, "stride", rank, 1, 1);
    p->dilate = readSpatialTuple(r, "dilate", rank, 1, 1);
    p->pad = readSpatialTuple(r, "pad", rank, 0, 0);
    p->numFilter = r.getInt("num_filter");
    if (p->numFilter < 1) r.fail("num_filter", "must be at least 1");
    p->numGroup = r.getInt("num_group", 1);
    if (p->numGroup < 1) r.fail("num_group", "must be at least 1");
    if (p->numFilter % p->numGroup != 0)
        r.fail("num_group", "must divide num_filter (" + std::to_string(p->numFilter) + ")");
    p->noBias = r.getBool("no_bias", false);
    // MXNet writes an unset optional layout as "None"; NHWC and 3-D layouts are GPU-only there.
    const std::string* layout = r.raw("layout");
    if (layout && *layout != "None") {
        const std::string l = r.getEnum("layout", { "NCW", "NCHW" }, "");
        if ((l == "NCW") != (rank == 1)) r.fail("layout", "does not match a " + std::to_string(rank) + "-D kernel");
    }
    // workspace, cudnn_tune and cudnn_off only steer GPU algorithms: accepted and ignored.
    return p;
}

void inferConvolution(const OpParams& op, std::vector<Shape>& in, std::vector<Shape>& out)
{
    const auto& p = paramsAs<ConvolutionParams>(op);
    const int sd = p.spatialDims();
    const Shape& data = in[0];
    const char* layout = sd == 1 ? "NCW" : "NCHW";
    if (data.ndim() == 0) throw ShapeError("input 'data': shape unknown");
    if (data.ndim() != sd + 2)
        throw ShapeError("input 'data': expected a " + std::to_string(sd + 2) + "-D shape (" + layout + ") for a "
            + std::to_string(sd) + "-D kernel, got " + data.str());
    const int64_t channels = data[1];
    if (channels != 0 && channels % p.numGroup != 0)
        throw ShapeError("input 'data': " + data.str() + " has " + std::to_string(channels)
            + " channels, not divisible by num_group=" + std::to_string(p.numGroup));

    Shape weight { p.numFilter, channels / p.numGroup };
    for (int64_t k : p.kernel)
        weight.push_back(k);
    assignShape(in[1], weight, "input 'weight'");
    if (!p.noBias) assignShape(in[2], Shape { p.numFilter }, "input 'bias'");

    Shape output { data[0], p.numFilter };
    for (int i = 0; i < sd; ++i) {
        const auto si = static_cast<size_t>(i);
        const int64_t x = data[2 + i];
        const int64_t extent = p.dilate[si] * (p.kernel[si] - 1) + 1;
        if (x != 0 && x + 2 * p.pad[si] < extent)
            throw ShapeError("input 'data': " + data.str() + " is smaller than the kernel "
                + Shape(std::span<const int64_t>(p.kernel)).str() + " (dilated extent " + std::to_string(extent)
                + ", pad " + std::to_string(p.pad[si]) + ") along axis " + std::to_string(2 + i));
        output.push_back(x == 0 ? 0 : (x + 2 * p.pad[si] - extent) / p.stride[si] + 1);
    }
    out[0] = output;
}

} // namespace

ConvGeometry ConvGeometry::from(const ConvolutionParams& p, const Shape& data, const Shape& output)
{
    ConvGeometry g;
    g.batch = data[0];
    g.inChannels = data[1];
    g.outChannels = p.numFilter;
    g.groups = p.numGroup;
    // The last spatial axis is W; a 2-D convolution also has H before it.
    const int sd = p.spatialDims();
    const auto last = static_cast<size_t>(sd - 1);
    g.inW = data[1 + sd];
    g.outW = output[1 + sd];
    g.kernelW = p.kernel[last];
    g.strideW = p.stride[last];
    g.dilateW = p.dilate[last];
    g.padW = p.pad[last];
    if (sd == 2) {
        g.inH = data[2];
        g.outH = output[2];
        g.kernelH = p.kernel[0];
        g.strideH = p.stride[0];
        g.dilateH = p.dilate[0];
        g.padH = p.pad[0];
    }
    return g;
}

void registerConvolution(OpRegistry& r)
{
    OpDef def;
    def.name = "Convolution";
    def.parse = parseConvolution;
    def.numInputs = [](const OpParams& p) { return paramsAs<ConvolutionParams>(p).noBias ? 2 : 3; };
    def.numOutputs = [](const OpParams&) { return 1; };
    def.nameInputs({ "data", "weight", "bias" }); // the first numInputs: no bias, two
    def.nameOutputs({ "output" });
    def.inferShape = inferConvolution;
    def.reference = [](const OpParams& p, std::span<const Shape> in, std::span<const Shape> out) {
        return makeConvolutionReference(paramsAs<ConvolutionParams>(p), in, out);
    };
    def.dnnl = [](const OpParams& p, std::span<const Shape> in, std::span<const Shape> out) {
        return makeConvolutionDnnl(paramsAs<ConvolutionParams>(p), in, out);
    };
    def.dnnlPays = [](const OpParams& p, std::span<const Shape> in, std::span<const Shape> out) {
        return ConvGeometry::from(paramsAs<ConvolutionParams>(p), in[0], out[0]).flops() >= dnnlutil::kMinFlops;
    };
    def.backward = backwardConvolution;
    r.add(std::move(def), { "_npx_convolution" });
}

} // namespace opscope
