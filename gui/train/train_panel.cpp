#include "gui/train/train_panel.h"

#include "core/error.h"
#include "gui/train/train_charts.h"
#include "gui/train/train_insights.h"
#include "gui/widgets/message_stack.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPointer>
#include <QPushButton>
#include <QResizeEvent>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QThread>
#include <QVBoxLayout>

namespace opscope::gui {

namespace {
constexpr int kDecisionSize = 320;

QString sampleName(const ModelInfo& model)
{
    return model.isSample() ? model.spec.mid(7) : QString();
}
} // namespace

TrainPanel::TrainPanel(QWidget* parent)
    : QWidget(parent)
{
    buildUi();
    setModel(nullptr);
}

TrainPanel::~TrainPanel()
{
    if (m_stopFlag) *m_stopFlag = true;
    if (m_thread) {
        m_thread->wait();
        delete m_thread;
    }
}

void TrainPanel::buildUi()
{
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    m_stack = messageStack(this, {}, &m_message);
    outer->addWidget(m_stack);

    // Two rows of splitters: controls and plot above, decision regions and gradients below (a tall
    // dock), or all four in the top row (a wide, low one); see arrange().
    m_page = new QSplitter(Qt::Vertical, this);
    m_page->setChildrenCollapsible(false);
    m_top = new QSplitter(Qt::Horizontal, m_page);
    m_bottom = new QSplitter(Qt::Horizontal, m_page);
    for (QSplitter* row : { m_top, m_bottom }) {
        row->setChildrenCollapsible(false);
        m_page->addWidget(row);
    }
    for (QSplitter* split : { m_page, m_top, m_bottom })
        connect(split, &QSplitter::splitterMoved, this, [this] { m_userSized = true; });
    m_stack->addWidget(m_page);
    QWidget* page = m_top;

    // Settings and buttons.
    // In a scroll area, so that a narrow dock does not squeeze the window's other docks.
    auto* scroll = new QScrollArea(page);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setMinimumWidth(120);
    auto* controls = new QWidget(scroll);
    auto* grid = new QGridLayout(controls);
    grid->setContentsMargins(6, 4, 6, 4);
    grid->setVerticalSpacing(3);
    m_title = new QLabel(controls);
    m_title->setStyleSheet(QStringLiteral("font-weight: bold;"));
    m_epochs = new QSpinBox(controls);
    m_epochs->setRange(1, 10000);
    m_batch = new QSpinBox(controls);
    m_batch->setRange(1, 65536);
    m_rate = new QDoubleSpinBox(controls);
    m_rate->setDecimals(5);
    m_rate->setRange(0.00001, 10.0);
    m_rate->setSingleStep(0.001);
    m_optimizer = new QComboBox(controls);
    m_optimizer->addItems({ QStringLiteral("adam"), QStringLiteral("sgd") });
    m_data = new QComboBox(controls);
    m_data->setToolTip(tr("The data set: mnist (real digits), fashion (Fashion-MNIST), digits (synthetic), "
                          "spirals or moons (2-D points), as the model's input takes"));
    m_seed = new QSpinBox(controls);
    m_seed->setRange(0, 1000000);
    m_fromInitial = new QCheckBox(tr("From initial weights"), controls);
    m_fromInitial->setToolTip(tr("Start from the sample's untrained weights (made from the seed) instead of "
                                 "the current ones"));
    m_debug = new QCheckBox(tr("Stop at breakpoints"), controls);
    m_debug->setToolTip(tr("Run every training step (forward, loss, backward) in the debugger: breakpoints and "
                           "watchpoints pause the training, in NODE_backward nodes too, and \"grad\" conditions "
                           "test gradients. A stopped step updates no weight."));
    m_debugStep = new QPushButton(tr("Debug one step"), controls);
    m_debugStep->setToolTip(tr("Run one training step in the debugger, paused before its first op: step through "
                               "the forward pass, the loss and the backward pass"));
    m_train = new QPushButton(tr("Train"), controls);
    m_stop = new QPushButton(tr("Stop"), controls);
    m_status = new QLabel(controls);
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    for (QWidget* field : std::initializer_list<QWidget*> { m_data, m_epochs, m_batch, m_rate, m_seed, m_optimizer })
        field->setMaximumWidth(100);
    int row = 0;
    grid->addWidget(m_title, row++, 0, 1, 2);
    const std::pair<QString, QWidget*> fields[] = { { tr("Data"), m_data }, { tr("Epochs"), m_epochs }, { tr("Batch"), m_batch },
        { tr("Learning rate"), m_rate }, { tr("Optimizer"), m_optimizer }, { tr("Seed"), m_seed } };
    for (const auto& [label, field] : fields) {
        grid->addWidget(new QLabel(label, controls), row, 0);
        grid->addWidget(field, row++, 1);
    }
    grid->addWidget(m_fromInitial, row++, 0, 1, 2);
    grid->addWidget(m_debug, row++, 0, 1, 2);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_train);
    buttons->addWidget(m_stop);
    buttons->addStretch(1);
    grid->addLayout(buttons, row++, 0, 1, 2);
    grid->addWidget(m_debugStep, row++, 0, 1, 2);
    grid->addWidget(m_status, row++, 0, 1, 2);
    grid->setRowStretch(row, 1);
    scroll->setWidget(controls);
    m_controls = scroll;

    m_plot = new TrainPlot(page);
    m_decisionView = new ImageView(page);
    m_decisionView->setToolTip(tr("The class the model predicts over the plane of the data, paler where it is "
                                  "less sure, with the training points"));
    m_gradients = new GradientView(page);
    m_insights = new TrainInsights(m_gradients, page);
    arrange(Arrangement::Grid);

    connect(m_train, &QPushButton::clicked, this, [this] { startTraining(); });
    connect(m_debugStep, &QPushButton::clicked, this, [this] { debugOneStep(); });
    connect(m_stop, &QPushButton::clicked, this, &TrainPanel::stopTraining);
}

void TrainPanel::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    if (width() < 100 || height() < 60) return;
    // A strip much wider than high (the dock under the graph) takes the four side by side.
    const Arrangement wanted = width() > 2 * height() ? Arrangement::Row : Arrangement::Grid;
    // Sized afresh with the dock, until the user drags a splitter.
    if (wanted != m_arrangement || !m_userSized) arrange(wanted);
}

void TrainPanel::arrange(Arrangement arrangement)
{
    m_arrangement = arrangement;
    const bool decision = !m_decisionView->isHidden();
    // The controls as narrow as their fields allow (the status wraps); the plots take the rest.
    const QWidget* fields = m_controls->widget();
    const int controls = std::clamp(fields->minimumSizeHint().width() + 16, 200, 280);
    QWidget* const controlsView = m_controls;
    QWidget* const plot = m_plot;
    QWidget* const decisionView = m_decisionView;
    QWidget* const gradients = m_insights;
    const bool placedInRow = m_top->indexOf(gradients) >= 0; // also before the first arrange()
    if (arrangement == Arrangement::Row) {
        if (!placedInRow) {
            for (QWidget* w : { controlsView, plot, decisionView, gradients })
                m_top->addWidget(w);
            m_bottom->hide();
        }
        const int rest = std::max(300, width() - controls);
        const int decisionWidth = decision ? std::min(rest * 3 / 10, height()) : 0;
        const int plotWidth = (rest - decisionWidth) * 55 / 100;
        m_top->setSizes({ controls, plotWidth, decisionWidth, rest - plotWidth - decisionWidth });
        for (int i = 0; i < 4; ++i)
            m_top->setStretchFactor(i, i == 1 || i == 3 ? 1 : 0);
        return;
    }
    if (placedInRow) {
        m_top->addWidget(controlsView);
        m_top->addWidget(plot);
        m_bottom->addWidget(decisionView);
        m_bottom->addWidget(gradients);
        m_bottom->show();
    }
    m_top->setSizes({ controls, std::max(200, width() - controls) });
    // The controls' rows on top (the plot beside them); the decision regions square below, the
    // gradients the rest of that row.
    const int top = std::clamp(fields->sizeHint().height(), height() * 2 / 5, height() * 3 / 5);
    const int rowHeight = std::max(150, height() - top);
    const int decisionWidth = decision ? std::min(rowHeight, width() * 45 / 100) : 0;
    m_bottom->setSizes({ decisionWidth, std::max(150, width() - decisionWidth) });
    m_page->setSizes({ height() - rowHeight, rowHeight });
    for (QSplitter* row : { m_top, m_bottom }) {
        row->setStretchFactor(0, 0);
        row->setStretchFactor(1, 1);
    }
}

bool TrainPanel::canTrainModel() const
{
    return m_model && !m_model->isRemote() && samples::hasTrainingData(sampleName(*m_model).toStdString());
}

QString TrainPanel::unavailableMessage() const
{
    if (!m_model) return tr("No model");
    if (m_model->isRemote())
        return tr("The model runs on %1: training it here needs its weights here. A server started with "
                  "--train serves its training steps (Run steps through them).")
            .arg(m_model->server);
    return canTrainModel() ? QString() : tr("This model has no training data: mlp, lenet and fashion train");
}

void TrainPanel::setModel(ModelInfoPtr model)
{
    stopAndWait();
    m_model = std::move(model);
    ++m_generation; // anything still queued from the old model is dropped
    m_debugStepsDone = 0;
    m_stepState.reset();
    m_reports.clear();
    m_decision = QImage();
    m_lastError.clear();
    m_stopped = false;
    m_plot->reset(10);
    m_gradients->clear();
    m_insights->clear();
    m_decisionView->setImage({});
    m_status->clear();
    if (!canTrainModel()) {
        m_message->setText(unavailableMessage());
        m_stack->setCurrentIndex(0);
        updateControls();
        return;
    }
    const std::string name = sampleName(*m_model).toStdString();
    const samples::TrainSetup d = samples::trainingDefaults(name);
    m_title->setText(tr("Train %1").arg(m_model->title));
    m_data->clear();
    for (const std::string& set : samples::dataSetsFor(name))
        m_data->addItem(QString::fromStdString(set));
    setEpochs(d.epochs);
    setBatchSize(static_cast<int>(d.batch));
    setLearningRate(d.learningRate);
    setOptimizer(QString::fromStdString(d.optimizer));
    m_fromInitial->setChecked(name == "lenet"); // lenet ships trained weights
    m_plot->reset(d.epochs);
    // Decision regions need a plane: points of two coordinates (mlp's spirals), not images.
    const bool plane = !m_model->inputShapes.empty() && m_model->inputShapes.front().ndim() == 2
        && m_model->inputShapes.front()[1] == 2;
    m_decisionView->setHidden(!plane);
    m_decisionView->setPlaceholder(tr("The decision regions show here after each epoch"));
    arrange(m_arrangement);
    m_status->setText(tr("%1 · %2 · learning rate %3 · batch %4")
                          .arg(m_model->title, QString::fromStdString(d.optimizer))
                          .arg(d.learningRate)
                          .arg(d.batch));
    m_stack->setCurrentIndex(1);
    updateControls();
}

void TrainPanel::setEpochs(int epochs)
{
    m_epochs->setValue(epochs);
}
void TrainPanel::setBatchSize(int batch)
{
    m_batch->setValue(batch);
}
void TrainPanel::setLearningRate(double rate)
{
    m_rate->setValue(rate);
}
void TrainPanel::setSeed(int seed)
{
    m_seed->setValue(seed);
}
void TrainPanel::setFromInitialWeights(bool on)
{
    m_fromInitial->setChecked(on);
}

bool TrainPanel::setDataSet(const QString& name)
{
    const int i = m_data->findText(name);
    if (i >= 0) m_data->setCurrentIndex(i);
    return i >= 0;
}

void TrainPanel::setOptimizer(const QString& name)
{
    const int i = m_optimizer->findText(name);
    if (i >= 0) m_optimizer->setCurrentIndex(i);
}

TrainConfig TrainPanel::config() const
{
    TrainConfig c;
    c.sample = m_model ? sampleName(*m_model).toStdString() : std::string();
    c.data = m_data->currentText().toStdString();
    c.epochs = m_epochs->value();
    c.batch = m_batch->value();
    c.learningRate = m_rate->value();
    c.optimizer = m_optimizer->currentText().toStdString();
    c.seed = static_cast<uint64_t>(m_seed->value());
    c.fromInitial = m_fromInitial->isChecked();
    return c;
}

void TrainPanel::updateControls()
{
    const QString blocked = m_guard ? m_guard() : QString();
    m_train->setEnabled(canTrainModel() && !m_training && blocked.isEmpty());
    m_train->setToolTip(blocked);
    m_debugStep->setEnabled(canTrainModel() && !m_training && blocked.isEmpty() && m_session);
    m_stop->setEnabled(m_training);
    for (QWidget* w :
        std::initializer_list<QWidget*> { m_data, m_epochs, m_batch, m_rate, m_optimizer, m_seed, m_fromInitial, m_debug })
        w->setEnabled(!m_training);
}

void TrainPanel::setStopAtBreakpoints(bool on)
{
    m_debug->setChecked(on);
}

bool TrainPanel::stopsAtBreakpoints() const
{
    return m_debug->isChecked();
}

bool TrainPanel::startTraining()
{
    return start(m_debug->isChecked(), 0, false, 0);
}

bool TrainPanel::debugOneStep()
{
    // Steps one after another share a trainer (Adam's moments carry over) while the optimizer's
    // settings stay.
    const TrainConfig c = config();
    const QString key
        = QStringLiteral("%1 %2").arg(QString::fromStdString(c.optimizer)).arg(c.learningRate, 0, 'g', 17);
    if (!m_stepState || key != m_stepStateKey) {
        m_stepState = std::make_shared<TrainState>();
        m_stepStateKey = key;
    }
    const int64_t done = m_debugStepsDone;
    if (!start(true, 1, true, done)) return false;
    m_stepsThisRun = 1;
    return true;
}

bool TrainPanel::debugSteps(int64_t steps, bool pauseAtEntry)
{
    return start(true, steps, pauseAtEntry, 0);
}

bool TrainPanel::start(bool debugged, int64_t steps, bool pauseAtEntry, int64_t skip)
{
    m_lastError.clear();
    if (m_training)
        m_lastError = tr("Training is already running");
    else if (!canTrainModel())
        m_lastError = unavailableMessage();
    else if (debugged && !m_session)
        m_lastError = tr("No debug session to run the steps in");
    else if (m_guard)
        m_lastError = m_guard();
    if (!m_lastError.isEmpty()) {
        m_status->setText(m_lastError);
        return false;
    }
    joinWorker(2000); // the last worker has posted its end; let it return
    if (m_thread) {
        m_lastError = tr("The last training is still ending");
        return false;
    }

    TrainConfig cfg = config();
    if (steps > 0) {
        cfg.maxSteps = steps;
        cfg.skipSteps = skip;
        cfg.fromInitial = false; // steps from the weights the window shows
    }
    m_stepsThisRun = 0;
    m_stepRun = steps > 0;
    if (skip == 0) m_debugStepsDone = 0;
    if (steps == 0) m_stepState.reset(); // a whole training: its own loss and trainer; steps after it start afresh
    const std::shared_ptr<TrainState> state = steps > 0 ? m_stepState : nullptr;
    const quint64 gen = ++m_generation;
    m_stopFlag = std::make_shared<std::atomic<bool>>(false);
    m_training = true;
    m_stopped = false;
    m_totalEpochs = cfg.epochs;
    m_reports.clear();
    m_plot->reset(cfg.epochs);
    m_gradients->clear();
    m_insights->clear();
    m_status->setText(tr("Starting…"));

    std::shared_ptr<gluon::HybridBlock> block = m_model->block;
    std::shared_ptr<std::atomic<bool>> flag = m_stopFlag;
    QPointer<TrainPanel> self(this);
    // Posts `f` to the panel on the GUI thread; dropped when the panel is gone.
    auto post = [self](auto f) {
        if (!self) return;
        QMetaObject::invokeMethod(
            self.data(),
            [self, f = std::move(f)] {
                if (self) f(self.data());
            },
            Qt::QueuedConnection);
    };
    debug::Session* session = debugged ? m_session : nullptr;
    m_thread = QThread::create([block, cfg, flag, gen, post, session, pauseAtEntry, state] {
        TrainCallbacks cb;
        if (session) {
            // Each step is a run of the window's session; this thread waits for it (the GUI thread
            // shows its pauses and sends the commands). The stop flag stops a paused step.
            cb.step = [session, flag, pauseAtEntry](const Tensor& x, const Tensor& y,
                          const std::shared_ptr<gluon::HybridBlock>& loss,
                          const std::shared_ptr<gluon::Trainer>& trainer, int64_t step) -> std::optional<double> {
                if (flag->load()) return std::nullopt;
                session->setTraining(loss, trainer);
                session->setInputs({ x });
                session->setLabel(y);
                session->startTrainStep(
                    pauseAtEntry && step == 0 ? debug::StartMode::PauseAtEntry : debug::StartMode::Run);
                bool stopSent = false;
                while (!session->waitUntilIdle(std::chrono::milliseconds(50)))
                    if (flag->load() && !stopSent) stopSent = session->stop() || true;
                const auto result = session->lastTrainStep();
                if (!result) return std::nullopt;
                if (!result->updated) return std::nullopt; // stopped, or failed (the window shows why)
                return result->lossSum;
            };
        }
        cb.shouldStop = [flag] { return flag->load(); };
        cb.onStatus = [&](const QString& text) { post([gen, text](TrainPanel* p) { p->onStatus(gen, text); }); };
        cb.onBatchLoss = [&](double position, double loss) {
            post([gen, position, loss](TrainPanel* p) { p->onBatchLoss(gen, position, loss); });
        };
        cb.onEpoch = [&](EpochResult&& r) {
            auto result = std::make_shared<EpochResult>(std::move(r));
            post([gen, result](TrainPanel* p) { p->onEpoch(gen, result); });
        };
        bool completed = false;
        QString error;
        try {
            completed = runTraining(*block, cfg, cb, state);
        } catch (const std::exception& e) {
            error = QString::fromUtf8(e.what());
        }
        post([gen, completed, error](TrainPanel* p) { p->onEnded(gen, completed, error); });
    });
    m_thread->setObjectName(QStringLiteral("opscope-train"));
    m_thread->start();
    updateControls();
    Q_EMIT trainingStarted();
    return true;
}

void TrainPanel::stopTraining()
{
    if (m_stopFlag) *m_stopFlag = true;
    if (m_training) m_status->setText(tr("Stopping…"));
}

void TrainPanel::joinWorker(int timeoutMs)
{
    if (!m_thread) return;
    if (m_thread->wait(QDeadlineTimer(timeoutMs))) {
        delete m_thread;
        m_thread = nullptr;
    }
}

bool TrainPanel::stopAndWait(int timeoutMs)
{
    if (m_stopFlag) *m_stopFlag = true;
    joinWorker(timeoutMs);
    if (m_thread) return false;
    if (m_training) {
        // The worker has ended; its queued end is dropped, the end is told here.
        ++m_generation;
        m_training = false;
        m_stopped = true;
        m_status->setText(tr("Stopped after %n epoch(s)", nullptr, epochsDone()));
        updateControls();
        Q_EMIT trainingFinished();
    }
    return true;
}

void TrainPanel::onStatus(quint64 generation, const QString& text)
{
    if (generation != m_generation || !m_training) return;
    if (!m_stopFlag || !*m_stopFlag) m_status->setText(text);
}

void TrainPanel::onBatchLoss(quint64 generation, double position, double loss)
{
    if (generation != m_generation) return;
    m_plot->addBatchLoss(position, loss);
}

void TrainPanel::onEpoch(quint64 generation, std::shared_ptr<EpochResult> result)
{
    if (generation != m_generation) return;
    const samples::EpochReport& r = result->report;
    m_reports.push_back(r);
    m_plot->addEpoch(r);
    if (!result->decision.isNull()) {
        m_decision = result->decision;
        m_decisionView->setImage(m_decision);
    }
    m_insights->addEpoch(*result);
    m_gradients->setGradients(std::move(result->gradients));
    m_status->setText(tr("Epoch %1/%2 · loss %3 · train %4 % · test %5 % · %6 s")
                          .arg(r.epoch)
                          .arg(m_totalEpochs)
                          .arg(r.loss, 0, 'f', 4)
                          .arg(100 * r.trainAccuracy, 0, 'f', 1)
                          .arg(100 * r.testAccuracy, 0, 'f', 1)
                          .arg(r.seconds, 0, 'f', 2));
    Q_EMIT epochFinished(r.epoch);
}

void TrainPanel::onEnded(quint64 generation, bool completed, const QString& error)
{
    if (generation != m_generation) return;
    m_training = false;
    if (completed && error.isEmpty()) m_debugStepsDone += m_stepsThisRun;
    m_stopped = !completed && error.isEmpty();
    joinWorker(1000);
    updateControls();
    if (!error.isEmpty()) {
        m_lastError = error;
        m_status->setText(tr("Training failed: %1").arg(error));
        Q_EMIT trainingFailed(error);
        return;
    }
    if (m_stopped)
        m_status->setText(tr("Stopped after %n epoch(s)", nullptr, epochsDone()));
    else if (!m_reports.empty())
        m_status->setText(tr("Done: %1 epochs · loss %2 · test accuracy %3 %")
                              .arg(epochsDone())
                              .arg(m_reports.back().loss, 0, 'f', 4)
                              .arg(100 * m_reports.back().testAccuracy, 0, 'f', 1));
    Q_EMIT trainingFinished();
}

} // namespace opscope::gui
