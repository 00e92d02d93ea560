#pragma once

#include "cli/commands.h"
#include "debug/breakpoint.h"

#include <string>

namespace opscope::cli {

/// `run` with --break / --break-on: runs the model in a debug session. At the first hit it prints
/// the paused node (operator, phase, statistics of its tensors) on stdout, writes its tensors to
/// DIR/<tensor name>.npy with --dump, stops the session and returns kOk. Without a hit it reports
/// the outputs as `run` does. Bad break specifications return kUsage.
int runWithBreakpoints(const RunOptions& options);

} // namespace opscope::cli
