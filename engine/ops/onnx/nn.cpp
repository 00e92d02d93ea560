#include "ops/onnx/onnx_op.h"
#include "ops/onnx/register_onnx.h"
#include "ops/registry.h"

namespace opscope {

void registerOnnxConv(OpRegistry& r); // nn_conv.cpp
void registerOnnxPool(OpRegistry& r); // nn_pool.cpp
void registerOnnxNorm(OpRegistry& r); // nn_norm.cpp

void registerOnnxNn(OpRegistry& r)
{
    registerOnnxConv(r);
    registerOnnxPool(r);
    registerOnnxNorm(r);
}

} // namespace opscope
