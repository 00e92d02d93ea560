#include "debug/condition.h"

#include "core/error.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

namespace opscope::debug {

bool Condition::test(const TensorStats& s) const
{
    const bool anyFinite = s.finite > 0;
    switch (kind) {
    case Kind::Always:
        return true;
    case Kind::AnyNan:
        return s.nan > 0;
    case Kind::AnyInf:
        return s.inf() > 0;
    case Kind::NanOrInf:
        return s.nan > 0 || s.inf() > 0;
    case Kind::AbsMaxAbove:
        return anyFinite && std::max(std::fabs(s.min), std::fabs(s.max)) > threshold;
    case Kind::MinBelow:
        return anyFinite && s.min < threshold;
    case Kind::MaxAbove:
        return anyFinite && s.max > threshold;
    case Kind::MeanAbove:
        return anyFinite && s.mean > threshold;
    case Kind::MeanBelow:
        return anyFinite && s.mean < threshold;
    case Kind::StdAbove:
        return anyFinite && s.std > threshold;
    case Kind::StdBelow:
        return anyFinite && s.std < threshold;
    case Kind::AllZero:
        return s.count > 0 && s.zeros == s.count;
    case Kind::ZeroFractionAbove:
        return s.count > 0 && static_cast<double>(s.zeros) / static_cast<double>(s.count) > threshold;
    case Kind::NormAbove:
        return anyFinite && s.l2 > threshold;
    case Kind::DiffAbove:
        return false; // needs the reference's tensor (DebugObserver decides)
    }
    return false;
}

std::string Condition::str() const
{
    if (gradientsOnly) {
        if (kind == Kind::Always) return "grad";
        Condition plain = *this;
        plain.gradientsOnly = false;
        return "grad " + plain.str();
    }
    std::ostringstream t;
    t << threshold;
    switch (kind) {
    case Kind::Always:
        return "always";
    case Kind::AnyNan:
        return "nan";
    case Kind::AnyInf:
        return "inf";
    case Kind::NanOrInf:
        return "naninf";
    case Kind::AbsMaxAbove:
        return "absmax>" + t.str();
    case Kind::MinBelow:
        return "min<" + t.str();
    case Kind::MaxAbove:
        return "max>" + t.str();
    case Kind::MeanAbove:
        return "mean>" + t.str();
    case Kind::MeanBelow:
        return "mean<" + t.str();
    case Kind::StdAbove:
        return "std>" + t.str();
    case Kind::StdBelow:
        return "std<" + t.str();
    case Kind::AllZero:
        return "zero";
    case Kind::ZeroFractionAbove:
        return "zeros>" + t.str();
    case Kind::NormAbove:
        return "norm>" + t.str();
    case Kind::DiffAbove:
        return "diff>" + t.str();
    }
    return "?";
}

namespace {
// `s`: the condition lowered, without spaces; `text`: as written, for messages.
Condition parseCondition(const std::string& s, const std::string& text)
{
    using Kind = Condition::Kind;
    const auto bad = [&](const std::string& why) {
        return UsageError("condition '" + text + "': " + why
            + " (expected nan, inf, naninf, zero, always, or absmax>T, max>T, min<T, mean>T, mean<T, std>T, "
              "std<T, zeros>P, norm>T, diff>T, optionally after 'grad ')");
    };
    if (s.starts_with("grad")) {
        const std::string rest = s.substr(s.size() > 4 && s[4] == ':' ? 5 : 4);
        if (rest.starts_with("grad")) throw bad("'grad' given twice");
        Condition c = rest.empty() ? Condition {} : parseCondition(rest, text);
        c.gradientsOnly = true;
        return c;
    }
    if (s == "always") return { Kind::Always, 0 };
    if (s == "nan") return { Kind::AnyNan, 0 };
    if (s == "inf") return { Kind::AnyInf, 0 };
    if (s == "naninf" || s == "nan|inf" || s == "nanorinf") return { Kind::NanOrInf, 0 };
    if (s == "zero" || s == "allzero") return { Kind::AllZero, 0 };
    const size_t op = s.find_first_of("<>");
    if (op == std::string::npos || op == 0) throw bad("unknown condition");
    const std::string key = s.substr(0, op);
    const bool above = s[op] == '>';
    const std::string number = s.substr(op + 1);
    double value = 0;
    try {
        size_t used = 0;
        value = std::stod(number, &used);
        if (used != number.size()) throw bad("'" + number + "' is not a number");
    } catch (const std::logic_error&) {
        throw bad("'" + number + "' is not a number");
    }
    if (std::isnan(value)) throw bad("the threshold is NaN");
    if (key == "absmax" && above) return { Kind::AbsMaxAbove, value };
    if (key == "max" && above) return { Kind::MaxAbove, value };
    if (key == "min" && !above) return { Kind::MinBelow, value };
    if (key == "mean") return { above ? Kind::MeanAbove : Kind::MeanBelow, value };
    if (key == "std") return { above ? Kind::StdAbove : Kind::StdBelow, value };
    if (key == "norm" && above) return { Kind::NormAbove, value };
    if (key == "diff" && above) {
        if (value < 0) throw bad("a difference threshold is not negative");
        return { Kind::DiffAbove, value };
    }
    if (key == "zeros" && above) {
        if (value < 0 || value > 1) throw bad("the fraction of zeros must be in [0, 1]");
        return { Kind::ZeroFractionAbove, value };
    }
    throw bad("unknown test '" + key + std::string(1, s[op]) + "'");
}

} // namespace

Condition Condition::parse(const std::string& text)
{
    std::string s;
    for (char c : text)
        if (!std::isspace(static_cast<unsigned char>(c)))
            s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return parseCondition(s, text);
}

} // namespace opscope::debug
