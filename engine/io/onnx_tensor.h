#pragma once

// ONNX TensorProto ↔ Tensor, without ONNX's headers (ONNX's generated classes stay private to
// engine/io's ONNX sources).

#include "tensor/tensor.h"

#include <optional>
#include <string>

namespace opscope {

/// The engine's type for an ONNX TensorProto data type code (1 FLOAT, 2 UINT8, 3 INT8, 6 INT32,
/// 7 INT64, 9 BOOL, 10 FLOAT16, 11 DOUBLE); nothing for the others.
std::optional<DType> dtypeFromOnnx(int code);
/// ONNX's data type code of a DType.
int onnxTypeCode(DType t);
/// ONNX's name of a data type code ("FLOAT", "INT64", "BFLOAT16", …; "type 99" when unknown).
std::string onnxTypeName(int code);

/// Reads a file holding one serialized TensorProto (ONNX's test data `input_0.pb`). Throws FileError
/// naming the file and what is wrong (not a TensorProto, a type the engine lacks, data of the wrong
/// size). `name` (when given) gets the tensor's name.
Tensor readTensorPb(const std::string& path, std::string* name = nullptr);

} // namespace opscope
