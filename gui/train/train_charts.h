#pragma once

#include "gui/train/train_worker.h"

#include <QWidget>
#include <qcustomplot.h>

class QSplitter;
class QTreeWidget;

namespace opscope::gui {

/// Loss (left axis) and train/test accuracy (right axis, [0, 1]) over epochs, growing as epochs end;
/// the running mini-batch loss as a thin line under the epoch means.
class TrainPlot : public QCustomPlot {
    Q_OBJECT
public:
    explicit TrainPlot(QWidget* parent = nullptr);

    /// Empties the graphs; the x axis spans `epochs`.
    void reset(int epochs);
    void addBatchLoss(double epochPosition, double loss);
    void addEpoch(const samples::EpochReport& report);

    QCPGraph* lossGraph() const { return m_loss; }
    QCPGraph* batchLossGraph() const { return m_batchLoss; }
    QCPGraph* trainAccuracyGraph() const { return m_trainAcc; }
    QCPGraph* testAccuracyGraph() const { return m_testAcc; }

private:
    void rescaleLoss();

    QCPGraph* m_loss;
    QCPGraph* m_batchLoss;
    QCPGraph* m_trainAcc;
    QCPGraph* m_testAcc;
    double m_maxLoss = 0;
};

/// An image drawn as large as fits, keeping its aspect ratio (the decision regions), or a grey
/// placeholder text.
class ImageView : public QWidget {
    Q_OBJECT
public:
    explicit ImageView(QWidget* parent = nullptr);
    void setImage(const QImage& image);
    void setPlaceholder(const QString& text);
    const QImage& image() const { return m_image; }

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    QImage m_image;
    QString m_placeholder;
};

/// Every parameter's gradient after the last epoch (name, shape, L2 norm), and the histogram of the
/// selected one: beside the list when the view is wide, under it when it is tall.
class GradientView : public QWidget {
    Q_OBJECT
public:
    explicit GradientView(QWidget* parent = nullptr);

    /// Keeps the selected parameter when the new list has it.
    void setGradients(std::vector<GradientInfo> gradients);
    void clear();
    const std::vector<GradientInfo>& gradients() const { return m_gradients; }
    QTreeWidget* list() const { return m_list; }
    QCustomPlot* histogramPlot() const { return m_plot; }
    /// The row shown in the histogram (-1: none).
    int selectedIndex() const;

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void showHistogram();
    /// Splits the room between the list and the histogram for the orientation.
    void fitSplit();

    QSplitter* m_split;
    QTreeWidget* m_list;
    QCustomPlot* m_plot;
    QCPBars* m_bars;
    std::vector<GradientInfo> m_gradients;
    bool m_userSized = false; // the splitter was dragged
};

} // namespace opscope::gui
