#include "gui/session/compare_runner.h"

#include "debug/compare_match.h"
#include "debug/compare_sources.h"
#include "load/model_loader.h"

#include <chrono>
#include <future>

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrent>

namespace opscope::gui {

QString CompareSpec::describeB() const
{
    QStringList parts;
    switch (source) {
    case Source::OtherModel:
        parts << QFileInfo(modelB).fileName();
        break;
    case Source::Saved:
        parts << QStringLiteral("saved run %1").arg(QFileInfo(savedB).fileName());
        break;
    case Source::SameModel:
        break;
    }
    if (!paramsB.isEmpty()) parts << QFileInfo(paramsB).fileName();
    if (source != Source::Saved) {
        if (kernelsB == KernelKind::Reference) parts << QStringLiteral("reference kernels");
        if (kernelsB == KernelKind::Dnnl) parts << QStringLiteral("oneDNN kernels");
        if (modeB == debug::RunMode::Eager) parts << QStringLiteral("eager");
        if (modeB == debug::RunMode::StaticAlloc) parts << QStringLiteral("static_alloc");
        if (modeB == debug::RunMode::StaticShape) parts << QStringLiteral("static_shape");
        if (!inputsB.isEmpty()) parts << QStringLiteral("inputs %1").arg(inputsB.join(QStringLiteral(" ")));
        for (const PrecisionRule& r : precisionB)
            parts << QStringLiteral("%1 on %2")
                         .arg(QString::fromLatin1(precisionName(r.precision)),
                             r.target == "all" ? QStringLiteral("all nodes") : QString::fromStdString(r.target));
    }
    if (!mapFile.isEmpty()) parts << QStringLiteral("names by %1").arg(QFileInfo(mapFile).fileName());
    return parts.isEmpty() ? QStringLiteral("the same run again") : parts.join(QStringLiteral(", "));
}

CompareRunner::CompareRunner(QObject* parent)
    : QObject(parent)
{
    qRegisterMetaType<CompareResultPtr>();
}

CompareRunner::~CompareRunner()
{
    for (QFuture<void>& f : m_jobs)
        f.waitForFinished();
}

namespace {
std::vector<Tensor> inputsFor(const load::LoadedModel& m, const std::vector<Tensor>& inputs)
{
    std::vector<Tensor> own;
    for (const Tensor& t : inputs)
        own.push_back(t.copy()); // the session's run may read the window's tensors meanwhile
    return load::withLabels(m, std::move(own));
}

// Completes a block's deferred parameter initialisation for these inputs (what its first call
// would do, drawing from the process's generator) on this thread.
void initialise(const load::LoadedModel& m, const std::vector<Tensor>& inputs)
{
    if (m.block->hasFixedGraph()) return;
    std::vector<Shape> shapes;
    for (const Tensor& t : inputs)
        shapes.push_back(t.shape());
    m.block->initializeFor(shapes);
}
}

CompareResultPtr CompareRunner::compute(
    const QString& modelA, const QString& paramsA, const std::vector<Tensor>& inputs, const CompareSpec& spec)
{
    QElapsedTimer clock;
    clock.start();
    auto result = std::make_shared<CompareResult>();
    result->spec = spec;
    result->modelA = modelA;
    // Both models are made and their deferred parameters initialised here, one after the other
    // (making a sample seeds the process's generator); then B runs on a thread of its own while A
    // runs here. A saved run B is read after A: it is matched by A's names.
    load::LoadedModel a = load::loadModel(modelA.toStdString(), paramsA.toStdString(), 0);
    const std::vector<Tensor> inputsA = inputsFor(a, inputs);
    initialise(a, inputsA);
    std::future<std::shared_ptr<const Graph>> futureB;
    if (spec.source != CompareSpec::Source::Saved) {
        const std::string modelB = spec.source == CompareSpec::Source::OtherModel ? spec.modelB.toStdString() : modelA.toStdString();
        const std::string paramsB = !spec.paramsB.isEmpty() ? spec.paramsB.toStdString()
            : spec.source == CompareSpec::Source::SameModel ? paramsA.toStdString()
                                                            : std::string();
        auto b = std::make_shared<load::LoadedModel>(load::loadModel(modelB, paramsB, 0));
        std::vector<std::string> specs;
        for (const QString& i : spec.inputsB)
            specs.push_back(i.toStdString());
        auto inputsB = std::make_shared<const std::vector<Tensor>>(
            specs.empty() ? inputsFor(*b, inputs) : load::gatherInputs(*b, specs, 0));
        initialise(*b, *inputsB);
        futureB = std::async(std::launch::async, [b, inputsB, &spec, &result]() -> std::shared_ptr<const Graph> {
            return debug::recordBlockRun(*b->block, *inputsB, spec.kernelsB, spec.precisionB, result->b, spec.modeB);
        });
    }
    try {
        result->graph = debug::recordBlockRun(*a.block, inputsA, KernelKind::Auto, {}, result->a);
    } catch (...) {
        if (futureB.valid()) futureB.wait();
        throw;
    }
    if (futureB.valid()) {
        const std::shared_ptr<const Graph> graphB = futureB.get();
        // Another model: what its names do not meet is matched by position and operator.
        if (spec.source == CompareSpec::Source::OtherModel && graphB) {
            const auto byPosition = debug::matchByPosition(*result->graph, result->a, *graphB, result->b);
            result->b = debug::renamed(std::move(result->b), byPosition);
        }
    } else {
        const std::string saved = spec.savedB.toStdString();
        result->b = QFileInfo(spec.savedB).isDir() ? debug::readDumpFolder(saved, result->a) : debug::readNpzRun(saved);
    }
    if (!spec.mapFile.isEmpty())
        result->b = debug::renamed(
            std::move(result->b), debug::readNameMap(spec.mapFile.toStdString(), *result->graph, result->a));
    result->comparison = debug::compareRuns(*result->graph, result->a, result->b, spec.tol);
    result->elapsedMs = clock.elapsed();
    return result;
}

void CompareRunner::start(const QString& modelA, const QString& paramsA, std::vector<Tensor> inputs, const CompareSpec& spec)
{
    const quint64 generation = ++m_generation;
    ++m_running;
    Q_EMIT started();
    struct Outcome {
        CompareResultPtr result;
        QString error;
    };
    auto* watcher = new QFutureWatcher<Outcome>(this);
    connect(watcher, &QFutureWatcher<Outcome>::finished, this, [this, watcher, generation] {
        watcher->deleteLater();
        --m_running;
        if (generation != m_generation) return; // superseded
        const Outcome o = watcher->result();
        if (o.result)
            Q_EMIT finished(o.result);
        else
            Q_EMIT failed(o.error);
    });
    QFuture<Outcome> job = QtConcurrent::run([modelA, paramsA, inputs = std::move(inputs), spec]() -> Outcome {
        try {
            return { compute(modelA, paramsA, inputs, spec), {} };
        } catch (const std::bad_alloc&) {
            return { nullptr, QStringLiteral("out of memory comparing the runs") };
        } catch (const std::exception& e) {
            return { nullptr, QString::fromStdString(e.what()) };
        }
    });
    m_jobs.erase(std::remove_if(m_jobs.begin(), m_jobs.end(), [](const QFuture<void>& f) { return f.isFinished(); }),
        m_jobs.end());
    m_jobs.append(QFuture<void>(job));
    watcher->setFuture(job);
}

bool CompareRunner::waitForIdle(int timeoutMs)
{
    QElapsedTimer t;
    t.start();
    while (m_running > 0 && t.elapsed() < timeoutMs) {
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
        QThread::msleep(2);
    }
    return m_running == 0;
}

} // namespace opscope::gui
