#pragma once

namespace opscope {

class OpRegistry;

/// Operator families; each function lives in the family's source file and registers its operators.
void registerFullyConnected(OpRegistry& r);
void registerConvolution(OpRegistry& r);
void registerPooling(OpRegistry& r);
void registerActivation(OpRegistry& r); // Activation, LeakyReLU
void registerBatchNorm(OpRegistry& r);
void registerLayerNorm(OpRegistry& r);
void registerDropout(OpRegistry& r);
void registerEmbedding(OpRegistry& r);
void registerSoftmax(OpRegistry& r); // softmax, log_softmax, SoftmaxOutput, SoftmaxActivation
void registerReshapeOps(OpRegistry& r); // Flatten, Reshape, expand_dims, squeeze, _copy
void registerTranspose(OpRegistry& r);
void registerConcatSplit(OpRegistry& r); // Concat, SliceChannel, slice_axis
void registerElemwiseBinary(OpRegistry& r); // elemwise_add/sub/mul/div
void registerBroadcast(OpRegistry& r); // broadcast_add/sub/mul/div/maximum/minimum
void registerScalarOps(OpRegistry& r); // _plus_scalar … _power_scalar
void registerUnary(OpRegistry& r); // exp, log, sqrt, square, abs, negative, clip
void registerUnaryActivation(OpRegistry& r); // relu, sigmoid, tanh, softsign
void registerReduce(OpRegistry& r); // sum, mean, max
void registerPick(OpRegistry& r); // pick, reshape_like (reduce/pick.cpp)
void registerDot(OpRegistry& r); // dot, batch_dot

/// `_backward_<Op>` for every operator registered so far that has a gradient (backward_ops.cpp).
void registerBackwardOps(OpRegistry& r);

/// Calls every family above; used once by OpRegistry::instance().
void registerAllOps(OpRegistry& r);

} // namespace opscope
