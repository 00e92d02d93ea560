// `_backward_<Op>`: every operator with a gradient also exists as a graph operator that runs that
// gradient, so a backward pass is an ordinary graph the executor runs (with its observers: hooks,
// breakpoints and the run record see backward nodes as they see forward ones).
//
// Inputs: the gradients of the forward outputs named in `__ograds__` (e.g. "1,0,0": only output 0),
// then every forward input, then every forward output. Outputs: the gradients of the forward inputs
// named in `__igrads__` (all by default), in input order. The forward's attributes pass through.

#include "core/error.h"
#include "ops/register_all.h"
#include "ops/registry.h"

#include <algorithm>
#include <sstream>

namespace opscope {

namespace {

struct BackwardParams : OpParams {
    const OpDef* forward = nullptr;
    ParamsPtr forwardParams;
    int numIn = 0;
    int numOut = 0;
    std::vector<bool> ograds; // per forward output: its gradient is an input
    std::vector<bool> igrads; // per forward input: its gradient is computed
    int numOgrads() const { return static_cast<int>(std::count(ograds.begin(), ograds.end(), true)); }
    int numIgrads() const { return static_cast<int>(std::count(igrads.begin(), igrads.end(), true)); }
};

std::vector<bool> parseMask(const AttrMap& attrs, const char* key, int n, const std::string& op)
{
    std::vector<bool> mask(static_cast<size_t>(n), true);
    auto it = attrs.find(key);
    if (it == attrs.end()) return mask;
    std::stringstream in(it->second);
    std::string item;
    size_t i = 0;
    while (std::getline(in, item, ',')) {
        if (i >= mask.size() || (item != "0" && item != "1"))
            throw AttributeError("operator _backward_" + op + ": attribute '" + key + "' = '" + it->second
                + "' must list " + std::to_string(n) + " flags 0 or 1");
        mask[i++] = item == "1";
    }
    if (i != mask.size())
        throw AttributeError("operator _backward_" + op + ": attribute '" + key + "' = '" + it->second + "' must list "
            + std::to_string(n) + " flags 0 or 1");
    return mask;
}

class BackwardKernel final : public Kernel {
public:
    explicit BackwardKernel(const BackwardParams& p)
        : m_p(p)
    {
    }

    void run(std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext& ctx) override
    {
        const size_t nOg = static_cast<size_t>(m_p.numOgrads());
        std::vector<const Tensor*> ograds(static_cast<size_t>(m_p.numOut), nullptr);
        for (size_t k = 0, j = 0; k < ograds.size(); ++k)
            if (m_p.ograds[k]) ograds[k] = in[j++];
        const auto fin = in.subspan(nOg, static_cast<size_t>(m_p.numIn));
        const auto fout = in.subspan(nOg + static_cast<size_t>(m_p.numIn), static_cast<size_t>(m_p.numOut));
        std::vector<Tensor*> igrads(static_cast<size_t>(m_p.numIn), nullptr);
        for (size_t i = 0, j = 0; i < igrads.size(); ++i)
            if (m_p.igrads[i]) igrads[i] = out[j++];
        m_p.forward->backward(BackwardArgs { *m_p.forwardParams, fin, fout, ograds, igrads, ctx });
    }

private:
    const BackwardParams& m_p;
};

OpDef backwardDef(const OpDef& fwd)
{
    OpDef def;
    def.name = "_backward_" + fwd.name;
    const OpDef* f = &fwd;
    def.parse = [f](const AttrMap& attrs) -> ParamsPtr {
        auto p = std::make_shared<BackwardParams>();
        p->forward = f;
        p->forwardParams = f->parse(attrs);
        p->numIn = f->numInputs(*p->forwardParams);
        p->numOut = f->numOutputs(*p->forwardParams);
        p->ograds = parseMask(attrs, "__ograds__", p->numOut, f->name);
        p->igrads = parseMask(attrs, "__igrads__", p->numIn, f->name);
        return p;
    };
    def.numInputs = [](const OpParams& op) {
        const auto& p = paramsAs<BackwardParams>(op);
        return p.numOgrads() + p.numIn + p.numOut;
    };
    def.numOutputs = [](const OpParams& op) { return paramsAs<BackwardParams>(op).numIgrads(); };
    def.inputNames = [](const OpParams& op) {
        const auto& p = paramsAs<BackwardParams>(op);
        const auto ins = p.forward->inputSlotNames(*p.forwardParams);
        const auto outs = p.forward->outputSlotNames(*p.forwardParams);
        std::vector<std::string> names;
        for (int k = 0; k < p.numOut; ++k)
            if (p.ograds[static_cast<size_t>(k)]) names.push_back(outs[static_cast<size_t>(k)] + "_grad");
        names.insert(names.end(), ins.begin(), ins.end());
        for (const std::string& o : outs)
            names.push_back("out_" + o);
        return names;
    };
    def.outputNames = [](const OpParams& op) {
        const auto& p = paramsAs<BackwardParams>(op);
        const auto ins = p.forward->inputSlotNames(*p.forwardParams);
        std::vector<std::string> names;
        for (size_t i = 0; i < ins.size(); ++i)
            if (p.igrads[i]) names.push_back(ins[i] + "_grad");
        return names;
    };
    def.inferShape = [](const OpParams& op, std::vector<Shape>& in, std::vector<Shape>& out) {
        const auto& p = paramsAs<BackwardParams>(op);
        const size_t nOg = static_cast<size_t>(p.numOgrads());
        const size_t nIn = static_cast<size_t>(p.numIn), nOut = static_cast<size_t>(p.numOut);
        // The gradient kernels trust that the inputs are what the forward op's shapes say they are (a
        // graph from a file may say anything): the forward inputs must give the forward outputs
        // passed in, and each output gradient must have its output's shape.
        std::vector<Shape> fin(in.begin() + static_cast<std::ptrdiff_t>(nOg),
            in.begin() + static_cast<std::ptrdiff_t>(nOg + nIn));
        std::vector<Shape> fout(nOut);
        p.forward->inferShape(*p.forwardParams, fin, fout);
        const auto outNames = p.forward->outputSlotNames(*p.forwardParams);
        for (size_t k = 0; k < nOut; ++k) {
            if (fout[k].ndim() > 0) assignShape(in[nOg + nIn + k], fout[k], "input 'out_" + outNames[k] + "'");
            fout[k] = in[nOg + nIn + k];
        }
        for (size_t k = 0, j = 0; k < nOut; ++k)
            if (p.ograds[k] && fout[k].ndim() > 0) assignShape(in[j++], fout[k], "input '" + outNames[k] + "_grad'");
            else if (p.ograds[k]) ++j;
        for (size_t i = 0; i < nIn; ++i)
            in[nOg + i] = fin[i];
        for (size_t i = 0, j = 0; i < nIn; ++i)
            if (p.igrads[i]) out[j++] = fin[i];
    };
    def.reference = [](const OpParams& op, std::span<const Shape>, std::span<const Shape>) -> std::unique_ptr<Kernel> {
        return std::make_unique<BackwardKernel>(paramsAs<BackwardParams>(op));
    };
    return def;
}

} // namespace

void registerBackwardOps(OpRegistry& r)
{
    for (const OpDef* fwd : r.defs())
        if (fwd->backward && !r.find("_backward_" + fwd->name)) r.add(backwardDef(*fwd));
}

} // namespace opscope
