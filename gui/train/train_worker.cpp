#include "gui/train/train_worker.h"

#include "core/error.h"
#include "gluon/autograd.h"
#include "gluon/loss.h"
#include "gluon/metric.h"
#include "gluon/trainer.h"
#include "models/real_data.h"
#include "models/registry.h"
#include "tensor/random.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <cmath>
#include <numeric>

#include <QPainter>

namespace opscope::gui {

namespace {

using Clock = std::chrono::steady_clock;

// Rows [begin, end) of `t`.
Tensor rows(const Tensor& t, int64_t begin, int64_t end)
{
    Shape s = t.shape();
    s[0] = end - begin;
    Tensor out(s);
    const int64_t row = t.shape().product(1, t.ndim());
    std::copy_n(t.data() + begin * row, (end - begin) * row, out.data());
    return out;
}

// The fraction of `data` classified right; -1 when stopped.
double accuracyOf(gluon::HybridBlock& block, const samples::Dataset& data, const std::function<bool()>& stop)
{
    gluon::Accuracy metric;
    const int64_t n = data.data.shape()[0];
    constexpr int64_t kBatch = 256;
    for (int64_t b = 0; b < n; b += kBatch) {
        if (stop && stop()) return -1;
        const int64_t e = std::min(n, b + kBatch);
        metric.update({ rows(data.label, b, e) }, { block.call(rows(data.data, b, e)) });
    }
    return metric.get().second;
}

// The data of the last training (lenet's 14,000 digits take about a second to draw): a next
// training or debug step of the same sample and seed starts at once. Tensors are shared, never
// written, so copies of the setup may be used by one training thread after another.
struct SetupCache {
    std::mutex mutex;
    std::string sample; // "sample/data"
    uint64_t seed = 0;
    std::optional<samples::TrainSetup> setup;
};

SetupCache& setupCache()
{
    static SetupCache cache;
    return cache;
}

bool lastSetup(const std::string& sample, uint64_t seed, samples::TrainSetup& out)
{
    SetupCache& c = setupCache();
    std::lock_guard lock(c.mutex);
    if (!c.setup || c.sample != sample || c.seed != seed) return false;
    out = *c.setup;
    return true;
}

void keepSetup(const std::string& sample, uint64_t seed, const samples::TrainSetup& setup)
{
    SetupCache& c = setupCache();
    std::lock_guard lock(c.mutex);
    c.sample = sample;
    c.seed = seed;
    c.setup = setup;
}

std::vector<GradientInfo> gradientsOf(gluon::HybridBlock& block, bool values = false)
{
    std::vector<GradientInfo> out;
    for (const gluon::ParamPtr& p : block.collect_params().values()) {
        if (!p->initialized() || (!values && p->grad_req() == "null")) continue;
        Tensor g;
        try {
            g = values ? p->data().copy() : p->grad().copy();
        } catch (const Error&) {
            continue; // no gradient yet
        }
        GradientInfo info;
        info.name = p->name();
        info.shape = g.shape();
        info.stats = debug::computeStats(g.view());
        info.histogram = debug::computeHistogram(g.view(), info.stats, 40);
        out.push_back(std::move(info));
    }
    return out;
}

} // namespace

QColor classColor(int c)
{
    static const QColor kColors[] = { QColor(0x1f, 0x77, 0xb4), QColor(0xff, 0x7f, 0x0e), QColor(0x2c, 0xa0, 0x2c),
        QColor(0xd6, 0x27, 0x28), QColor(0x94, 0x67, 0xbd), QColor(0x8c, 0x56, 0x4b), QColor(0xe3, 0x77, 0xc2),
        QColor(0x7f, 0x7f, 0x7f), QColor(0xbc, 0xbd, 0x22), QColor(0x17, 0xbe, 0xcf) };
    return kColors[static_cast<size_t>(std::max(0, c)) % std::size(kColors)];
}

void reinitialiseFromSample(gluon::HybridBlock& block, const std::string& sample, uint64_t seed)
{
    const samples::Sample fresh = samples::makeSample(sample, seed, false);
    const gluon::ParameterDict from = fresh.block->collect_params();
    // Parameters of unknown shape are initialised at the first forward.
    const bool deferred = std::any_of(
        from.values().begin(), from.values().end(), [](const gluon::ParamPtr& p) { return !p->initialized(); });
    if (deferred && !fresh.defaultInputs.empty()) fresh.block->call(fresh.defaultInputs);
    for (const gluon::ParamPtr& p : block.collect_params().values()) {
        if (!from.contains(p->name())) throw Error("the fresh " + sample + " has no parameter " + p->name());
        const gluon::ParamPtr& src = from.at(p->name());
        p->set_data(src->data().copy());
    }
}

QImage decisionImage(gluon::HybridBlock& block, const samples::Dataset& data, int grid, int size)
{
    const Tensor& pts = data.data;
    const int64_t n = pts.shape()[0];
    if (pts.ndim() != 2 || pts.shape()[1] != 2 || n == 0 || grid < 2) return {};
    float x0 = pts.at(0), x1 = x0, y0 = pts.at(1), y1 = y0;
    for (int64_t i = 0; i < n; ++i) {
        x0 = std::min(x0, pts.at(2 * i));
        x1 = std::max(x1, pts.at(2 * i));
        y0 = std::min(y0, pts.at(2 * i + 1));
        y1 = std::max(y1, pts.at(2 * i + 1));
    }
    const float mx = 0.08f * (x1 - x0) + 1e-3f, my = 0.08f * (y1 - y0) + 1e-3f;
    x0 -= mx, x1 += mx, y0 -= my, y1 += my;

    // The grid's points, row 0 at the top (largest y).
    Tensor lattice(Shape { static_cast<int64_t>(grid) * grid, 2 });
    for (int r = 0; r < grid; ++r)
        for (int c = 0; c < grid; ++c) {
            const int64_t i = static_cast<int64_t>(r) * grid + c;
            lattice.at(2 * i) = x0 + (x1 - x0) * (static_cast<float>(c) + 0.5f) / static_cast<float>(grid);
            lattice.at(2 * i + 1) = y1 - (y1 - y0) * (static_cast<float>(r) + 0.5f) / static_cast<float>(grid);
        }
    const Tensor logits = block.call(lattice);
    if (logits.ndim() != 2 || logits.shape()[0] != lattice.shape()[0]) return {};
    const int64_t k = logits.shape()[1];
    QImage small(grid, grid, QImage::Format_RGB32);
    for (int r = 0; r < grid; ++r) {
        auto* line = reinterpret_cast<QRgb*>(small.scanLine(r));
        for (int c = 0; c < grid; ++c) {
            const float* z = logits.data() + (static_cast<int64_t>(r) * grid + c) * k;
            const int64_t best = std::max_element(z, z + k) - z;
            double sum = 0;
            for (int64_t j = 0; j < k; ++j)
                sum += std::exp(static_cast<double>(z[j] - z[best]));
            // Confidence 1/k..1 → tint 0.15..0.55 of the class colour over white.
            const double conf = (1.0 / sum - 1.0 / static_cast<double>(k)) / (1.0 - 1.0 / static_cast<double>(k));
            const double a = 0.15 + 0.4 * std::clamp(conf, 0.0, 1.0);
            const QColor col = classColor(static_cast<int>(best));
            auto mix = [a](int v) { return static_cast<int>(std::lround(255.0 * (1 - a) + v * a)); };
            line[c] = qRgb(mix(col.red()), mix(col.green()), mix(col.blue()));
        }
    }
    QImage img = small.scaled(size, size, Qt::IgnoreAspectRatio, Qt::SmoothTransformation);
    QPainter p(&img);
    p.setRenderHint(QPainter::Antialiasing);
    const double sx = size / static_cast<double>(x1 - x0), sy = size / static_cast<double>(y1 - y0);
    const double radius = size >= 300 ? 2.4 : 1.8;
    for (int64_t i = 0; i < n; ++i) {
        const QColor col = classColor(static_cast<int>(data.label.at(i)));
        p.setPen(QPen(col.darker(150), 0.6));
        p.setBrush(col);
        p.drawEllipse(QPointF((pts.at(2 * i) - x0) * sx, (y1 - pts.at(2 * i + 1)) * sy), radius, radius);
    }
    p.end();
    return img;
}

bool runTraining(gluon::HybridBlock& block, const TrainConfig& config, const TrainCallbacks& cb,
    const std::shared_ptr<TrainState>& state)
{
    const auto stopped = [&] { return cb.shouldStop && cb.shouldStop(); };
    const auto status = [&](const QString& s) {
        if (cb.onStatus) cb.onStatus(s);
    };
    if (config.batch < 1) throw UsageError("the batch size must be at least 1");
    if (config.epochs < 1) throw UsageError("train at least one epoch");
    if (config.learningRate <= 0) throw UsageError("the learning rate must be positive");

    samples::TrainSetup setup;
    const std::string key = config.sample + "/" + config.data;
    if (!lastSetup(key, config.seed, setup)) {
        status(QStringLiteral("Reading the training data…"));
        setup = samples::trainingSetup(config.sample, config.seed, config.data);
        keepSetup(key, config.seed, setup);
    }
    const auto testSet = std::make_shared<const samples::Dataset>(setup.test);
    std::vector<std::string> classNames;
    if (setup.data == "fashion") classNames = samples::fashionClassNames();
    if (stopped()) return false;
    if (config.fromInitial) reinitialiseFromSample(block, config.sample, config.seed);
    const bool twoD = setup.train.data.ndim() == 2 && setup.train.data.shape()[1] == 2;

    if (!block.active()) block.hybridize();
    const std::shared_ptr<TrainState> st = state ? state : std::make_shared<TrainState>();
    if (!st->loss) {
        // Named as the first loss of a Gluon program, whatever losses were made before: breakpoints
        // on its nodes (and their `_backward` nodes) stay valid from one training to the next.
        st->loss = std::make_shared<gluon::SoftmaxCrossEntropyLoss>(
            -1, true, false, std::nullopt, 0, std::string("softmaxcrossentropyloss0_"));
        st->loss->hybridize();
    }
    if (!st->trainer)
        st->trainer = std::make_shared<gluon::Trainer>(block.collect_params(), config.optimizer,
            std::map<std::string, double> { { "learning_rate", config.learningRate } });
    const std::shared_ptr<gluon::HybridBlock>& loss = st->loss;
    const std::shared_ptr<gluon::Trainer>& trainer = st->trainer;
    int64_t steps = 0, skipped = 0;
    const int64_t n = setup.train.data.shape()[0];
    const int64_t batches = (n + config.batch - 1) / config.batch;
    // Steps to pass over, within the epochs asked for (a step past the last one starts again).
    const int64_t skip = batches * config.epochs > 0 ? config.skipSteps % (batches * config.epochs) : 0;
    const int64_t postEvery = std::max<int64_t>(1, batches / 10);
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    Generator shuffle(config.seed + 17);
    for (int epoch = 1; epoch <= config.epochs; ++epoch) {
        status(QStringLiteral("Epoch %1 of %2…").arg(epoch).arg(config.epochs));
        const auto t0 = Clock::now();
        for (int64_t i = n - 1; i > 0; --i)
            std::swap(order[static_cast<size_t>(i)], order[shuffle.next() % static_cast<uint64_t>(i + 1)]);
        double total = 0, chunk = 0;
        int64_t chunkCount = 0, batchIndex = 0, stepsThisEpoch = 0;
        for (int64_t b = 0; b < n; b += config.batch, ++batchIndex) {
            if (stopped()) return false;
            if (skipped < skip) {
                ++skipped;
                continue;
            }
            const size_t e = static_cast<size_t>(std::min(n, b + config.batch));
            const Tensor x = samples::gatherRows(setup.train.data, order, static_cast<size_t>(b), e);
            const Tensor y = samples::gatherRows(setup.train.label, order, static_cast<size_t>(b), e);
            double sum = 0;
            if (cb.step) {
                // A step in the debugger may pause for long: say which one it is.
                status(QStringLiteral("Epoch %1 of %2 · mini-batch %3 of %4 in the debugger")
                           .arg(epoch)
                           .arg(config.epochs)
                           .arg(batchIndex + 1)
                           .arg(batches));
                const std::optional<double> s = cb.step(x, y, loss, trainer, steps);
                if (!s) return false;
                sum = *s;
            } else {
                sum = samples::trainBatch(block, *loss, *trainer, x, y);
            }
            ++stepsThisEpoch;
            ++steps;
            total += sum;
            chunk += sum;
            chunkCount += x.shape()[0];
            const bool last = config.maxSteps > 0 && steps >= config.maxSteps;
            if (cb.onBatchLoss && (last || (batchIndex + 1) % postEvery == 0 || batchIndex + 1 == batches)) {
                const double position = epoch - 1 + static_cast<double>(e) / static_cast<double>(n);
                cb.onBatchLoss(position, chunk / static_cast<double>(chunkCount));
                chunk = 0;
                chunkCount = 0;
            }
            if (last) {
                status(QStringLiteral("Training step %1 done (epoch %2, mini-batch %3 of %4)")
                           .arg(skip + steps)
                           .arg(epoch)
                           .arg(batchIndex + 1)
                           .arg(batches));
                return true;
            }
        }
        if (stepsThisEpoch == 0) continue; // passed over entirely: no epoch to report
        EpochResult result;
        result.gradients = gradientsOf(block);
        result.weights = gradientsOf(block, true);
        result.report.epoch = epoch;
        result.report.loss = total / static_cast<double>(n);
        result.report.trainAccuracy = accuracyOf(block, setup.train, cb.shouldStop);
        if (result.report.trainAccuracy < 0) return false;
        std::optional<samples::Evaluation> test = samples::evaluate(block, setup.test, 256, cb.shouldStop);
        if (!test) return false;
        result.report.testAccuracy = test->accuracy;
        result.test = std::move(*test);
        result.testSet = testSet;
        result.classNames = classNames;
        if (twoD) result.decision = decisionImage(block, setup.train);
        result.report.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
        if (cb.onEpoch) cb.onEpoch(std::move(result));
    }
    return true;
}

} // namespace opscope::gui
