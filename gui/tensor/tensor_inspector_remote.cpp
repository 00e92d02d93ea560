// TensorInspector: a tensor held where the engine runs (a server). Its statistics and histogram
// are computed there, one round trip per request, on the inspector's background runners.

#include "gui/tensor/feature_map_view.h"
#include "gui/tensor/histogram_view.h"
#include "gui/tensor/stats_table.h"
#include "gui/tensor/tensor_inspector.h"
#include "gui/tensor/tensor_source.h"
#include "gui/tensor/tensor_table_model.h"
#include "gui/tensor/value_table.h"

#include <exception>
#include <memory>

namespace opscope::gui {

bool TensorInspector::isReading() const
{
    return m_featureMapView->isReading() || m_valueTable->model()->isFetching();
}

void TensorInspector::startRemoteAnalysis(const InspectedTensor& t)
{
    m_statsTable->clear(tr("computing on %1…").arg(t.source->where()));
    m_histogramView->clear(tr("Computing on %1…").arg(t.source->where()));
    m_analysisRunner.submit([this, source = t.source, request = currentRequest(), serial = m_serial]() -> LatestOnlyRunner::Apply {
        try {
            auto summary = std::make_shared<const debug::Session::TensorSummary>(
                source->summary(request.bins, request.scale, request.lo, request.hi));
            return [this, serial, summary, request] { applyAnalysis(serial, summary->stats, summary->histogram, request); };
        } catch (const std::exception& e) {
            return [this, serial, error = QString::fromStdString(e.what())] { remoteFailed(serial, error); };
        }
    });
}

void TensorInspector::requestRemoteHistogram(const InspectedTensor& t)
{
    m_hasHistogram = false;
    m_histogramRunner.submit([this, source = t.source, request = currentRequest(), serial = m_serial]() -> LatestOnlyRunner::Apply {
        try {
            auto summary = std::make_shared<const debug::Session::TensorSummary>(
                source->summary(request.bins, request.scale, request.lo, request.hi));
            return [this, serial, summary] { applyHistogram(serial, summary->histogram); };
        } catch (const std::exception& e) {
            return [this, serial, error = QString::fromStdString(e.what())] { remoteFailed(serial, error); };
        }
    });
}

void TensorInspector::remoteFailed(uint64_t serial, const QString& error)
{
    if (serial != m_serial || m_current < 0) return;
    if (!m_hasStats) m_statsTable->clear(error);
    m_histogramView->clear(tr("The histogram could not be computed: %1").arg(error));
    // The pane is final for this request; whoever waits for it can go on.
    emit histogramReady();
}

} // namespace opscope::gui
