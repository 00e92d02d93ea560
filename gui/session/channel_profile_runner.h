#pragma once

// What a layer's channels respond to, over a data set (engine/debug/channel_profile.h), computed on
// a worker with a model instance of its own, cancellable, with progress, and cached on disk beside
// the window's settings: computed once per model, data set and layer.

#include "debug/channel_profile.h"
#include "tensor/tensor.h"

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "gui/session/parameter_snapshot.h"

#include <QFuture>
#include <QThreadPool>
#include <QObject>
#include <QString>

namespace opscope::gui {

struct ChannelProfileRequest {
    QString model; ///< sample:NAME, a -symbol.json or a .onnx
    QString params;
    QString dataSet; ///< mnist, fashion or digits (its held-out part)
    QString layer; ///< the node whose output's channels are profiled
    /// The weights to profile with (the window's, which training may have changed since loading);
    /// empty: the model's own. weightsKey identifies them in the cache.
    ParameterSnapshot weights;
    QString weightsKey;
};

struct ChannelProfileResult {
    ChannelProfileRequest request;
    debug::LayerProfile profile;
    Tensor images; ///< the data set's images the examples index
    std::vector<std::string> classNames;
    bool fromCache = false;
};
using ChannelProfileResultPtr = std::shared_ptr<const ChannelProfileResult>;

/// One profile at a time: a newer start cancels the one still going. Signals arrive on the runner's
/// (GUI) thread; the destructor cancels and waits.
class ChannelProfileRunner : public QObject {
    Q_OBJECT
public:
    explicit ChannelProfileRunner(QObject* parent = nullptr);
    ~ChannelProfileRunner() override;

    void start(const ChannelProfileRequest& request);
    void cancel();
    bool isRunning() const { return m_running > 0; }
    bool waitForIdle(int timeoutMs = 120000);

    /// The folder of cached profiles: `profiles/` beside the settings file.
    static QString cacheFolder();
    /// The cache file of a request (the model file's size and time are part of its key).
    static QString cacheFile(const ChannelProfileRequest& request);
    /// The data sets that fit a model's input shape (without batch): (1, 28, 28) takes mnist, fashion
    /// and digits; anything else none.
    static QStringList dataSetsFor(const std::vector<int64_t>& inputShape);
    /// The whole job, synchronously (what start() runs on a worker).
    static ChannelProfileResultPtr compute(
        const ChannelProfileRequest& request, const std::function<bool(int64_t, int64_t)>& progress);

Q_SIGNALS:
    void progress(int done, int total);
    void finished(opscope::gui::ChannelProfileResultPtr result);
    void failed(const QString& error);

private:
    std::shared_ptr<std::atomic<quint64>> m_current;
    quint64 m_generation = 0;
    int m_running = 0;
    QFuture<void> m_job;
    QThreadPool m_pool;
};

} // namespace opscope::gui

Q_DECLARE_METATYPE(opscope::gui::ChannelProfileResultPtr)
