#include "tensor/tensor.h"

#include "core/error.h"
#include "tensor/allocator.h"
#include "tensor/memory_limit.h"
#include "tensor/random.h"

#include <algorithm>
#include <cstring>

namespace opscope {

struct Tensor::Storage {
    explicit Storage(size_t n)
        : bytes(n * sizeof(float))
        , data(static_cast<float*>(detail::allocateBuffer(bytes)))
    {
    }
    ~Storage() { detail::freeBuffer(data, bytes); }
    Storage(const Storage&) = delete;
    Storage& operator=(const Storage&) = delete;

    size_t bytes;
    float* data;
};

Tensor::Tensor(const Shape& shape)
    : m_shape(shape)
{
    if (!shape.known() && !(shape.ndim() > 0 && shape.size() == 0))
        throw ShapeError("cannot allocate a tensor of unknown shape " + shape.str());
    for (int64_t d : shape.dims())
        if (d < 0)
            throw ShapeError("cannot allocate a tensor of negative shape " + shape.str());
    checkTensorFits(shape, "tensor");
    m_storage = std::make_shared<Storage>(static_cast<size_t>(shape.size()));
}

float* Tensor::data() const
{
    return m_storage ? m_storage->data + m_offset : nullptr;
}

size_t Tensor::storageBytes() const
{
    return m_storage ? m_storage->bytes : 0;
}

Tensor Tensor::zeros(const Shape& shape)
{
    return full(shape, 0.0f);
}

Tensor Tensor::ones(const Shape& shape)
{
    return full(shape, 1.0f);
}

Tensor Tensor::full(const Shape& shape, float value)
{
    Tensor t(shape);
    t.fill(value);
    return t;
}

Tensor Tensor::uniform(const Shape& shape, float lo, float hi, Generator* gen)
{
    Generator& g = gen ? *gen : globalGenerator();
    Tensor t(shape);
    for (float& v : t.values())
        v = g.uniform(lo, hi);
    return t;
}

Tensor Tensor::normal(const Shape& shape, float mean, float stddev, Generator* gen)
{
    Generator& g = gen ? *gen : globalGenerator();
    Tensor t(shape);
    for (float& v : t.values())
        v = g.normal(mean, stddev);
    return t;
}

Tensor Tensor::fromValues(const Shape& shape, std::span<const float> values)
{
    if (static_cast<int64_t>(values.size()) != shape.size())
        throw ShapeError("shape " + shape.str() + " holds " + std::to_string(shape.size()) + " values, got "
            + std::to_string(values.size()));
    Tensor t(shape);
    std::copy(values.begin(), values.end(), t.data());
    return t;
}

Tensor Tensor::copyOf(const TensorView& view)
{
    Tensor t(view.shape());
    t.copyFrom(view);
    return t;
}

std::vector<float> Tensor::toVector() const
{
    auto v = values();
    return { v.begin(), v.end() };
}

Tensor Tensor::reshape(const Shape& shape) const
{
    if (shape.size() != size())
        throw ShapeError("cannot reshape " + m_shape.str() + " (" + std::to_string(size()) + " values) to "
            + shape.str() + " (" + std::to_string(shape.size()) + " values)");
    Tensor t = *this;
    t.m_shape = shape;
    return t;
}

Tensor Tensor::slice(int64_t begin, int64_t end) const
{
    if (ndim() == 0 || begin < 0 || end < begin || end > m_shape[0])
        throw ShapeError("slice [" + std::to_string(begin) + ", " + std::to_string(end) + ") out of range for shape "
            + m_shape.str());
    Tensor t = *this;
    const int64_t row = m_shape.product(1, ndim());
    t.m_offset += begin * row;
    t.m_shape[0] = end - begin;
    return t;
}

Tensor Tensor::operator[](int64_t i) const
{
    Tensor t = slice(i, i + 1);
    if (ndim() > 1) {
        Shape s(m_shape.dims().subspan(1));
        t.m_shape = s;
    }
    return t;
}

Tensor Tensor::copy() const
{
    Tensor t(m_shape);
    std::memcpy(t.data(), data(), static_cast<size_t>(size()) * sizeof(float));
    return t;
}

void Tensor::copyFrom(const TensorView& src) const
{
    if (src.size() != size())
        throw ShapeError("cannot copy " + src.shape().str() + " into " + m_shape.str());
    if (size())
        std::memmove(data(), src.data(), static_cast<size_t>(size()) * sizeof(float));
}

void Tensor::fill(float value) const
{
    std::fill_n(data(), size(), value);
}

} // namespace opscope
