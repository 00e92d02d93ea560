#pragma once

#include "debug/session.h"
#include "models/registry.h"
#include "models/training.h"

#include <atomic>
#include <functional>

namespace opscope::server {

/// Trains a built-in sample with every mini-batch step run as a training step of `session`, which
/// a server serves: breakpoints and watchpoints that clients set pause the step (forward, loss or
/// backward) until they continue it; a step a client stops is skipped (its update not applied) and
/// training goes on. The session gets the sample, its loss and a trainer here. Ends early when
/// `stop` becomes true. `onEpoch` after each epoch (its accuracies are computed outside the session,
/// while it is idle: the server must not let clients start runs, ServeOptions::clientsStart).
std::vector<samples::EpochReport> trainServed(debug::Session& session, samples::Sample& sample,
    const samples::TrainSetup& setup, uint64_t seed, const std::function<void(const samples::EpochReport&)>& onEpoch,
    const std::atomic<bool>& stop);

} // namespace opscope::server
