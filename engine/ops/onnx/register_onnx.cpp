#include "ops/onnx/register_onnx.h"

namespace opscope {

void registerOnnxOps(OpRegistry& r)
{
    registerOnnxElementwise(r);
    registerOnnxUnary(r);
    registerOnnxActivations(r);
    registerOnnxReduce(r);
    registerOnnxSoftmax(r);
    registerOnnxShapeOps(r);
    registerOnnxIndexOps(r);
    registerOnnxNn(r);
    registerOnnxLosses(r);
    registerOnnxLinalg(r);
    registerOnnxResize(r);
    registerOnnxRnn(r);
    registerOnnxEinsum(r);
}

} // namespace opscope
