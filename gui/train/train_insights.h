#pragma once

#include "gui/train/train_worker.h"

#include <QWidget>

class QComboBox;
class QCustomPlot;
class QLabel;
class QListWidget;
class QRadioButton;
class QTabWidget;

namespace opscope::gui {

class ConfusionView;

/// What the Train dock shows of each epoch beyond the curves: the confusion matrix of the held-out
/// set (a QCustomPlot colour map; click a cell: its examples in the gallery), a gallery of the misclassified examples with their
/// predicted and true labels (most confident first), and each parameter's value and gradient
/// histograms over the epochs as a ridge plot (TensorBoard's histogram dashboard). GUI thread only.
class TrainInsights : public QWidget {
    Q_OBJECT
public:
    explicit TrainInsights(QWidget* gradients, QWidget* parent = nullptr);

    void addEpoch(const EpochResult& result);
    void clear();

    enum class Tab { Gradients, Confusion, Mistakes, OverTime };
    void setCurrentTab(Tab tab);
    /// The examples of one cell of the confusion matrix in the gallery (true class, predicted class).
    void showCell(int64_t trueClass, int64_t predictedClass);
    /// The gallery's captions ("3\ntrue 5\n97 %": predicted, true, confidence), in order (tests).
    QStringList galleryCaptions() const;
    const samples::Evaluation& lastEvaluation() const { return m_test; }
    /// Epochs in the ridge plot.
    int ridgeEpochs() const { return static_cast<int>(m_history.size()); }
    QWidget* confusionWidget() const;
    /// Where cell (true, predicted) of the confusion matrix is on screen (tests click it).
    QPoint confusionCellCentre(int64_t trueClass, int64_t predictedClass) const;
    QCustomPlot* ridgePlot() const { return m_ridge; }

private:
    void showMistakes();
    void fillGallery(const std::vector<int64_t>& samples, const QString& title);
    void drawRidge();
    QString className(int64_t k) const;

    QTabWidget* m_tabs;
    ConfusionView* m_confusion;
    QLabel* m_galleryTitle;
    QListWidget* m_gallery;
    QComboBox* m_parameter;
    QRadioButton* m_showWeights;
    QCustomPlot* m_ridge;
    samples::Evaluation m_test;
    std::shared_ptr<const samples::Dataset> m_testSet;
    std::vector<std::string> m_classNames;
    /// Per epoch: each parameter's value and gradient histograms.
    struct EpochHistograms {
        int epoch = 0;
        std::vector<GradientInfo> weights, gradients;
    };
    std::vector<EpochHistograms> m_history;
};

} // namespace opscope::gui
