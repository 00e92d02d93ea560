#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace opscope {

/// Operator attributes in MXNet's string form: {"kernel": "(5, 5)", "no_bias": "False"}.
/// Ordered, so a graph written back keeps a stable order.
using AttrMap = std::map<std::string, std::string>;

/// Parses MXNet attribute strings with MXNet's spellings (Python tuples, True/False/1/0, bare enum
/// words, floats such as "1e-5" or "inf"). Every error is an AttributeError naming the operator,
/// the attribute and the offending value. Hidden attributes (`__shape__` …) are never read here.
class AttrReader {
public:
    AttrReader(const AttrMap& attrs, std::string_view opName);

    bool has(std::string_view key) const;
    const std::string* raw(std::string_view key) const;

    int64_t getInt(std::string_view key) const;
    int64_t getInt(std::string_view key, int64_t fallback) const;
    /// Like getInt, but "None" or absence gives nullopt (MXNet's optional<int>).
    std::optional<int64_t> getOptionalInt(std::string_view key) const;
    double getFloat(std::string_view key, double fallback) const;
    double getFloat(std::string_view key) const;
    std::optional<double> getOptionalFloat(std::string_view key) const;
    bool getBool(std::string_view key, bool fallback) const;
    /// A tuple "(2, 2)", "(2,)", "()", "[2, 2]" or a bare "2" (MXNet accepts a bare int for a 1-tuple).
    std::vector<int64_t> getTuple(std::string_view key, const std::vector<int64_t>& fallback) const;
    std::vector<int64_t> getTuple(std::string_view key) const;
    /// One of `allowed` (compared exactly, as MXNet does); `fallback` when absent.
    std::string getEnum(std::string_view key, const std::vector<std::string>& allowed, std::string_view fallback) const;
    std::string getString(std::string_view key, std::string_view fallback) const;

    [[noreturn]] void fail(std::string_view key, std::string_view why) const;

private:
    const AttrMap& m_attrs;
    std::string m_op;
};

/// The largest magnitude of an integer attribute (MXNet's int range). Kernel sizes, strides, pads and
/// shape dimensions within it keep every product of two of them inside int64, so shape inference
/// cannot overflow on what a file says.
inline constexpr int64_t kMaxAttrInt = 2147483647;

/// Free-standing parsers (throw std::invalid_argument with a short reason; AttrReader adds context).
int64_t parseIntAttr(std::string_view text);
double parseFloatAttr(std::string_view text);
bool parseBoolAttr(std::string_view text);
std::vector<int64_t> parseTupleAttr(std::string_view text);

/// Python spellings for writing attributes back: "True", "(2, 2)", "(5,)".
std::string boolAttr(bool v);
std::string tupleAttr(const std::vector<int64_t>& v);

} // namespace opscope
