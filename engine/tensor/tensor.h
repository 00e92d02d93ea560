#pragma once

#include "tensor/shape.h"
#include "tensor/tensor_view.h"

#include <memory>
#include <span>
#include <vector>

namespace opscope {

class Generator;

/// Dense row-major float32 tensor of up to 6 dimensions. A Tensor is a handle: copies share the
/// same storage (like MXNet's NDArray); reshape() and slicing along the first axis return views of
/// the same storage. Use copy() for an independent tensor. A handle is not synchronised: share one
/// between threads only through a protocol that orders the accesses.
class Tensor {
public:
    /// An undefined tensor (no storage).
    Tensor() = default;
    /// Uninitialised values of the given shape (must be known).
    explicit Tensor(const Shape& shape);

    static Tensor zeros(const Shape& shape);
    static Tensor ones(const Shape& shape);
    static Tensor full(const Shape& shape, float value);
    /// Uniform in [lo, hi) from `gen` (the global generator when null).
    static Tensor uniform(const Shape& shape, float lo, float hi, Generator* gen = nullptr);
    static Tensor normal(const Shape& shape, float mean, float stddev, Generator* gen = nullptr);
    static Tensor fromValues(const Shape& shape, std::span<const float> values);
    static Tensor copyOf(const TensorView& view);

    bool defined() const { return m_storage != nullptr; }
    const Shape& shape() const { return m_shape; }
    int ndim() const { return m_shape.ndim(); }
    int64_t size() const { return m_shape.size(); }
    /// Writable data (handle semantics: constness of the handle does not protect the values).
    float* data() const;
    float& at(int64_t flatIndex) const { return data()[flatIndex]; }
    std::span<float> values() const { return { data(), static_cast<size_t>(size()) }; }
    std::vector<float> toVector() const;
    TensorView view() const { return { data(), m_shape }; }

    /// View with another shape of the same size.
    Tensor reshape(const Shape& shape) const;
    /// View of rows [begin, end) along axis 0.
    Tensor slice(int64_t begin, int64_t end) const;
    /// View of row i along axis 0 (one dimension fewer; a 1-D tensor gives shape (1,)).
    Tensor operator[](int64_t i) const;

    Tensor copy() const;
    /// Copies values from a view of the same size (shapes may differ).
    void copyFrom(const TensorView& src) const;
    void fill(float value) const;

    bool sharesStorageWith(const Tensor& other) const { return m_storage && m_storage == other.m_storage; }
    /// Bytes of the underlying buffer (not of this view).
    size_t storageBytes() const;

private:
    struct Storage;
    std::shared_ptr<Storage> m_storage;
    int64_t m_offset = 0;
    Shape m_shape;
};

} // namespace opscope
