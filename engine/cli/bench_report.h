#pragma once

// The figures `opscope-cli bench` reports: pass times, each op's self time, its share of the pass
// and its GFLOP/s, from the executor's run profiles (exec/profile.h); as a table, as JSON for
// scripts and as a Chrome trace-event file (Perfetto, chrome://tracing).

#include "exec/executor.h"

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <string>
#include <vector>

namespace opscope::cli {

struct OpFigures {
    uint32_t node = 0;
    std::string name, op, backend;
    /// Nodes fused into this one's kernel (ExecFlags::fuse): their time is in this op's.
    std::vector<std::string> fused, fusedOps;
    double selfMs = 0; ///< median over the measured passes of the kernel's time
    double minMs = 0, maxMs = 0;
    double share = 0; ///< selfMs over the median pass
    int64_t flops = -1; ///< per pass (exec/op_flops.h), with a depthwise convolution fused into it; -1: not defined for the op
    double gflops = 0; ///< flops at selfMs (0 when flops is not defined)
    double observerMs = 0; ///< median time in hooks, breakpoints and watchpoints around it
    double prepareMs = 0; ///< making its kernel when the executor planned (oneDNN primitive creation)
    double firstCallMs = 0; ///< its kernel's first run after that (one-time setup included)
    /// Its kernel leaves its output in its own layout for the kernels that read it (no conversion
    /// to plain: Executor::nativeLayout).
    bool nativeOutput = false;
};

struct BenchFigures {
    std::string model, mode, kernels;
    int threads = 1, repeat = 0, warmup = 0;
    bool hooked = false; ///< a no-op op hook watched every op
    bool fuse = false; ///< ExecFlags::fuse was on
    std::vector<double> passMs; ///< every measured pass, in order
    double medianMs = 0, minMs = 0, maxMs = 0;
    /// The median wall time of the profiled passes (each op timed), of which the ops' shares are taken.
    double profiledMedianMs = 0;
    double firstCallMs = 0, planMs = 0; ///< the first call, and the part of it spent planning
    double opsMs = 0; ///< the sum of the ops' median self times
    double observerMs = 0; ///< the sum of their median observer times
    int nativeTensors = 0; ///< tensors kept in a kernel's own layout between kernels
    /// Tensors that share buffers with others whose lives do not overlap (Executor::sharedBuffer),
    /// how many buffers they share, their bytes, and the bytes they would take with one each.
    int sharedTensors = 0, sharedBuffers = 0;
    int64_t sharedBytes = 0, unsharedBytes = 0;
    std::vector<OpFigures> ops; ///< slowest first
};

/// `first` profiles the first call (it planned), `measured` the profiled passes after the warm-up,
/// whose wall times (as the caller saw them) are `profiledMs`; `passMs` are those of the passes run
/// without the profile.
BenchFigures summarize(const Executor& executor, const RunProfile& first, const std::vector<RunProfile>& measured,
    std::vector<double> passMs, std::vector<double> profiledMs);

double median(std::vector<double> values);

void printTable(std::ostream& out, const BenchFigures& figures);

/// {"model", "mode", ..., "median_ms", "min_ms", "max_ms", "passes_ms", "ops": [{"node", "op",
/// "self_ms", ...}]}.
nlohmann::json toJson(const BenchFigures& figures);

/// Chrome trace-event JSON: one complete ("X") slice per op per pass on the thread that ran it,
/// observer time as slices of their own, one slice per pass around them. `runs` in the order they
/// ran; `labels` names each ("first call", "warm-up 1", "pass 1", ...).
nlohmann::json traceJson(
    const Graph& graph, const Executor& executor, const std::vector<RunProfile>& runs, const std::vector<std::string>& labels);

} // namespace opscope::cli
