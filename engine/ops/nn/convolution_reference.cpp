#include "ops/nn/convolution.h"

#include <Eigen/Core>
#include <algorithm>

namespace opscope {

namespace {

using RowMajorMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

int64_t columnRows(const ConvGeometry& g)
{
    return g.inChannelsPerGroup() * g.kernelH * g.kernelW;
}
int64_t outPositions(const ConvGeometry& g)
{
    return g.outH * g.outW;
}

// Unfolds one image's group of channels into a (columnRows, outPositions) matrix: one row per
// (channel, ki, kj), in the order of the weight's (C/g, kh, kw) axes.
void im2col(const ConvGeometry& g, const float* src, float* columns)
{
    float* row = columns;
    for (int64_t c = 0; c < g.inChannelsPerGroup(); ++c) {
        const float* plane = src + c * g.inH * g.inW;
        for (int64_t ki = 0; ki < g.kernelH; ++ki) {
            for (int64_t kj = 0; kj < g.kernelW; ++kj) {
                for (int64_t oh = 0; oh < g.outH; ++oh) {
                    float* dst = row + oh * g.outW;
                    const int64_t ih = oh * g.strideH - g.padH + ki * g.dilateH;
                    if (ih < 0 || ih >= g.inH) {
                        std::fill(dst, dst + g.outW, 0.0f);
                        continue;
                    }
                    const float* line = plane + ih * g.inW;
                    for (int64_t ow = 0; ow < g.outW; ++ow) {
                        const int64_t iw = ow * g.strideW - g.padW + kj * g.dilateW;
                        dst[ow] = iw >= 0 && iw < g.inW ? line[iw] : 0.0f;
                    }
                }
                row += outPositions(g);
            }
        }
    }
}

// The adjoint of im2col: adds each column element to the input element it was read from (the
// padding's elements are dropped).
void col2imAdd(const ConvGeometry& g, const float* columns, float* dst)
{
    const float* row = columns;
    for (int64_t c = 0; c < g.inChannelsPerGroup(); ++c) {
        float* plane = dst + c * g.inH * g.inW;
        for (int64_t ki = 0; ki < g.kernelH; ++ki) {
            for (int64_t kj = 0; kj < g.kernelW; ++kj) {
                for (int64_t oh = 0; oh < g.outH; ++oh) {
                    const int64_t ih = oh * g.strideH - g.padH + ki * g.dilateH;
                    if (ih < 0 || ih >= g.inH) continue;
                    const float* src = row + oh * g.outW;
                    float* line = plane + ih * g.inW;
                    for (int64_t ow = 0; ow < g.outW; ++ow) {
                        const int64_t iw = ow * g.strideW - g.padW + kj * g.dilateW;
                        if (iw >= 0 && iw < g.inW) line[iw] += src[ow];
                    }
                }
                row += outPositions(g);
            }
        }
    }
}

// MXNet's CPU algorithm: per image and group, unfold the input patches into a column matrix
// (rows: input channel x kernel position, columns: output position), then
// output(group) = weight(group) · columns.
class ConvolutionReference final : public Kernel {
public:
    ConvolutionReference(const ConvolutionParams& p, const Shape& data, const Shape& output)
        : m_g(ConvGeometry::from(p, data, output))
        , m_hasBias(!p.noBias)
    {
        // A 1x1 kernel with stride 1 and no padding reads the input as it is.
        m_direct = m_g.kernelH == 1 && m_g.kernelW == 1 && m_g.strideH == 1 && m_g.strideW == 1 && m_g.padH == 0
            && m_g.padW == 0;
        if (!m_direct) m_columns.resize(static_cast<size_t>(rows() * positions()));
    }

    void run(std::span<const Tensor* const> in, std::span<Tensor* const> out, RunContext&) override
    {
        const float* data = in[0]->data();
        const float* weight = in[1]->data();
        float* output = out[0]->data();
        const int64_t cinG = m_g.inChannelsPerGroup();
        const int64_t coutG = m_g.outChannelsPerGroup();
        const int64_t inPlane = m_g.inH * m_g.inW;
        for (int64_t n = 0; n < m_g.batch; ++n) {
            for (int64_t grp = 0; grp < m_g.groups; ++grp) {
                const float* src = data + (n * m_g.inChannels + grp * cinG) * inPlane;
                const float* columns = src;
                if (!m_direct) {
                    im2col(m_g, src, m_columns.data());
                    columns = m_columns.data();
                }
                Eigen::Map<const RowMajorMatrix> w(weight + grp * coutG * rows(), coutG, rows());
                Eigen::Map<const RowMajorMatrix> cols(columns, rows(), positions());
                Eigen::Map<RowMajorMatrix> dst(
                    output + (n * m_g.outChannels + grp * coutG) * positions(), coutG, positions());
                dst.noalias() = w * cols;
                if (m_hasBias) dst.colwise() += Eigen::Map<const Eigen::VectorXf>(in[2]->data() + grp * coutG, coutG);
            }
        }
    }

private:
    int64_t rows() const { return columnRows(m_g); }
    int64_t positions() const { return outPositions(m_g); }

    ConvGeometry m_g;
    bool m_hasBias;
    bool m_direct = false;
    std::vector<float> m_columns;
};

} // namespace

std::unique_ptr<Kernel> makeConvolutionReference(
    const ConvolutionParams& p, std::span<const Shape> in, std::span<const Shape> out)
{
    return std::make_unique<ConvolutionReference>(p, in[0], out[0]);
}

// Per image and group, with columns = im2col(x) and y = W · columns + b:
//   dW += dy · columnsᵀ,  dx += col2im(Wᵀ · dy),  db += Σ_positions dy.
void backwardConvolutionReference(const BackwardArgs& a)
{
    const auto& p = paramsAs<ConvolutionParams>(a.params);
    Tensor* dx = a.inGrad[0];
    Tensor* dw = a.inGrad[1];
    Tensor* db = !p.noBias && a.inGrad.size() > 2 ? a.inGrad[2] : nullptr;
    for (Tensor* g : { dx, dw, db })
        if (g) g->fill(0);
    if (!a.outGrad[0]) return;

    const ConvGeometry g = ConvGeometry::from(p, a.in[0]->shape(), a.out[0]->shape());
    const int64_t rows = columnRows(g), positions = outPositions(g);
    const int64_t cinG = g.inChannelsPerGroup(), coutG = g.outChannelsPerGroup();
    const int64_t inPlane = g.inH * g.inW;
    std::vector<float> columns(static_cast<size_t>(rows * positions));
    const float* x = a.in[0]->data();
    const float* w = a.in[1]->data();
    const float* dy = a.outGrad[0]->data();
    for (int64_t n = 0; n < g.batch; ++n) {
        for (int64_t grp = 0; grp < g.groups; ++grp) {
            const int64_t inOffset = (n * g.inChannels + grp * cinG) * inPlane;
            const Eigen::Map<const RowMajorMatrix> dyG(
                dy + (n * g.outChannels + grp * coutG) * positions, coutG, positions);
            Eigen::Map<RowMajorMatrix> cols(columns.data(), rows, positions);
            if (dw) {
                im2col(g, x + inOffset, columns.data());
                Eigen::Map<RowMajorMatrix>(dw->data() + grp * coutG * rows, coutG, rows).noalias()
                    += dyG * cols.transpose();
            }
            if (dx) {
                const Eigen::Map<const RowMajorMatrix> wG(w + grp * coutG * rows, coutG, rows);
                cols.noalias() = wG.transpose() * dyG;
                col2imAdd(g, columns.data(), dx->data() + inOffset);
            }
            if (db) Eigen::Map<Eigen::VectorXf>(db->data() + grp * coutG, coutG) += dyG.rowwise().sum();
        }
    }
}

} // namespace opscope
