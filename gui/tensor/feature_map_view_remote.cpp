// FeatureMapView: a tensor held where its engine runs. Only the batch item shown is read (map by
// map, off the GUI thread, when the view is shown); another item is read when it is picked.

#include "core/error.h"
#include "gui/tensor/feature_map_canvas.h"
#include "gui/tensor/feature_map_view.h"
#include "gui/tensor/remote_maps.h"
#include "gui/tensor/tensor_source.h"
#include "gui/tensor/value_format.h"

#include <algorithm>
#include <exception>

#include <QLabel>
#include <QStackedWidget>

namespace opscope::gui {

void FeatureMapView::setSource(const opscope::Shape& shape, std::shared_ptr<const TensorSource> source)
{
    const FeatureMapLayout whole = FeatureMapLayout::of(shape);
    if (!whole.valid() || !source) {
        clear(tr("A tensor of shape %1 cannot be shown as images.\nImages need 1 to 4 axes and at most %2 maps.")
                  .arg(formatShape(shape))
                  .arg(FeatureMapLayout::kMaxMaps));
        return;
    }
    clear(tr("Reading the maps from %1…").arg(source->where()));
    m_source = std::move(source);
    m_sourceShape = shape;
    m_sourceLayout = whole;
    m_batch = std::clamp<int64_t>(m_batch, 0, whole.batches - 1);
    updateControls();
    if (isVisible())
        readShown();
    else
        m_needRead = true;
}

void FeatureMapView::dropSource()
{
    ++*m_readToken;
    m_readRunner.cancel();
    m_source.reset();
    m_sourceLayout = {};
    m_needRead = false;
    m_canvas->setReportedBatch(-1);
}

void FeatureMapView::readShown()
{
    m_needRead = false;
    const uint64_t generation = ++*m_readToken;
    m_status->setForegroundRole(QPalette::PlaceholderText);
    m_status->setText(tr("Reading item %1 from %2…").arg(m_batch).arg(m_source->where()));
    m_readRunner.submit([this, source = m_source, shape = m_sourceShape, item = m_batch, token = m_readToken,
                            generation]() -> LatestOnlyRunner::Apply {
        try {
            const opscope::Tensor t = readShownItem(*source, shape, item, [&] { return token->load() != generation; });
            if (!t.defined()) return nullptr; // superseded
            return [this, t, item] { showItem(t, item); };
        } catch (const std::exception& e) {
            return [this, where = source->where(), error = QString::fromStdString(e.what())] {
                m_message->setText(tr("The maps could not be read from %1: %2").arg(where, error));
                m_stack->setCurrentIndex(0);
            };
        }
    });
}

void FeatureMapView::showItem(const opscope::Tensor& item, int64_t batch)
{
    if (!m_source || batch != m_batch) return;
    m_tensor = item;
    const FeatureMapLayout layout = FeatureMapLayout::of(item.shape());
    const bool sameGeometry = layout.sameGeometry(m_layout);
    m_layout = layout;
    updateControls();
    if (!sameGeometry) setCellSize(defaultCellSize());
    m_canvas->setSource(m_tensor, m_layout, 0);
    m_canvas->setReportedBatch(m_sourceLayout.ndim == 4 ? batch : -1);
    m_stack->setCurrentIndex(1);
    m_status->setText(hoverHint());
    requestRender();
}

} // namespace opscope::gui
