#pragma once

#include "debug/tensor_stats.h"

#include <QWidget>

class QCPBars;
class QCustomPlot;
class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QStackedWidget;

namespace opscope::gui {

/// Histogram of a tensor's values: bars over value (or log10 |x|) with counts on a linear or log
/// axis, the bin count, scale and range controls that ask for a new histogram, and the NaN, Inf
/// and zero counts beside the plot. Hovering a bar shows its interval and count.
class HistogramView : public QWidget {
    Q_OBJECT

public:
    static constexpr int kMinBins = 8;
    static constexpr int kMaxBins = 1024;
    static constexpr int kDefaultBins = 64;

    explicit HistogramView(QWidget* parent = nullptr);

    void setHistogram(const debug::Histogram& histogram);
    /// Statistics of the same tensor: they split the Inf count into +Inf and -Inf, count the
    /// zeros, and mark edge bins that also hold values outside a narrower range (drawn hatched).
    /// clear() forgets them.
    void setStats(const debug::TensorStats& stats);
    const debug::Histogram& histogram() const { return m_histogram; }
    bool hasHistogram() const { return !m_histogram.bins.empty(); }
    /// A histogram with bars to draw: false when every value is NaN or Inf (or, on the log
    /// magnitude scale, zero); the pane then says so in the plot's place.
    bool hasPlot() const;
    /// Drops the bars and shows `message` in their place.
    void clear(const QString& message = {});

    int bins() const;
    debug::HistogramScale scale() const;
    bool logCount() const;
    void setLogCount(bool on);
    /// True when the range follows the finite values (no range typed in).
    bool autoRange() const { return !m_manualRange; }
    /// The requested range; equal values mean automatic.
    double rangeLo() const { return m_manualRange ? m_lo : 0.0; }
    double rangeHi() const { return m_manualRange ? m_hi : 0.0; }

    /// These change the request as the controls would, and emit requestChanged().
    void setBins(int bins);
    void setScale(debug::HistogramScale scale);
    /// lo == hi returns to the automatic range.
    void setRange(double lo, double hi);

    bool exportPng(const QString& path, QString* error);
    QCustomPlot* plot() { return m_plot; }

signals:
    /// The user asked for another histogram; lo == hi means the automatic range.
    void requestChanged(int bins, debug::HistogramScale scale, double lo, double hi);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    void emitRequest();
    /// Why the histogram has nothing to draw ("All 10 values are NaN"), "" when it has.
    QString nothingToPlot() const;
    void showMessage(const QString& text, bool alarm);
    void applyRangeEdits();
    void rebuildPlot();
    void updateAxes();
    void updateInfo();
    void updateRangeEdits();
    void applyPalette();
    void hoverAt(const QPoint& pos, const QPoint& globalPos);
    void clearHover();
    double binWidth() const;

    debug::Histogram m_histogram;
    bool m_manualRange = false;
    double m_lo = 0;
    double m_hi = 0;
    int m_hoverBin = -1;
    debug::TensorStats m_stats;
    bool m_hasStats = false;
    bool m_clampedLow = false;
    bool m_clampedHigh = false;

    QStackedWidget* m_stack = nullptr;
    QLabel* m_message = nullptr;
    QSpinBox* m_binsSpin = nullptr;
    QComboBox* m_scaleCombo = nullptr;
    QCheckBox* m_logCount = nullptr;
    QLineEdit* m_loEdit = nullptr;
    QLineEdit* m_hiEdit = nullptr;
    QPushButton* m_autoButton = nullptr;
    QCustomPlot* m_plot = nullptr;
    QCPBars* m_bars = nullptr;
    QCPBars* m_edgeBars = nullptr;
    QCPBars* m_hoverBar = nullptr;
    QLabel* m_totalValue = nullptr;
    QLabel* m_binnedValue = nullptr;
    QLabel* m_nanValue = nullptr;
    QLabel* m_infLabel = nullptr;
    QLabel* m_infValue = nullptr;
    QLabel* m_posInfLabel = nullptr;
    QLabel* m_posInfValue = nullptr;
    QLabel* m_negInfLabel = nullptr;
    QLabel* m_negInfValue = nullptr;
    QLabel* m_zerosLabel = nullptr;
    QLabel* m_zerosValue = nullptr;
    QLabel* m_widthValue = nullptr;
};

} // namespace opscope::gui
