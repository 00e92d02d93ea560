#pragma once

#include "gluon/block.h"
#include "tensor/tensor.h"

#include <cstdint>
#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace opscope::debug {

/// Ways to explain a classifier's prediction for one input.
enum class ExplainMethod {
    Saliency, ///< |∂score/∂input|, the largest over the input's channels (Simonyan et al. 2014)
    GradientTimesInput, ///< Σ over channels of ∂score/∂input · input (signed)
    GradCam, ///< ReLU(Σ_c α_c A_c), α_c the mean gradient of channel c of a convolution's output A (Selvaraju et al. 2017)
    Occlusion, ///< score drop when a square patch of the input is covered, averaged per pixel (Zeiler & Fergus 2014)
};
/// "saliency", "gradient-x-input", "gradcam", "occlusion".
const char* methodName(ExplainMethod m);
/// The method of a name methodName gives (also "gradxinput"); UsageError naming the known ones.
ExplainMethod parseMethod(const std::string& name);

struct ExplainOptions {
    ExplainMethod method = ExplainMethod::Saliency;
    int64_t classIndex = -1; ///< the class whose score is explained; -1: the top-scoring one
    /// Grad-CAM: the node whose output is the feature maps A. Empty: the last convolution, or the
    /// activation that alone reads it (rectified maps, as Grad-CAM uses them).
    std::string layer;
    int64_t patch = 0; ///< occlusion: patch side in input pixels; 0: max(1, ⌊H/7⌋)
    int64_t stride = 0; ///< occlusion: step between patches; 0: max(1, ⌊patch/2⌋)
    float fill = 0.0f; ///< occlusion: the value covering the patch
    int64_t batch = 32; ///< occlusion: occluded inputs per forward pass
    int topK = 5; ///< how many top classes Explanation::top lists
    /// Called with (done, total) units of work; returning false cancels (Explanation::cancelled).
    std::function<bool(int64_t, int64_t)> progress;
};

struct Explanation {
    ExplainMethod method = ExplainMethod::Saliency;
    int64_t classIndex = 0; ///< the class explained
    float score = 0; ///< its score (the block's output) for the unchanged input
    std::vector<std::pair<int64_t, float>> top; ///< the highest scores, best first: (class, score)
    /// The explanation on the input's grid: (H, W) for an image input (N=1, C, H, W); for other
    /// inputs (saliency and gradient×input only) the input's shape without its batch axis.
    Tensor heat;
    Tensor raw; ///< Grad-CAM: the map on the layer's own grid (h, w) before upsampling; else empty
    std::string layer; ///< Grad-CAM: the node whose output was used
    bool cancelled = false;
    /// The input explained, where the caller did not give it (Engine::explain: the engine's own);
    /// else empty.
    Tensor input;
};

/// Explains with a model of its own: the inputs are those of a session's runs (labels after the
/// model's own inputs, as the session takes them). Throws as explain() does.
using Explainer = std::function<Explanation(const std::vector<Tensor>& inputs, const ExplainOptions& options)>;

/// Explains `block`'s output for `input` (batch 1) with opscope's autograd (inference mode:
/// BatchNorm uses its running statistics, Dropout is off) and executor. The block's output must be
/// class scores of shape (1, K) or (K). Runs on the calling thread; the block must not be in use
/// elsewhere. Throws UsageError for an input or output it cannot explain (naming the shapes), a
/// class outside [0, K), or a Grad-CAM layer that is not a node of the block's graph or not
/// (1, C, h, w).
Explanation explain(gluon::HybridBlock& block, const Tensor& input, const ExplainOptions& options);

/// The default Grad-CAM layer of a graph: its last Convolution node, or the activation that alone
/// reads it. Empty when it has none.
std::string defaultCamLayer(const Graph& graph);

/// The colour of an explanation's value t = v / max|v| in [-1, 1] as RGB in [0, 1]: positive from dark
/// red through red to yellow, negative blue.
void heatColour(double t, float rgb[3]);
/// The explanation over its input as 8-bit RGB, H × W × 3 row-major: the input (1, C, H, W) as gray
/// (its channels averaged, stretched to [0, 1]), each pixel blended towards heatColour by `opacity`
/// (0-1) times |v| / max|v| of `heat` (H, W). Empty when the shapes do not fit.
std::vector<uint8_t> heatOverlayRgb(const Tensor& input, const Tensor& heat, double opacity);

/// Bilinear resize of a (h, w) map to (H, W) with aligned pixel centres (as image upsampling does).
Tensor resizeBilinear(const Tensor& map, int64_t height, int64_t width);

} // namespace opscope::debug
