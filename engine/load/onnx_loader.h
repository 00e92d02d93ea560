#pragma once

// ONNX models where a model is opened (opscope-cli, the window): the graph is built for the inputs'
// shapes, so a model with symbolic dimensions is rebuilt when the inputs it runs on are known.

#include "load/model_loader.h"

namespace opscope::load {

/// Loads a `.onnx` file into `m`: its inputs (with their types, and shape hints where the model
/// gives every dimension) and a block built for those shapes, a symbolic dimension taken as 1 until
/// fitToInputs gives it (`m.notes` says so). Initializers, Constants and folded nodes are the
/// block's parameters. Throws LoadError naming the file and what is wrong.
void loadOnnx(const std::string& path, LoadedModel& m);

/// For an ONNX model built for other input shapes: rebuilds its block for these (ShapeError or
/// TypeError naming the input the model contradicts). Nothing for any other model.
void fitToInputs(LoadedModel& m, const std::vector<Shape>& inputShapes);
/// The same for the inputs a run is given; their values also reach the operators that need them
/// before the run (a Reshape whose shape is a graph input), so other values rebuild it too.
void fitToInputs(LoadedModel& m, const std::vector<Tensor>& inputs);

} // namespace opscope::load
