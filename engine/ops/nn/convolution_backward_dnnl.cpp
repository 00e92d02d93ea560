#include "ops/dnnl/dnnl_common.h"
#include "ops/nn/convolution.h"

namespace opscope {

// oneDNN's backward-data and backward-weights primitives on the tensors as they are (plain NCHW and
// (G)OIHW, 1-D seen as 2-D of height 1). The primitives are made at each call: oneDNN keeps made
// primitives in its cache, so a training loop pays for the descriptors only.
bool backwardConvolutionDnnl(const BackwardArgs& a)
{
    const auto& p = paramsAs<ConvolutionParams>(a.params);
    Tensor* dx = a.inGrad[0];
    Tensor* dw = a.inGrad.size() > 1 ? a.inGrad[1] : nullptr;
    Tensor* db = !p.noBias && a.inGrad.size() > 2 ? a.inGrad[2] : nullptr;
    if (!a.outGrad[0] || (!dx && !dw && !db)) return false;
    const ConvGeometry g = ConvGeometry::from(p, a.in[0]->shape(), a.out[0]->shape());
    if (g.flops() < dnnlutil::kMinFlops) return false;

    using dnnl::memory;
    using tag = memory::format_tag;
    const auto f32 = memory::data_type::f32;
    const memory::desc srcMd({ g.batch, g.inChannels, g.inH, g.inW }, f32, tag::nchw);
    const memory::desc dstMd({ g.batch, g.outChannels, g.outH, g.outW }, f32, tag::nchw);
    // MXNet's (O, I/g, kh, kw) weights are oneDNN's (g, O/g, I/g, kh, kw) in the same memory.
    const memory::desc wMd = g.groups > 1
        ? memory::desc({ g.groups, g.outChannelsPerGroup(), g.inChannelsPerGroup(), g.kernelH, g.kernelW }, f32,
            tag::goihw)
        : memory::desc({ g.outChannels, g.inChannels, g.kernelH, g.kernelW }, f32, tag::oihw);
    const memory::desc bMd({ g.outChannels }, f32, tag::a);
    const memory::dims strides { g.strideH, g.strideW };
    const memory::dims dilates { g.dilateH - 1, g.dilateW - 1 }; // oneDNN counts the gaps
    const memory::dims pads { g.padH, g.padW };
    const auto algo = dnnl::algorithm::convolution_direct;
    dnnl::engine& eng = dnnlutil::cpuEngine();
    try {
        const dnnl::convolution_forward::primitive_desc hint(p.noBias
                ? dnnl::convolution_forward::desc(
                    dnnl::prop_kind::forward_training, algo, srcMd, wMd, dstMd, strides, dilates, pads, pads)
                : dnnl::convolution_forward::desc(
                    dnnl::prop_kind::forward_training, algo, srcMd, wMd, bMd, dstMd, strides, dilates, pads, pads),
            eng);
        dnnl::stream& s = dnnlutil::threadStream();
        const memory diffDst = dnnlutil::wrap(dstMd, *a.outGrad[0]);
        if (dx) {
            const dnnl::convolution_backward_data::primitive_desc pd(
                dnnl::convolution_backward_data::desc(algo, srcMd, wMd, dstMd, strides, dilates, pads, pads), eng,
                hint);
            dnnl::convolution_backward_data(pd).execute(s,
                { { DNNL_ARG_DIFF_DST, diffDst }, { DNNL_ARG_WEIGHTS, dnnlutil::wrap(wMd, *a.in[1]) },
                    { DNNL_ARG_DIFF_SRC, dnnlutil::wrap(srcMd, *dx) } });
        }
        if (dw || db) {
            // One primitive gives both; a gradient nobody wants goes to a scratch tensor.
            Tensor weightScratch, biasScratch;
            const Tensor& wOut = dw ? *dw : (weightScratch = Tensor(a.in[1]->shape()));
            std::unordered_map<int, memory> args { { DNNL_ARG_DIFF_DST, diffDst },
                { DNNL_ARG_SRC, dnnlutil::wrap(srcMd, *a.in[0]) }, { DNNL_ARG_DIFF_WEIGHTS, dnnlutil::wrap(wMd, wOut) } };
            if (p.noBias) {
                const dnnl::convolution_backward_weights::primitive_desc pd(
                    dnnl::convolution_backward_weights::desc(algo, srcMd, wMd, dstMd, strides, dilates, pads, pads),
                    eng, hint);
                dnnl::convolution_backward_weights(pd).execute(s, args);
            } else {
                const Tensor& bOut = db ? *db : (biasScratch = Tensor(Shape { g.outChannels }));
                args[DNNL_ARG_DIFF_BIAS] = dnnlutil::wrap(bMd, bOut);
                const dnnl::convolution_backward_weights::primitive_desc pd(
                    dnnl::convolution_backward_weights::desc(algo, srcMd, wMd, bMd, dstMd, strides, dilates, pads, pads),
                    eng, hint);
                dnnl::convolution_backward_weights(pd).execute(s, args);
            }
        }
        s.wait();
    } catch (const dnnl::error&) {
        return false; // no oneDNN implementation for this geometry: the reference computes it all again
    }
    return true;
}

void backwardConvolution(const BackwardArgs& a)
{
    if (!backwardConvolutionDnnl(a)) backwardConvolutionReference(a);
}

} // namespace opscope
