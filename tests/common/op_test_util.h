#pragma once

// Helpers shared by the operator tests.

#include "exec/invoke.h"
#include "ops/registry.h"

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace opscope::test {

/// The kernel the operator prepares for these attributes and input shapes, of the kind asked for
/// (Auto: the one invokeOp and the executor make).
inline std::unique_ptr<Kernel> opKernel(const std::string& op, const AttrMap& attrs, std::vector<Shape> in, KernelKind kind)
{
    const OpDef& def = OpRegistry::instance().get(op);
    const ParamsPtr params = def.parse(attrs);
    const std::vector<Shape> out = inferOpShapes(op, attrs, in);
    return def.makeKernel(*params, in, out, kind);
}

/// The backend ("dnnl" or "reference") the operator prepares when oneDNN is asked for.
inline std::string dnnlBackend(const std::string& op, const AttrMap& attrs, std::vector<Shape> in)
{
    return opKernel(op, attrs, std::move(in), KernelKind::Dnnl)->backend();
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
