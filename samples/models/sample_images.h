#pragma once

#include <array>
#include <cstdint>

namespace opscope::samples {

/// Default inputs of the samples trained on real data: 28×28 gray levels, row-major, 0 = background.
extern const std::array<uint8_t, 784> kMnistSeven; ///< a real MNIST 7 (lenet's input)
extern const std::array<uint8_t, 784> kFashionAnkleBoot; ///< a Fashion-MNIST ankle boot (fashion's input)

} // namespace opscope::samples
