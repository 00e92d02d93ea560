#include "ops/attrs.h"

#include "core/error.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace opscope {

namespace {
    std::string_view trim(std::string_view s)
    {
        while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
            s.remove_prefix(1);
        while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
            s.remove_suffix(1);
        return s;
    }
}

int64_t parseIntAttr(std::string_view text)
{
    std::string_view t = trim(text);
    // Python longs written by old MXNet versions carry an L suffix.
    if (!t.empty() && (t.back() == 'L' || t.back() == 'l'))
        t.remove_suffix(1);
    if (!t.empty() && t.front() == '+')
        t.remove_prefix(1);
    int64_t v = 0;
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec == std::errc::result_out_of_range || (ec == std::errc() && p == t.data() + t.size() && (v > kMaxAttrInt || v < -kMaxAttrInt)))
        throw std::invalid_argument("integer out of range (at most " + std::to_string(kMaxAttrInt) + " in magnitude)");
    if (t.empty() || ec != std::errc() || p != t.data() + t.size())
        throw std::invalid_argument("not an integer");
    return v;
}

double parseFloatAttr(std::string_view text)
{
    std::string t(trim(text));
    std::string lower = t;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    if (lower == "inf" || lower == "+inf" || lower == "infinity")
        return INFINITY;
    if (lower == "-inf" || lower == "-infinity")
        return -INFINITY;
    if (t.empty())
        throw std::invalid_argument("not a number");
    size_t used = 0;
    double v = 0;
    try {
        v = std::stod(t, &used);
    } catch (const std::exception&) {
        throw std::invalid_argument("not a number");
    }
    if (used != t.size())
        throw std::invalid_argument("not a number");
    return v;
}

bool parseBoolAttr(std::string_view text)
{
    const std::string_view t = trim(text);
    if (t == "True" || t == "true" || t == "1")
        return true;
    if (t == "False" || t == "false" || t == "0")
        return false;
    throw std::invalid_argument("not a boolean (True, False, 1 or 0)");
}

std::vector<int64_t> parseTupleAttr(std::string_view text)
{
    std::string_view t = trim(text);
    if (t == "None")
        return {};
    if (!t.empty() && (t.front() == '(' || t.front() == '[')) {
        const char close = t.front() == '(' ? ')' : ']';
        if (t.back() != close)
            throw std::invalid_argument("unbalanced brackets in tuple");
        t = t.substr(1, t.size() - 2);
    }
    std::vector<int64_t> out;
    t = trim(t);
    if (t.empty())
        return out;
    size_t start = 0;
    while (start <= t.size()) {
        const size_t comma = t.find(',', start);
        const std::string_view item = trim(t.substr(start, comma == std::string_view::npos ? t.npos : comma - start));
        if (item.empty()) {
            // Only a trailing comma "(5,)" may leave an empty item.
            if (comma != std::string_view::npos || out.empty())
                throw std::invalid_argument("empty element in tuple");
            break;
        }
        if (item == "None")
            out.push_back(0);
        else
            out.push_back(parseIntAttr(item));
        if (comma == std::string_view::npos)
            break;
        start = comma + 1;
    }
    return out;
}

std::string boolAttr(bool v)
{
    return v ? "True" : "False";
}

std::string tupleAttr(const std::vector<int64_t>& v)
{
    std::string s = "(";
    for (size_t i = 0; i < v.size(); ++i) {
        if (i)
            s += ", ";
        s += std::to_string(v[i]);
    }
    if (v.size() == 1)
        s += ",";
    return s + ")";
}

AttrReader::AttrReader(const AttrMap& attrs, std::string_view opName)
    : m_attrs(attrs)
    , m_op(opName)
{
}

bool AttrReader::has(std::string_view key) const
{
    return raw(key) != nullptr;
}

const std::string* AttrReader::raw(std::string_view key) const
{
    auto it = m_attrs.find(std::string(key));
    return it == m_attrs.end() ? nullptr : &it->second;
}

void AttrReader::fail(std::string_view key, std::string_view why) const
{
    const std::string* v = raw(key);
    std::string msg = "operator " + m_op + ": attribute '" + std::string(key) + "'";
    if (v)
        msg += " = \"" + *v + "\"";
    throw AttributeError(msg + ": " + std::string(why));
}

int64_t AttrReader::getInt(std::string_view key) const
{
    if (!has(key))
        fail(key, "required but missing");
    return getInt(key, 0);
}

int64_t AttrReader::getInt(std::string_view key, int64_t fallback) const
{
    const std::string* v = raw(key);
    if (!v)
        return fallback;
    try {
        return parseIntAttr(*v);
    } catch (const std::invalid_argument& e) {
        fail(key, e.what());
    }
}

std::optional<int64_t> AttrReader::getOptionalInt(std::string_view key) const
{
    const std::string* v = raw(key);
    if (!v || *v == "None")
        return std::nullopt;
    return getInt(key, 0);
}

double AttrReader::getFloat(std::string_view key) const
{
    if (!has(key))
        fail(key, "required but missing");
    return getFloat(key, 0.0);
}

double AttrReader::getFloat(std::string_view key, double fallback) const
{
    const std::string* v = raw(key);
    if (!v)
        return fallback;
    try {
        return parseFloatAttr(*v);
    } catch (const std::invalid_argument& e) {
        fail(key, e.what());
    }
}

std::optional<double> AttrReader::getOptionalFloat(std::string_view key) const
{
    const std::string* v = raw(key);
    if (!v || *v == "None")
        return std::nullopt;
    return getFloat(key, 0.0);
}

bool AttrReader::getBool(std::string_view key, bool fallback) const
{
    const std::string* v = raw(key);
    if (!v)
        return fallback;
    try {
        return parseBoolAttr(*v);
    } catch (const std::invalid_argument& e) {
        fail(key, e.what());
    }
}

std::vector<int64_t> AttrReader::getTuple(std::string_view key) const
{
    if (!has(key))
        fail(key, "required but missing");
    return getTuple(key, {});
}

std::vector<int64_t> AttrReader::getTuple(std::string_view key, const std::vector<int64_t>& fallback) const
{
    const std::string* v = raw(key);
    if (!v)
        return fallback;
    try {
        return parseTupleAttr(*v);
    } catch (const std::invalid_argument& e) {
        fail(key, e.what());
    }
}

std::string AttrReader::getEnum(
    std::string_view key, const std::vector<std::string>& allowed, std::string_view fallback) const
{
    const std::string* v = raw(key);
    if (!v)
        return std::string(fallback);
    const std::string& t = *v;
    if (std::find(allowed.begin(), allowed.end(), t) != allowed.end())
        return t;
    std::string list;
    for (const auto& a : allowed)
        list += (list.empty() ? "" : ", ") + a;
    fail(key, "expected one of " + list);
}

std::string AttrReader::getString(std::string_view key, std::string_view fallback) const
{
    const std::string* v = raw(key);
    return v ? *v : std::string(fallback);
}

} // namespace opscope
