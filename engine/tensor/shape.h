#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>

namespace opscope {

/// Tensor shape of up to kMaxDims dimensions, stored inline (no heap). A dimension of 0 means
/// "unknown" during shape inference, as in MXNet 1.x; ndim() == 0 means the whole shape is unknown.
class Shape {
public:
    static constexpr int kMaxDims = 6;

    Shape() = default;
    Shape(std::initializer_list<int64_t> dims);
    explicit Shape(std::span<const int64_t> dims);

    int ndim() const { return m_ndim; }
    int64_t operator[](int i) const { return m_dims[static_cast<size_t>(i)]; }
    int64_t& operator[](int i) { return m_dims[static_cast<size_t>(i)]; }
    /// Dimension with Python-style negative index (-1 is the last).
    int64_t dim(int i) const { return m_dims[static_cast<size_t>(i < 0 ? i + m_ndim : i)]; }
    std::span<const int64_t> dims() const { return { m_dims.data(), static_cast<size_t>(m_ndim) }; }

    void push_back(int64_t d);
    void resize(int n, int64_t fill = 0);

    /// Product of all dimensions (1 for ndim 0). Throws ResourceError when it overflows int64.
    int64_t size() const;
    /// True when the shape has at least one dimension and none is unknown.
    bool known() const;
    /// Product of dims [begin, end).
    int64_t product(int begin, int end) const;

    /// Python tuple spelling used by MXNet: "(2, 3)", "(5,)", "()".
    std::string str() const;

    friend bool operator==(const Shape& a, const Shape& b);
    friend bool operator!=(const Shape& a, const Shape& b) { return !(a == b); }

private:
    std::array<int64_t, kMaxDims> m_dims {};
    int m_ndim = 0;
};

/// "1x1x28x28" spelling used on command lines and in messages about inputs.
std::string shapeToX(const Shape& s);

} // namespace opscope
