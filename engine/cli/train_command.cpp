#include "cli/train_command.h"

#include "cli/commands.h"
#include "core/error.h"
#include "gluon/export.h"
#include "models/registry.h"
#include "models/training.h"

#include <cstdio>
#include <iostream>

namespace opscope::cli {

int trainCommand(const TrainOptions& o)
{
    if (o.model.rfind("sample:", 0) != 0) {
        std::cerr << "opscope-cli: train: " << o.model << ": only built-in samples train (sample:mlp, sample:lenet)\n";
        return kUsage;
    }
    const std::string name = o.model.substr(7);
    samples::Sample sample;
    samples::TrainSetup setup;
    try {
        sample = samples::makeSample(name, o.seed, false); // from its initial parameters, reproducibly
        setup = samples::trainingSetup(name, o.seed);
    } catch (const Error& e) {
        std::cerr << "opscope-cli: train: " << e.what() << "\n";
        return kUsage;
    }
    if (o.epochs > 0) setup.epochs = o.epochs;
    if (o.batch > 0) setup.batch = o.batch;
    if (o.lr > 0) setup.learningRate = o.lr;
    std::cout << "training " << name << ": " << setup.train.data.shape()[0] << " samples, "
              << setup.test.data.shape()[0] << " held out, " << setup.optimizer << " lr " << setup.learningRate
              << ", batch " << setup.batch << ", " << setup.epochs << " epochs\n";
    try {
        samples::train(*sample.block, setup, o.seed, [](const samples::EpochReport& r) {
            char line[160];
            std::snprintf(line, sizeof line, "epoch %d: loss %.4f  train accuracy %.4f  test accuracy %.4f  (%.1f s)",
                r.epoch, r.loss, r.trainAccuracy, r.testAccuracy, r.seconds);
            std::cout << line << std::endl;
        });
    } catch (const Error& e) {
        std::cerr << "opscope-cli: train: " << e.what() << "\n";
        return kRunFailed;
    }
    if (!o.save.empty()) {
        try {
            gluon::export_(*sample.block, o.save, 0);
        } catch (const Error& e) {
            std::cerr << "opscope-cli: train: " << e.what() << "\n";
            return kBadFile;
        }
        std::cout << "saved " << o.save << "-symbol.json and " << o.save << "-0000.params\n";
    }
    return kOk;
}

} // namespace opscope::cli
