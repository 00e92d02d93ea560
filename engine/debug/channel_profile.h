#pragma once

// What a convolution's channels respond to (Distill's "dataset examples"): over a data set, the
// inputs that activate each channel most, with the part of the input that position sees (its
// receptive field), and each channel's mean activation per class.

#include "gluon/block.h"
#include "graph/graph.h"
#include "tensor/tensor.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace opscope::debug {

/// A rectangle of input pixels, bounds inclusive, clipped to the input.
struct PixelRect {
    int64_t top = 0, left = 0, bottom = 0, right = 0;
    friend bool operator==(const PixelRect&, const PixelRect&) = default;
};

struct ChannelExample {
    int64_t sample = 0; ///< row of the data set
    int64_t label = 0;
    float activation = 0; ///< the channel's largest value for this input
    int64_t y = 0, x = 0; ///< where in the channel's map
    PixelRect field; ///< the input pixels that position sees
};

struct ChannelProfile {
    std::vector<ChannelExample> top; ///< the inputs that activate it most, strongest first
    std::vector<double> meanPerClass; ///< the channel's mean activation (over its map) per class
};

struct LayerProfile {
    std::string layer; ///< the node whose output's channels these are
    std::string dataSet; ///< what it was computed on (a name the caller gives)
    int64_t samples = 0; ///< inputs seen
    int64_t classes = 0;
    std::vector<int64_t> countPerClass;
    std::vector<ChannelProfile> channels;
    bool cancelled = false;
};

struct ProfileOptions {
    std::string layer; ///< a node whose first output is (N, C, h, w)
    std::string dataSet;
    int topK = 9;
    int64_t batch = 64;
    /// Called with (done, total) inputs; returning false cancels (LayerProfile::cancelled).
    std::function<bool(int64_t, int64_t)> progress;
};

/// Runs `block` over `data` (N, C, H, W) in batches with an op hook on the layer and profiles each of
/// its channels; `labels` (N) holds class indices. Throws UsageError for a layer the block's graph
/// lacks or whose output is not (N, C, h, w), data the model does not take, or labels that do not
/// match.
LayerProfile profileLayer(gluon::HybridBlock& block, const Tensor& data, const Tensor& labels, const ProfileOptions& options);

/// The input pixels that position (y, x) of `node`'s output sees, following its data input (slot 0)
/// back to the graph's input through convolutions and poolings (kernel, stride, padding, dilation)
/// and operators that keep positions. `inputHeight`/`inputWidth` clip it. Nothing when the path
/// passes an operator that moves positions otherwise (a reshape, a dense layer).
std::optional<PixelRect> receptiveField(
    const Graph& graph, uint32_t node, int64_t y, int64_t x, int64_t inputHeight, int64_t inputWidth);

/// The profile as JSON text and back (the window's cache). fromJson throws FileError on text that is
/// not such a profile.
std::string toJson(const LayerProfile& profile);
LayerProfile layerProfileFromJson(const std::string& text, const std::string& name);

} // namespace opscope::debug
