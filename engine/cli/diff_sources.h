#pragma once

// Where opscope-cli diff gets its two runs (debug/compare_sources.h), with failures turned into
// exit statuses and messages.

#include "debug/compare.h"
#include "exec/precision_rules.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace opscope::cli {

struct LiveRun {
    std::string model, params;
    std::vector<std::string> inputs;
    std::string kernels = "auto";
    std::vector<PrecisionRule> precision;
    uint64_t seed = 0;
    std::string mode = "hybrid";
};

/// Runs the model (hybridized) with every op's inputs and outputs recorded. Returns kOk or the exit
/// status, its message printed.
int recordRun(const LiveRun& live, debug::RecordedRun& run, std::shared_ptr<const Graph>& graph);

/// Run B as `run --monitor-all --dump DIR` wrote it: A's tensor names, as the dump names files.
int readDumpRun(const std::string& dir, const debug::RecordedRun& a, debug::RecordedRun& b);

/// Run B from an .npz archive: every array under its name.
int readNpzRun(const std::string& path, debug::RecordedRun& b);

/// Run B's names mapped onto A's by a name map file (debug::readNameMap). Returns kOk or the
/// status (a missing or malformed file kBadFile, a name A lacks kUsage).
int applyNameMap(const std::string& path, const Graph& graphA, const debug::RecordedRun& a, debug::RecordedRun& b);

} // namespace opscope::cli
