#pragma once

#include "tensor/dtype.h"
#include "tensor/shape.h"

#include <span>

namespace opscope {

/// Read-only view of a dense row-major tensor: a pointer, a shape and an element type. This is what
/// hooks and observers receive; it is valid only for the duration of the call that hands it out.
/// Copy the values (Tensor::copyOf) to keep them.
class TensorView {
public:
    TensorView() = default;
    TensorView(const float* data, const Shape& shape)
        : m_data(data)
        , m_shape(shape)
    {
    }
    TensorView(const void* data, const Shape& shape, DType dtype)
        : m_data(data)
        , m_shape(shape)
        , m_dtype(dtype)
    {
    }

    DType dtype() const { return m_dtype; }
    /// The elements of a float32 view; throws TypeError naming the type for any other.
    const float* data() const;
    /// The elements of a view of type T (checked like data()).
    template <class T> const T* dataAs() const
    {
        checkType(dtypeOf<T>());
        return static_cast<const T*>(m_data);
    }
    const void* raw() const { return m_data; }
    const Shape& shape() const { return m_shape; }
    int ndim() const { return m_shape.ndim(); }
    int64_t size() const { return m_shape.size(); }
    size_t bytes() const { return static_cast<size_t>(size()) * dtypeSize(m_dtype); }
    std::span<const float> values() const { return { data(), static_cast<size_t>(m_shape.size()) }; }
    float operator[](int64_t i) const { return data()[i]; }
    /// Element i of any type, as double.
    double valueAt(int64_t i) const;

private:
    void checkType(DType want) const;

    const void* m_data = nullptr;
    Shape m_shape;
    DType m_dtype = DType::Float32;
};

} // namespace opscope
