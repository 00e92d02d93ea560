#pragma once

// The strip above the graph while a comparison is shown: what B is, the metric the nodes are
// coloured by (a chooser and its legend), how many tensors diverge, the first divergent node (a
// button that goes to it), and a button that ends the comparison.

#include "gui/compare/divergence_scale.h"

#include <QWidget>

class QComboBox;
class QLabel;
class QPushButton;
class QToolButton;

namespace opscope::gui {

/// The legend: the colour ramp with the scale's ticks, and grey for what was not compared.
class DivergenceLegend : public QWidget {
    Q_OBJECT
public:
    explicit DivergenceLegend(QWidget* parent = nullptr);
    void setScale(const DivergenceScale& scale);
    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    DivergenceScale m_scale;
};

class CompareBar : public QWidget {
    Q_OBJECT
public:
    explicit CompareBar(QWidget* parent = nullptr);

    /// Shows a comparison's summary: B's description, the counts, the first divergent node.
    void setSummary(const QString& describeB, int compared, int diverging, int unmatched, const QString& firstDivergent,
        const QString& top1);
    /// While the runs are recorded.
    void setBusy(const QString& describeB);
    debug::Metric metric() const;
    void setMetric(debug::Metric m);
    QString text() const; ///< the summary as shown (tests)
    QPushButton* firstDivergentButton() const { return m_first; }

Q_SIGNALS:
    void metricChanged(opscope::debug::Metric metric);
    void firstDivergentClicked(const QString& node);
    void closeRequested();

private:
    QLabel* m_label = nullptr;
    QComboBox* m_metric = nullptr;
    DivergenceLegend* m_legend = nullptr;
    QPushButton* m_first = nullptr;
    QToolButton* m_close = nullptr;
    QString m_firstNode;
};

} // namespace opscope::gui
