#pragma once

// Helpers shared by the operator tests.

#include "exec/invoke.h"
#include "ops/registry.h"

#include <functional>
#include <string>
#include <vector>

namespace opscope::test {

/// The backend ("dnnl" or "reference") the operator prepares when oneDNN is asked for.
inline std::string dnnlBackend(const std::string& op, const AttrMap& attrs, std::vector<Shape> in)
{
    const OpDef& def = OpRegistry::instance().get(op);
    const ParamsPtr params = def.parse(attrs);
    const std::vector<Shape> out = inferOpShapes(op, attrs, in);
    return def.makeKernel(*params, in, out, KernelKind::Dnnl)->backend();
}

/// The message of the E that `fn` throws, or "(no error)".
template <class E> std::string errorOf(const std::function<void()>& fn)
{
    try {
        fn();
    } catch (const E& e) {
        return e.what();
    }
    return "(no error)";
}

} // namespace opscope::test
