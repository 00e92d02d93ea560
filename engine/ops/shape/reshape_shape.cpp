#include "ops/shape/reshape_shape.h"

#include "core/error.h"
#include "ops/attrs.h"

#include <algorithm>

namespace opscope::shapeops {

std::optional<std::string> checkReshapeSpec(const std::vector<int64_t>& spec, bool reverse)
{
    std::vector<int64_t> v = spec;
    if (reverse) std::reverse(v.begin(), v.end());
    int inferred = 0;
    for (size_t i = 0; i < v.size(); ++i) {
        const int64_t d = v[i];
        if (d < -4) return "special values are 0, -1, -2, -3 and -4; got " + std::to_string(d);
        if (d == -1 && ++inferred > 1) return "at most one dimension can be -1 (inferred)";
        if (d == -4) {
            if (i + 2 >= v.size()) return "-4 must be followed by the two dimensions to split into";
            const int64_t d1 = v[i + 1], d2 = v[i + 2];
            if (d1 == -1 && d2 == -1) return "the two dimensions after -4 cannot both be -1";
            if ((d1 <= 0 && d1 != -1) || (d2 <= 0 && d2 != -1))
                return "the two dimensions after -4 must be positive or -1";
            i += 2;
        }
    }
    return std::nullopt;
}

namespace {
[[noreturn]] void reshapeError(
    const std::vector<int64_t>& spec, const Shape& data, bool reverse, const std::string& why)
{
    throw ShapeError("input 'data': cannot reshape " + data.str() + " with shape=" + tupleAttr(spec)
        + (reverse ? ", reverse=True" : "") + ": " + why);
}
} // namespace

Shape inferReshapeShape(const std::vector<int64_t>& spec, const Shape& data, bool reverse)
{
    // As in MXNet, unknown dims are -1 while the rule runs.
    std::vector<int64_t> src;
    for (int64_t d : data.dims())
        src.push_back(d == 0 ? -1 : d);
    std::vector<int64_t> param = spec;
    if (reverse) {
        std::reverse(src.begin(), src.end());
        std::reverse(param.begin(), param.end());
    }
    auto fail = [&](const std::string& why) { reshapeError(spec, data, reverse, why); };

    std::vector<int64_t> tmp;
    size_t srcIdx = 0;
    // MXNet records the -1's index in `shape`; its position in the result is meant (they differ
    // once -2 or -4 came before it, where MXNet writes the wrong dim).
    int inferredAt = -1;
    for (size_t i = 0; i < param.size(); ++i) {
        const int64_t d = param[i];
        if (d == 0) {
            if (srcIdx >= src.size())
                fail("0 copies input dimension " + std::to_string(srcIdx) + ", which does not exist");
            tmp.push_back(src[srcIdx++]);
        } else if (d == -1) {
            inferredAt = static_cast<int>(tmp.size());
            tmp.push_back(1);
            ++srcIdx;
        } else if (d == -2) {
            while (srcIdx < src.size())
                tmp.push_back(src[srcIdx++]);
        } else if (d == -3) {
            if (srcIdx + 1 >= src.size())
                fail("-3 merges input dimensions " + std::to_string(srcIdx) + " and " + std::to_string(srcIdx + 1)
                    + ", which do not both exist");
            const int64_t d1 = src[srcIdx++];
            const int64_t d2 = src[srcIdx++];
            tmp.push_back(d1 < 0 || d2 < 0 ? -1 : d1 * d2);
        } else if (d == -4) {
            if (srcIdx >= src.size())
                fail("-4 splits input dimension " + std::to_string(srcIdx) + ", which does not exist");
            const int64_t d0 = src[srcIdx++];
            int64_t d1 = param[++i];
            int64_t d2 = param[++i];
            if (d1 == -1 && d0 >= 0) d1 = d0 / d2;
            if (d2 == -1 && d0 >= 0) d2 = d0 / d1;
            if (d0 >= 0 && d1 * d2 != d0)
                fail("split dims " + std::to_string(param[i - 1]) + ", " + std::to_string(param[i])
                    + " do not divide original dim " + std::to_string(d0));
            tmp.push_back(d1);
            tmp.push_back(d2);
        } else {
            tmp.push_back(d);
            ++srcIdx;
        }
    }
    if (inferredAt >= 0) {
        if (data.known()) {
            int64_t rest = 1;
            for (int64_t x : tmp)
                rest *= x;
            if (data.size() % rest != 0)
                fail("the other dimensions hold " + std::to_string(rest) + " values, which do not divide the "
                    + std::to_string(data.size()) + " of the input");
            tmp[static_cast<size_t>(inferredAt)] = data.size() / rest;
        } else {
            tmp[static_cast<size_t>(inferredAt)] = -1;
        }
    }
    if (reverse) std::reverse(tmp.begin(), tmp.end());
    if (tmp.size() > static_cast<size_t>(Shape::kMaxDims))
        fail("the result has " + std::to_string(tmp.size()) + " dimensions; at most " + std::to_string(Shape::kMaxDims)
            + " are supported");
    Shape out;
    for (int64_t d : tmp)
        out.push_back(d < 0 ? 0 : d);
    return out;
}

} // namespace opscope::shapeops
