#pragma once

// opscope-cli bench: times whole passes of a model and each of its ops (engine/exec/profile.h).

#include <cstdint>
#include <string>
#include <vector>

namespace opscope::cli {

struct BenchOptions {
    std::string model, params;
    std::vector<std::string> inputs;
    uint64_t seed = 0;
    std::string mode = "static_shape"; ///< hybrid, static_alloc or static_shape
    std::string kernels = "auto"; ///< auto, reference or onednn
    int threads = 0; ///< OpenMP threads of the kernels; 0: as OMP_NUM_THREADS (or every core)
    int repeat = 20;
    int warmup = 3;
    bool noFuse = false; ///< every op its own kernel
    bool hook = false; ///< a no-op op hook on every op: what watching costs
    std::string trace; ///< Chrome trace-event JSON
    std::string json; ///< the figures as JSON
};

/// Runs the model once (planning), `warmup` times, then `repeat` timed passes; prints the pass
/// times and a table of ops, slowest first. Exit status 0, else 2/3/4 as `run`.
int benchCommand(const BenchOptions& options);

} // namespace opscope::cli
