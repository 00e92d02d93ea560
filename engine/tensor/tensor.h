#pragma once

#include "tensor/dtype.h"
#include "tensor/shape.h"
#include "tensor/tensor_view.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace opscope {

class Generator;

/// Dense row-major tensor of up to 6 dimensions with an element type (float32 unless said
/// otherwise). A Tensor is a handle: copies share the same storage (like MXNet's NDArray);
/// reshape() and slicing along the first axis return views of the same storage. Use copy() for an
/// independent tensor. A handle is not synchronised: share one between threads only through a
/// protocol that orders the accesses.
class Tensor {
public:
    /// An undefined tensor (no storage).
    Tensor() = default;
    /// Uninitialised values of the given shape (must be known) and type.
    explicit Tensor(const Shape& shape, DType dtype = DType::Float32);

    static Tensor zeros(const Shape& shape, DType dtype = DType::Float32);
    static Tensor ones(const Shape& shape, DType dtype = DType::Float32);
    static Tensor full(const Shape& shape, float value);
    /// Uniform in [lo, hi) from `gen` (the global generator when null).
    static Tensor uniform(const Shape& shape, float lo, float hi, Generator* gen = nullptr);
    static Tensor normal(const Shape& shape, float mean, float stddev, Generator* gen = nullptr);
    static Tensor fromValues(const Shape& shape, std::span<const float> values);
    /// A tensor of type T (dtypeOf<T>()) holding `values`.
    template <class T> static Tensor fromTyped(const Shape& shape, std::span<const T> values)
    {
        Tensor t(shape, dtypeOf<T>());
        t.checkCount(static_cast<int64_t>(values.size()));
        std::memcpy(t.raw(), values.data(), values.size() * sizeof(T));
        return t;
    }
    static Tensor copyOf(const TensorView& view);

    bool defined() const { return m_storage != nullptr; }
    const Shape& shape() const { return m_shape; }
    DType dtype() const { return m_dtype; }
    int ndim() const { return m_shape.ndim(); }
    int64_t size() const { return m_shape.size(); }
    /// Bytes of this tensor's elements.
    size_t bytes() const { return static_cast<size_t>(size()) * dtypeSize(m_dtype); }
    /// Writable float32 data (handle semantics: constness of the handle does not protect the
    /// values). Throws TypeError, naming the type, for a tensor of another type. Every writable
    /// accessor (data, dataAs, raw, at, values, copyFrom, fill, fillWith) counts as a write for
    /// version().
    float* data() const;
    /// Writable data of type T (checked like data()).
    template <class T> T* dataAs() const
    {
        checkType(dtypeOf<T>());
        return static_cast<T*>(raw());
    }
    /// The elements' bytes, whatever the type.
    void* raw() const;
    /// A number that changes whenever the storage may have been written: it differs from the one
    /// returned before if a writable accessor of this tensor or of any handle sharing its storage
    /// (reshape, slice, operator[]) was called in between. Numbers are never reused, by this
    /// storage or another. view() and copy() only read. A write through a pointer kept from a call
    /// made before the last version() is not seen: take the pointer again to write (kernels do, on
    /// every run). Kernels that keep a converted copy of an input (oneDNN's weights in a blocked
    /// layout) convert again only when the version changed. Thread-safe as the values are: under
    /// the protocol that orders the writes.
    uint64_t version() const;
    float& at(int64_t flatIndex) const { return data()[flatIndex]; }
    std::span<float> values() const { return { data(), static_cast<size_t>(size()) }; }
    std::vector<float> toVector() const;
    TensorView view() const { return { bytesForRead(), m_shape, m_dtype }; }

    /// View with another shape of the same size.
    Tensor reshape(const Shape& shape) const;
    /// View of rows [begin, end) along axis 0.
    Tensor slice(int64_t begin, int64_t end) const;
    /// View of row i along axis 0 (one dimension fewer; a 1-D tensor gives shape (1,)).
    Tensor operator[](int64_t i) const;

    Tensor copy() const;
    /// The same values as another type, converted as NumPy's astype does (see fromDouble).
    Tensor astype(DType dtype) const;
    /// Copies values from a view of the same size and type (shapes may differ).
    void copyFrom(const TensorView& src) const;
    void fill(float value) const;
    /// Every element set to `value` converted to the tensor's type.
    void fillWith(double value) const;

    bool sharesStorageWith(const Tensor& other) const { return m_storage && m_storage == other.m_storage; }
    /// Both view the same storage from the same element: with the same shape and type, they are
    /// the same tensor.
    bool sameStartAs(const Tensor& other) const
    {
        return m_storage && m_storage == other.m_storage && m_offset == other.m_offset;
    }
    /// The same tensor: the same storage, start, shape and type.
    bool sameAs(const Tensor& other) const
    {
        return sameStartAs(other) && m_dtype == other.m_dtype && m_shape == other.m_shape;
    }
    /// Bytes of the underlying buffer (not of this view).
    size_t storageBytes() const;

private:
    void checkType(DType want) const;
    void checkCount(int64_t n) const;
    // The elements' bytes without counting as a write (for what only reads them).
    std::byte* bytesForRead() const;

    struct Storage;
    std::shared_ptr<Storage> m_storage;
    int64_t m_offset = 0; // in elements
    Shape m_shape;
    DType m_dtype = DType::Float32;
};

} // namespace opscope
