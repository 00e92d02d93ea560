#pragma once

// Private to the Convolution operator's sources (convolution*.cpp).

#include "ops/op.h"

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace opscope {

/// MXNet's ConvolutionParam, restricted to 1-D (NCW) and 2-D (NCHW) convolution. stride, dilate
/// and pad always have the kernel's rank after parsing (MXNet's defaults filled in).
struct ConvolutionParams : OpParams {
    std::vector<int64_t> kernel;
    std::vector<int64_t> stride;
    std::vector<int64_t> dilate;
    std::vector<int64_t> pad;
    int64_t numFilter = 0;
    int64_t numGroup = 1;
    bool noBias = false;

    int spatialDims() const { return static_cast<int>(kernel.size()); }
};

/// The sizes of one convolution, with 1-D seen as 2-D of height 1 (kernel, stride, dilate 1 and pad
/// 0 along that height), so that the kernels have one code path.
struct ConvGeometry {
    int64_t batch = 0;
    int64_t inChannels = 0;
    int64_t outChannels = 0;
    int64_t groups = 1;
    int64_t inH = 1, inW = 1;
    int64_t outH = 1, outW = 1;
    int64_t kernelH = 1, kernelW = 1;
    int64_t strideH = 1, strideW = 1;
    int64_t dilateH = 1, dilateW = 1;
    int64_t padH = 0, padW = 0;

    static ConvGeometry from(const ConvolutionParams& p, const Shape& data, const Shape& output);

    int64_t inChannelsPerGroup() const { return inChannels / groups; }
    int64_t outChannelsPerGroup() const { return outChannels / groups; }
    double flops() const
    {
        return 2.0 * static_cast<double>(batch * outChannels * outH * outW)
            * static_cast<double>(inChannelsPerGroup() * kernelH * kernelW);
    }
};

/// im2col + one Eigen GEMM per image and group.
std::unique_ptr<Kernel> makeConvolutionReference(
    const ConvolutionParams& p, std::span<const Shape> in, std::span<const Shape> out);
/// oneDNN convolution_forward in the formats it prefers, with cached reorders to and from plain
/// NC(H)W / (G)OI(H)W.
std::unique_ptr<Kernel> makeConvolutionDnnl(
    const ConvolutionParams& p, std::span<const Shape> in, std::span<const Shape> out);
/// The gradients of data, weight and bias: oneDNN's backward primitives where they exist and pay
/// for the geometry, else the reference.
void backwardConvolution(const BackwardArgs& a);
/// The reference: im2col, GEMMs and its adjoint col2im.
void backwardConvolutionReference(const BackwardArgs& a);
/// oneDNN's backward-data and backward-weights; false (nothing written that the reference does not
/// overwrite) when oneDNN has no implementation or the convolution is too small to pay.
bool backwardConvolutionDnnl(const BackwardArgs& a);

} // namespace opscope
