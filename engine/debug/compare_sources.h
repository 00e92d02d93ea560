#pragma once

// Where a comparison's runs come from (engine/debug/compare.h): a block run with op hooks on every
// input and output; a folder of .npy files as `run --dump` writes them; an .npz archive; and a name
// map that lets other names meet run A's.

#include "debug/compare.h"
#include "exec/precision_rules.h"
#include "gluon/block.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace opscope::debug {

/// How a recorded run executes: op by op (eager; a block given a graph of its own, a loaded
/// model, always runs its graph), or hybridized with MXNet's CachedOp flags.
enum class RunMode { Eager, Hybrid, StaticAlloc, StaticShape };
/// "eager", "hybrid", "static_alloc", "static_shape".
std::optional<RunMode> parseRunMode(const std::string& name);
const char* runModeName(RunMode mode);

/// Runs `block` in `mode` on `inputs` with the kernels and the precision given, every op's inputs
/// and outputs recorded into `run`. Returns the graph of the block (traced for these inputs when
/// it ran eagerly). Throws what the run throws (UsageError for a precision rule naming nothing in
/// the graph, or reduced precision asked of an eager run).
std::shared_ptr<const Graph> recordBlockRun(gluon::HybridBlock& block, const std::vector<Tensor>& inputs,
    KernelKind kernels, const std::vector<PrecisionRule>& precision, RecordedRun& run, RunMode mode = RunMode::Hybrid);

/// The tensors of run A (by name) that a `--dump` folder holds. Throws FileError (no such folder,
/// a damaged file).
RecordedRun readDumpFolder(const std::string& dir, const RecordedRun& a);

/// Every array of an .npz archive under its name. Throws FileError.
RecordedRun readNpzRun(const std::string& path);

/// A name map: a JSON object from B's names to A's, where A's name is a tensor as the comparison
/// lists it (`conv0_fwd_output`), a node (its first output), or a parameter (the first op input that
/// reads it). Returns B's name → A's tensor. Throws FileError (missing or malformed file) or
/// UsageError (a name A lacks).
std::map<std::string, std::string> readNameMap(const std::string& path, const Graph& graphA, const RecordedRun& a);

/// B's tensors renamed by the map (names it does not mention stay as they are).
RecordedRun renamed(RecordedRun b, const std::map<std::string, std::string>& map);

} // namespace opscope::debug
