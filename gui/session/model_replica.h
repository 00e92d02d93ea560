#pragma once

// A model that runs on a server, copied here for what runs the model many times with its weights in
// the window's process (the presentation, a channel's examples): its graph written as a
// -symbol.json and its parameters, fetched from the server as they are now, as a .params file, in a
// folder of its own; loaded from there as any model file is.

#include "gui/session/model_info.h"
#include "tensor/tensor.h"

#include <memory>

class QTemporaryDir;

namespace opscope::debug {
class Engine;
}

namespace opscope::gui {

struct ModelReplica {
    ModelInfoPtr model; ///< spec and paramsFile in `folder`; title, class names, inputs as the server's
    Tensor input; ///< the server's input of its runs, as set now (undefined when not asked for)
    std::shared_ptr<QTemporaryDir> folder; ///< removed with the last copy of the replica
};

/// Fetches `remote`'s parameters (and, with `withInput`, its first input) from `engine` and writes
/// the replica's files; on the calling thread (a worker's: it waits on the server). Throws what
/// fetching throws, UsageError when the server lacks a parameter its description names or describes
/// no graph, FileError when the files cannot be written.
ModelReplica replicateModel(debug::Engine& engine, const ModelInfo& remote, bool withInput);

} // namespace opscope::gui
