#include "ops/register_all.h"

#include "ops/onnx/register_onnx.h"

namespace opscope {

void registerAllOps(OpRegistry& r)
{
    registerFullyConnected(r);
    registerConvolution(r);
    registerPooling(r);
    registerActivation(r);
    registerBatchNorm(r);
    registerLayerNorm(r);
    registerDropout(r);
    registerEmbedding(r);
    registerSoftmax(r);
    registerReshapeOps(r);
    registerTranspose(r);
    registerConcatSplit(r);
    registerElemwiseBinary(r);
    registerBroadcast(r);
    registerScalarOps(r);
    registerUnary(r);
    registerUnaryActivation(r);
    registerReduce(r);
    registerPick(r);
    registerDot(r);
    registerBackwardOps(r); // wraps the gradients of everything above
    registerOnnxOps(r); // under "onnx::<OpType>": apart from MXNet's operators of the same names
}

} // namespace opscope
