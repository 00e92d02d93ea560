// MainWindow: the session's events and the debugger's commands (the window's construction,
// menus and settings are in main_window.cpp).

#include "exec/gradient.h"
#include "gui/app/main_window.h"
#include "gui/graph/graph_model.h"
#include "gui/graph/graph_panel.h"
#include "gui/graph/graph_view.h"
#include "gui/inputs/drawing_pad.h"
#include "gui/inputs/input_panel.h"
#include "gui/panels/breakpoint_model.h"
#include "gui/panels/run_record_panel.h"
#include "gui/tensor/feature_map_view.h"
#include "gui/tensor/inspected_tensor.h"
#include "gui/tensor/tensor_inspector.h"
#include "gui/train/train_panel.h"
#include "load/input_hints.h"
#include "load/input_spec.h"

#include <algorithm>

#include <QAction>
#include <QCoreApplication>
#include <QLabel>
#include <QRegularExpression>
#include <QSettings>
#include <QStatusBar>
#include <QTimer>

namespace opscope::gui {

namespace {
QString phaseName(OpPhase p)
{
    return p == OpPhase::Before ? QStringLiteral("before") : QStringLiteral("after");
}

// The exit status of a scripted start whose inputs could not be made (as opscope-cli's).
int exitStatusOf(InputProblem problem)
{
    switch (problem) {
    case InputProblem::BadFile:
        return kExitLoadFailed;
    case InputProblem::WrongShape:
        return kExitRunFailed;
    default:
        return kExitUsage;
    }
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

void MainWindow::showModelGraph(const ModelInfo& model)
{
    GraphModel* graph = m_graph->model();
    if (model.graph != graph->graph())
        graph->setGraph(model.graph, model.entryShapes);
    else
        graph->setEntryShapes(model.entryShapes);
    std::vector<FusionGroup> groups;
    for (const fusion::Chain& c : model.fusionChains) {
        FusionGroup f;
        f.nodes << QString::fromStdString(model.graph->node(c.producer).name);
        for (uint32_t id : c.consumers)
            f.nodes << QString::fromStdString(model.graph->node(id).name);
        f.tip = tr("<b>Fused when nothing watches them:</b> %1<br>%2 folded into the %3 as oneDNN post-ops "
                   "(opscope-cli run and bench, static_alloc). Here every node is watched, so each runs on its own.")
                    .arg(f.nodes.join(QStringLiteral(" + ")).toHtmlEscaped(),
                        QString::fromStdString(fusion::describe(*model.graph, c)).toHtmlEscaped(),
                        QString::fromStdString(model.graph->node(c.producer).opName()));
        groups.push_back(std::move(f));
    }
    graph->setFusionGroups(std::move(groups));
}

void MainWindow::onModelLoaded(ModelInfoPtr model)
{
    if (!model->isSample()) addRecentFile(model->spec);
    if (!m_options.fresh) QSettings().setValue(QStringLiteral("files/lastModel"), model->spec);
    setWindowTitle(QStringLiteral("%1 — opscope").arg(model->title));
    showModelGraph(*model);
    m_breakpoints->setGraph(model->graph);
    m_shownGraph = model->graph;
    std::vector<InputSpec> specs;
    for (size_t i = 0; i < model->inputNames.size(); ++i) {
        InputSpec s;
        s.name = QString::fromStdString(model->inputNames[i]);
        s.shape = model->inputShapes[i];
        s.hasDefault = i < model->defaultInputs.size();
        if (i < model->inputTypes.size()) s.dtype = model->inputTypes[i];
        if (s.hasDefault) s.defaultTensor = model->defaultInputs[i];
        if (s.shape.ndim() == 0) {
            const load::InputShapeHint hint = load::inputShapeHint(model->loaded(), i);
            if (!hint.empty()) {
                s.shapeHint
                    = tr("%1 from %2").arg(QString::fromStdString(hint.str()), QString::fromStdString(hint.reader));
                s.shapeExample = QString::fromStdString(hint.example());
            }
        }
        specs.push_back(s);
    }
    m_restoringSettings = true;
    m_inputs->setInputs(specs);
    m_inputs->setCurrentSample(model->isSample() ? model->title : QString());
    QString details
        = tr("%1 · %2 ops · %3 parameters").arg(model->description).arg(model->opCount).arg(model->parameterCount);
    if (!model->weights.isEmpty()) details += QStringLiteral(" · ") + model->weights;
    m_inputs->setModelInfo(model->title, details);
    m_restoringSettings = false;
    m_modelLabel->setText(QStringLiteral("%1 · %2 ops").arg(model->title).arg(model->opCount));
    m_record->setRecord(nullptr);
    m_inspector->clear(tr("Not paused. Set a breakpoint (F9) and run (F5)."));
    m_train->setModel(model);
    restoreModelSettings();
    const bool first = m_firstModel;
    m_firstModel = false;
    m_defaultStart = false;
    updateActions();
    updateStatus();
    Q_EMIT modelReady();
    const bool scripted = !m_options.screenshot.isEmpty() || m_options.quit;
    if (first && !m_options.inputs.isEmpty()) {
        int status = applyInputOptions();
        if (status == kExitOk && scripted && !m_options.run && !m_options.trainStep) {
            // No run to tell: the inputs the command line gave are made now, so a bad one is said.
            const InputPanel::Built built = m_inputs->buildInputs();
            if (!built.ok()) {
                showMessage(tr("Inputs"), built.error);
                status = exitStatusOf(built.problem);
            }
        }
        if (status != kExitOk && scripted) m_exitStatus = status;
    }
    if (first && m_exitStatus != kExitOk) {
        // A scripted start with a bad --input, or a breakpoint on a node the model lacks: the window
        // with the message is saved (--screenshot), then it exits with the status.
        scriptCheckpoint(false);
        return;
    }
    if (first && m_options.trainStep) {
        if (!m_train->debugSteps(1, false)) {
            showMessage(tr("Train"), m_train->lastError());
            if (!m_options.screenshot.isEmpty() || m_options.quit) finishScript(kExitUsage);
        }
    } else if (first && m_options.run) {
        // A scripted run that cannot start ends with the status of why (never waits for ever).
        if (!startRun(false) && (!m_options.screenshot.isEmpty() || m_options.quit)) {
            m_exitStatus = m_startFailure;
            scriptCheckpoint(false);
        }
    } else if (first && (!m_options.screenshot.isEmpty() || m_options.quit)) {
        scriptCheckpoint(false);
    }
}

int MainWindow::applyInputOptions()
{
    const ModelInfoPtr model = m_controller->model();
    static const QRegularExpression shapeSpec(QStringLiteral("^([0-9]+(?:x[0-9]+)*)(?::(ones|zeros|uniform|normal))?$"),
        QRegularExpression::CaseInsensitiveOption);
    for (const QString& option : m_options.inputs) {
        const int eq = option.indexOf(QLatin1Char('='));
        const QString name = option.left(eq);
        QString spec = option.mid(eq + 1);
        const auto it = std::find(model->inputNames.begin(), model->inputNames.end(), name.toStdString());
        if (it == model->inputNames.end()) {
            const bool label = std::find(model->labelNames.begin(), model->labelNames.end(), name.toStdString())
                != model->labelNames.end();
            showMessage(tr("Inputs"),
                label ? tr("--input %1: '%2' is only a loss's label; a run gives it zeros").arg(option, name)
                      : tr("--input %1: the model has no input '%2'").arg(option, name));
            return kExitUsage;
        }
        const int index = static_cast<int>(it - model->inputNames.begin());
        InputSource src;
        const QString lower = spec.toLower();
        const QRegularExpressionMatch shaped = shapeSpec.match(spec);
        if (shaped.hasMatch()) {
            // NAME=SHAPE[:fill], as opscope-cli takes it: the input's shape, filled.
            Shape shape;
            try {
                shape = load::parseShapeX(shaped.captured(1).toStdString());
            } catch (const std::exception& e) {
                showMessage(tr("Inputs"), tr("--input %1: %2").arg(option, QString::fromUtf8(e.what())));
                return kExitUsage;
            }
            std::vector<Shape> shapes = m_inputs->shapes();
            shapes[static_cast<size_t>(index)] = shape;
            m_inputs->setShapes(shapes);
            if (!m_controller->setInputShapes(m_inputs->shapes())) {
                showMessage(tr("Inputs"), tr("--input %1: %2").arg(option, m_controller->lastError()));
                return kExitRunFailed; // a shape the model cannot take, as a run with it would fail
            }
            const QString fill = shaped.captured(2).toLower();
            src.kind = fill == QLatin1String("zeros") ? InputSource::Kind::Zeros
                : fill == QLatin1String("uniform")    ? InputSource::Kind::Uniform
                : fill == QLatin1String("normal")     ? InputSource::Kind::Normal
                                                      : InputSource::Kind::Ones;
        } else if (lower == QLatin1String("ones")) {
            src.kind = InputSource::Kind::Ones;
        } else if (lower == QLatin1String("zeros")) {
            src.kind = InputSource::Kind::Zeros;
        } else if (lower == QLatin1String("uniform")) {
            src.kind = InputSource::Kind::Uniform;
        } else if (lower == QLatin1String("normal")) {
            src.kind = InputSource::Kind::Normal;
        } else if (lower.startsWith(QLatin1String("draw:"))) {
            QString error;
            const QImage picture = readImageFile(spec.mid(5), &error);
            if (picture.isNull()) {
                showMessage(tr("Inputs"), tr("--input %1: %2").arg(option, error));
                return kExitLoadFailed;
            }
            m_inputs->drawingPad()->loadImage(picture);
            src.kind = InputSource::Kind::Drawing;
        } else if (lower.endsWith(QLatin1String(".npy"))) {
            src.kind = InputSource::Kind::NpyFile; // an input of unknown shape takes the file's
            src.file = spec;
        } else {
            if (lower.endsWith(QLatin1String(":invert"))) {
                src.invert = true;
                spec.chop(7);
            }
            src.kind = InputSource::Kind::ImageFile;
            src.file = spec;
        }
        m_inputs->setSource(index, src);
        if (m_inputs->sources()[static_cast<size_t>(index)].kind != src.kind) {
            showMessage(tr("Inputs"), tr("--input %1: input '%2' cannot take that source").arg(option, name));
            return kExitUsage;
        }
    }
    return kExitOk;
}

void MainWindow::onModelLoadFailed(const QString& spec, const QString& error)
{
    showMessage(tr("Open Model"), tr("%1 could not be opened:\n%2").arg(spec, error));
    updateStatus();
    if (m_firstModel && (!m_options.screenshot.isEmpty() || m_options.quit)) finishScript(kExitLoadFailed);
}

std::vector<InspectedTensor> MainWindow::parameterTensorsOf(uint32_t nodeId) const
{
    std::vector<InspectedTensor> out;
    const auto graph = m_controller->session().graph() ? m_controller->session().graph() : m_controller->model()->graph;
    if (!graph || nodeId >= graph->size()) return out;
    const Node& n = graph->node(nodeId);
    const gluon::ParameterDict params = m_controller->model()->block->collect_params();
    for (size_t i = 0; i < n.inputs.size(); ++i) {
        const Node& src = graph->node(n.inputs[i].node);
        if (!src.isVariable() || !params.contains(src.name)) continue;
        const gluon::ParamPtr p = params.at(src.name);
        if (!p->initialized()) continue;
        out.push_back({ QString::fromStdString(src.name),
            graph->isAuxiliary(n.inputs[i].node) ? QStringLiteral("aux") : QStringLiteral("weight"),
            p->data().copy() });
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
    auto record = std::make_shared<const debug::RunRecord>(m_controller->session().record());
    m_record->setRecord(record);
    markExecuted(*record);
    const QString node = QString::fromStdString(e->node);
    m_graph->model()->setPausedNode(node);
    {
        const QSignalBlocker block(m_graph->view());
        m_graph->view()->selectNode(node, true);
    }
    // The paused node's tensors; inputs that are parameters or auxiliary states named as such.
    std::vector<InspectedTensor> tensors;
    const auto graph = m_controller->session().graph();
    const gluon::ParameterDict params = m_controller->model()->block->collect_params();
    for (const debug::PausedTensor& t : e->tensors) {
        QString role = t.isInput ? QStringLiteral("input") : QStringLiteral("output");
        if (t.isInput && graph && e->nodeId < graph->size()) {
            const Node& n = graph->node(e->nodeId);
            if (t.index < static_cast<int>(n.inputs.size())) {
                const uint32_t src = n.inputs[static_cast<size_t>(t.index)].node;
                const Node& s = graph->node(src);
                if (s.isVariable() && graph->isAuxiliary(src))
                    role = QStringLiteral("aux");
                else if (s.isVariable() && params.contains(s.name))
                    role = QStringLiteral("weight");
            }
        }
        tensors.push_back({ QString::fromStdString(t.name), role, t.values });
    }
    const QString title = QStringLiteral("%1 (%2) — %3").arg(node, QString::fromStdString(e->op), phaseName(e->phase));
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
    updateStatus();
}

void MainWindow::syncShownGraph()
{
    // The session traces the model's graph itself (an equal graph, another object): the view
    // switches only between the model's graph and a training step's.
    const auto graph = m_controller->session().graph();
    const ModelInfoPtr model = m_controller->model();
    if (!graph || !model) return;
    if (graph != m_checkedGraph) {
        m_checkedGraph = graph;
        m_checkedIsTraining = std::any_of(graph->nodes().begin(), graph->nodes().end(), isGradientNode);
    }
    if (m_checkedIsTraining) {
        if (graph == m_shownGraph) return;
        std::vector<Shape> shapes = m_controller->session().graphShapes();
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
    if (outcome.stopped)
        m_inspector->clear(tr("Stopped."));
    else
        m_inspector->clear(tr("Finished. Pick an op in the run record or a node to see its tensors."));
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
    if (pause && QString::fromStdString(pause->node) == node) return; // the inspector shows it already
    const auto graph = m_controller->session().graph() ? m_controller->session().graph() : m_controller->model()->graph;
    const auto id = graph->findNode(node.toStdString());
    if (!id) return;
    std::vector<InspectedTensor> tensors = parameterTensorsOf(*id);
    const Node& n = graph->node(*id);
    if (n.isVariable()) {
        if (tensors.empty()) {
            const gluon::ParameterDict params = m_controller->model()->block->collect_params();
            if (params.contains(n.name) && params.at(n.name)->initialized())
                tensors.push_back({ node, QStringLiteral("weight"), params.at(n.name)->data().copy() });
        }
    } else {
        for (int i = 0; i < n.numOutputs; ++i) {
            const std::string name = graph->outputName({ *id, static_cast<uint32_t>(i), 0 });
            if (std::optional<Tensor> t = m_controller->session().tensor(name))
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
    const bool canStart = model && (paused || (!active && !trainingActive));
    action(Action::Run)->setEnabled(canStart);
    action(Action::Run)->setText(paused ? tr("&Continue") : tr("&Run"));
    action(Action::Pause)->setEnabled(s == S::Running);
    action(Action::Stop)->setEnabled(active);
    action(Action::StepOver)->setEnabled(canStart);
    action(Action::StepInto)->setEnabled(canStart);
    action(Action::StepOut)->setEnabled(paused);
    action(Action::RunTo)->setEnabled(canStart);
    action(Action::ToggleBreakpoint)->setEnabled(model);
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
        const bool busy = m_graph->view()->isLayoutPending() || m_inspector->isComputing()
            || m_inspector->featureMapView()->isRendering();
        if (busy && ++*tries < 200) return;
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
        if (m_controller->isActive()) m_controller->stopAndWait(3000);
        QTimer::singleShot(0, this, [this, status] {
            close();
            QCoreApplication::exit(status);
        });
    }
}

} // namespace opscope::gui
