#include "ops/onnx/nn_util.h"

#include "core/checked.h"
#include "core/error.h"

#include <algorithm>

namespace opscope::onnx_ops {

WindowAttrs readWindowAttrs(const OnnxAttrs& a)
{
    WindowAttrs w;
    w.autoPad = a.getString("auto_pad", "NOTSET");
    if (w.autoPad != "NOTSET" && w.autoPad != "SAME_UPPER" && w.autoPad != "SAME_LOWER" && w.autoPad != "VALID")
        a.fail("auto_pad", "expected NOTSET, SAME_UPPER, SAME_LOWER or VALID");
    w.kernel = a.getInts("kernel_shape", {});
    w.strides = a.getInts("strides", {});
    w.dilations = a.getInts("dilations", {});
    w.pads = a.getInts("pads", {});
    w.ceilMode = a.getInt("ceil_mode", 0) != 0;
    // Bounded like MXNet's attributes, so no product of two of them leaves int64.
    for (int64_t v : w.kernel)
        if (v < 1 || v > kMaxAttrInt) a.fail("kernel_shape", "must be positive and at most 2^31 - 1");
    for (int64_t v : w.strides)
        if (v < 1 || v > kMaxAttrInt) a.fail("strides", "must be positive and at most 2^31 - 1");
    for (int64_t v : w.dilations)
        if (v < 1 || v > kMaxAttrInt) a.fail("dilations", "must be positive and at most 2^31 - 1");
    for (int64_t v : w.pads)
        if (v < 0 || v > kMaxAttrInt) a.fail("pads", "must be from 0 to 2^31 - 1");
    return w;
}

namespace {
    std::vector<int64_t> orDefault(const std::vector<int64_t>& v, size_t n, int64_t fallback, const char* what, const char* op)
    {
        if (v.empty()) return std::vector<int64_t>(n, fallback);
        if (v.size() != n)
            throw ShapeError(std::string(op) + ": " + what + " has " + std::to_string(v.size()) + " values for "
                + std::to_string(n) + " spatial dimensions");
        return v;
    }
}

ResolvedWindow resolveWindow(const WindowAttrs& a, const Shape& x, const std::vector<int64_t>& kernel, bool ceilMode,
    const char* op)
{
    if (x.ndim() < 3) throw ShapeError(std::string(op) + ": input " + x.str() + " needs (N, C, spatial…)");
    const size_t sp = static_cast<size_t>(x.ndim() - 2);
    ResolvedWindow r;
    r.kernel = orDefault(kernel, sp, 1, "kernel_shape", op);
    if (!a.kernel.empty() && a.kernel != r.kernel)
        throw ShapeError(std::string(op) + ": kernel_shape does not match the weight");
    r.strides = orDefault(a.strides, sp, 1, "strides", op);
    r.dilations = orDefault(a.dilations, sp, 1, "dilations", op);
    const std::vector<int64_t> pads = orDefault(a.pads, 2 * sp, 0, "pads", op);
    r.padBegin.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(sp));
    r.padEnd.assign(pads.begin() + static_cast<std::ptrdiff_t>(sp), pads.end());
    for (size_t d = 0; d < sp; ++d) {
        const int64_t in = x[static_cast<int>(d + 2)];
        const int64_t extent = (r.kernel[d] - 1) * r.dilations[d] + 1;
        int64_t out = 0;
        if (a.autoPad == "SAME_UPPER" || a.autoPad == "SAME_LOWER") {
            out = (in + r.strides[d] - 1) / r.strides[d];
            const int64_t total = std::max<int64_t>(0, (out - 1) * r.strides[d] + extent - in);
            r.padBegin[d] = a.autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
            r.padEnd[d] = total - r.padBegin[d];
        } else {
            if (a.autoPad == "VALID") r.padBegin[d] = r.padEnd[d] = 0;
            const int64_t span = in + r.padBegin[d] + r.padEnd[d] - extent;
            if (span < 0)
                throw ShapeError(std::string(op) + ": the window " + std::to_string(extent) + " is larger than dimension "
                    + std::to_string(d + 2) + " of " + x.str() + " with its pads");
            out = (ceilMode ? (span + r.strides[d] - 1) / r.strides[d] : span / r.strides[d]) + 1;
            // A last window that would start in the end padding is dropped (as ONNX Runtime does).
            if (ceilMode && (out - 1) * r.strides[d] >= in + r.padBegin[d]) --out;
        }
        r.out.push_back(out);
    }
    return r;
}

ResolvedTransposeWindow resolveTransposeWindow(const WindowAttrs& a, const Shape& x, const Shape& w,
    const std::vector<int64_t>& outputPadding, const std::vector<int64_t>& outputShape)
{
    const size_t sp = static_cast<size_t>(x.ndim() - 2);
    ResolvedTransposeWindow r;
    for (size_t d = 0; d < sp; ++d)
        r.kernel.push_back(w[static_cast<int>(d + 2)]);
    r.strides = orDefault(a.strides, sp, 1, "strides", "ConvTranspose");
    r.dilations = orDefault(a.dilations, sp, 1, "dilations", "ConvTranspose");
    const std::vector<int64_t> pads = orDefault(a.pads, 2 * sp, 0, "pads", "ConvTranspose");
    const std::vector<int64_t> adj = orDefault(outputPadding, sp, 0, "output_padding", "ConvTranspose");
    for (int64_t v : adj)
        if (v < 0 || v > kMaxAttrInt) throw ShapeError("ConvTranspose: output_padding " + std::to_string(v) + " is out of range");
    for (int64_t v : outputShape)
        if (v < 0 || v > (int64_t(1) << 52)) throw ShapeError("ConvTranspose: output_shape " + std::to_string(v) + " is out of range");
    std::vector<int64_t> target = outputShape;
    if (target.size() == sp + 2) target.erase(target.begin(), target.begin() + 2);
    if (!target.empty() && target.size() != sp)
        throw ShapeError("ConvTranspose: output_shape has " + std::to_string(outputShape.size()) + " values");
    for (size_t d = 0; d < sp; ++d) {
        const int64_t in = x[static_cast<int>(d + 2)];
        const int64_t extent = (r.kernel[d] - 1) * r.dilations[d] + 1;
        int64_t begin = pads[d], end = pads[d + sp], out = 0;
        if (!target.empty() || a.autoPad == "SAME_UPPER" || a.autoPad == "SAME_LOWER") {
            out = !target.empty() ? target[d] : in * r.strides[d];
            const auto grown = checkedMul(r.strides[d], std::max<int64_t>(in - 1, 0));
            if (!grown || *grown > (int64_t(1) << 52) || !checkedMul(in, r.strides[d]))
                throw ShapeError("ConvTranspose: input " + x.str() + " with stride " + std::to_string(r.strides[d]) + " is too large");
            const int64_t total = std::max<int64_t>(0, *grown + adj[d] + extent - out);
            if (a.autoPad == "SAME_UPPER") {
                begin = total / 2;
            } else {
                begin = total - total / 2;
            }
            end = total - begin;
        } else {
            if (a.autoPad == "VALID") begin = end = 0;
            const auto grown = checkedMul(r.strides[d], std::max<int64_t>(in - 1, 0));
            if (!grown || *grown > (int64_t(1) << 52))
                throw ShapeError("ConvTranspose: output dimension " + std::to_string(d + 2) + " of input " + x.str()
                    + " with stride " + std::to_string(r.strides[d]) + " is too large");
            out = *grown + adj[d] + extent - begin - end;
        }
        if (out < 0) throw ShapeError("ConvTranspose: output dimension " + std::to_string(out) + " for input " + x.str());
        r.padBegin.push_back(begin);
        r.out.push_back(out);
    }
    return r;
}

std::function<void(const OpParams&, std::span<const DType>, std::span<DType>)> floatTypesAllSame(const char* op)
{
    const std::string name = op;
    return [name](const OpParams&, std::span<const DType> in, std::span<DType> out) {
        requireType(in[0], kFloatTypes, name, 0);
        for (size_t k = 1; k < in.size(); ++k)
            requireSameType(in, 0, static_cast<int>(k), name);
        std::fill(out.begin(), out.end(), in[0]);
    };
}

} // namespace opscope::onnx_ops
