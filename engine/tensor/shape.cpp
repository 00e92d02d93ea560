#include "tensor/shape.h"

#include "core/checked.h"
#include "core/error.h"

namespace opscope {

Shape::Shape(std::initializer_list<int64_t> dims)
    : Shape(std::span<const int64_t>(dims.begin(), dims.size()))
{
}

Shape::Shape(std::span<const int64_t> dims)
{
    if (dims.size() > kMaxDims)
        throw ShapeError("shape has " + std::to_string(dims.size()) + " dimensions; at most "
            + std::to_string(kMaxDims) + " are supported");
    for (int64_t d : dims)
        m_dims[static_cast<size_t>(m_ndim++)] = d;
}

void Shape::push_back(int64_t d)
{
    m_scalar = false;
    if (m_ndim == kMaxDims)
        throw ShapeError("shape " + str() + " cannot grow beyond " + std::to_string(kMaxDims) + " dimensions");
    m_dims[static_cast<size_t>(m_ndim++)] = d;
}

void Shape::resize(int n, int64_t fill)
{
    if (n < 0 || n > kMaxDims)
        throw ShapeError("shape cannot have " + std::to_string(n) + " dimensions");
    for (int i = m_ndim; i < n; ++i)
        m_dims[static_cast<size_t>(i)] = fill;
    m_ndim = n;
    m_scalar = false;
}

int64_t Shape::size() const
{
    return product(0, m_ndim);
}

int64_t Shape::product(int begin, int end) const
{
    int64_t p = 1;
    for (int i = begin; i < end; ++i) {
        const auto r = checkedMul(p, m_dims[static_cast<size_t>(i)]);
        if (!r) throw ResourceError("shape " + str() + " has more elements than 64-bit sizes can count");
        p = *r;
    }
    return p;
}

bool Shape::determined() const
{
    if (m_ndim == 0) return m_scalar;
    for (int i = 0; i < m_ndim; ++i)
        if (m_dims[static_cast<size_t>(i)] < 0) return false;
    return true;
}

bool Shape::known() const
{
    if (m_ndim == 0)
        return m_scalar;
    for (int i = 0; i < m_ndim; ++i)
        if (m_dims[static_cast<size_t>(i)] <= 0)
            return false;
    return true;
}

std::string Shape::str() const
{
    std::string s = "(";
    for (int i = 0; i < m_ndim; ++i) {
        if (i)
            s += ", ";
        s += std::to_string(m_dims[static_cast<size_t>(i)]);
    }
    if (m_ndim == 1)
        s += ",";
    s += ")";
    return s;
}

std::string shapeToX(const Shape& s)
{
    std::string r;
    for (int i = 0; i < s.ndim(); ++i) {
        if (i)
            r += "x";
        r += std::to_string(s[i]);
    }
    return r;
}

} // namespace opscope
