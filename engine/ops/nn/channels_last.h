#pragma once

// Private to the convolution's oneDNN kernel: layout changes between MXNet's channels-first tensors
// and the channels-last layout oneDNN's fastest convolutions use. oneDNN 2.6's own reorder for
// this transposition (jit:uni) reaches only ~5 GB/s here; these run 2-3x faster.

#include <cstdint>

namespace opscope {

/// dst (batch, positions, channels) = src (batch, channels, positions): NC(H)W -> N(H)WC.
void toChannelsLast(const float* src, float* dst, int64_t batch, int64_t channels, int64_t positions);
/// The inverse: N(H)WC -> NC(H)W.
void toChannelsFirst(const float* src, float* dst, int64_t batch, int64_t channels, int64_t positions);

} // namespace opscope
