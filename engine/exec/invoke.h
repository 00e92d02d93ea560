#pragma once

#include "ops/op.h"

#include <string>
#include <vector>

namespace opscope {

/// Runs one operator now (MXNet's imperative `nd.<op>` call): parses the attributes, infers the
/// output shapes, allocates the outputs and runs the kernel of the requested kind. Errors name the
/// operator and the shapes. Used by eager Gluon calls and by the operator tests.
std::vector<Tensor> invokeOp(const std::string& op, const AttrMap& attrs, const std::vector<Tensor>& inputs,
    KernelKind kind = KernelKind::Auto, RunContext* ctx = nullptr);

/// Runs an operator's gradient now: the gradients of `inputs` given the forward `outputs` (every
/// output, as invokeOp returns them) and one gradient per output (an undefined Tensor: zero).
/// `wanted` (empty: all) says which input gradients to compute; the others come back undefined.
/// Throws UsageError naming the operator when it has no gradient.
std::vector<Tensor> invokeBackward(const std::string& op, const AttrMap& attrs, const std::vector<Tensor>& inputs,
    const std::vector<Tensor>& outputs, const std::vector<Tensor>& outGrads, std::vector<bool> wanted = {},
    RunContext* ctx = nullptr);

/// The output shapes invokeOp would produce (completes unknown input shapes in `inShapes`).
std::vector<Shape> inferOpShapes(const std::string& op, const AttrMap& attrs, std::vector<Shape>& inShapes);

} // namespace opscope
