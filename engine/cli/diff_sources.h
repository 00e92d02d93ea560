#pragma once

// Where opscope-cli diff gets its two runs: a live run recorded through op hooks on every input and
// output, a folder `run --dump` wrote, an .npz archive; and the name map that lets other names
// meet A's.

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
};

/// Runs the model (hybridized) with every op's inputs and outputs recorded. Returns kOk or the exit
/// status, its message printed.
int recordRun(const LiveRun& live, debug::RecordedRun& run, std::shared_ptr<const Graph>& graph);

/// Run B as `run --monitor-all --dump DIR` wrote it: A's tensor names, as the dump names files.
int readDumpRun(const std::string& dir, const debug::RecordedRun& a, debug::RecordedRun& b);

/// Run B from an .npz archive: every array under its name.
int readNpzRun(const std::string& path, debug::RecordedRun& b);

/// Reads a name map: a JSON object from B's names to A's, where A's name is a tensor as diff lists
/// it (`conv0_fwd_output`), a node (its first output), or a parameter (the first op input that
/// reads it). Returns kOk or the exit status (a missing or malformed file kBadFile, a name A lacks
/// kUsage), the map in `map` with every value resolved to A's tensor names.
int readNameMap(const std::string& path, const Graph& graphA, const debug::RecordedRun& a,
    std::map<std::string, std::string>& map);

/// B's tensors renamed by the map (names it does not mention stay as they are).
debug::RecordedRun renamed(debug::RecordedRun b, const std::map<std::string, std::string>& map);

} // namespace opscope::cli
