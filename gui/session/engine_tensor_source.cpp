#include "gui/session/engine_tensor_source.h"

#include "core/error.h"

namespace opscope::gui {

EngineTensorSource::EngineTensorSource(std::shared_ptr<debug::Engine> engine, std::string name, debug::TensorPin pin)
    : m_engine(std::move(engine))
    , m_name(std::move(name))
    , m_pin(pin)
    , m_where(QString::fromStdString(m_engine->where()))
{
}

std::string EngineTensorSource::missing() const
{
    return m_name + " is neither at " + m_engine->where() + "'s pause nor kept in its run record";
}

debug::Session::TensorSummary EngineTensorSource::summary(
    int bins, debug::HistogramScale scale, double lo, double hi) const
{
    std::optional<debug::Session::TensorSummary> s = m_engine->summary(m_name, bins, scale, lo, hi, m_pin);
    if (!s) throw UsageError(missing());
    return std::move(*s);
}

debug::TensorSlice EngineTensorSource::slice(const debug::SliceRequest& request) const
{
    std::optional<debug::TensorSlice> s = m_engine->slice(m_name, request, m_pin);
    if (!s) throw UsageError(missing());
    return std::move(*s);
}

} // namespace opscope::gui
