#include "gui/session/channel_profile_runner.h"

#include "load/model_loader.h"
#include "load/onnx_loader.h"
#include "models/real_data.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QPointer>
#include <QSaveFile>
#include <QSettings>
#include <QtConcurrent/QtConcurrent>

namespace opscope::gui {

ChannelProfileRunner::ChannelProfileRunner(QObject* parent)
    : QObject(parent)
    , m_current(std::make_shared<std::atomic<quint64>>(0))
{
    qRegisterMetaType<ChannelProfileResultPtr>();
    m_pool.setMaxThreadCount(1); // one profile at a time, off the shared pool the window loads models on
}

ChannelProfileRunner::~ChannelProfileRunner()
{
    m_current->store(0);
    m_pool.waitForDone();
}

QString ChannelProfileRunner::cacheFolder()
{
    return QFileInfo(QSettings().fileName()).absolutePath() + QStringLiteral("/profiles");
}

QString ChannelProfileRunner::cacheFile(const ChannelProfileRequest& r)
{
    QByteArray key = (r.model + QLatin1Char('\n') + r.params + QLatin1Char('\n') + r.dataSet + QLatin1Char('\n') + r.layer).toUtf8();
    for (const QString& path : { r.model, r.params }) {
        const QFileInfo f(path);
        if (!path.isEmpty() && f.exists())
            key += QByteArray::number(f.size()) + ':' + QByteArray::number(f.lastModified().toMSecsSinceEpoch());
    }
    if (r.model.startsWith(QStringLiteral("sample:"))) key += QCoreApplication::applicationVersion().toUtf8(); // shipped weights
    key += r.weightsKey.toUtf8(); // the weights the window has (trained since loading, say)
    // Where the data set is read from, and its files' sizes and times.
    const QString folder = r.dataSet == QStringLiteral("mnist") ? QString::fromStdString(samples::mnistFolder().string())
        : r.dataSet == QStringLiteral("fashion")                ? QString::fromStdString(samples::fashionFolder().string())
                                                                : QString();
    if (!folder.isEmpty()) {
        key += folder.toUtf8();
        for (const QFileInfo& f : QDir(folder).entryInfoList(QDir::Files, QDir::Name))
            key += f.fileName().toUtf8() + QByteArray::number(f.size()) + ':' + QByteArray::number(f.lastModified().toMSecsSinceEpoch());
    }
    return cacheFolder() + QLatin1Char('/') + QString::fromLatin1(QCryptographicHash::hash(key, QCryptographicHash::Sha1).toHex())
        + QStringLiteral(".json");
}

QStringList ChannelProfileRunner::dataSetsFor(const std::vector<int64_t>& s)
{
    if (s == std::vector<int64_t> { 1, 28, 28 }) return { QStringLiteral("mnist"), QStringLiteral("fashion"), QStringLiteral("digits") };
    return {};
}

ChannelProfileResultPtr ChannelProfileRunner::compute(
    const ChannelProfileRequest& r, const std::function<bool(int64_t, int64_t)>& progress)
{
    auto result = std::make_shared<ChannelProfileResult>();
    result->request = r;
    const std::string data = r.dataSet.toStdString();
    samples::DataSplit split = samples::loadDataSet(data, 0);
    result->images = split.test.data;
    if (data == "fashion") {
        result->classNames = samples::fashionClassNames();
    } else {
        for (int d = 0; d < 10; ++d)
            result->classNames.push_back(std::to_string(d));
    }
    const QString file = cacheFile(r);
    QFile cached(file);
    if (cached.open(QIODevice::ReadOnly)) {
        try {
            result->profile = debug::layerProfileFromJson(cached.readAll().toStdString(), file.toStdString());
            // Only a profile that fits these images is used (a damaged or stale file is computed again).
            bool fits = result->profile.layer == r.layer.toStdString() && !result->profile.cancelled
                && result->profile.samples == split.test.data.shape()[0];
            for (const debug::ChannelProfile& c : result->profile.channels) {
                fits = fits && c.meanPerClass.size() == static_cast<size_t>(result->profile.classes);
                for (const debug::ChannelExample& e : c.top)
                    fits = fits && e.sample >= 0 && e.sample < split.test.data.shape()[0] && e.field.top >= 0 && e.field.left >= 0
                        && e.field.bottom < split.test.data.shape()[2] && e.field.right < split.test.data.shape()[3]
                        && e.field.top <= e.field.bottom && e.field.left <= e.field.right;
            }
            if (fits) {
                result->fromCache = true;
                return result;
            }
        } catch (const std::exception&) {
            // A damaged cache file is computed again (and replaced).
        }
    }
    if (progress && !progress(0, split.test.data.shape()[0])) {
        result->profile.cancelled = true;
        return result;
    }
    load::LoadedModel m = load::loadModel(r.model.toStdString(), r.params.toStdString(), 0);
    if (m.inputNames.size() != 1) throw UsageError("profiling a layer needs a model of one input");
    applyParameters(*m.block, r.weights);
    Shape one = split.test.data.shape();
    one[0] = 1;
    load::fitToInputs(m, std::vector<Shape> { one });
    if (!m.block->hasFixedGraph()) m.block->initializeFor({ one });
    m.block->hybridize();
    debug::ProfileOptions o;
    o.layer = r.layer.toStdString();
    o.dataSet = data;
    o.progress = progress;
    result->profile = debug::profileLayer(*m.block, split.test.data, split.test.label, o);
    if (!result->profile.cancelled) {
        QDir().mkpath(cacheFolder());
        QSaveFile out(file);
        if (out.open(QIODevice::WriteOnly)) {
            out.write(QByteArray::fromStdString(debug::toJson(result->profile)));
            out.commit();
        }
    }
    return result;
}

void ChannelProfileRunner::start(const ChannelProfileRequest& request)
{
    const quint64 generation = ++m_generation;
    m_current->store(generation);
    ++m_running;
    QPointer<ChannelProfileRunner> self(this);
    auto current = m_current;
    auto deliver = [self, generation](auto fn) {
        QMetaObject::invokeMethod(
            QCoreApplication::instance(),
            [self, generation, fn] {
                if (!self) return;
                --self->m_running;
                if (generation == self->m_generation) fn(*self);
            },
            Qt::QueuedConnection);
    };
    m_job = QtConcurrent::run(&m_pool, [request, current, generation, self, deliver] {
        auto progress = [current, generation, self](int64_t done, int64_t total) {
            if (current->load() != generation) return false;
            QMetaObject::invokeMethod(
                QCoreApplication::instance(),
                [self, generation, done, total] {
                    if (self && generation == self->m_generation)
                        Q_EMIT self->progress(static_cast<int>(done), static_cast<int>(total));
                },
                Qt::QueuedConnection);
            return true;
        };
        try {
            ChannelProfileResultPtr result = compute(request, progress);
            if (result->profile.cancelled) {
                deliver([](ChannelProfileRunner&) {});
                return;
            }
            deliver([result](ChannelProfileRunner& r) { Q_EMIT r.finished(result); });
        } catch (const std::exception& e) {
            const QString message = QString::fromStdString(e.what());
            deliver([message](ChannelProfileRunner& r) { Q_EMIT r.failed(message); });
        }
    });
}

void ChannelProfileRunner::cancel()
{
    ++m_generation;
    m_current->store(m_generation);
}

bool ChannelProfileRunner::waitForIdle(int timeoutMs)
{
    QElapsedTimer t;
    t.start();
    while (m_running > 0 && t.elapsed() < timeoutMs) {
        m_job.waitForFinished();
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    }
    return m_running == 0;
}

} // namespace opscope::gui
