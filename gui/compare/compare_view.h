#pragma once

// The inspector's Compare tab: one tensor of run A beside the same tensor of run B. The two
// histograms overlaid on one range, the histogram of A − B, the elements that differ most with
// both values and their difference, and a feature map of A, of B and of |A − B|.

#include "debug/compare.h"

#include <optional>

#include <QWidget>

class QComboBox;
class QCustomPlot;
class QLabel;
class QSpinBox;
class QTableWidget;
class QTabWidget;

namespace opscope::gui {

class CompareView : public QWidget {
    Q_OBJECT
public:
    /// Rows of the value table: the elements with the largest |A − B|.
    static constexpr int kTopRows = 200;

    explicit CompareView(QWidget* parent = nullptr);

    /// Shows the pair of tensors named `tensors` (the first at start; a picker for the others)
    /// from a comparison's two runs; `a` and `b` must outlive the view's use of them (the window
    /// keeps the comparison). Tensors one run lacks are said so.
    void setTensors(const QString& title, const QStringList& tensors, const debug::RecordedRun* a,
        const debug::RecordedRun* b, const debug::Comparison* c);
    /// Picks one of the tensors given; false when it is not among them.
    bool showTensor(const QString& name);
    /// Drops the pair and shows `message`.
    void clear(const QString& message);

    QString currentTensor() const;
    QString metricsText() const;
    QTableWidget* table() const { return m_table; }
    QTabWidget* tabs() const { return m_tabs; }
    /// Counts of the overlaid histograms (A then B) and of A − B, as plotted (tests).
    const std::vector<double>& countsA() const { return m_countsA; }
    const std::vector<double>& countsB() const { return m_countsB; }
    const std::vector<double>& countsDiff() const { return m_countsDiff; }

private:
    void showPair();
    void drawHistograms(const Tensor& a, const Tensor& b, const Tensor& diff);
    void fillTable(const Tensor& a, const Tensor& b);
    void drawMaps();

    QLabel* m_title = nullptr;
    QComboBox* m_picker = nullptr;
    QLabel* m_metrics = nullptr;
    QLabel* m_message = nullptr;
    QTabWidget* m_tabs = nullptr;
    QCustomPlot* m_overlay = nullptr;
    QCustomPlot* m_diffPlot = nullptr;
    QTableWidget* m_table = nullptr;
    QSpinBox* m_channel = nullptr;
    QLabel* m_mapLabels[3] = {};
    const debug::RecordedRun* m_a = nullptr;
    const debug::RecordedRun* m_b = nullptr;
    const debug::Comparison* m_c = nullptr;
    std::optional<Tensor> m_ta, m_tb, m_diff;
    std::vector<double> m_countsA, m_countsB, m_countsDiff;
};

} // namespace opscope::gui
