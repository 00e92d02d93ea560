#pragma once

#include "load/model_loader.h"
#include "tensor/tensor.h"

#include <string>
#include <vector>

namespace opscope::cli {

/// Exit statuses of opscope-cli (scripts rely on them).
/// kNoHit: a run (or training) with --break/--break-on ended without pausing.
/// kDiverges: `diff` found the two runs differing beyond the tolerance.
enum ExitStatus { kOk = 0, kNoHit = 1, kDiverges = 1, kUsage = 2, kBadFile = 3, kRunFailed = 4 };

struct RunOptions {
    std::string model;
    std::string params;
    std::vector<std::string> inputs;
    uint64_t seed = 0;
    std::string mode = "hybrid";
    bool noFuse = false; ///< --no-fuse: every op runs its own kernel under static_alloc/static_shape
    bool monitorAll = false;
    std::string hooks; ///< file or "-"
    std::string dump;
    std::string output;
    std::string outputs;
    std::vector<std::string> breaks; ///< --break NODE[:before|:after]
    std::vector<std::string> breakOn; ///< --break-on CONDITION (a watchpoint on every op's outputs)
    /// --reference: what `diff>T` conditions compare with (an .npz archive or a `--dump` folder).
    std::string reference;
};

/// The kernels `--kernels` names: "reference", "onednn", else (auto) Auto.
KernelKind kernelKindOf(const std::string& name);

/// Prints "opscope-cli: MESSAGE" on stderr and returns `status`.
int fail(int status, const std::string& message);
/// The name fail() and notes begin with (opscope-server shares these commands).
void setProgramName(const char* name);

/// What `run` (with or without breakpoints) starts from: the model and its inputs as the options
/// give them, and the output directories made. Returns kOk, or the exit status with the message
/// printed (a bad file is kBadFile, a bad input specification or directory kUsage).
int prepareRun(const RunOptions& options, load::LoadedModel& model, std::vector<Tensor>& inputs);

int listCommand();
int infoCommand(const std::string& model, const std::string& params, const std::vector<std::string>& inputs);
int runCommand(const RunOptions& options);

} // namespace opscope::cli
