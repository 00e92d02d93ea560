// Embedding, as MXNet 1.x (src/operator/tensor/indexing_op.cc): output[i..., :] = weight[data[i...], :]
// with weight of shape (input_dim, output_dim) and output of shape data.shape + (output_dim,).
// Indices arrive as floats; like MXNet's clip-mode take, an index is truncated toward zero and
// then clipped into [0, input_dim - 1] (so 12 reads the last row, -3 and NaN read row 0).
// `dtype` and `sparse_grad` are validated and ignored (float32 dense engine, dense gradient).

#include "core/error.h"
#include "ops/register_all.h"
#include "ops/registry.h"

#include <Eigen/Core>

namespace opscope {

namespace {

struct EmbeddingParams : OpParams {
    int64_t inputDim = 0;
    int64_t outputDim = 0;
};

ParamsPtr parseEmbedding(const AttrMap& attrs)
{
    AttrReader r(attrs, "Embedding");
    auto p = std::make_shared<EmbeddingParams>();
    p->inputDim = r.getInt("input_dim");
    if (p->inputDim < 1) r.fail("input_dim", "must be at least 1");
    p->outputDim = r.getInt("output_dim");
    if (p->outputDim < 1) r.fail("output_dim", "must be at least 1");
    (void)r.getEnum(
        "dtype", { "float32", "float64", "float16", "bfloat16", "uint8", "int8", "int32", "int64" }, "float32");
    (void)r.getBool("sparse_grad", false);
    return p;
}

void inferEmbedding(const OpParams& op, std::vector<Shape>& in, std::vector<Shape>& out)
{
    const auto& p = paramsAs<EmbeddingParams>(op);
    assignShape(in[1], Shape { p.inputDim, p.outputDim }, "input 'weight'");
    if (in[0].ndim() == 0) return;
    if (in[0].ndim() >= Shape::kMaxDims)
        throw ShapeError("input 'data': shape " + in[0].str() + " has " + std::to_string(in[0].ndim())
            + " dimensions; the output would have one more than the " + std::to_string(Shape::kMaxDims) + " supported");
    Shape o = in[0];
    o.push_back(p.outputDim);
    out[0] = o;
}

// The weight row an index reads.
int64_t embeddingRow(float index, int64_t inputDim)
{
    if (!(index > 0.0f)) // negative, zero or NaN
        return 0;
    if (index >= static_cast<float>(inputDim)) return inputDim - 1;
    return static_cast<int64_t>(index); // truncates toward zero
}

class EmbeddingReference final : public Kernel {
public:
    EmbeddingReference(const EmbeddingParams& p, const Shape& data)
        : m_p(p)
        , m_count(data.size())
    {
    }

    void run(std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) override
    {
        using RowMap = Eigen::Map<Eigen::ArrayXf>;
        using ConstRowMap = Eigen::Map<const Eigen::ArrayXf>;
        const float* indices = in[0]->data();
        const float* weight = in[1]->data();
        float* y = out[0]->data();
        const int64_t width = m_p.outputDim;
        for (int64_t i = 0; i < m_count; ++i)
            RowMap(y + i * width, width) = ConstRowMap(weight + embeddingRow(indices[i], m_p.inputDim) * width, width);
    }

private:
    EmbeddingParams m_p;
    int64_t m_count;
};

// The weight's gradient adds each output-gradient row into the row its index read (clipped
// indices as in the forward, like MXNet's AddTakeGrad). The indices get none: MXNet refuses to
// compute one; zeros here when asked for.
void backwardEmbedding(const BackwardArgs& a)
{
    const auto& p = paramsAs<EmbeddingParams>(a.params);
    if (a.inGrad[0]) a.inGrad[0]->fill(0);
    Tensor* gw = a.inGrad[1];
    if (!gw) return;
    gw->fill(0);
    if (!a.outGrad[0]) return;
    const float* indices = a.in[0]->data();
    const float* dy = a.outGrad[0]->data();
    const int64_t width = p.outputDim;
    for (int64_t i = 0, count = a.in[0]->size(); i < count; ++i)
        Eigen::Map<Eigen::ArrayXf>(gw->data() + embeddingRow(indices[i], p.inputDim) * width, width)
            += Eigen::Map<const Eigen::ArrayXf>(dy + i * width, width);
}

} // namespace

void registerEmbedding(OpRegistry& r)
{
    OpDef d;
    d.name = "Embedding";
    d.parse = parseEmbedding;
    d.numInputs = [](const OpParams&) { return 2; };
    d.numOutputs = [](const OpParams&) { return 1; };
    d.nameInputs({ "data", "weight" });
    // MXNet registers no output names for Embedding: its output slot is `0`.
    d.inferShape = inferEmbedding;
    d.reference = [](const OpParams& p, std::span<const Shape> in, std::span<const Shape>) -> std::unique_ptr<Kernel> {
        return std::make_unique<EmbeddingReference>(paramsAs<EmbeddingParams>(p), in[0]);
    };
    d.backward = backwardEmbedding;
    r.add(std::move(d), { "_npx_embedding", "_sparse_Embedding" });
}

} // namespace opscope
