#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace opscope::cli {

/// `train sample:NAME [--data mnist|fashion|digits|spirals|moons] [--augment K] [--epochs N] [--batch B] [--lr X] [--seed S] [--save PREFIX]
/// [--break NODE[:before|:after]]… [--break-on [grad ]COND]… [--dump DIR]`.
struct TrainOptions {
    std::string model;
    std::string data; ///< "": the sample's own data set
    int augment = -1; ///< augmented copies of each training image; -1: the sample's default
    int epochs = 0; ///< 0: the sample's default
    int64_t batch = 0;
    double lr = 0;
    uint64_t seed = 0;
    std::string save;
    std::vector<std::string> breaks;
    std::vector<std::string> breakOn;
    std::string dump;
};

/// Trains a built-in sample on its own data, printing the loss and accuracies of each epoch; with
/// --save writes PREFIX-symbol.json and PREFIX-0000.params (MXNet's files). Returns an exit status.
///
/// With --break / --break-on every mini-batch step runs in a debug session (forward, loss,
/// backward: nodes `<node>_backward` take breakpoints too; "grad naninf", "grad norm>T" test
/// gradients only). At the first hit it prints the epoch and step, the paused node as `run --break`
/// does, writes its tensors with --dump, stops (that step updates nothing) and returns kOk without
/// saving. A --break node the training graph does not have is kUsage.
int trainCommand(const TrainOptions& options);

} // namespace opscope::cli
