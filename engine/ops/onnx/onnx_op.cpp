#include "ops/onnx/onnx_op.h"

#include "ops/registry.h"

#include <algorithm>

namespace opscope::onnx_ops {

std::string registryName(std::string_view opType)
{
    return std::string(kPrefix) + std::string(opType);
}

int OnnxParams::inputIndex(int slot) const
{
    if (slots.empty()) return slot >= 0 && slot < numInputs ? slot : -1;
    const auto it = std::find(slots.begin(), slots.end(), slot);
    return it == slots.end() ? -1 : static_cast<int>(it - slots.begin());
}

OnnxAttrs::OnnxAttrs(const AttrMap& attrs, std::string_view opType)
    : m_attrs(attrs)
    , m_reader(attrs, opType)
    , m_op(opType)
{
}

void OnnxAttrs::fillBase(OnnxParams& p, int minInputs, int maxInputs, int maxOutputs) const
{
    p.opset = static_cast<int>(getInt("__opset__", 0));
    p.numInputs = static_cast<int>(getInt("__ninputs__", minInputs));
    p.numOutputs = static_cast<int>(getInt("__noutputs__", 1));
    if (p.numInputs < minInputs || p.numInputs > maxInputs)
        fail("__ninputs__",
            "takes " + std::to_string(minInputs)
                + (maxInputs == minInputs ? "" : " to " + std::to_string(maxInputs)) + " inputs");
    if (p.numOutputs < 1 || p.numOutputs > maxOutputs)
        fail("__noutputs__", "has at most " + std::to_string(maxOutputs) + " outputs");
    if (has("__inputs__")) {
        for (int64_t s : getInts("__inputs__", {}))
            p.slots.push_back(static_cast<int>(s));
        if (static_cast<int>(p.slots.size()) != p.numInputs || !std::is_sorted(p.slots.begin(), p.slots.end())
            || (!p.slots.empty() && (p.slots.front() < 0 || p.slots.back() >= maxInputs)))
            fail("__inputs__", "does not list the node's inputs");
    }
}

int64_t OnnxAttrs::getInt(std::string_view key) const
{
    return m_reader.getInt(key);
}

int64_t OnnxAttrs::getInt(std::string_view key, int64_t fallback) const
{
    return m_reader.getInt(key, fallback);
}

double OnnxAttrs::getFloat(std::string_view key, double fallback) const
{
    return m_reader.getFloat(key, fallback);
}

std::string OnnxAttrs::getString(std::string_view key, std::string_view fallback) const
{
    return m_reader.getString(key, fallback);
}

std::vector<int64_t> OnnxAttrs::getInts(std::string_view key, const std::vector<int64_t>& fallback) const
{
    const std::string* v = m_reader.raw(key);
    if (!v) return fallback;
    try {
        return parseTupleAttr(*v);
    } catch (const std::exception& e) {
        fail(key, e.what());
    }
}

std::vector<double> OnnxAttrs::getFloats(std::string_view key, const std::vector<double>& fallback) const
{
    const std::string* v = m_reader.raw(key);
    if (!v) return fallback;
    std::string s = *v;
    for (char& c : s)
        if (c == '[' || c == ']' || c == '(' || c == ')' || c == ',') c = ' ';
    std::vector<double> out;
    size_t at = 0;
    while (true) {
        at = s.find_first_not_of(' ', at);
        if (at == std::string::npos) break;
        const size_t end = s.find(' ', at);
        try {
            out.push_back(parseFloatAttr(s.substr(at, end == std::string::npos ? std::string::npos : end - at)));
        } catch (const std::exception& e) {
            fail(key, e.what());
        }
        if (end == std::string::npos) break;
        at = end;
    }
    return out;
}

std::optional<std::vector<int64_t>> OnnxAttrs::inputInts(int slot) const
{
    const std::string key = "__in" + std::to_string(slot) + "__";
    if (!has(key)) return std::nullopt;
    return getInts(key, {});
}

std::optional<std::vector<double>> OnnxAttrs::inputFloats(int slot) const
{
    const std::string key = "__in" + std::to_string(slot) + "__";
    if (!has(key)) return std::nullopt;
    return getFloats(key, {});
}

std::vector<int64_t> OnnxAttrs::requireInputInts(int slot, std::string_view what) const
{
    if (auto v = inputInts(slot)) return *v;
    throw AttributeError("operator " + m_op + ": input " + std::to_string(slot) + " ('" + std::string(what)
        + "') must be known before the run (a constant, or computed from shapes alone); here it is computed from "
          "the data");
}

OpDef onnxOp(std::string_view opType)
{
    OpDef def;
    def.name = registryName(opType);
    def.zeroDimsAreEmpty = true;
    def.numInputs = [](const OpParams& p) { return paramsAs<OnnxParams>(p).numInputs; };
    def.numOutputs = [](const OpParams& p) { return paramsAs<OnnxParams>(p).numOutputs; };
    def.inputNames = [](const OpParams& p) {
        const auto& o = paramsAs<OnnxParams>(p);
        std::vector<std::string> names;
        for (int k = 0; k < o.numInputs; ++k)
            names.push_back("input" + std::to_string(o.slots.empty() ? k : o.slots[static_cast<size_t>(k)]));
        return names;
    };
    def.outputNames = [](const OpParams& p) {
        std::vector<std::string> names;
        for (int k = 0; k < paramsAs<OnnxParams>(p).numOutputs; ++k)
            names.push_back("output" + std::to_string(k));
        return names;
    };
    return def;
}

void addOnnxOp(OpRegistry& r, OpDef def)
{
    r.add(std::move(def));
}

void requireType(DType t, std::span<const DType> allowed, std::string_view opType, int slot)
{
    if (std::find(allowed.begin(), allowed.end(), t) != allowed.end()) return;
    std::string names;
    for (size_t i = 0; i < allowed.size(); ++i)
        names += std::string(i == 0 ? "" : i + 1 == allowed.size() ? " or " : ", ") + dtypeName(allowed[i]);
    throw TypeError("input " + std::to_string(slot) + " is " + dtypeName(t) + "; " + std::string(opType) + " takes "
        + names);
}

void requireSameType(std::span<const DType> in, int a, int b, std::string_view opType)
{
    if (in[static_cast<size_t>(a)] == in[static_cast<size_t>(b)]) return;
    throw TypeError("input " + std::to_string(b) + " is " + dtypeName(in[static_cast<size_t>(b)]) + ", input "
        + std::to_string(a) + " " + dtypeName(in[static_cast<size_t>(a)]) + "; " + std::string(opType)
        + " takes both of one type");
}

Shape broadcastShapes(const Shape& a, const Shape& b)
{
    const int nd = std::max(a.ndim(), b.ndim());
    if (nd == 0) return Shape::scalar();
    Shape out;
    for (int i = 0; i < nd; ++i) {
        const int ia = i - (nd - a.ndim()), ib = i - (nd - b.ndim());
        const int64_t x = ia >= 0 ? a[ia] : 1, y = ib >= 0 ? b[ib] : 1;
        if (x == y || y == 1)
            out.push_back(x);
        else if (x == 1)
            out.push_back(y);
        else
            throw ShapeError("shapes " + a.str() + " and " + b.str() + " do not broadcast (dimension "
                + std::to_string(i) + ": " + std::to_string(x) + " against " + std::to_string(y) + ")");
    }
    return out;
}

std::vector<int64_t> broadcastStrides(const Shape& in, const Shape& out)
{
    std::vector<int64_t> st(static_cast<size_t>(out.ndim()), 0);
    int64_t stride = 1;
    for (int i = in.ndim() - 1; i >= 0; --i) {
        const int o = i + out.ndim() - in.ndim();
        if (o >= 0) st[static_cast<size_t>(o)] = in[i] == 1 && out[o] != 1 ? 0 : stride;
        stride *= in[i];
    }
    return st;
}

std::vector<int64_t> stridesOf(const Shape& s)
{
    std::vector<int64_t> st(static_cast<size_t>(s.ndim()), 1);
    for (int i = s.ndim() - 2; i >= 0; --i)
        st[static_cast<size_t>(i)] = st[static_cast<size_t>(i + 1)] * s[i + 1];
    return st;
}

int normalizeAxis(int64_t axis, int rank, std::string_view opType)
{
    if (axis < -rank || axis >= std::max(rank, 1))
        throw ShapeError(std::string(opType) + ": axis " + std::to_string(axis) + " is outside [" + std::to_string(-rank)
            + ", " + std::to_string(rank) + ") for a tensor of rank " + std::to_string(rank));
    return static_cast<int>(axis < 0 ? axis + rank : axis);
}

} // namespace opscope::onnx_ops
