#include "debug/comparison_slot.h"

namespace opscope::debug {

uint64_t ComparisonSlot::begin()
{
    std::lock_guard lock(m_mutex);
    return ++m_begun;
}

void ComparisonSlot::finish(uint64_t ticket, std::shared_ptr<const CompareOutcome> outcome)
{
    std::lock_guard lock(m_mutex);
    if (ticket < m_keptTicket || ticket <= m_endedAt) return; // a later one, or an end, came first
    m_keptTicket = ticket;
    m_kept = std::move(outcome);
    const std::shared_ptr<const RecordedRun> b(m_kept, &m_kept->b);
    m_session.updateOptions([&](SessionOptions& o) { o.reference = b; });
}

void ComparisonSlot::end()
{
    std::lock_guard lock(m_mutex);
    m_endedAt = m_begun;
    m_kept.reset();
    m_session.updateOptions([](SessionOptions& o) { o.reference.reset(); });
}

std::optional<Tensor> ComparisonSlot::tensor(CompareSide side, const std::string& name, uint64_t comparison) const
{
    std::lock_guard lock(m_mutex);
    if (comparison != 0 && (!m_kept || m_keptTicket != comparison))
        throw MovedOnError(name + ": comparison " + std::to_string(comparison) + " it came from "
            + (m_kept ? "was replaced by comparison " + std::to_string(m_keptTicket) : std::string("has ended")));
    if (!m_kept) return std::nullopt;
    const RecordedRun& run = side == CompareSide::A ? m_kept->a : m_kept->b;
    const auto it = run.tensors.find(name);
    if (it == run.tensors.end()) return std::nullopt;
    return it->second;
}

} // namespace opscope::debug
