#pragma once

#include "debug/explain.h"
#include "gui/session/explain_runner.h"
#include "gui/session/model_info.h"
#include "tensor/tensor.h"

#include <QImage>
#include <QWidget>

class QComboBox;
class QLabel;
class QProgressBar;
class QSlider;
class QStackedWidget;
class QToolButton;
class QTreeWidget;

namespace opscope::gui {

class HeatView;

/// The Explain dock: why the loaded classifier gave its answer for the input of the last paused or
/// finished run. Its top classes (names where the model has them; pick one to explain it), a method
/// (saliency, gradient × input, Grad-CAM on a chosen convolution, occlusion), and the explanation as
/// an overlay on the input with an opacity slider. Computed by an ExplainRunner on a worker with a
/// model instance of its own (occlusion with progress and Cancel), only while the dock is visible.
class ExplainPanel : public QWidget {
    Q_OBJECT
public:
    explicit ExplainPanel(QWidget* parent = nullptr);

    /// The model, its weights as the window has them (empty: the model's own) and the input to
    /// explain; computed now when visible, else when shown.
    void setSubject(ModelInfoPtr model, const Tensor& input, ParameterSnapshot weights = {});
    /// The model runs on `engine` (a server's): it explains the input of its run `runId` there, with
    /// its own weights; computed again for another run, method, class or layer.
    void setSubject(ModelInfoPtr model, std::shared_ptr<debug::Engine> engine, uint64_t runId);
    /// Nothing to explain: `message` says why.
    void clearSubject(const QString& message);

    void setMethod(debug::ExplainMethod method);
    debug::ExplainMethod method() const;
    /// Explains class `k` (-1: the top one).
    void setClass(int64_t k);
    void setLayer(const QString& node);
    void setOpacity(int percent);
    bool isComputing() const;
    /// The explanation shown (null before the first one).
    ExplainResultPtr result() const { return m_result; }
    /// What the view shows: the input with the explanation over it, at the input's size.
    QImage overlay() const { return m_overlay; }
    QString statusText() const;
    QString messageText() const;
    ExplainRunner* runner() { return m_runner; }

Q_SIGNALS:
    /// A new explanation is on screen.
    void explanationShown();

protected:
    void showEvent(QShowEvent* event) override;

private:
    void subject(ModelInfoPtr model, const Tensor& input, ParameterSnapshot weights, std::shared_ptr<debug::Engine> engine, uint64_t runId);
    void compute();
    void onFinished(ExplainResultPtr result);
    void showMessage(const QString& text);
    void render();
    void fillClasses(const debug::Explanation& e);
    QString className(int64_t k) const;

    ExplainRunner* m_runner;
    ModelInfoPtr m_model;
    Tensor m_input;
    ParameterSnapshot m_weights;
    QString m_weightsKey;
    std::shared_ptr<debug::Engine> m_engine; // where the model runs, when elsewhere
    uint64_t m_engineRun = 0; // the run whose input the engine explains
    int64_t m_class = -1;
    bool m_dirty = false;
    ExplainResultPtr m_result;
    QImage m_overlay;

    QStackedWidget* m_stack;
    QLabel* m_message;
    QComboBox* m_methodBox;
    QComboBox* m_layerBox;
    QSlider* m_opacity;
    QProgressBar* m_progress;
    QToolButton* m_cancel;
    QTreeWidget* m_classes;
    HeatView* m_view;
    QLabel* m_status;
};

} // namespace opscope::gui
