#include "gui/app/main_window.h"

#include "gui/app/dock_layouts.h"
#include "gui/explain/explain_panel.h"
#include "gui/present/presentation_view.h"
#include "gui/app/icons.h"
#include "gui/graph/graph_model.h"
#include "gui/graph/graph_panel.h"
#include "gui/graph/graph_view.h"
#include "gui/inputs/input_panel.h"
#include "gui/panels/breakpoint_model.h"
#include "gui/panels/breakpoints_panel.h"
#include "gui/panels/run_record_panel.h"
#include "gui/tensor/tensor_inspector.h"
#include "gui/train/train_panel.h"
#include "models/registry.h"

#include <cstdio>

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QCryptographicHash>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QGuiApplication>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QScreen>
#include <QSettings>
#include <QStatusBar>
#include <QToolBar>

namespace opscope::gui {

MainWindow::MainWindow(const AppOptions& options, QWidget* parent)
    : QMainWindow(parent)
    , m_options(options)
    , m_controller(new SessionController(this))
    , m_breakpoints(new BreakpointModel(&m_controller->engine(), this))
{
    setWindowTitle(QStringLiteral("opscope"));
    setWindowIcon(makeIcon(IconKind::App));
    setAcceptDrops(true);
    setDockOptions(AnimatedDocks | AllowTabbedDocks | AllowNestedDocks);

    m_graph = new GraphPanel(this);
    setCentralWidget(m_graph);
    buildDocks();
    buildActions();
    buildMenus();

    m_stateLabel = new QLabel(this);
    m_modelLabel = new QLabel(this);
    m_stateLabel->setMinimumWidth(380);
    statusBar()->addWidget(m_stateLabel, 1);
    statusBar()->addPermanentWidget(m_modelLabel);

    connect(m_controller, &SessionController::modelLoaded, this, &MainWindow::onModelLoaded);
    connect(m_controller, &SessionController::modelLoadFailed, this, &MainWindow::onModelLoadFailed);
    connect(m_controller, &SessionController::loadStarted, this,
        [this](const QString& spec) { m_stateLabel->setText(tr("Loading %1…").arg(spec)); });
    connect(m_controller, &SessionController::paused, this, &MainWindow::onPaused);
    connect(m_controller, &SessionController::runFinished, this, &MainWindow::onRunFinished);
    connect(m_controller, &SessionController::runFailed, this, &MainWindow::onRunFailed);
    connect(m_controller, &SessionController::note, this, [this](const QString& text) {
        statusBar()->showMessage(text, 15000);
        if (!m_interactive) std::fprintf(stderr, "opscope: note: %s\n", qPrintable(text));
    });
    connect(m_controller, &SessionController::runStarted, this, [this] {
        m_graph->model()->clearRunMarks();
        m_inspector->clear(tr("Running…"));
        m_inputs->setBusy(true);
    });
    connect(m_controller, &SessionController::resumed, this, [this] {
        m_graph->model()->setPausedNode({});
        m_inspector->clear(tr("Running…"));
    });
    connect(m_controller, &SessionController::stateChanged, this, [this] {
        if (!m_controller->isActive()) m_inputs->setBusy(false);
        updateActions();
        updateStatus();
        m_train->updateControls();
    });
    // Training and a debug run share the block: one at a time.
    m_train->setStartGuard(
        [this] { return m_controller->isActive() ? tr("Stop the debug run first (Shift+F5)") : QString(); });
    // The task decides the layout: a training (not single debugged steps) wants its plots large,
    // a pause the inspector.
    connect(m_train, &TrainPanel::trainingStarted, this, [this] {
        if (!m_train->runsSteps()) m_layouts->switchTo(DockLayouts::Kind::Training);
    });
    connect(
        m_controller, &SessionController::paused, this, [this] { m_layouts->switchTo(DockLayouts::Kind::Debugging); });
    for (auto signal : { &TrainPanel::trainingStarted, &TrainPanel::trainingFinished })
        connect(m_train, signal, this, [this] {
            m_inputs->setBusy(m_train->isTraining() || m_controller->isActive());
            updateActions();
        });
    connect(m_train, &TrainPanel::trainingFailed, this, [this](const QString& error) {
        m_inputs->setBusy(m_controller->isActive());
        updateActions();
        statusBar()->showMessage(tr("Training failed: %1").arg(error), 10000);
    });
    connect(m_breakpoints, &BreakpointModel::engineRefused, this,
        [this](const QString& why) { statusBar()->showMessage(tr("Breakpoints unchanged: %1").arg(why), 8000); });
    connect(m_breakpoints, &BreakpointModel::breakpointsChanged, this, [this] {
        syncBreakpointMarks();
        if (!m_restoringSettings) saveModelSettings();
        const QSignalBlocker block(action(Action::BreakOnNan));
        action(Action::BreakOnNan)->setChecked(m_breakpoints->breakOnNanInf());
    });

    GraphView* view = m_graph->view();
    connect(view, &GraphView::nodeSelected, this, &MainWindow::showNodeTensors);
    connect(view, &GraphView::breakpointToggleRequested, this,
        [this](const QString& node, OpPhase phase) { m_breakpoints->toggleNode(node, phase); });
    connect(view, &GraphView::breakpointConditionRequested, this,
        [this](const QString& node) { m_breakpointsPanel->addWithDialog(node); });
    connect(view, &GraphView::runToRequested, this, [this](const QString& node) {
        if (m_controller->state() == SessionController::State::Paused) {
            m_controller->runTo(node);
        } else if (!m_controller->isActive()) {
            m_pendingRunTo = node;
            if (!startRun(true)) m_pendingRunTo.clear();
        }
    });
    connect(m_breakpointsPanel, &BreakpointsPanel::nodeActivated, this,
        [this](const QString& node) { m_graph->view()->selectNode(node, true); });
    connect(m_record, &RunRecordPanel::opPicked, this, [this](int, const QString& node) {
        m_graph->view()->selectNode(node, true);
        showNodeTensors(node);
    });
    connect(m_inputs, &InputPanel::sampleRequested, this,
        [this](const QString& name) { openModel(QStringLiteral("sample:") + name); });
    connect(m_inputs, &InputPanel::openRequested, this, &MainWindow::openFileDialog);
    connect(m_inputs, &InputPanel::runRequested, this, [this] {
        if (!m_controller->isActive()) startRun(false);
    });
    connect(m_inputs, &InputPanel::sourcesChanged, this, [this] {
        if (!m_restoringSettings) saveModelSettings();
    });
    connect(m_inputs, &InputPanel::shapesChanged, this, [this] {
        if (!m_controller->setInputShapes(m_inputs->shapes()))
            showMessage(tr("Input Shape"), m_controller->lastError());
        else if (!m_restoringSettings)
            saveModelSettings();
    });
    connect(m_controller, &SessionController::modelReshaped, this, [this](ModelInfoPtr model) {
        showModelGraph(*model);
        m_breakpoints->setGraph(model->graph);
        m_shownGraph = model->graph;
        syncBreakpointMarks();
    });

    QStringList names, descriptions;
    for (const std::string& n : samples::sampleNames()) {
        names << QString::fromStdString(n);
        descriptions << QString::fromStdString(samples::sampleDescription(n) + "; " + samples::sampleWeights(n));
    }
    m_inputs->setSamples(names, descriptions);

    // A first start fills the screen's free area (up to 2560×1600); the docks are laid out for it.
    if (const QScreen* screen = QGuiApplication::primaryScreen()) {
        const QRect free = screen->availableGeometry();
        resize(free.size().boundedTo(QSize(2560, 1600)));
        move(free.topLeft());
    } else {
        resize(1600, 1000);
    }
    if (!m_options.fresh) restoreWindowSettings();
    rebuildRecentMenu();
    updateControlStatus();
    updateActions();
    updateStatus();
}

MainWindow::~MainWindow()
{
    // A training thread may be driving the session: it ends (and is joined) before the controller,
    // a child created earlier and so destroyed first, takes the session away.
    if (m_train) m_train->stopAndWait(-1);
    // The controller (a child) stops the run and joins the worker when it is destroyed.
}

QAction* MainWindow::action(Action a) const
{
    return m_actions.at(a);
}

void MainWindow::buildDocks()
{
    auto dock = [this](const QString& title, const char* name, QWidget* content, Qt::DockWidgetArea area) {
        auto* d = new QDockWidget(title, this);
        d->setObjectName(QString::fromLatin1(name));
        d->setWidget(content);
        addDockWidget(area, d);
        return d;
    };
    m_inputs = new InputPanel(this);
    m_breakpointsPanel = new BreakpointsPanel(m_breakpoints, this);
    m_inspector = new TensorInspector(this);
    m_record = new RunRecordPanel(this);
    QDockWidget* model = dock(tr("Model"), "modelDock", m_inputs, Qt::LeftDockWidgetArea);
    QDockWidget* bps = dock(tr("Breakpoints"), "breakpointsDock", m_breakpointsPanel, Qt::BottomDockWidgetArea);
    QDockWidget* inspector = dock(tr("Tensor Inspector"), "inspectorDock", m_inspector, Qt::RightDockWidgetArea);
    QDockWidget* record = dock(tr("Run Record"), "recordDock", m_record, Qt::BottomDockWidgetArea);
    m_train = new TrainPanel(this);
    m_train->setDebugSession(&m_controller->session());
    QDockWidget* train = dock(tr("Train"), "trainDock", m_train, Qt::RightDockWidgetArea);
    m_explain = new ExplainPanel(this);
    m_explainDock = dock(tr("Explain"), "explainDock", m_explain, Qt::RightDockWidgetArea);
    // Where each goes, for debugging and for training, is the layouts' business (made when shown).
    m_layouts = new DockLayouts(this, { model, bps, inspector, record, train, m_explainDock });
    m_inspector->clear(tr("Not paused. Set a breakpoint (F9) and run (F5)."));
    connect(m_inspector, &TensorInspector::elementClicked, this,
        [this](const QString& tensor, const QList<qint64>& index) { showUnitAnatomy(tensor, index); });
    connect(m_inspector, &TensorInspector::fetchWholeRequested, this, &MainWindow::fetchWholeTensor);
    connect(m_inspector, &TensorInspector::mapMenuRequested, this, [this](const QString& tensor, qint64 map, const QPoint& at) {
        QMenu menu(this);
        menu.addAction(tr("What Does Channel %1 Respond To?").arg(map), this,
            [this, tensor, map] { showChannelExamples(tensor, static_cast<int>(map)); });
        menu.exec(at);
    });
}

void MainWindow::buildActions()
{
    auto make = [this](Action id, IconKind icon, const QString& text, const QKeySequence& key, auto slot) {
        auto* a = new QAction(makeIcon(icon), text, this);
        if (!key.isEmpty()) {
            a->setShortcut(key);
            a->setToolTip(QStringLiteral("%1 (%2)").arg(QString(text).remove(QLatin1Char('&')), key.toString()));
        }
        connect(a, &QAction::triggered, this, slot);
        m_actions[id] = a;
        return a;
    };
    make(Action::Run, IconKind::Run, tr("&Run / Continue"), QKeySequence(Qt::Key_F5), [this] { runOrContinue(); });
    make(Action::Pause, IconKind::Pause, tr("&Pause"), QKeySequence(Qt::CTRL | Qt::Key_Pause),
        [this] { m_controller->pause(); });
    make(Action::StepOver, IconKind::StepOver, tr("&Step (next op)"), QKeySequence(Qt::Key_F10),
        [this] { stepCommand(0); });
    make(Action::StepInto, IconKind::StepInto, tr("Step &Into (next tensor event)"), QKeySequence(Qt::Key_F11),
        [this] { stepCommand(1); });
    make(Action::StepOut, IconKind::StepOut, tr("Step &Out (end of block)"), QKeySequence(Qt::SHIFT | Qt::Key_F11),
        [this] { stepCommand(2); });
    make(Action::RunTo, IconKind::RunTo, tr("Run to &Node"), QKeySequence(Qt::CTRL | Qt::Key_F10),
        [this] { runToSelected(); });
    make(Action::Stop, IconKind::Stop, tr("S&top"), QKeySequence(Qt::SHIFT | Qt::Key_F5),
        [this] { m_controller->stop(); });
    make(Action::ToggleBreakpoint, IconKind::Breakpoint, tr("Toggle &Breakpoint"), QKeySequence(Qt::Key_F9),
        [this] { toggleBreakpointOnSelected(); });
    QAction* nan = make(Action::BreakOnNan, IconKind::BreakNan, tr("Break on NaN/&Inf"), QKeySequence(),
        [this](bool on) { m_breakpoints->setBreakOnNanInf(on); });
    nan->setCheckable(true);
    nan->setToolTip(tr("Pause at the first op whose output has NaN or Inf"));
    make(Action::Find, IconKind::Fit, tr("&Find Node…"), QKeySequence::Find, [this] { m_graph->showFind(); });
    make(Action::Open, IconKind::Open, tr("&Open…"), QKeySequence::Open, [this] { openFileDialog(); });

    // Short labels on the toolbar (the menu and the tooltips say what each step takes), so that it fits
    // a 1280-pixel window.
    action(Action::StepOver)->setIconText(tr("Step"));
    action(Action::StepInto)->setIconText(tr("Step Into"));
    action(Action::StepOut)->setIconText(tr("Step Out"));
    action(Action::ToggleBreakpoint)->setIconText(tr("Breakpoint"));

    QToolBar* bar = addToolBar(tr("Debug"));
    bar->setObjectName(QStringLiteral("debugToolBar"));
    bar->setIconSize(QSize(22, 22));
    bar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    bar->addAction(action(Action::Open));
    bar->addSeparator();
    for (Action a : { Action::Run, Action::Pause, Action::Stop })
        bar->addAction(action(a));
    bar->addSeparator();
    for (Action a : { Action::StepOver, Action::StepInto, Action::StepOut, Action::RunTo })
        bar->addAction(action(a));
    bar->addSeparator();
    bar->addAction(action(Action::ToggleBreakpoint));
    bar->addAction(action(Action::BreakOnNan));
}

void MainWindow::buildMenus()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(action(Action::Open));
    QMenu* samplesMenu = file->addMenu(tr("Open &Sample"));
    for (const std::string& n : samples::sampleNames()) {
        const QString name = QString::fromStdString(n);
        QAction* a = samplesMenu->addAction(name, this, [this, name] { openModel(QStringLiteral("sample:") + name); });
        a->setToolTip(QString::fromStdString(samples::sampleDescription(n) + "; " + samples::sampleWeights(n)));
    }
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    file->addSeparator();
    buildAttach(file);
    file->addSeparator();
    file->addAction(tr("Export Graph as &PNG…"), this, [this] { exportGraph(false); });
    file->addAction(tr("Export Graph as S&VG…"), this, [this] { exportGraph(true); });
    file->addAction(tr("Save &Window Screenshot…"), this, [this] {
        const QString path = QFileDialog::getSaveFileName(
            this, tr("Save Screenshot"), QStringLiteral("opscope.png"), tr("PNG images (*.png)"));
        QString error;
        if (!path.isEmpty() && !saveScreenshot(path, &error)) showMessage(tr("Screenshot"), error);
    });
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    QMenu* debugMenu = menuBar()->addMenu(tr("&Debug"));
    for (Action a : { Action::Run, Action::Pause, Action::Stop })
        debugMenu->addAction(action(a));
    debugMenu->addSeparator();
    for (Action a : { Action::StepOver, Action::StepInto, Action::StepOut, Action::RunTo })
        debugMenu->addAction(action(a));
    debugMenu->addSeparator();
    debugMenu->addAction(action(Action::ToggleBreakpoint));
    debugMenu->addAction(
        tr("New Breakpoint…"), this, [this] { m_breakpointsPanel->addWithDialog(m_graph->view()->selectedNode()); });
    debugMenu->addAction(action(Action::BreakOnNan));
    debugMenu->addAction(tr("Remove All Breakpoints"), this, [this] { m_breakpoints->clear(); });
    debugMenu->addSeparator();
    buildCompare(debugMenu);
    debugMenu->addSeparator();
    QMenu* recordMenu = debugMenu->addMenu(tr("&Record"));
    m_recordGroup = new QActionGroup(this);
    const std::pair<QString, debug::RecordLevel> levels[] = {
        { tr("Ops and times"), debug::RecordLevel::Ops },
        { tr("Ops with statistics"), debug::RecordLevel::Stats },
        { tr("Ops, statistics and output tensors"), debug::RecordLevel::Tensors },
    };
    for (const auto& [text, level] : levels) {
        QAction* a = recordMenu->addAction(text);
        a->setCheckable(true);
        a->setChecked(level == m_controller->recordLevel());
        a->setData(static_cast<int>(level));
        m_recordGroup->addAction(a);
        connect(a, &QAction::triggered, this, [this, level = level] {
            m_controller->setRecordLevel(level);
            QSettings().setValue(QStringLiteral("record/level"), static_cast<int>(level));
        });
    }

    m_viewMenu = menuBar()->addMenu(tr("&View"));
    m_viewMenu->addAction(action(Action::Find));
    QAction* present = m_viewMenu->addAction(tr("&Presentation"), this, [this] { openPresentation(0); });
    present->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P));
    present->setToolTip(tr("Step layer by layer through a forward pass in large type, for a projector"));
    m_viewMenu->addSeparator();
    m_layouts->addActions(m_viewMenu);
    m_viewMenu->addSeparator();
    for (QDockWidget* d : findChildren<QDockWidget*>())
        m_viewMenu->addAction(d->toggleViewAction());

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&Keys"), this, [this] {
        showMessage(tr("Keys"),
            tr("F5  Run / Continue\nShift+F5  Stop\nF10  Step (next op)\nF11  Step Into (next tensor event)\n"
               "Shift+F11  Step Out (end of the block)\nCtrl+F10  Run to the selected node\n"
               "F9  Toggle a breakpoint on the selected node\nCtrl+F  Find a node by name or operator\n"
               "F  Fit the graph   +/-  Zoom   double-click  collapse/expand a block"));
    });
    help->addAction(tr("&About opscope"), this, [this] {
        QMessageBox::about(this, tr("About opscope"),
            tr("<b>opscope</b> %1<br>A debugger for neural networks: hybridized graphs, op hooks, breakpoints "
               "and the tensors where a run pauses.")
                .arg(QApplication::applicationVersion()));
    });
}

void MainWindow::showMessage(const QString& title, const QString& text)
{
    m_lastMessage = text;
    statusBar()->showMessage(text, 10000);
    if (m_interactive)
        QMessageBox::warning(this, title, text);
    else
        qWarning("opscope: %s: %s", qPrintable(title), qPrintable(text));
}

void MainWindow::openFileDialog()
{
    const QString dir = QSettings().value(QStringLiteral("files/lastDir")).toString();
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open Model"), dir,
        tr("Models (*-symbol.json *.json *.onnx);;MXNet symbol files (*-symbol.json *.json);;ONNX models (*.onnx);;All files (*)"));
    if (path.isEmpty()) return;
    QSettings().setValue(QStringLiteral("files/lastDir"), QFileInfo(path).absolutePath());
    openModel(path);
}

void MainWindow::openModel(const QString& spec)
{
    if (spec.isEmpty()) return;
    m_train->stopAndWait(3000); // training uses the current block
    m_controller->loadModel(spec);
}

void MainWindow::exportGraph(bool svg)
{
    const QString base = m_controller->model() ? m_controller->model()->title : QStringLiteral("graph");
    const QString path = QFileDialog::getSaveFileName(this, svg ? tr("Export Graph as SVG") : tr("Export Graph as PNG"),
        base + (svg ? QStringLiteral(".svg") : QStringLiteral(".png")),
        svg ? tr("SVG images (*.svg)") : tr("PNG images (*.png)"));
    if (path.isEmpty()) return;
    QString error;
    const bool ok = svg ? m_graph->view()->exportSvg(path, &error) : m_graph->view()->exportPng(path, &error);
    if (!ok) showMessage(tr("Export"), error);
}

bool MainWindow::saveScreenshot(const QString& path, QString* error)
{
    // With --present the picture is of the presentation.
    const QPixmap shot = m_options.present > 0 && m_presentation && m_presentation->isVisible() ? m_presentation->grab() : grab();
    if (shot.isNull() || !shot.save(path, "PNG")) {
        if (error) *error = tr("%1: the screenshot could not be written").arg(path);
        return false;
    }
    return true;
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    // Stop a paused or going run before the window goes; the worker is joined by the controller. A
    // server's run is the server's: the window detaches and leaves it as it is.
    if (m_controller->isAttached())
        detachFromServer();
    else if (m_controller->isActive())
        m_controller->stopAndWait(3000);
    m_train->stopAndWait(3000);
    QSettings s;
    s.setValue(QStringLiteral("window/geometry"), saveGeometry());
    m_layouts->save();
    saveModelSettings();
    event->accept();
}

namespace {
    // What File ▸ Open and a drop take: an MXNet symbol file or an ONNX model.
    bool isModelFile(const QString& path)
    {
        return path.endsWith(QLatin1String(".json")) || path.endsWith(QLatin1String(".onnx"), Qt::CaseInsensitive);
    }
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    for (const QUrl& url : event->mimeData()->urls())
        if (url.isLocalFile() && isModelFile(url.toLocalFile())) {
            event->acceptProposedAction();
            return;
        }
}

void MainWindow::dropEvent(QDropEvent* event)
{
    for (const QUrl& url : event->mimeData()->urls())
        if (url.isLocalFile() && isModelFile(url.toLocalFile())) {
            openModel(url.toLocalFile());
            event->acceptProposedAction();
            return;
        }
}

// Settings ---------------------------------------------------------------------------------------

void MainWindow::restoreWindowSettings()
{
    QSettings s;
    restoreGeometry(s.value(QStringLiteral("window/geometry")).toByteArray());
    m_layouts->restore();
    const int level = s.value(QStringLiteral("record/level"), static_cast<int>(m_controller->recordLevel())).toInt();
    for (QAction* a : m_recordGroup->actions())
        if (a->data().toInt() == level) {
            a->setChecked(true);
            m_controller->setRecordLevel(static_cast<debug::RecordLevel>(level));
        }
}

QString MainWindow::modelKey() const
{
    if (!m_controller->model()) return {};
    const QByteArray spec = m_controller->model()->spec.toUtf8();
    return QStringLiteral("models/")
        + QString::fromLatin1(QCryptographicHash::hash(spec, QCryptographicHash::Sha1).toHex().left(16));
}

void MainWindow::saveModelSettings()
{
    const QString key = modelKey();
    if (key.isEmpty() || m_options.fresh || m_controller->model()->isRemote()) return; // a server keeps its own
    QSettings s;
    s.setValue(key + QStringLiteral("/spec"), m_controller->model()->spec);
    s.setValue(key + QStringLiteral("/breakpoints"), m_breakpoints->save());
    QVariantList inputs;
    for (const InputSource& src : m_inputs->sources())
        inputs << toVariant(src);
    s.setValue(key + QStringLiteral("/inputs"), inputs);
    QStringList shapes;
    for (const Shape& shape : m_inputs->shapes())
        shapes << QString::fromStdString(shape.known() ? shapeToX(shape) : std::string());
    s.setValue(key + QStringLiteral("/shapes"), shapes);
}

void MainWindow::restoreModelSettings()
{
    m_restoringSettings = true;
    const QString key = modelKey();
    QSettings s;
    const bool remote = m_controller->model()->isRemote();
    const bool saved = !m_options.fresh && !remote && s.contains(key + QStringLiteral("/breakpoints"));
    if (remote && !(m_firstModel && m_options.explicitBreakpoints())) {
        // A server's breakpoints are its own: shown as they are, added to, never replaced.
        m_breakpoints->refresh();
    } else if (m_firstModel && m_options.explicitBreakpoints()) {
        if (remote)
            m_breakpoints->refresh(); // added to the server's own, which others may share
        else
            m_breakpoints->clear();
        const auto graph = m_controller->model()->graph;
        for (const debug::Breakpoint& b : m_options.breakpoints) {
            if (b.kind == debug::Breakpoint::Kind::Node) {
                // A training step also has `<node>_backward` for each op node.
                std::string node = b.location;
                if (m_options.trainStep && node.ends_with("_backward")) node.resize(node.size() - 9);
                const auto id = graph->findNode(node);
                if (!id || graph->node(*id).isVariable()) {
                    showMessage(tr("Breakpoint"),
                        tr("--break %1: the model has no operator node of that name")
                            .arg(QString::fromStdString(b.location)));
                    if (!m_options.screenshot.isEmpty() || m_options.quit) m_exitStatus = kExitUsage;
                    continue;
                }
            }
            m_breakpoints->add(b);
        }
    } else if (saved) {
        m_breakpoints->restore(s.value(key + QStringLiteral("/breakpoints")).toStringList());
    } else {
        m_breakpoints->clear();
        if (m_defaultStart && m_controller->model()->spec == QLatin1String(kDefaultSample))
            m_breakpoints->add(debug::parseBreakSpec(kDefaultBreakpoint));
    }
    if (!m_options.fresh && !remote) {
        std::vector<InputSource> sources;
        for (const QVariant& v : s.value(key + QStringLiteral("/inputs")).toList())
            sources.push_back(inputSourceFromVariant(v.toMap()));
        if (!sources.empty()) m_inputs->setSources(sources);
        std::vector<Shape> shapes;
        bool any = false;
        for (const QString& text : s.value(key + QStringLiteral("/shapes")).toStringList()) {
            const std::optional<Shape> shape = parseShapeText(text);
            shapes.push_back(shape ? *shape : Shape());
            any = any || shape.has_value();
        }
        if (any) {
            m_inputs->setShapes(shapes);
            m_controller->setInputShapes(m_inputs->shapes());
        }
    }
    m_restoringSettings = false;
    syncBreakpointMarks();
    const QSignalBlocker block(action(Action::BreakOnNan));
    action(Action::BreakOnNan)->setChecked(m_breakpoints->breakOnNanInf());
}

void MainWindow::addRecentFile(const QString& path)
{
    QSettings s;
    QStringList recent = s.value(QStringLiteral("files/recent")).toStringList();
    const QString abs = QFileInfo(path).absoluteFilePath();
    recent.removeAll(abs);
    recent.prepend(abs);
    while (recent.size() > 10)
        recent.removeLast();
    s.setValue(QStringLiteral("files/recent"), recent);
    rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu()
{
    m_recentMenu->clear();
    const QStringList recent = QSettings().value(QStringLiteral("files/recent")).toStringList();
    for (const QString& path : recent)
        m_recentMenu->addAction(QFileInfo(path).fileName(), this, [this, path] { openModel(path); })->setToolTip(path);
    if (recent.isEmpty()) m_recentMenu->addAction(tr("(none)"))->setEnabled(false);
    m_recentMenu->setToolTipsVisible(true);
}

} // namespace opscope::gui
