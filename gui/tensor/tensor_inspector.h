#pragma once

#include "debug/tensor_stats.h"
#include "gui/tensor/inspected_tensor.h"
#include "gui/tensor/latest_only_runner.h"
#include "tensor/tensor.h"

#include <cstdint>
#include <optional>
#include <vector>

#include <QWidget>

class QLabel;
class QToolButton;
class QSplitter;
class QStackedWidget;
class QTabWidget;
class QTreeWidget;

namespace opscope::gui {

class FeatureMapView;
class HistogramView;
class StatsTable;
class ValueTable;

/// The tensor dock's content: the paused node's title, a picker of its tensors (name, role,
/// shape) and three views of the picked one: histogram with statistics, the values as a table,
/// and the feature maps as images. Statistics and histograms of large tensors are computed off
/// the GUI thread; only the newest request's result is shown. The picked tensor's name is kept,
/// so the next pause shows the same tensor again when the node has one of that name.
class TensorInspector : public QWidget {
    Q_OBJECT

public:
    explicit TensorInspector(QWidget* parent = nullptr);
    ~TensorInspector() override;

    /// Shows a node's tensors: the one picked last if present by name, else tensors[focus].
    void setTensors(const QString& title, std::vector<InspectedTensor> tensors, int focus);
    /// Picks a tensor by name (and remembers it); false when there is none of that name.
    bool showTensor(const QString& name);
    /// Drops the tensors and shows `message` (e.g. "Not paused") in their place.
    void clear(const QString& message = {});

    QString currentTensorName() const;
    /// The values of the current tensor here (undefined for one held where the engine runs).
    std::optional<opscope::Tensor> currentTensor() const;
    const InspectedTensor* currentInspected() const;
    /// The values of a tensor that was held where the engine runs, now fetched: shown from here on
    /// (false when no such remote tensor is listed or the shape differs).
    bool setValues(const QString& name, const opscope::Tensor& values);
    /// The fetch Fetch Whole asked for failed: the button is offered again.
    void fetchWholeFailed(const QString& name);
    const std::vector<InspectedTensor>& tensors() const { return m_tensors; }

    /// Results for the current tensor (empty until ready).
    const debug::Histogram& histogram() const { return m_histogram; }
    const debug::TensorStats& stats() const { return m_stats; }
    bool hasStats() const { return m_hasStats; }
    /// True when the statistics and the histogram of the current request are shown.
    bool hasResult() const { return m_hasStats && m_hasHistogram; }
    /// True while statistics or a histogram are being computed in the background.
    bool isComputing() const;
    /// True while values of a tensor held where the engine runs are being read (table, maps).
    bool isReading() const;

    bool exportNpy(const QString& path, QString* error);
    bool exportHistogramPng(const QString& path, QString* error);

    enum class Tab { Histogram, Values, Image };
    /// Shows one of the tabs (the Image tab only when the current tensor can be drawn).
    void setCurrentTab(Tab tab);
    Tab currentTab() const;

    HistogramView* histogramView() { return m_histogramView; }
    StatsTable* statsTable() { return m_statsTable; }
    ValueTable* valueTable() { return m_valueTable; }
    FeatureMapView* featureMapView() { return m_featureMapView; }

    QSize sizeHint() const override;

signals:
    /// The histogram of the current tensor is on screen (always emitted on the GUI thread; also
    /// when the tensor has no values and the pane says so).
    void histogramReady();
    /// Statistics for the current tensor are on screen.
    void statsReady();
    /// Another tensor is shown (empty name: none).
    void currentTensorChanged(const QString& name);
    /// An element of the current tensor was clicked in the Image tab: the tensor's name, its index.
    void elementClicked(const QString& tensor, const QList<qint64>& index);
    /// A context menu asked for over feature map `map` of the current tensor in the Image tab.
    void mapMenuRequested(const QString& tensor, qint64 map, const QPoint& globalPos);
    /// Fetch Whole was pressed for a tensor held where the engine runs (answer with setValues).
    void fetchWholeRequested(const QString& tensor);

private:
    struct HistogramRequest {
        int bins = 64;
        debug::HistogramScale scale = debug::HistogramScale::Linear;
        double lo = 0;
        double hi = 0;
        friend bool operator==(const HistogramRequest&, const HistogramRequest&) = default;
    };

    void showIndex(int index);
    void populatePicker();
    void updateSummary();
    void startAnalysis();
    // A tensor held where the engine runs: statistics and histograms computed there.
    void startRemoteAnalysis(const InspectedTensor& t);
    void requestRemoteHistogram(const InspectedTensor& t);
    void remoteFailed(uint64_t serial, const QString& error);
    void requestHistogram();
    void applyAnalysis(uint64_t serial, const debug::TensorStats& stats, const debug::Histogram& histogram,
        const HistogramRequest& request);
    void applyHistogram(uint64_t serial, const debug::Histogram& histogram);
    HistogramRequest currentRequest() const;
    void updateBusy();
    void updateActions();
    void exportNpyInteractive();
    void exportPngInteractive();
    QString suggestedPath(const QString& suffix) const;

    std::vector<InspectedTensor> m_tensors;
    int m_current = -1;
    QString m_pickedName;
    uint64_t m_serial = 0; ///< bumped whenever the shown tensor changes
    debug::TensorStats m_stats;
    debug::Histogram m_histogram;
    bool m_hasStats = false;
    bool m_hasHistogram = false;
    QString m_lastDir;
    QString m_fetchingWhole; ///< the tensor Fetch Whole is fetching, or empty

    QStackedWidget* m_stack = nullptr;
    QLabel* m_message = nullptr;
    QLabel* m_title = nullptr;
    QLabel* m_summary = nullptr;
    QLabel* m_busy = nullptr;
    QTreeWidget* m_picker = nullptr;
    QToolButton* m_exportNpy = nullptr;
    QToolButton* m_fetchWhole = nullptr;
    QToolButton* m_exportPng = nullptr;
    QTabWidget* m_tabs = nullptr;
    QSplitter* m_histogramSplit = nullptr;
    HistogramView* m_histogramView = nullptr;
    StatsTable* m_statsTable = nullptr;
    ValueTable* m_valueTable = nullptr;
    FeatureMapView* m_featureMapView = nullptr;
    // Members go before the child widgets, so the runners wait for their jobs while the views exist.
    LatestOnlyRunner m_analysisRunner;
    LatestOnlyRunner m_histogramRunner;
};

} // namespace opscope::gui
