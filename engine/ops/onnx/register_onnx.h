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
void registerOnnxNn(OpRegistry& r); // Conv, ConvTranspose, pooling, normalizations, LRN
void registerOnnxLinalg(OpRegistry& r); // Gemm, MatMul, Einsum
void registerOnnxResize(OpRegistry& r); // Resize, Upsample, DepthToSpace, SpaceToDepth
void registerOnnxRnn(OpRegistry& r); // RNN, LSTM, GRU

} // namespace opscope
