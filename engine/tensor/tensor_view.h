#pragma once

#include "tensor/shape.h"

#include <span>

namespace opscope {

/// Read-only view of a dense row-major float32 tensor: a pointer and a shape. This is what hooks
/// and observers receive; it is valid only for the duration of the call that hands it out.
/// Copy the values (Tensor::copyOf) to keep them.
class TensorView {
public:
    TensorView() = default;
    TensorView(const float* data, const Shape& shape)
        : m_data(data)
        , m_shape(shape)
    {
    }

    const float* data() const { return m_data; }
    const Shape& shape() const { return m_shape; }
    int ndim() const { return m_shape.ndim(); }
    int64_t size() const { return m_shape.size(); }
    std::span<const float> values() const { return { m_data, static_cast<size_t>(m_shape.size()) }; }
    float operator[](int64_t i) const { return m_data[i]; }

private:
    const float* m_data = nullptr;
    Shape m_shape;
};

} // namespace opscope
