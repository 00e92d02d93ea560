#include "debug/breakpoint.h"

#include "core/error.h"

namespace opscope::debug {

Breakpoint Breakpoint::onNode(std::string node, OpPhase phase, Condition c)
{
    Breakpoint b;
    b.kind = Kind::Node;
    b.location = std::move(node);
    b.phase = phase;
    b.condition = c;
    return b;
}

Breakpoint Breakpoint::onTensor(std::string tensorName, Condition c)
{
    Breakpoint b;
    b.kind = Kind::Tensor;
    b.location = std::move(tensorName);
    b.condition = c;
    return b;
}

Breakpoint Breakpoint::watch(Condition c, OpPhase phase)
{
    Breakpoint b;
    b.kind = Kind::Watch;
    b.phase = phase;
    b.condition = c;
    return b;
}

std::string Breakpoint::str() const
{
    std::string s;
    switch (kind) {
    case Kind::Node:
        s = "node " + location + (phase == OpPhase::Before ? " (before)" : " (after)");
        break;
    case Kind::Tensor:
        s = "tensor " + location;
        break;
    case Kind::Watch:
        s = phase == OpPhase::Before ? "watch inputs" : "watch outputs";
        break;
    }
    if (condition.kind != Condition::Kind::Always) s += " if " + condition.str();
    return s;
}

Breakpoint parseBreakSpec(const std::string& text)
{
    std::string node = text;
    OpPhase phase = OpPhase::Before;
    const size_t colon = text.rfind(':');
    if (colon != std::string::npos) {
        const std::string p = text.substr(colon + 1);
        if (p == "before")
            phase = OpPhase::Before;
        else if (p == "after")
            phase = OpPhase::After;
        else
            throw UsageError("--break " + text + ": expected NODE, NODE:before or NODE:after");
        node = text.substr(0, colon);
    }
    if (node.empty()) throw UsageError("--break " + text + ": no node name");
    return Breakpoint::onNode(node, phase);
}

} // namespace opscope::debug
