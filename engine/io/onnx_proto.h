#pragma once

// Private to engine/io's ONNX sources: ONNX's generated classes and the conversion of their tensors.

#include "tensor/tensor.h"

#include <onnx/onnx_pb.h>

#include <string>

namespace opscope::onnx_io {

/// The tensor a TensorProto holds: raw_data or the typed fields, or (data_location EXTERNAL) the
/// bytes of the file its external_data names, relative to `baseDir`. `what` names it in errors
/// ("model.onnx: initializer 'conv1.weight'"). Throws FileError.
Tensor tensorFromProto(const onnx::TensorProto& t, const std::string& baseDir, const std::string& what);

/// Parses a protobuf message from a file, refusing files larger than protobuf can hold. Throws
/// FileError naming the file ("not a valid ONNX model: protobuf parse error").
void parseProtoFile(const std::string& path, google::protobuf::MessageLite& msg, const char* kind);

} // namespace opscope::onnx_io
