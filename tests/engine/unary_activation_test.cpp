#include "common/tensor_match.h"
#include "core/error.h"
#include "exec/invoke.h"
#include "ops/registry.h"
#include "tensor/random.h"

#include <gtest/gtest.h>

using namespace opscope;

// relu, sigmoid, tanh and softsign as operators equal Activation with the same act_type (whose
// kernels are checked against PyTorch in activation_test.cpp).
TEST(UnaryActivation, EqualsActivationOperator)
{
    Generator gen(4);
    Tensor x = Tensor::uniform(Shape({ 3, 7 }), -4, 4, &gen);
    x.at(0) = 0.0f;
    for (const char* act : { "relu", "sigmoid", "tanh", "softsign" }) {
        SCOPED_TRACE(act);
        Tensor direct = invokeOp(act, {}, { x }, KernelKind::Reference)[0];
        Tensor viaActivation = invokeOp("Activation", { { "act_type", act } }, { x }, KernelKind::Reference)[0];
        EXPECT_TRUE(test::tensorsNear(direct, viaActivation, 1e-6f, 1e-5f));
        const OpDef& def = OpRegistry::instance().get(act);
        auto params = def.parse({});
        EXPECT_EQ(def.inputSlotNames(*params), std::vector<std::string> { "input0" });
        EXPECT_EQ(def.outputSlotNames(*params), std::vector<std::string> { "0" });
    }
}
