// MainWindow: the session's events and the debugger's commands (the window's construction,
// menus and settings are in main_window.cpp, a loaded model shown in main_window_model.cpp).

#include "exec/gradient.h"
#include "gui/app/main_window.h"
#include "gui/graph/graph_model.h"
#include "gui/graph/graph_panel.h"
#include "gui/graph/graph_view.h"
#include "gui/inputs/input_panel.h"
#include "gui/panels/breakpoint_model.h"
#include "gui/panels/run_record_panel.h"
#include "gui/tensor/feature_map_view.h"
#include "gui/tensor/inspected_tensor.h"
#include "gui/tensor/tensor_inspector.h"
#include "gui/explain/explain_panel.h"
#include "gui/present/presentation_view.h"
#include "gui/session/parameter_snapshot.h"
#include "gui/train/train_panel.h"

#include <algorithm>

#include <QAction>
#include <QCoreApplication>
#include <QDockWidget>
#include <QLabel>
#include <QSettings>
#include <QStatusBar>
#include <QTimer>

namespace opscope::gui {

namespace {
QString phaseName(OpPhase p)
{
    return p == OpPhase::Before ? QStringLiteral("before") : QStringLiteral("after");
}

QString formatDuration(qint64 ns)
{
    if (ns < 1000000) return QStringLiteral("%1 µs").arg(static_cast<double>(ns) / 1e3, 0, 'f', 1);
    if (ns < 10000000000LL) return QStringLiteral("%1 ms").arg(static_cast<double>(ns) / 1e6, 0, 'f', 2);
    return QStringLiteral("%1 s").arg(static_cast<double>(ns) / 1e9, 0, 'f', 2);
}
} // namespace

void MainWindow::startUp()
{
    if (!m_options.attach.isEmpty()) {
        const bool scripted = !m_options.screenshot.isEmpty() || m_options.quit;
        if (m_options.fetchLimitBytes >= 0) m_controller->setWholeFetchLimit(m_options.fetchLimitBytes);
        if (attachToServer({ m_options.attach, m_options.tokenFile, m_options.tlsCa }, {}, m_options.watch)) return;
        if (scripted) {
            finishScript(kExitRefused);
            return;
        }
        // Interactive: the window opens its usual model; File ▸ Attach tries again.
    }
    QString spec = m_options.model;
    if (spec.isEmpty() && !m_options.fresh) spec = QSettings().value(QStringLiteral("files/lastModel")).toString();
    if (spec.isEmpty()) {
        spec = QString::fromLatin1(kDefaultSample);
        m_defaultStart = true;
    }
    openModel(spec);
}

bool MainWindow::startRun(bool pauseAtEntry)
{
    if (!m_controller->model()) return false;
    if (m_controller->isAttached()) { // the Model panel's inputs are sent, its Default ones are the server's own
        const InputPanel::Built built = m_inputs->buildInputs();
        if (!built.ok()) {
            m_startFailure = exitStatusOf(built.problem);
            showMessage(tr("Inputs"), built.error);
            return false;
        }
        if (m_controller->start(built.tensors, pauseAtEntry)) return true;
        m_startFailure = kExitRunFailed;
        showMessage(tr("Run"), m_controller->lastError());
        return false;
    }
    if (m_train->isTraining()) {
        showMessage(tr("Run"), tr("The model is training: stop the training first"));
        return false;
    }
    const InputPanel::Built built = m_inputs->buildInputs();
    if (!built.ok()) {
        m_startFailure = exitStatusOf(built.problem);
        showMessage(tr("Inputs"), built.error);
        return false;
    }
    if (!m_controller->start(built.tensors, pauseAtEntry)) {
        m_startFailure = kExitRunFailed;
        showMessage(tr("Run"), m_controller->lastError());
        return false;
    }
    return true;
}

void MainWindow::runOrContinue()
{
    if (m_controller->state() == SessionController::State::Paused)
        m_controller->continueRun();
    else if (!m_controller->isActive())
        startRun(false);
}

void MainWindow::stepCommand(int kind)
{
    if (m_controller->state() == SessionController::State::Paused) {
        if (kind == 0)
            m_controller->stepOver();
        else if (kind == 1)
            m_controller->step();
        else
            m_controller->stepOut();
    } else if (!m_controller->isActive() && kind != 2) {
        startRun(true); // a debugger's first step starts the program and stops at its entry
    }
}

void MainWindow::runToSelected()
{
    const QString node = m_graph->view()->selectedNode();
    if (node.isEmpty()) {
        statusBar()->showMessage(tr("Select a node to run to"), 5000);
        return;
    }
    if (m_controller->state() == SessionController::State::Paused) {
        m_controller->runTo(node);
    } else if (!m_controller->isActive()) {
        m_pendingRunTo = node;
        if (!startRun(true)) m_pendingRunTo.clear();
    }
}

void MainWindow::toggleBreakpointOnSelected()
{
    const QString node = m_graph->view()->selectedNode();
    if (node.isEmpty()) {
        statusBar()->showMessage(tr("Select a node to toggle a breakpoint on"), 5000);
        return;
    }
    m_breakpoints->toggleNode(node, OpPhase::Before);
}

std::optional<Tensor> MainWindow::parameterValue(const std::string& name) const
{
    const ModelInfoPtr model = m_controller->model();
    if (!model->block) return std::nullopt; // on a server: showServerNodeTensors fetches them
    const gluon::ParameterDict params = model->block->collect_params();
    if (!params.contains(name) || !params.at(name)->initialized()) return std::nullopt;
    return params.at(name)->data().copy();
}

std::vector<InspectedTensor> MainWindow::parameterTensorsOf(uint32_t nodeId) const
{
    std::vector<InspectedTensor> out;
    std::shared_ptr<const Graph> graph = m_controller->runGraph();
    if (!graph) graph = m_controller->model()->graph;
    if (!graph || nodeId >= graph->size()) return out;
    const Node& n = graph->node(nodeId);
    const ModelInfoPtr model = m_controller->model();
    for (size_t i = 0; i < n.inputs.size(); ++i) {
        const Node& src = graph->node(n.inputs[i].node);
        if (!src.isVariable() || !model->isParameter(src.name)) continue;
        const QString role = graph->isAuxiliary(n.inputs[i].node) ? QStringLiteral("aux") : QStringLiteral("weight");
        if (std::optional<Tensor> t = parameterValue(src.name)) out.push_back({ QString::fromStdString(src.name), role, *t });
    }
    return out;
}

void MainWindow::onPaused(std::shared_ptr<const debug::PauseEvent> e)
{
    if (!m_pendingRunTo.isEmpty() && e->reason == debug::PauseReason::Entry) {
        const QString node = m_pendingRunTo;
        m_pendingRunTo.clear();
        if (m_controller->runTo(node)) return;
    }
    m_pendingRunTo.clear();
    m_breakpoints->refresh();
    syncShownGraph();
    auto record = m_controller->runRecord();
    m_record->setRecord(record);
    markExecuted(*record);
    const QString node = QString::fromStdString(e->node);
    m_graph->model()->setPausedNode(node);
    {
        const QSignalBlocker block(m_graph->view());
        m_graph->view()->selectNode(node, true);
    }
    std::vector<InspectedTensor> tensors = pausedTensors(*e);
    const QString title = QStringLiteral("%1 (%2) — %3").arg(node, QString::fromStdString(e->op), phaseName(e->phase));
    updateStatus();
    if (m_controller->isAttached())
        fetchPausedTensors(e, title, std::move(tensors));
    else
        showPausedTensors(*e, title, std::move(tensors));
}

std::vector<InspectedTensor> MainWindow::pausedTensors(const debug::PauseEvent& pause)
{
    // The paused node's tensors; inputs that are parameters or auxiliary states named as such.
    const debug::PauseEvent* e = &pause;
    std::vector<InspectedTensor> tensors;
    const auto graph = m_controller->runGraph();
    const ModelInfoPtr model = m_controller->model();
    for (const debug::PausedTensor& t : e->tensors) {
        QString role = t.isInput ? QStringLiteral("input") : QStringLiteral("output");
        if (t.isInput && graph && e->nodeId < graph->size()) {
            const Node& n = graph->node(e->nodeId);
            if (t.index < static_cast<int>(n.inputs.size())) {
                const uint32_t src = n.inputs[static_cast<size_t>(t.index)].node;
                const Node& s = graph->node(src);
                if (s.isVariable() && graph->isAuxiliary(src))
                    role = QStringLiteral("aux");
                else if (s.isVariable() && model->isParameter(s.name))
                    role = QStringLiteral("weight");
            }
        }
        tensors.push_back({ QString::fromStdString(t.name), role, t.values });
    }
    return tensors;
}

void MainWindow::showPausedTensors(const debug::PauseEvent& pause, const QString& title, std::vector<InspectedTensor> tensors)
{
    const debug::PauseEvent* e = &pause;
    auto connection = std::make_shared<QMetaObject::Connection>();
    *connection = connect(m_inspector, &TensorInspector::histogramReady, this, [this, connection, seq = e->sequence] {
        QObject::disconnect(*connection);
        if (m_controller->pauseEvent() && m_controller->pauseEvent()->sequence == seq) {
            Q_EMIT pauseShown();
            scriptCheckpoint(true);
        }
    });
    m_inspector->setTensors(title, std::move(tensors), e->focus);
    if (!m_options.tab.isEmpty())
        m_inspector->setCurrentTab(m_options.tab == QLatin1String("values") ? TensorInspector::Tab::Values
                : m_options.tab == QLatin1String("image")                   ? TensorInspector::Tab::Image
                                                                            : TensorInspector::Tab::Histogram);
    explainRun();
}

void MainWindow::explainRun()
{
    const ModelInfoPtr model = m_controller->model();
    if (!model) return;
    if (m_options.present > 0 && !m_presentation) openPresentation(m_options.present - 1);
    if (!m_options.explain.isEmpty()) {
        m_explain->setMethod(debug::parseMethod(m_options.explain.toStdString()));
        m_explainDock->show();
        m_explainDock->raise();
    }
    if (model->inputNames.size() != 1) {
        m_explain->clearSubject(tr("Explaining needs a model of one input; this one takes %1.")
                                    .arg(model->inputNames.size()));
        return;
    }
    if (model->isRemote()) { // explained there, with the server's weights, on the input of its run
        if (const auto engine = m_controller->remoteEngine(); engine && !m_controller->isEngineLost())
            m_explain->setSubject(model, engine, m_controller->currentRunId());
        else
            m_explain->clearSubject(tr("The engine on %1 is gone: reconnect to explain.").arg(model->server));
        return;
    }
    const InputPanel::Built built = m_inputs->buildInputs();
    if (!built.ok() || built.tensors.empty()) {
        m_explain->clearSubject(built.error);
        return;
    }
    // The weights as the window has them (the Train dock may have trained them since loading), copied
    // now: the session's worker is parked at a pause or after a run.
    m_explain->setSubject(model, built.tensors.front(), snapshotParameters(*model->block));
}

void MainWindow::syncShownGraph()
{
    // The session traces the model's graph itself (an equal graph, another object): the view
    // switches only between the model's graph and a training step's.
    const auto graph = m_controller->runGraph();
    const ModelInfoPtr model = m_controller->model();
    if (!graph || !model) return;
    if (graph != m_checkedGraph) {
        m_checkedGraph = graph;
        m_checkedIsTraining = std::any_of(graph->nodes().begin(), graph->nodes().end(), isGradientNode);
    }
    if (m_checkedIsTraining) {
        if (graph == m_shownGraph) return;
        std::vector<Shape> shapes = m_controller->runGraphShapes();
        if (shapes.size() != graph->numEntries()) shapes.clear();
        m_shownGraph = graph;
        m_graph->model()->setGraph(graph, shapes);
        m_breakpoints->setGraph(graph);
    } else {
        if (m_shownGraph == model->graph) return;
        m_shownGraph = model->graph;
        showModelGraph(*model);
        m_breakpoints->setGraph(model->graph);
    }
    syncBreakpointMarks();
}

void MainWindow::onRunFinished(const RunOutcome& outcome)
{
    m_breakpoints->refresh();
    syncShownGraph();
    m_graph->model()->setPausedNode({});
    if (outcome.record) {
        m_record->setRecord(outcome.record);
        markExecuted(*outcome.record);
    }
    if (outcome.stopped) {
        m_inspector->clear(tr("Stopped."));
    } else {
        m_inspector->clear(tr("Finished. Pick an op in the run record or a node to see its tensors."));
        explainRun();
    }
    updateStatus();
    scriptCheckpoint(false);
}

void MainWindow::onRunFailed(const QString& error)
{
    syncShownGraph();
    m_graph->model()->setPausedNode({});
    if (auto r = m_controller->lastRecord()) {
        m_record->setRecord(r);
        markExecuted(*r);
    }
    m_inspector->clear(tr("The run failed."));
    updateStatus();
    showMessage(tr("Run Failed"), error);
    if (!m_options.screenshot.isEmpty() || m_options.quit) m_exitStatus = kExitRunFailed;
    scriptCheckpoint(false);
}

void MainWindow::markExecuted(const debug::RunRecord& record)
{
    GraphModel* model = m_graph->model();
    model->beginMarkUpdate();
    for (const debug::OpRecord& op : record.ops) {
        bool bad = false;
        for (const debug::TensorStats& s : op.outputStats)
            bad = bad || s.nan + s.inf() > 0;
        model->setExecuted(QString::fromStdString(op.node), bad);
    }
    model->endMarkUpdate();
}

void MainWindow::syncBreakpointMarks()
{
    GraphModel* model = m_graph->model();
    model->beginMarkUpdate();
    model->clearBreakpointMarks();
    for (const debug::Breakpoint& b : m_breakpoints->breakpoints()) {
        if (b.kind == debug::Breakpoint::Kind::Watch) continue;
        QString node = QString::fromStdString(b.location);
        if (b.kind == debug::Breakpoint::Kind::Tensor) {
            const int cut = node.lastIndexOf(QLatin1Char('_'));
            if (cut > 0) node = node.left(cut);
        }
        model->setBreakpointMark(node, b.enabled ? BreakMark::Enabled : BreakMark::Disabled,
            b.condition.kind != debug::Condition::Kind::Always);
    }
    model->endMarkUpdate();
}

void MainWindow::showNodeTensors(const QString& node)
{
    if (node.isEmpty() || !m_controller->model()) return;
    const auto pause = m_controller->pauseEvent();
    if (pause && QString::fromStdString(pause->node) == node) {
        // Back to the paused node after looking at another: its tensors again (quietly: no script step).
        const std::vector<InspectedTensor>& shown = m_inspector->tensors();
        if (!pause->tensors.empty() && !shown.empty() && shown.front().name == QString::fromStdString(pause->tensors.front().name))
            return; // the inspector shows them already
        const QString title
            = QStringLiteral("%1 (%2) — %3").arg(node, QString::fromStdString(pause->op), phaseName(pause->phase));
        if (!m_controller->isAttached()) {
            m_inspector->setTensors(title, pausedTensors(*pause), pause->focus);
            return;
        }
        std::vector<InspectedTensor> tensors = pausedTensors(*pause);
        if (const auto report = m_controller->pauseReport(); report && &report->event == pause.get())
            markRemote(*report, tensors);
        fetchIntoInspector(
            std::move(tensors), [this, pause] { return m_controller->pauseEvent() == pause; },
            [this, title, focus = pause->focus](std::vector<InspectedTensor> got, const QString&) {
                m_inspector->setTensors(title, std::move(got), focus);
            });
        return;
    }
    std::shared_ptr<const Graph> graph = m_controller->runGraph();
    if (!graph) graph = m_controller->model()->graph;
    const auto id = graph->findNode(node.toStdString());
    if (!id) return;
    const Node& n = graph->node(*id);
    if (m_controller->isAttached()) {
        showServerNodeTensors(node, *graph, *id);
        return;
    }
    std::vector<InspectedTensor> tensors = parameterTensorsOf(*id);
    if (n.isVariable()) {
        if (tensors.empty() && m_controller->model()->isParameter(n.name))
            if (std::optional<Tensor> t = parameterValue(n.name)) tensors.push_back({ node, QStringLiteral("weight"), *t });
    } else {
        for (int i = 0; i < n.numOutputs; ++i) {
            const std::string name = graph->outputName({ *id, static_cast<uint32_t>(i), 0 });
            if (std::optional<Tensor> t = m_controller->engine().fetch(name)) // this process's: never throws
                tensors.push_back({ QString::fromStdString(name), QStringLiteral("record"), *t });
        }
    }
    if (tensors.empty()) {
        m_inspector->clear(
            tr("No tensors of %1 are kept. Record output tensors (Debug ▸ Record) and run, or break on it.").arg(node));
        return;
    }
    const int focus = static_cast<int>(tensors.size()) - 1;
    m_inspector->setTensors(
        QStringLiteral("%1 (%2)").arg(node, QString::fromStdString(n.isVariable() ? "variable" : n.op)),
        std::move(tensors), focus);
}

void MainWindow::updateActions()
{
    using S = SessionController::State;
    const S s = m_controller->state();
    const bool model = m_controller->model() != nullptr;
    const bool paused = s == S::Paused;
    const bool active = m_controller->isActive();
    // A training uses the block: no debug run starts meanwhile; a paused training step takes commands.
    const bool trainingActive = m_train && m_train->isTraining();
    // Attached without control: the window watches (its commands would be refused).
    // A server whose program starts every run (a training loop): only its pauses take commands.
    const bool startable = m_controller->engine().acceptsStart();
    const bool canStart = model && m_controller->hasControl() && (paused || (!active && !trainingActive && startable));
    action(Action::Run)->setEnabled(canStart);
    action(Action::Run)->setText(paused ? tr("&Continue") : tr("&Run"));
    action(Action::Pause)->setEnabled(s == S::Running && m_controller->hasControl());
    action(Action::Stop)->setEnabled(active && m_controller->hasControl());
    action(Action::StepOver)->setEnabled(canStart);
    action(Action::StepInto)->setEnabled(canStart);
    action(Action::StepOut)->setEnabled(paused && m_controller->hasControl());
    action(Action::RunTo)->setEnabled(canStart);
    action(Action::ToggleBreakpoint)->setEnabled(model && !m_breakpoints->isReadOnly());
    if (m_attachAction) m_attachAction->setEnabled(!m_train->isTraining());
}

QString MainWindow::statusText() const
{
    return m_status;
}

void MainWindow::updateStatus()
{
    using S = SessionController::State;
    QString text;
    QString colour = QStringLiteral("#333");
    switch (m_controller->state()) {
    case S::Idle:
        text = m_controller->model() ? tr("Idle") : tr("No model");
        break;
    case S::Running:
        text = tr("Running");
        break;
    case S::Paused:
        if (const auto e = m_controller->pauseEvent())
            text = tr("Paused at %1 (%2) · %3")
                       .arg(QString::fromStdString(e->node), phaseName(e->phase),
                           QString::fromLatin1(debug::toString(e->reason)));
        else
            text = tr("Paused");
        colour = QStringLiteral("#a05a00");
        break;
    case S::Finished:
        text = tr("Finished in %1").arg(formatDuration(m_controller->lastOutcome().elapsedNs));
        break;
    case S::Stopped:
        text = tr("Stopped");
        break;
    case S::Failed:
        text = tr("Failed: %1").arg(m_controller->lastError());
        colour = QStringLiteral("#c02020");
        break;
    }
    m_status = text;
    m_stateLabel->setText(text);
    m_stateLabel->setToolTip(text);
    m_stateLabel->setStyleSheet(QStringLiteral("QLabel { color: %1; font-weight: 600; padding: 0 6px; }").arg(colour));
}

// Scripting ---------------------------------------------------------------------------------------

void MainWindow::scriptCheckpoint(bool paused)
{
    if (m_scriptFinished || (m_options.screenshot.isEmpty() && !m_options.quit)) return;
    Q_UNUSED(paused)
    // Let the graph's layout land (it runs on another thread), then take the picture.
    auto* timer = new QTimer(this);
    auto tries = std::make_shared<int>(0);
    timer->setInterval(50);
    connect(timer, &QTimer::timeout, this, [this, timer, tries] {
        if (m_scriptFinished) { // an earlier checkpoint took the picture
            timer->stop();
            timer->deleteLater();
            return;
        }
        const bool comparing = m_compareRunner->isRunning();
        const bool busy = m_graph->view()->isLayoutPending() || m_inspector->isComputing() || m_fetching
            || m_inspector->isReading()
            || m_inspector->featureMapView()->isRendering() || comparing
            || (!m_options.explain.isEmpty() && m_explain->isComputing())
            || (m_presentation && (m_presentation->isRecording() || m_presentation->featureMaps()->isRendering()));
        // A comparison records two runs: it may take a while on a large model.
        if (busy && ++*tries < (comparing ? 2400 : 200)) return;
        timer->stop();
        timer->deleteLater();
        int status = m_exitStatus;
        if (!m_options.screenshot.isEmpty()) {
            QString error;
            if (!saveScreenshot(m_options.screenshot, &error)) {
                qWarning("opscope: %s", qPrintable(error));
                status = kExitScreenshotFailed;
            }
        }
        finishScript(status);
    });
    timer->start();
}

void MainWindow::finishScript(int status)
{
    if (m_scriptFinished) return;
    m_scriptFinished = true;
    m_exitStatus = status;
    Q_EMIT scriptDone(status);
    if (m_options.quit) {
        if (m_controller->isAttached())
            detachFromServer(); // the server's run stays as it is
        else if (m_controller->isActive())
            m_controller->stopAndWait(3000);
        QTimer::singleShot(0, this, [this, status] {
            close();
            QCoreApplication::exit(status);
        });
    }
}

} // namespace opscope::gui
