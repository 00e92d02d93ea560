#pragma once

#include <cstdint>
#include <string>

namespace opscope::cli {

/// `train sample:NAME [--epochs N] [--batch B] [--lr X] [--seed S] [--save PREFIX]`.
struct TrainOptions {
    std::string model;
    int epochs = 0; ///< 0: the sample's default
    int64_t batch = 0;
    double lr = 0;
    uint64_t seed = 0;
    std::string save;
};

/// Trains a built-in sample on its own data, printing the loss and accuracies of each epoch; with
/// --save writes PREFIX-symbol.json and PREFIX-0000.params (MXNet's files). Returns an exit status.
int trainCommand(const TrainOptions& options);

} // namespace opscope::cli
