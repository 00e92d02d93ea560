#pragma once

#include "debug/model_description.h"
#include "load/model_loader.h"

#include <ostream>
#include <string>
#include <vector>

namespace opscope::cli {

/// What `info` shows of a loaded model: its graph, with shapes inferred from the `--input` specs
/// (a .npy file gives its own shape), the hints where they are unknown, and the parameters. Throws
/// UsageError (an input the model lacks; no shapes for a model that needs them) or LoadError.
debug::ModelDescription describeModel(load::LoadedModel& m, const std::vector<std::string>& inputSpecs);
/// The same for the inputs a run is given (the server describes what it runs).
debug::ModelDescription describeModel(load::LoadedModel& m, const std::vector<Tensor>& inputs);

/// `opscope-cli info`'s report, from a description made here or received from a server.
void printModelInfo(std::ostream& out, const debug::ModelDescription& d);

} // namespace opscope::cli
