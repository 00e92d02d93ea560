#include "models/training.h"

#include "core/error.h"
#include "gluon/autograd.h"
#include "gluon/loss.h"
#include "gluon/metric.h"
#include "gluon/trainer.h"
#include "models/augment.h"
#include "models/real_data.h"
#include "tensor/random.h"

#include <algorithm>
#include <chrono>
#include <numeric>

namespace opscope::samples {

Tensor gatherRows(const Tensor& t, const std::vector<int64_t>& idx, size_t begin, size_t end)
{
    Shape s = t.shape();
    s[0] = static_cast<int64_t>(end - begin);
    Tensor out(s);
    const int64_t row = t.shape().product(1, t.ndim());
    for (size_t i = begin; i < end; ++i)
        std::copy_n(t.data() + idx[i] * row, row, out.data() + static_cast<int64_t>(i - begin) * row);
    return out;
}

double trainBatch(
    gluon::HybridBlock& block, gluon::HybridBlock& loss, gluon::Trainer& trainer, const Tensor& x, const Tensor& y)
{
    Tensor l;
    {
        auto r = autograd::record();
        l = loss.call({ block.call(x), y }).at(0);
    }
    autograd::backward(l);
    trainer.step(x.shape()[0]);
    double sum = 0;
    for (float v : l.values())
        sum += v;
    return sum;
}

bool hasTrainingData(const std::string& sample)
{
    return sample == "mlp" || sample == "lenet" || sample == "fashion";
}

TrainSetup trainingDefaults(const std::string& sample)
{
    TrainSetup s;
    if (sample == "mlp") {
        s.data = "spirals";
        s.optimizer = "adam";
        s.learningRate = 0.01;
        s.epochs = 40;
        s.batch = 32;
    } else if (sample == "lenet") {
        s.data = "mnist";
        s.augment = 2;
        s.optimizer = "adam";
        s.learningRate = 0.003;
        s.epochs = 15;
        s.decayEpochs = 4;
        s.batch = 64;
    } else if (sample == "fashion") {
        s.data = "fashion";
        s.optimizer = "adam";
        s.learningRate = 0.002;
        s.epochs = 8;
        s.decayEpochs = 2;
        s.batch = 64;
    } else {
        throw UsageError("sample '" + sample + "' has no training data (mlp, lenet and fashion have)");
    }
    return s;
}

std::vector<std::string> dataSetsFor(const std::string& sample)
{
    const std::string own = trainingDefaults(sample).data;
    std::vector<std::string> out { own };
    const bool points = own == "spirals" || own == "moons";
    for (const std::string& d : points ? std::vector<std::string> { "spirals", "moons" }
                                       : std::vector<std::string> { "mnist", "fashion", "digits" })
        if (d != own) out.push_back(d);
    return out;
}

TrainSetup trainingSetup(const std::string& sample, uint64_t seed, const std::string& data, int augmentCopies)
{
    TrainSetup s = trainingDefaults(sample);
    const std::string name = data.empty() ? s.data : data;
    const std::vector<std::string> fits = dataSetsFor(sample);
    const std::vector<std::string>& all = dataSetNames();
    if (std::find(all.begin(), all.end(), name) == all.end())
        throw UsageError("unknown data set '" + name + "' (known: mnist, fashion, digits, spirals, moons)");
    if (std::find(fits.begin(), fits.end(), name) == fits.end()) {
        std::string known;
        for (const std::string& d : fits)
            known += (known.empty() ? "" : ", ") + d;
        const bool points = name == "spirals" || name == "moons";
        throw UsageError("sample '" + sample + "' cannot train on '" + name + "': its input takes "
            + (fits.front() == "spirals" ? "2-D points (N, 2)" : "28×28 images (N, 1, 28, 28)") + ", '" + name
            + "' gives " + (points ? "2-D points" : "28×28 images") + " (it trains on " + known + ")");
    }
    DataSplit split = loadDataSet(name, seed);
    s.data = name;
    if (augmentCopies >= 0) s.augment = augmentCopies;
    if (name == "spirals" || name == "moons") s.augment = 0;
    s.train = augment(split.train, s.augment, seed);
    s.test = std::move(split.test);
    return s;
}

double accuracy(gluon::HybridBlock& block, const Dataset& data, int64_t batch)
{
    gluon::Accuracy metric;
    const int64_t n = data.data.shape()[0];
    std::vector<int64_t> idx(static_cast<size_t>(n));
    std::iota(idx.begin(), idx.end(), 0);
    for (int64_t b = 0; b < n; b += batch) {
        const size_t e = static_cast<size_t>(std::min(n, b + batch));
        const Tensor x = gatherRows(data.data, idx, static_cast<size_t>(b), e);
        const Tensor y = gatherRows(data.label, idx, static_cast<size_t>(b), e);
        metric.update({ y }, { block.call(x) });
    }
    return metric.get().second;
}

std::vector<EpochReport> train(gluon::HybridBlock& block, const TrainSetup& setup, uint64_t seed,
    const std::function<void(const EpochReport&)>& onEpoch, const StepFunction& step)
{
    if (setup.batch < 1 || setup.epochs < 0) throw UsageError("train: the batch size must be at least 1");
    block.hybridize();
    gluon::SoftmaxCrossEntropyLoss loss;
    loss.hybridize();
    gluon::Trainer trainer(block.collect_params(), setup.optimizer, { { "learning_rate", setup.learningRate } });
    const int64_t n = setup.train.data.shape()[0];
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    Generator shuffle(seed + 17);
    std::vector<EpochReport> reports;
    for (int epoch = 1; epoch <= setup.epochs; ++epoch) {
        const auto t0 = std::chrono::steady_clock::now();
        if (setup.decayEpochs > 0 && epoch == setup.epochs - setup.decayEpochs + 1)
            trainer.set_learning_rate(setup.learningRate / 10);
        for (int64_t i = n - 1; i > 0; --i)
            std::swap(order[static_cast<size_t>(i)], order[shuffle.next() % static_cast<uint64_t>(i + 1)]);
        double total = 0;
        for (int64_t b = 0; b < n; b += setup.batch) {
            const size_t e = static_cast<size_t>(std::min(n, b + setup.batch));
            const Tensor x = gatherRows(setup.train.data, order, static_cast<size_t>(b), e);
            const Tensor y = gatherRows(setup.train.label, order, static_cast<size_t>(b), e);
            if (!step) {
                total += trainBatch(block, loss, trainer, x, y);
                continue;
            }
            const std::optional<double> sum = step(x, y, epoch, b / setup.batch);
            if (!sum) return reports;
            total += *sum;
        }
        EpochReport r;
        r.epoch = epoch;
        r.loss = total / static_cast<double>(n);
        r.trainAccuracy = accuracy(block, setup.train);
        r.testAccuracy = accuracy(block, setup.test);
        r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        reports.push_back(r);
        if (onEpoch) onEpoch(r);
    }
    return reports;
}

} // namespace opscope::samples
