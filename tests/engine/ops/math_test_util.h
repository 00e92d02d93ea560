#pragma once

// Helpers shared by the math operator tests (math_*_test.cpp).

#include "common/tensor_match.h"
#include "exec/invoke.h"
#include "ops/registry.h"
#include "tensor/random.h"
#include "tensor/tensor.h"

#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace opscope::mathtest {

/// Value range of generated inputs: any sign, or bounded away from zero (divisors, log, power).
enum class Domain { Any, Positive, NonZero };

inline Tensor randomInput(const Shape& s, Domain d, Generator& g)
{
    switch (d) {
    case Domain::Any:
        return Tensor::uniform(s, -2.0f, 2.0f, &g);
    case Domain::Positive:
        return Tensor::uniform(s, 0.5f, 3.0f, &g);
    case Domain::NonZero: {
        Tensor t = Tensor::uniform(s, 0.5f, 2.0f, &g);
        Tensor sign = Tensor::uniform(s, -1.0f, 1.0f, &g);
        for (int64_t i = 0; i < t.size(); ++i)
            if (sign.at(i) < 0) t.at(i) = -t.at(i);
        return t;
    }
    }
    return {};
}

/// The backend invokeOp would use for `kind` ("reference" or "dnnl").
inline std::string backendOf(
    const std::string& op, const AttrMap& attrs, const std::vector<Shape>& inShapes, KernelKind kind)
{
    const OpDef& def = OpRegistry::instance().get(op);
    auto params = def.parse(attrs);
    std::vector<Shape> in = inShapes;
    const std::vector<Shape> out = inferOpShapes(op, attrs, in);
    return def.makeKernel(*params, in, out, kind)->backend();
}

/// Runs `fn` and returns the message of the exception of type E it throws ("" and a failure when
/// it throws nothing).
template <class E, class F> std::string errorOf(F&& fn)
{
    try {
        fn();
    } catch (const E& e) {
        return e.what();
    }
    ADD_FAILURE() << "no exception thrown";
    return {};
}

inline bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

} // namespace opscope::mathtest
