#pragma once

// Private to engine/io's ONNX sources: what OnnxDocument holds, and the graph builder.

#include "io/onnx_model.h"

#include <onnx/onnx_pb.h>

namespace opscope {

struct OnnxDocument::Impl {
    std::string path;
    std::string baseDir;
    onnx::ModelProto model; ///< checked, upgraded to opset 7 or later, shape-inferred
    int opset = 0;
    int originalOpset = 0; ///< before the version converter upgraded it
    std::vector<OnnxInputInfo> inputs;
};

namespace onnx_io {

/// OnnxDocument::build (onnx_build.cpp).
OnnxGraph buildGraph(const OnnxDocument::Impl& doc, const std::vector<Shape>& inputShapes,
    const std::vector<DType>& inputTypes, const std::map<std::string, Tensor>& inputValues);

} // namespace onnx_io

} // namespace opscope
