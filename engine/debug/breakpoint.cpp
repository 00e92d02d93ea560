#include "debug/breakpoint.h"

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

} // namespace opscope::debug
