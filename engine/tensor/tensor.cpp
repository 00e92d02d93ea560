#include "tensor/tensor.h"

#include "core/error.h"
#include "tensor/allocator.h"
#include "tensor/memory_limit.h"
#include "tensor/random.h"

#include <algorithm>
#include <atomic>
#include <cstring>

namespace opscope {

namespace {
    [[noreturn]] void wrongType(DType have, DType want)
    {
        throw TypeError(std::string("tensor of type ") + dtypeName(have) + " where " + dtypeName(want) + " was expected");
    }
}

void TensorView::checkType(DType want) const
{
    if (m_dtype != want) wrongType(m_dtype, want);
}

const float* TensorView::data() const
{
    checkType(DType::Float32);
    return static_cast<const float*>(m_data);
}

double TensorView::valueAt(int64_t i) const
{
    return dispatchType(m_dtype, [&](auto tag) {
        using T = decltype(tag);
        return toDouble(static_cast<const T*>(m_data)[i]);
    });
}

struct Tensor::Storage {
    explicit Storage(size_t n)
        : bytes(n)
        , data(static_cast<std::byte*>(detail::allocateBuffer(bytes)))
    {
    }
    ~Storage() { detail::freeBuffer(data, bytes); }
    Storage(const Storage&) = delete;
    Storage& operator=(const Storage&) = delete;

    size_t bytes;
    std::byte* data;
    // 2 * version + 1 while a write may have happened since the version was last read. Writers
    // only set the low bit (a load, then an atomic or only when it is clear); readers of the
    // version turn a set bit into a fresh number.
    std::atomic<uint64_t> state { 1 };

    void markWritten()
    {
        if ((state.load(std::memory_order_relaxed) & 1u) == 0) state.fetch_or(1u, std::memory_order_relaxed);
    }
};

namespace {
std::atomic<uint64_t> nextVersion { 1 }; // shared by every storage: a number is never reused
}

Tensor::Tensor(const Shape& shape, DType dtype)
    : m_shape(shape)
    , m_dtype(dtype)
{
    if (!shape.determined())
        throw ShapeError("cannot allocate a tensor of unknown shape " + shape.str());
    for (int64_t d : shape.dims())
        if (d < 0)
            throw ShapeError("cannot allocate a tensor of negative shape " + shape.str());
    checkTensorFits(shape, "tensor", static_cast<int64_t>(dtypeSize(dtype)));
    m_storage = std::make_shared<Storage>(static_cast<size_t>(shape.size()) * dtypeSize(dtype));
}

void Tensor::checkType(DType want) const
{
    if (m_dtype != want) wrongType(m_dtype, want);
}

void Tensor::checkCount(int64_t n) const
{
    if (n != size())
        throw ShapeError("shape " + m_shape.str() + " holds " + std::to_string(size()) + " values, got " + std::to_string(n));
}

std::byte* Tensor::bytesForRead() const
{
    return m_storage ? m_storage->data + m_offset * static_cast<int64_t>(dtypeSize(m_dtype)) : nullptr;
}

void* Tensor::raw() const
{
    if (!m_storage) return nullptr;
    m_storage->markWritten();
    return bytesForRead();
}

uint64_t Tensor::version() const
{
    if (!m_storage) return 0;
    std::atomic<uint64_t>& state = m_storage->state;
    uint64_t s = state.load(std::memory_order_acquire);
    while ((s & 1u) != 0) {
        const uint64_t fresh = nextVersion.fetch_add(1, std::memory_order_relaxed) << 1;
        if (state.compare_exchange_weak(s, fresh, std::memory_order_acq_rel, std::memory_order_acquire)) return fresh >> 1;
        // another reader (or a writer) changed it meanwhile: look again
    }
    return s >> 1;
}

float* Tensor::data() const
{
    if (!m_storage) return nullptr;
    checkType(DType::Float32);
    return static_cast<float*>(raw());
}

size_t Tensor::storageBytes() const
{
    return m_storage ? m_storage->bytes : 0;
}

Tensor Tensor::zeros(const Shape& shape, DType dtype)
{
    Tensor t(shape, dtype);
    std::memset(t.raw(), 0, t.bytes()); // all-zero bytes are 0 in every type
    return t;
}

Tensor Tensor::ones(const Shape& shape, DType dtype)
{
    Tensor t(shape, dtype);
    t.fillWith(1.0);
    return t;
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
    Tensor t(shape);
    t.checkCount(static_cast<int64_t>(values.size()));
    std::copy(values.begin(), values.end(), t.data());
    return t;
}

Tensor Tensor::copyOf(const TensorView& view)
{
    Tensor t(view.shape(), view.dtype());
    t.copyFrom(view);
    return t;
}

std::vector<float> Tensor::toVector() const
{
    const auto v = view().values();
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
    Tensor t(m_shape, m_dtype);
    if (bytes()) std::memcpy(t.raw(), bytesForRead(), bytes());
    return t;
}

Tensor Tensor::astype(DType dtype) const
{
    if (dtype == m_dtype) return copy();
    Tensor t(m_shape, dtype);
    const int64_t n = size();
    dispatchType(m_dtype, [&](auto from) {
        using S = decltype(from);
        const S* src = reinterpret_cast<const S*>(bytesForRead());
        dispatchType(dtype, [&](auto to) {
            using D = decltype(to);
            D* dst = static_cast<D*>(t.raw());
            for (int64_t i = 0; i < n; ++i)
                dst[i] = fromDouble<D>(toDouble(src[i]));
        });
    });
    return t;
}

void Tensor::copyFrom(const TensorView& src) const
{
    if (src.size() != size())
        throw ShapeError("cannot copy " + src.shape().str() + " into " + m_shape.str());
    if (src.dtype() != m_dtype) wrongType(src.dtype(), m_dtype);
    if (size()) std::memmove(raw(), src.raw(), bytes());
}

void Tensor::fill(float value) const
{
    std::fill_n(data(), size(), value);
}

void Tensor::fillWith(double value) const
{
    const int64_t n = size();
    dispatchType(m_dtype, [&](auto tag) {
        using T = decltype(tag);
        const T v = fromDouble<T>(value);
        T* p = static_cast<T*>(raw());
        for (int64_t i = 0; i < n; ++i)
            p[i] = v;
    });
}

} // namespace opscope
