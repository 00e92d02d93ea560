#include "ops/nn/convolution.h"

#include <Eigen/Core>
#include <algorithm>

namespace opscope {

namespace {

using RowMajorMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

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
                    im2col(src);
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
    int64_t rows() const { return m_g.inChannelsPerGroup() * m_g.kernelH * m_g.kernelW; }
    int64_t positions() const { return m_g.outH * m_g.outW; }

    // One row per (channel, ki, kj), in the order of the weight's (C/g, kh, kw) axes.
    void im2col(const float* src)
    {
        float* row = m_columns.data();
        for (int64_t c = 0; c < m_g.inChannelsPerGroup(); ++c) {
            const float* plane = src + c * m_g.inH * m_g.inW;
            for (int64_t ki = 0; ki < m_g.kernelH; ++ki) {
                for (int64_t kj = 0; kj < m_g.kernelW; ++kj) {
                    for (int64_t oh = 0; oh < m_g.outH; ++oh) {
                        float* dst = row + oh * m_g.outW;
                        const int64_t ih = oh * m_g.strideH - m_g.padH + ki * m_g.dilateH;
                        if (ih < 0 || ih >= m_g.inH) {
                            std::fill(dst, dst + m_g.outW, 0.0f);
                            continue;
                        }
                        const float* line = plane + ih * m_g.inW;
                        for (int64_t ow = 0; ow < m_g.outW; ++ow) {
                            const int64_t iw = ow * m_g.strideW - m_g.padW + kj * m_g.dilateW;
                            dst[ow] = iw >= 0 && iw < m_g.inW ? line[iw] : 0.0f;
                        }
                    }
                    row += positions();
                }
            }
        }
    }

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

} // namespace opscope
