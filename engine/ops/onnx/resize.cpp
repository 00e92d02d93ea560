#include "ops/onnx/onnx_op.h"
#include "ops/onnx/register_onnx.h"
#include "ops/registry.h"

namespace opscope {

void registerOnnxResize(OpRegistry& r)
{
    (void)r;
}

} // namespace opscope
