#include "models/training.h"

#include "core/error.h"
#include "gluon/autograd.h"
#include "gluon/loss.h"
#include "gluon/metric.h"
#include "gluon/trainer.h"
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
    return sample == "mlp" || sample == "lenet";
}

TrainSetup trainingDefaults(const std::string& sample)
{
    TrainSetup s;
    if (sample == "mlp") {
        s.optimizer = "adam";
        s.learningRate = 0.01;
        s.epochs = 40;
        s.batch = 32;
    } else if (sample == "lenet") {
        s.optimizer = "adam";
        s.learningRate = 0.002;
        s.epochs = 6;
        s.batch = 64;
    } else {
        throw UsageError("sample '" + sample + "' has no training data (mlp and lenet have)");
    }
    return s;
}

TrainSetup trainingSetup(const std::string& sample, uint64_t seed)
{
    TrainSetup s = trainingDefaults(sample);
    if (sample == "mlp") {
        s.train = spirals(1500, 3, 0.15, seed * 2 + 1);
        s.test = spirals(600, 3, 0.15, seed * 2 + 2);
    } else {
        s.train = digits(12000, seed * 2 + 1);
        s.test = digits(2000, seed * 2 + 2);
    }
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
