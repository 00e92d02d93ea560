// broadcast_add/sub/mul/div/maximum/minimum (MXNet 1.x elemwise_binary_broadcast_op_basic.cc and
// _extended.cc). Shapes follow MXNet's BinaryBroadcastShape: aligned on the right (the shorter
// one is left-padded with 1s), and each dimension pair must be equal or contain a 1.

#include "core/error.h"
#include "ops/elemwise/binary_kernels.h"
#include "ops/elemwise/elemwise_util.h"
#include "ops/register_all.h"
#include "ops/registry.h"

#include <algorithm>
#include <vector>

namespace opscope {

namespace {
struct NoParams : OpParams { };

void inferBroadcastShape(const OpParams&, std::vector<Shape>& in, std::vector<Shape>& out)
{
    const Shape& lhs = in[0];
    const Shape& rhs = in[1];
    if (lhs.ndim() == 0 || rhs.ndim() == 0) return; // as MXNet: wait until both ranks are known
    const int nd = std::max(lhs.ndim(), rhs.ndim());
    Shape result;
    for (int i = 0; i < nd; ++i) {
        const int il = i - (nd - lhs.ndim()), ir = i - (nd - rhs.ndim());
        const int64_t l = il >= 0 ? lhs[il] : 1, r = ir >= 0 ? rhs[ir] : 1;
        if (l == r)
            result.push_back(l);
        else if (l == 0 || r == 0) // one unknown: the other decides unless it is 1
            result.push_back(l + r == 1 ? 0 : l + r);
        else if (l == 1 || r == 1)
            result.push_back(std::max(l, r));
        else
            throw ShapeError("operands could not be broadcast together with shapes lhs " + lhs.str() + " and rhs "
                + rhs.str() + " (dimension " + std::to_string(i) + ": " + std::to_string(l) + " vs " + std::to_string(r)
                + ")");
    }
    elemwise::mergeShape(result, out[0], "output");
    out[0] = result;
}

// True when `s`, left-padded to `os`'s rank, repeats values along some dimension of `os`.
bool isBroadcast(const Shape& s, const Shape& os)
{
    const Shape p = elemwise::padLeft(s, os.ndim());
    for (int i = 0; i < os.ndim(); ++i)
        if (p[i] != os[i]) return true;
    return false;
}

template <class Op>
std::unique_ptr<Kernel> referenceKernel(const OpParams& p, std::span<const Shape>, std::span<const Shape>)
{
    return lambdaKernel(paramsAs<NoParams>(p),
        [](const NoParams&, std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) {
            elemwise::broadcastApply<Op>(
                in[0]->data(), in[0]->shape(), in[1]->data(), in[1]->shape(), out[0]->data(), out[0]->shape());
        });
}

enum class Commutes { Yes, Negated, No };

// oneDNN 2.6 broadcasts only src1: a broadcast rhs maps directly; a broadcast lhs maps by
// swapping the operands where the op commutes (sub: negate the result); otherwise (both
// broadcast, or div with a broadcast lhs) the Eigen kernel runs.
KernelFactory dnnlKernel(dnnl::algorithm alg, Commutes commutes)
{
    return [alg, commutes](
               const OpParams&, std::span<const Shape> in, std::span<const Shape> out) -> std::unique_ptr<Kernel> {
        const Shape& os = out[0];
        const bool lb = isBroadcast(in[0], os), rb = isBroadcast(in[1], os);
        if (!lb) return std::make_unique<elemwise::DnnlBinaryKernel>(alg, in[0], in[1], os);
        if (rb || commutes == Commutes::No) return nullptr;
        return std::make_unique<elemwise::DnnlBinaryKernel>(alg, in[1], in[0], os, true, commutes == Commutes::Negated);
    };
}

// Each input's gradient sums the output's over the positions that read it (the broadcast axes),
// accumulated in double before the one rounding to float.
template <class Op> void backwardBroadcast(const BackwardArgs& a)
{
    const Tensor& x = *a.in[0];
    const Tensor& y = *a.in[1];
    Tensor* dl = a.inGrad[0];
    Tensor* dr = a.inGrad[1];
    if (!a.outGrad[0]) {
        if (dl) dl->fill(0);
        if (dr) dr->fill(0);
        return;
    }
    std::vector<double> accL(dl ? static_cast<size_t>(x.size()) : 0), accR(dr ? static_cast<size_t>(y.size()) : 0);
    const float* xv = x.data();
    const float* yv = y.data();
    const float* g = a.outGrad[0]->data();
    elemwise::forEachBroadcastIndex(x.shape(), y.shape(), a.out[0]->shape(), [&](int64_t o, int64_t i, int64_t j) {
        if (dl) accL[static_cast<size_t>(i)] += Op::gradLhs(g[o], xv[i], yv[j]);
        if (dr) accR[static_cast<size_t>(j)] += Op::gradRhs(g[o], xv[i], yv[j]);
    });
    if (dl) std::copy(accL.begin(), accL.end(), dl->data());
    if (dr) std::copy(accR.begin(), accR.end(), dr->data());
}

template <class Op> OpDef broadcastOp(const std::string& name, dnnl::algorithm alg, Commutes commutes)
{
    OpDef d;
    d.name = name;
    d.parse = [](const AttrMap&) { return std::make_shared<NoParams>(); };
    d.numInputs = [](const OpParams&) { return 2; };
    d.numOutputs = [](const OpParams&) { return 1; };
    d.nameInputs({ "lhs", "rhs" });
    d.inferShape = inferBroadcastShape;
    d.reference = referenceKernel<Op>;
    d.dnnl = dnnlKernel(alg, commutes);
    d.dnnlPays = [](const OpParams&, std::span<const Shape>, std::span<const Shape> out) {
        return elemwise::elementsPay(out);
    };
    d.backward = backwardBroadcast<Op>;
    return d;
}
} // namespace

void registerBroadcast(OpRegistry& r)
{
    using dnnl::algorithm;
    r.add(broadcastOp<elemwise::AddOp>("broadcast_add", algorithm::binary_add, Commutes::Yes), { "broadcast_plus" });
    r.add(
        broadcastOp<elemwise::SubOp>("broadcast_sub", algorithm::binary_sub, Commutes::Negated), { "broadcast_minus" });
    r.add(broadcastOp<elemwise::MulOp>("broadcast_mul", algorithm::binary_mul, Commutes::Yes));
    r.add(broadcastOp<elemwise::DivOp>("broadcast_div", algorithm::binary_div, Commutes::No));
    r.add(broadcastOp<elemwise::MaxOp>("broadcast_maximum", algorithm::binary_max, Commutes::Yes));
    r.add(broadcastOp<elemwise::MinOp>("broadcast_minimum", algorithm::binary_min, Commutes::Yes));
}

} // namespace opscope
