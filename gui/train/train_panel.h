#pragma once

#include "debug/session.h"
#include "gui/session/model_info.h"
#include "gui/train/train_worker.h"

#include <atomic>
#include <functional>
#include <memory>

#include <QImage>
#include <QWidget>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QScrollArea;
class QSpinBox;
class QSplitter;
class QStackedWidget;
class QThread;

namespace opscope::gui {

class GradientView;
class TrainInsights;
class ImageView;
class TrainPlot;

/// The Train dock: trains the current model when it is a built-in sample with training data (mlp,
/// lenet, fashion) on a data set its input takes, with the epochs, batch, learning rate, optimizer and
/// seed set here. The loss and accuracy plot grows after every epoch; the decision regions (2-D data),
/// every parameter's gradient histogram, the held-out confusion matrix, the misclassified examples and
/// the parameters' histograms over the epochs (TrainInsights) follow.
///
/// With "Stop at breakpoints" every mini-batch step runs in the window's debug session instead (see
/// setDebugSession); "Debug one step" runs a single step paused at its first op.
///
/// Threads: training runs on a QThread of its own, one mini-batch at a time with a stop flag checked
/// between them. The worker posts queued calls to this panel (guarded by QPointer) carrying the run
/// generation; a call from any run but the current one is dropped. The block is the model's own:
/// nothing else may call it while training (the window disables its runs).
class TrainPanel : public QWidget {
    Q_OBJECT
public:
    explicit TrainPanel(QWidget* parent = nullptr);
    ~TrainPanel() override;

    /// The model to train (a sample with data, else the panel says it cannot). Stops and waits for
    /// a training of the previous model first.
    void setModel(ModelInfoPtr model);
    ModelInfoPtr model() const { return m_model; }
    bool canTrainModel() const;

    /// Called before a start: a non-empty reason refuses it (the window: a debug run is active).
    void setStartGuard(std::function<QString()> guard) { m_guard = std::move(guard); }
    /// The window's debug session (not owned): with "Stop at breakpoints" each mini-batch step is one
    /// of its runs (Session::startTrainStep), so breakpoints and watchpoints, in backward nodes too,
    /// pause the training; the window shows the pause and continues it.
    void setDebugSession(debug::Session* session) { m_session = session; }
    void setStopAtBreakpoints(bool on);
    bool stopsAtBreakpoints() const;

    /// Starts training with the panel's settings; false with lastError() set when it cannot start.
    bool startTraining();
    /// One training step in the debugger, paused before its first op, from the current weights: the
    /// mini-batch after the one the last such step took (the seed's shuffle; the first after a model
    /// change or a training); false with lastError() set.
    bool debugOneStep();
    /// Steps taken by debugOneStep() since the model changed or a training ran.
    int64_t debugStepsDone() const { return m_debugStepsDone; }
    /// `steps` training steps in the debugger (breakpoints apply), the first paused before its first
    /// op when `pauseAtEntry`.
    bool debugSteps(int64_t steps, bool pauseAtEntry);
    /// Asks the worker to stop after the current mini-batch (trainingFinished follows).
    void stopTraining();
    /// Stops and waits up to `timeoutMs` for the worker to end; true when it has.
    bool stopAndWait(int timeoutMs = 3000);
    bool isTraining() const { return m_training; }
    /// True while the training under way is a count of debugged steps (debugOneStep, debugSteps), not
    /// a training of epochs.
    bool runsSteps() const { return m_training && m_stepRun; }
    int epochsDone() const { return static_cast<int>(m_reports.size()); }
    const std::vector<samples::EpochReport>& reports() const { return m_reports; }
    QImage decisionImage() const { return m_decision; }
    QString lastError() const { return m_lastError; }
    /// True when the last training ended by stopTraining().
    bool wasStopped() const { return m_stopped; }

    /// Settings (also the controls').
    void setEpochs(int epochs);
    void setBatchSize(int batch);
    void setLearningRate(double rate);
    void setOptimizer(const QString& name);
    void setSeed(int seed);
    void setFromInitialWeights(bool on);
    TrainConfig config() const;

    TrainPlot* plot() const { return m_plot; }
    /// The decision regions: shown for a model of 2-D points (mlp) only.
    ImageView* decisionView() const { return m_decisionView; }
    GradientView* gradientView() const { return m_gradients; }
    TrainInsights* insights() const { return m_insights; }
    /// Picks the data set (one the model's input takes); false when it has none of that name.
    bool setDataSet(const QString& name);
    /// The text shown instead of the controls when the model cannot train (empty when it can).
    QString unavailableMessage() const;
    /// Re-checks the start guard for the Train button (the window calls it when its state changes).
    void updateControls();

Q_SIGNALS:
    void trainingStarted();
    void epochFinished(int epoch);
    void trainingFinished();
    void trainingFailed(const QString& error);

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    enum class Arrangement { Grid, Row };
    void buildUi();
    /// Grid: the controls and the plot above, the decision regions (2-D data only) and the
    /// gradients below. Row: all four side by side, for a dock much wider than high.
    void arrange(Arrangement arrangement);
    bool start(bool debugged, int64_t steps, bool pauseAtEntry, int64_t skip);
    void onBatchLoss(quint64 generation, double position, double loss);
    void onEpoch(quint64 generation, std::shared_ptr<EpochResult> result);
    void onStatus(quint64 generation, const QString& text);
    void onEnded(quint64 generation, bool completed, const QString& error);
    void joinWorker(int timeoutMs);

    ModelInfoPtr m_model;
    std::function<QString()> m_guard;
    QStackedWidget* m_stack = nullptr;
    QSplitter* m_page = nullptr; // the two rows
    QSplitter* m_top = nullptr;
    QSplitter* m_bottom = nullptr;
    QScrollArea* m_controls = nullptr;
    Arrangement m_arrangement = Arrangement::Grid;
    bool m_userSized = false; // a splitter was dragged: resizes keep the user's proportions
    QLabel* m_message = nullptr;
    QLabel* m_title = nullptr;
    QSpinBox* m_epochs = nullptr;
    QSpinBox* m_batch = nullptr;
    QDoubleSpinBox* m_rate = nullptr;
    QComboBox* m_optimizer = nullptr;
    QComboBox* m_data = nullptr;
    TrainInsights* m_insights = nullptr;
    QSpinBox* m_seed = nullptr;
    QCheckBox* m_fromInitial = nullptr;
    QCheckBox* m_debug = nullptr;
    QPushButton* m_debugStep = nullptr;
    debug::Session* m_session = nullptr;
    QPushButton* m_train = nullptr;
    QPushButton* m_stop = nullptr;
    QLabel* m_status = nullptr;
    TrainPlot* m_plot = nullptr;
    ImageView* m_decisionView = nullptr;
    GradientView* m_gradients = nullptr;

    QThread* m_thread = nullptr;
    std::shared_ptr<std::atomic<bool>> m_stopFlag;
    quint64 m_generation = 0;
    bool m_training = false;
    int64_t m_debugStepsDone = 0;
    std::shared_ptr<TrainState> m_stepState; // the loss and trainer of debugOneStep's steps
    QString m_stepStateKey; // the optimizer settings m_stepState was made for
    int64_t m_stepsThisRun = 0;
    bool m_stepRun = false; // the running training takes a count of steps // steps the running training takes when it
                            // counts them (debugOneStep)
    bool m_stopped = false;
    int m_totalEpochs = 0;
    std::vector<samples::EpochReport> m_reports;
    QImage m_decision;
    QString m_lastError;
};

} // namespace opscope::gui
