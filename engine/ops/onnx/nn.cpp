#include "ops/onnx/onnx_op.h"
#include "ops/onnx/register_onnx.h"
#include "ops/registry.h"

namespace opscope {

void registerOnnxNn(OpRegistry& r)
{
    registerOnnxConv(r);
    registerOnnxPool(r);
    registerOnnxNorm(r);
}

} // namespace opscope
