#pragma once

namespace opscope {

class OpRegistry;

/// ONNX's operators (registered as "onnx::<OpType>", see ops/onnx/onnx_op.h), by family; each
/// function lives in the family's source file.
void registerOnnxOps(OpRegistry& r);

void registerOnnxElementwise(OpRegistry& r); // Add … Pow, comparisons, logic, Where, Sum/Mean/Max/Min
void registerOnnxUnary(OpRegistry& r); // Abs … Erf, IsNaN, IsInf, Cast, CastLike, Identity, Dropout
void registerOnnxActivations(OpRegistry& r); // Relu … Clip, Softplus, Mish, Gelu's pieces
void registerOnnxReduce(OpRegistry& r); // ReduceSum … ArgMax, ArgMin, TopK, CumSum
void registerOnnxSoftmax(OpRegistry& r); // Softmax, LogSoftmax, Hardmax
void registerOnnxShapeOps(OpRegistry& r); // Reshape … Shape, Size, Range, ConstantOfShape
void registerOnnxIndexOps(OpRegistry& r); // Gather …, Scatter…, OneHot, Trilu, Slice, Pad, Tile, Expand
void registerOnnxNn(OpRegistry& r); // the three below
void registerOnnxConv(OpRegistry& r); // Conv, ConvTranspose (nn_conv.cpp)
void registerOnnxPool(OpRegistry& r); // MaxPool … GlobalLpPool (nn_pool.cpp)
void registerOnnxNorm(OpRegistry& r); // BatchNormalization … LRN (nn_norm.cpp)
void registerOnnxLosses(OpRegistry& r); // NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss
void registerOnnxLinalg(OpRegistry& r); // Gemm, MatMul, Einsum
void registerOnnxResize(OpRegistry& r); // Resize, Upsample, DepthToSpace, SpaceToDepth
void registerOnnxRnn(OpRegistry& r); // RNN, LSTM, GRU
void registerOnnxEinsum(OpRegistry& r); // Einsum, EyeLike, Shrink, Compress

} // namespace opscope
