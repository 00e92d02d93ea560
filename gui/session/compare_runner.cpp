#include "gui/session/compare_runner.h"

#include "gui/session/session_controller.h"

#include <algorithm>

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QThread>

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

debug::CompareRequest CompareSpec::request(std::vector<Tensor> inputsA) const
{
    debug::CompareRequest r;
    r.source = source == Source::OtherModel ? debug::CompareRequest::Source::OtherModel
        : source == Source::Saved           ? debug::CompareRequest::Source::Saved
                                            : debug::CompareRequest::Source::SameModel;
    r.modelB = modelB.toStdString();
    r.paramsB = paramsB.toStdString();
    r.savedB = savedB.toStdString();
    r.kernelsB = kernelsB;
    r.modeB = modeB;
    for (const QString& i : inputsB)
        r.inputsB.push_back(i.toStdString());
    r.precisionB = precisionB;
    r.mapFile = mapFile.toStdString();
    r.tol = tol;
    r.inputsA = std::move(inputsA);
    return r;
}

bool CompareResult::inA(const std::string& name) const
{
    return valuesHere ? a.tensors.count(name) > 0 : std::find(a.order.begin(), a.order.end(), name) != a.order.end();
}

CompareRunner::CompareRunner(SessionController* controller, QObject* parent)
    : QObject(parent)
    , m_controller(controller)
{
    qRegisterMetaType<CompareResultPtr>();
}

void CompareRunner::start(const QString& modelA, std::vector<Tensor> inputs, const CompareSpec& spec)
{
    const quint64 generation = ++m_generation;
    ++m_running;
    Q_EMIT started();
    using Compared = SessionController::Compared;
    auto* watcher = new QFutureWatcher<Compared>(this);
    connect(watcher, &QFutureWatcher<Compared>::finished, this, [this, watcher, generation, modelA, spec] {
        watcher->deleteLater();
        --m_running;
        if (generation != m_generation) return; // superseded
        const Compared c = watcher->result();
        if (!c.outcome) {
            Q_EMIT failed(c.error);
            return;
        }
        auto result = std::make_shared<CompareResult>();
        result->spec = spec;
        result->modelA = modelA;
        result->graph = c.outcome->graph;
        result->a = c.outcome->a; // the tensors share the engine's storage
        result->b = c.outcome->b;
        result->comparison = c.outcome->comparison;
        result->elapsedMs = c.outcome->elapsedMs;
        result->valuesHere = c.outcome->valuesHere;
        result->id = c.outcome->id;
        Q_EMIT finished(result);
    });
    watcher->setFuture(m_controller->compare(spec.request(std::move(inputs))));
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
