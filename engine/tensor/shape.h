#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>

namespace opscope {

/// Tensor shape of up to kMaxDims dimensions, stored inline (no heap). During MXNet shape inference
/// a dimension of 0 means "unknown", as in MXNet 1.x; ndim() == 0 means the whole shape is unknown,
/// except for the shape of a scalar (Shape::scalar(): no dimensions, one element), which ONNX graphs
/// use. ONNX operators read every dimension literally (0: an empty tensor).
class Shape {
public:
    static constexpr int kMaxDims = 6;

    Shape() = default;
    /// The shape of a rank-0 tensor: known, no dimensions, size 1, "()".
    static Shape scalar()
    {
        Shape s;
        s.m_scalar = true;
        return s;
    }
    bool isScalar() const { return m_scalar; }
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
    /// True for a scalar, or when the shape has at least one dimension and none is unknown (0).
    bool known() const;
    /// True for a scalar, or when the shape has at least one dimension and none is negative: known()
    /// or an empty tensor (a 0 dimension read literally).
    bool determined() const;
    /// Product of dims [begin, end).
    int64_t product(int begin, int end) const;

    /// Python tuple spelling used by MXNet: "(2, 3)", "(5,)", "()".
    std::string str() const;

    /// Inline and a loop (not std::equal, which calls memcmp for a few dimensions): the executor
    /// compares each variable's shape at every run.
    friend bool operator==(const Shape& a, const Shape& b)
    {
        if (a.m_ndim != b.m_ndim || a.m_scalar != b.m_scalar) return false;
        for (size_t i = 0; i < static_cast<size_t>(a.m_ndim); ++i)
            if (a.m_dims[i] != b.m_dims[i]) return false;
        return true;
    }
    friend bool operator!=(const Shape& a, const Shape& b) { return !(a == b); }

private:
    std::array<int64_t, kMaxDims> m_dims {};
    int m_ndim = 0;
    bool m_scalar = false;
};

/// "1x1x28x28" spelling used on command lines and in messages about inputs.
std::string shapeToX(const Shape& s);

} // namespace opscope
