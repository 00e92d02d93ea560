// ResNet-18's convolutions: opscope's Convolution kernel (oneDNN, plain NCHW tensors in and out,
// as the executor uses it where its tensors are seen; and with its tensors in oneDNN's layout, as
// between convolutions nobody watches) against the same oneDNN primitive on its own, with inputs and weights
// already in the primitive's preferred layouts (the best oneDNN can do). Reported as GFLOP/s.

#include "ops/dnnl/dnnl_common.h"
#include "ops/registry.h"
#include "tensor/random.h"

#include <benchmark/benchmark.h>

#include <oneapi/dnnl/dnnl.hpp>

using namespace opscope;

namespace {

struct ConvShape {
    int c, hw, k, kernel, stride, pad;
};
// Distinct convolutions of ResNet-18 at 224×224.
const ConvShape kShapes[] = {
    { 3, 224, 64, 7, 2, 3 },
    { 64, 56, 64, 3, 1, 1 },
    { 64, 56, 128, 3, 2, 1 },
    { 128, 28, 128, 3, 1, 1 },
    { 64, 56, 128, 1, 2, 0 },
    { 128, 28, 256, 3, 2, 1 },
    { 256, 14, 256, 3, 1, 1 },
    { 128, 28, 256, 1, 2, 0 },
    { 256, 14, 512, 3, 2, 1 },
    { 512, 7, 512, 3, 1, 1 },
    { 256, 14, 512, 1, 2, 0 },
};

int outSize(const ConvShape& s)
{
    return (s.hw + 2 * s.pad - s.kernel) / s.stride + 1;
}

double flopsOf(const ConvShape& s, int batch)
{
    const double o = outSize(s);
    return 2.0 * batch * s.k * o * o * s.c * s.kernel * s.kernel;
}

// `native`: as the executor runs a convolution between two others that nobody watches: its input
// already in the primitive's layout and its output left in its own (Kernel::setNative).
void runOpscope(benchmark::State& state, bool native)
{
    const ConvShape& s = kShapes[state.range(0)];
    const int batch = static_cast<int>(state.range(1));
    const OpDef& def = OpRegistry::instance().get("Convolution");
    const std::string k = std::to_string(s.kernel), st = std::to_string(s.stride), p = std::to_string(s.pad);
    auto params = def.parse({ { "kernel", "(" + k + ", " + k + ")" }, { "stride", "(" + st + ", " + st + ")" },
        { "pad", "(" + p + ", " + p + ")" }, { "num_filter", std::to_string(s.k) }, { "no_bias", "True" } });
    Generator gen(1);
    Tensor x = Tensor::uniform(Shape({ batch, s.c, s.hw, s.hw }), 0, 1, &gen);
    Tensor w = Tensor::normal(Shape({ s.k, s.c, s.kernel, s.kernel }), 0, 0.05f, &gen);
    const int o = outSize(s);
    Tensor y(Shape({ batch, s.k, o, o }));
    std::vector<Shape> in { x.shape(), w.shape() }, out { y.shape() };
    auto kernel = def.makeKernel(*params, in, out, KernelKind::Dnnl);
    if (native) {
        const bool inputs[] = { kernel->nativeInput(0).bytes == x.size() * static_cast<int64_t>(sizeof(float)), false };
        kernel->setNative(inputs, kernel->nativeOutput().bytes == y.size() * static_cast<int64_t>(sizeof(float)));
    }
    const Tensor* ins[] = { &x, &w };
    Tensor* outs[] = { &y };
    RunContext ctx;
    kernel->run(ins, outs, ctx);
    for (auto _ : state)
        kernel->run(ins, outs, ctx);
    state.counters["GFLOPs"] = benchmark::Counter(flopsOf(s, batch) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
    state.SetLabel(kernel->backend());
}

void BM_Conv_Opscope(benchmark::State& state) { runOpscope(state, false); }
void BM_Conv_OpscopeNative(benchmark::State& state) { runOpscope(state, true); }

void BM_Conv_OneDnnAlone(benchmark::State& state)
{
    using namespace dnnl;
    using tag = memory::format_tag;
    const ConvShape& s = kShapes[state.range(0)];
    const int batch = static_cast<int>(state.range(1));
    const int o = outSize(s);
    engine& eng = dnnlutil::cpuEngine();
    stream& strm = dnnlutil::threadStream();
    memory::dims src { batch, s.c, s.hw, s.hw }, wei { s.k, s.c, s.kernel, s.kernel }, dst { batch, s.k, o, o };
    auto any = [](const memory::dims& d) { return memory::desc(d, memory::data_type::f32, tag::any); };
    convolution_forward::desc desc(prop_kind::forward_inference, algorithm::convolution_direct, any(src), any(wei),
        any(dst), { s.stride, s.stride }, { s.pad, s.pad }, { s.pad, s.pad });
    convolution_forward::primitive_desc pd(desc, eng);
    memory srcPlain({ src, memory::data_type::f32, tag::nchw }, eng);
    memory weiPlain({ wei, memory::data_type::f32, tag::oihw }, eng);
    Generator gen(1);
    auto fill = [&](memory& m, float scale) {
        float* p = static_cast<float*>(m.get_data_handle());
        const size_t n = m.get_desc().get_size() / sizeof(float);
        for (size_t i = 0; i < n; ++i)
            p[i] = gen.uniform(0, scale);
    };
    fill(srcPlain, 1);
    fill(weiPlain, 0.05f);
    memory srcM(pd.src_desc(), eng), weiM(pd.weights_desc(), eng), dstM(pd.dst_desc(), eng);
    reorder(srcPlain, srcM).execute(strm, srcPlain, srcM);
    reorder(weiPlain, weiM).execute(strm, weiPlain, weiM);
    convolution_forward conv(pd);
    std::unordered_map<int, memory> args { { DNNL_ARG_SRC, srcM }, { DNNL_ARG_WEIGHTS, weiM }, { DNNL_ARG_DST, dstM } };
    conv.execute(strm, args);
    strm.wait();
    for (auto _ : state) {
        conv.execute(strm, args);
        strm.wait();
    }
    state.counters["GFLOPs"] = benchmark::Counter(flopsOf(s, batch) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
    // What the shape is, for the report: channels in→out, kernel, stride, input size.
    state.SetLabel(std::to_string(s.c) + "→" + std::to_string(s.k) + " " + std::to_string(s.kernel) + "×"
        + std::to_string(s.kernel) + " /" + std::to_string(s.stride) + " at " + std::to_string(s.hw) + "×"
        + std::to_string(s.hw));
}

void shapes(benchmark::internal::Benchmark* b)
{
    for (int batch : { 1, 8 })
        for (int i = 0; i < static_cast<int>(std::size(kShapes)); ++i)
            b->Args({ i, batch });
    b->ArgNames({ "shape", "batch" })->Unit(benchmark::kMicrosecond)->MinTime(0.3);
}

BENCHMARK(BM_Conv_Opscope)->Apply(shapes);
BENCHMARK(BM_Conv_OpscopeNative)->Apply(shapes);
BENCHMARK(BM_Conv_OneDnnAlone)->Apply(shapes);

}

BENCHMARK_MAIN();
