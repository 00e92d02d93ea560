// MainWindow: attaching to a server's engine (File ▸ Attach to Server…, --attach), the banner when
// it is lost, control of a shared engine, and a server's paused tensors fetched with progress.

#include "gui/app/main_window.h"

#include "gui/explain/explain_panel.h"
#include "gui/graph/graph_model.h"
#include "gui/graph/graph_panel.h"
#include "gui/graph/graph_view.h"
#include "gui/inputs/input_panel.h"
#include "gui/panels/breakpoint_model.h"
#include "gui/remote/engine_banner.h"
#include "gui/tensor/inspected_tensor.h"
#include "gui/tensor/tensor_inspector.h"
#include "gui/tensor/value_format.h"
#include "gui/train/train_panel.h"
#include "remote/client.h"

#include <QAction>
#include <QBoxLayout>
#include <QElapsedTimer>
#include <QFutureWatcher>
#include <QLabel>
#include <QMenu>
#include <QPointer>
#include <QStatusBar>
#include <QtConcurrent/QtConcurrent>

namespace opscope::gui {

namespace {
    QString megabytes(size_t bytes)
    {
        return QStringLiteral("%1 MB").arg(static_cast<double>(bytes) / 1e6, 0, 'f', bytes < 10'000'000 ? 2 : 1);
    }
}

void MainWindow::buildAttach(QMenu* file)
{
    m_attachAction = file->addAction(tr("&Attach to Server…"), this, [this] { openAttachDialog(); });
    m_attachAction->setToolTip(tr("Debug the engine of opscope-server or of a program that serves its session"));
    m_detachAction = file->addAction(tr("&Detach from Server"), this, [this] { detachFromServer(); });
    m_controlAction = file->addAction(tr("Take &Control"), this, [this] {
        const bool ok = m_controller->hasControl() ? m_controller->releaseControl() : m_controller->takeControl();
        if (!ok) showMessage(tr("Control"), m_controller->lastError());
    });
    m_controlAction->setToolTip(tr("Several clients may attach: one holds control (its commands run), the others watch"));

    m_banner = new EngineBanner(m_graph);
    // Above everything the graph panel shows under its toolbar.
    if (auto* box = qobject_cast<QBoxLayout*>(m_graph->layout())) box->insertWidget(1, m_banner);
    connect(m_banner, &EngineBanner::reconnectRequested, this, [this] { reconnect(); });
    connect(m_banner, &EngineBanner::detachRequested, this, [this] { detachFromServer(); });

    m_engineLabel = new QLabel(this);
    m_engineLabel->setStyleSheet(QStringLiteral("QLabel { padding: 0 6px; }"));
    statusBar()->addPermanentWidget(m_engineLabel);

    connect(m_controller, &SessionController::attached, this, [this] { onAttachChanged(); });
    connect(m_controller, &SessionController::detached, this, [this] { onAttachChanged(); });
    connect(m_controller, &SessionController::engineLost, this, &MainWindow::onEngineLost);
    connect(m_controller, &SessionController::controlChanged, this, [this] {
        updateControlStatus();
        updateActions();
    });
}

void MainWindow::openAttachDialog()
{
    AttachDialog dialog(this);
    if (!m_server.address.isEmpty()) dialog.setServer(m_server);
    if (dialog.exec() != QDialog::Accepted) return;
    attachToServer(dialog.server(), dialog.typedToken(), dialog.watchOnly());
}

bool MainWindow::attachToServer(const ServerEntry& server, const QString& token, bool watchOnly)
{
    remote::ConnectOptions o;
    o.address = server.address.toStdString();
    o.tlsCaFile = server.tlsCa.toStdString();
    o.clientName = "opscope window";
    o.watchOnly = watchOnly;
    try {
        if (!token.isEmpty())
            o.token = token.toStdString();
        else if (!server.tokenFile.isEmpty())
            o.token = remote::readTokenFile(server.tokenFile.toStdString());
    } catch (const std::exception& e) {
        showMessage(tr("Attach to Server"), QString::fromStdString(e.what()));
        return false;
    }
    m_train->stopAndWait(3000); // a training here uses this process's engine
    m_stateLabel->setText(tr("Attaching to %1…").arg(server.address));
    if (!m_controller->attach(o)) {
        showMessage(tr("Attach to Server"), tr("%1: %2").arg(server.address, m_controller->lastError()));
        updateStatus();
        return false;
    }
    m_server = server; // for Reconnect: the server attached to, not one that refused
    m_serverToken = token;
    m_serverWatchOnly = watchOnly;
    rememberServer(server);
    return true;
}

void MainWindow::detachFromServer()
{
    ++*m_fetchGeneration; // a fetch still going on is for the server's pause: dropped (and cancelled)
    m_fetching = false;
    m_fetchText.clear();
    m_controller->detach();
}

bool MainWindow::reconnect()
{
    if (m_server.address.isEmpty()) return false;
    m_banner->showReconnecting(m_server.address);
    if (attachToServer(m_server, m_serverToken, m_serverWatchOnly)) return true;
    m_banner->showLost(tr("The engine on %1 is gone and did not answer again: %2")
                           .arg(m_server.address, m_controller->lastError()));
    return false;
}

void MainWindow::onAttachChanged()
{
    const bool attached = m_controller->isAttached();
    // The breakpoint table edits the engine the controller drives.
    m_breakpoints->setEngine(&m_controller->engine());
    syncBreakpointMarks();
    m_banner->hide();
    if (attached) {
        setWindowTitle(tr("%1 on %2 — opscope").arg(m_controller->model()->title, m_controller->engineLocation()));
        statusBar()->showMessage(tr("Attached to %1").arg(m_controller->engineLocation()), 8000);
    } else if (m_controller->model()) {
        setWindowTitle(QStringLiteral("%1 — opscope").arg(m_controller->model()->title));
    } else if (!m_scriptFinished) {
        openModel(QString::fromLatin1(kDefaultSample)); // started attached: this process had no model
    }
    updateControlStatus();
    updateActions();
    updateStatus();
}

void MainWindow::onEngineLost(const QString& why)
{
    ++*m_fetchGeneration;
    m_fetching = false;
    m_fetchText.clear();
    m_inspector->clear(tr("The engine is gone; the last values shown are not kept."));
    m_graph->model()->setPausedNode({}); // its pause went with it (the executed marks stay)
    m_banner->showLost(tr("The engine on %1 is gone: %2. The model stays drawn; Reconnect attaches again "
                          "(a server that restarted has its own breakpoints).")
                           .arg(m_controller->engineLocation(), why));
    updateControlStatus();
    updateActions();
    updateStatus();
    if (!m_options.screenshot.isEmpty() || m_options.quit) { // a scripted attach ends here
        if (m_exitStatus == kExitOk) m_exitStatus = kExitRunFailed;
        scriptCheckpoint(false);
    }
}

void MainWindow::updateControlStatus()
{
    const bool attached = m_controller->isAttached();
    m_detachAction->setEnabled(attached);
    m_controlAction->setEnabled(attached && !m_controller->isEngineLost());
    m_controlAction->setText(m_controller->hasControl() ? tr("Release &Control") : tr("Take &Control"));
    // A watcher's breakpoint edits would be refused by the server: the table says so instead.
    m_breakpoints->setReadOnly(attached && !m_controller->isEngineLost() && !m_controller->hasControl()
            ? tr("Another client holds control of %1: take control (File ▸ Take Control) to change breakpoints")
                  .arg(m_controller->engineLocation())
            : QString());
    if (!attached) {
        m_engineLabel->setText(tr("Engine: this process"));
        m_engineLabel->setToolTip(QString());
        return;
    }
    const debug::ControlInfo& c = m_controller->control();
    QString who;
    if (m_controller->isEngineLost())
        who = tr("gone");
    else if (m_controller->hasControl())
        who = tr("in control");
    else if (c.holder == 0)
        who = tr("watching; nobody holds control");
    else
        who = tr("watching; client %1 (%2) holds control").arg(c.holder).arg(QString::fromStdString(c.holderName));
    m_engineLabel->setText(tr("Engine: %1 · %2").arg(m_controller->engineLocation(), who));
    QStringList clients;
    for (const debug::ControlInfo::Attached& a : c.clients)
        clients << tr("client %1 %2 from %3%4")
                       .arg(a.id)
                       .arg(QString::fromStdString(a.name), QString::fromStdString(a.peer),
                           a.id == c.holder ? tr(" (control)") : QString());
    m_engineLabel->setToolTip(clients.join(QLatin1Char('\n')));
}

void MainWindow::fetchPausedTensors(
    std::shared_ptr<const debug::PauseEvent> e, const QString& title, std::vector<InspectedTensor> tensors)
{
    // Large tensors stay on the server: the inspector reads their statistics, histogram and the
    // value table's windows there as it shows them (Fetch Whole brings one here).
    if (const auto report = m_controller->pauseReport(); report && &report->event == e.get()) markRemote(*report, tensors);
    m_inspector->clear(tr("Fetching %n tensor(s) of %1 from %2…", "", static_cast<int>(tensors.size()))
                           .arg(QString::fromStdString(e->node), m_controller->engineLocation()));
    fetchIntoInspector(
        std::move(tensors),
        [this, e] {
            const auto now = m_controller->pauseEvent();
            return now && now->runId == e->runId && now->sequence == e->sequence; // the run has not moved on
        },
        [this, e, title](std::vector<InspectedTensor> shown, const QString& error) {
            if (shown.empty()) {
                m_inspector->clear(tr("The tensors of %1 could not be fetched: %2").arg(QString::fromStdString(e->node), error));
                scriptCheckpoint(true);
                return;
            }
            showPausedTensors(*e, title, std::move(shown));
        });
}

void MainWindow::markRemote(const debug::PauseReport& report, std::vector<InspectedTensor>& tensors) const
{
    for (size_t i = 0; i < tensors.size() && i < report.shapes.size() && i < report.dtypes.size(); ++i) {
        const int64_t bytes = report.shapes[i].size() * static_cast<int64_t>(dtypeSize(report.dtypes[i]));
        if (bytes <= m_controller->wholeFetchLimit()) continue;
        // Read from this pause only: once the server has moved on, a read fails instead of showing
        // another pause's tensor of the same name.
        tensors[i].source = m_controller->tensorSource(tensors[i].name.toStdString(), { report.event.runId, report.event.sequence });
        tensors[i].shape = report.shapes[i];
        tensors[i].dtype = report.dtypes[i];
    }
}

void MainWindow::fetchWholeTensor(const QString& name)
{
    fetchIntoInspector(
        { InspectedTensor { name, QString(), {} } },
        [this, name] {
            for (const InspectedTensor& t : m_inspector->tensors())
                if (t.name == name) return t.remote();
            return false; // another pause or node is shown meanwhile
        },
        [this, name](std::vector<InspectedTensor> shown, const QString& error) {
            if (shown.empty() || !m_inspector->setValues(name, shown.front().values)) {
                m_inspector->fetchWholeFailed(name);
                statusBar()->showMessage(
                    tr("%1 could not be fetched: %2").arg(name, error.isEmpty() ? tr("it is gone") : error), 10000);
            }
        });
}

void MainWindow::fetchIntoInspector(std::vector<InspectedTensor> tensors, std::function<bool()> stillWanted,
    std::function<void(std::vector<InspectedTensor>, const QString&)> show)
{
    const quint64 generation = ++*m_fetchGeneration;
    std::vector<std::string> names;
    std::vector<size_t> fetchedIndex; // of tensors, for each name
    for (size_t i = 0; i < tensors.size(); ++i)
        if (!tensors[i].source) {
            names.push_back(tensors[i].name.toStdString());
            fetchedIndex.push_back(i);
        }
    if (names.empty()) { // everything stays where it is: read as it is shown
        m_fetching = false;
        m_fetchText.clear();
        show(std::move(tensors), QString());
        return;
    }
    const QString where = m_controller->engineLocation();
    m_fetching = true;
    m_fetchText = tr("Fetching from %1…").arg(where);
    statusBar()->showMessage(m_fetchText);
    auto clock = std::make_shared<QElapsedTimer>();
    clock->start();
    QPointer<MainWindow> self(this);
    const size_t count = names.size();
    // Progress comes on the fetching thread: posted here, where a newer fetch makes it stale. A
    // fetch superseded meanwhile (another pause, a detach) is cancelled at its next chunk.
    auto progress = [self, generation, clock, count, where, names, token = m_fetchGeneration](
                        size_t index, size_t received, size_t total) {
        if (token->load() != generation) throw SessionController::FetchCancelled();
        const qint64 ms = clock->elapsed();
        QMetaObject::invokeMethod(
            self.data(),
            [self, generation, ms, index, received, total, count, where, name = names[index]] {
                if (!self || *self->m_fetchGeneration != generation) return;
                self->m_fetchText = tr("Fetching %1 (%2 of %3) from %4: %5 of %6 · %7 ms")
                                        .arg(QString::fromStdString(name))
                                        .arg(index + 1)
                                        .arg(count)
                                        .arg(where, megabytes(received), megabytes(total))
                                        .arg(ms);
                self->statusBar()->showMessage(self->m_fetchText);
            },
            Qt::QueuedConnection);
    };
    auto* watcher = new QFutureWatcher<SessionController::Fetched>(this);
    connect(watcher, &QFutureWatcher<SessionController::Fetched>::finished, this,
        [this, watcher, tensors = std::move(tensors), fetchedIndex = std::move(fetchedIndex),
            stillWanted = std::move(stillWanted), show = std::move(show), generation, clock, where]() mutable {
            watcher->deleteLater();
            if (generation != *m_fetchGeneration) return; // another fetch, a detach, the engine lost
            m_fetching = false;
            m_fetchText.clear();
            if (!stillWanted()) return;
            const SessionController::Fetched fetched = watcher->result();
            size_t bytes = 0;
            for (size_t k = 0; k < fetchedIndex.size() && k < fetched.tensors.size(); ++k)
                if (fetched.tensors[k]) {
                    bytes += fetched.tensors[k]->bytes();
                    tensors[fetchedIndex[k]].values = *fetched.tensors[k];
                }
            std::vector<InspectedTensor> shown; // fetched, or read where they are
            for (InspectedTensor& t : tensors)
                if (t.hasValues()) shown.push_back(std::move(t));
            if (!fetched.error.isEmpty())
                statusBar()->showMessage(tr("Fetching from %1 failed: %2").arg(where, fetched.error), 10000);
            else
                statusBar()->showMessage(
                    tr("Fetched %1 from %2 in %3 ms").arg(formatBytes(static_cast<int64_t>(bytes)), where).arg(clock->elapsed()), 8000);
            show(std::move(shown), fetched.error);
        });
    watcher->setFuture(m_controller->fetchTensors(std::move(names), std::move(progress)));
}

void MainWindow::showServerNodeTensors(const QString& node, const Graph& graph, uint32_t id)
{
    const Node& n = graph.node(id);
    const ModelInfoPtr model = m_controller->model();
    std::vector<InspectedTensor> wanted;
    // A tensor above the fetch limit stays there, read as the views need it. The description has
    // shapes, not types: sized as float32 (parameters and a record's outputs are, but for a few small
    // integer outputs); the value table takes the type from the server's first window.
    // From the record of the window's run, the current or last one (a parameter: as it is now).
    const debug::TensorPin pin { m_controller->currentRunId(), 0 };
    auto readThereAbove = [this, pin](InspectedTensor& t, const Shape& shape) {
        if (shape.ndim() == 0 || !shape.known() || shape.size() * int64_t { 4 } <= m_controller->wholeFetchLimit()) return;
        t.source = m_controller->tensorSource(t.name.toStdString(), pin);
        t.shape = shape;
        t.dtype = DType::Float32;
    };
    auto parameter = [&](const std::string& name, const QString& role) {
        InspectedTensor t { QString::fromStdString(name), role };
        readThereAbove(t, model->parameterShape(name));
        wanted.push_back(std::move(t));
    };
    if (n.isVariable()) {
        if (model->isParameter(n.name)) parameter(n.name, QStringLiteral("weight"));
    } else {
        for (const NodeEntry& in : n.inputs) {
            const Node& src = graph.node(in.node);
            if (src.isVariable() && model->isParameter(src.name))
                parameter(src.name, graph.isAuxiliary(in.node) ? QStringLiteral("aux") : QStringLiteral("weight"));
        }
        // Kept outputs above the fetch limit stay there, as a pause's do (shapes as the run inferred them).
        std::vector<Shape> shapes = m_controller->runGraphShapes(); // by entry of the run's graph, which `graph` is
        if (shapes.size() != graph.numEntries()) shapes.clear();
        for (int i = 0; i < n.numOutputs; ++i) {
            InspectedTensor t { QString::fromStdString(graph.outputName({ id, static_cast<uint32_t>(i), 0 })),
                QStringLiteral("record") };
            const uint32_t entry = graph.entryId(id, static_cast<uint32_t>(i));
            if (entry < shapes.size()) readThereAbove(t, shapes[entry]);
            wanted.push_back(std::move(t));
        }
    }
    const QString where = m_controller->engineLocation();
    const QString title = QStringLiteral("%1 (%2)").arg(node, QString::fromStdString(n.isVariable() ? "variable" : n.op));
    m_inspector->clear(tr("Fetching the tensors of %1 from %2…").arg(node, where));
    fetchIntoInspector(
        std::move(wanted), [this, node] { return m_graph->view()->selectedNode() == node; },
        [this, node, where, title](std::vector<InspectedTensor> shown, const QString& error) {
            if (shown.empty()) {
                m_inspector->clear(error.isEmpty()
                        ? tr("%1 keeps no tensors of %2 (weights are read there while its run is paused or "
                             "idle). Record output tensors (Debug ▸ Record) and run, or break on it.")
                              .arg(where, node)
                        : tr("The tensors of %1 could not be fetched: %2").arg(node, error));
                return;
            }
            const int focus = static_cast<int>(shown.size()) - 1;
            m_inspector->setTensors(title, std::move(shown), focus);
        });
}

bool MainWindow::withReplica(const QString& what, bool withInput, ModelReplica* slot, std::function<void(const ModelReplica&)> use)
{
    const ModelInfoPtr model = m_controller->model();
    const std::shared_ptr<debug::Engine> engine = m_controller->remoteEngine();
    if (!model || !engine || m_controller->isEngineLost()) {
        statusBar()->showMessage(tr("%1: the engine on %2 is gone; reconnect first").arg(what, model ? model->server : QString()), 8000);
        return false;
    }
    statusBar()->showMessage(tr("%1: copying the model and its %n parameter(s) from %2…", "", static_cast<int>(model->parameterNames.size()))
                                 .arg(what, model->server));
    auto* watcher = new QFutureWatcher<std::pair<ModelReplica, QString>>(this);
    connect(watcher, &QFutureWatcher<std::pair<ModelReplica, QString>>::finished, this, [this, watcher, model, what, slot, use = std::move(use)] {
        watcher->deleteLater();
        auto [replica, error] = watcher->result();
        if (m_controller->model() != model) return; // detached, or attached elsewhere: not wanted now
        if (!error.isEmpty()) {
            statusBar()->showMessage(tr("%1: the model on %2 could not be copied here: %3").arg(what, model->server, error), 12000);
            return;
        }
        statusBar()->showMessage(tr("%1: on a copy of the model on %2 (its weights as they were just now)").arg(what, model->server), 8000);
        *slot = std::move(replica);
        use(*slot);
    });
    watcher->setFuture(QtConcurrent::run([engine, model, withInput]() -> std::pair<ModelReplica, QString> {
        try {
            return { replicateModel(*engine, *model, withInput), {} };
        } catch (const std::exception& e) {
            return { {}, QString::fromStdString(e.what()) };
        }
    }));
    return true;
}

} // namespace opscope::gui
