#pragma once

// Where an engine keeps its comparison (Engine::compare): the latest started of those finished,
// with run B the session's reference for `diff>T` conditions. Shared by the local engine and the
// server.

#include "debug/compare_request.h"
#include "debug/session.h"

#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace opscope::debug {

class ComparisonSlot {
public:
    /// `session` must outlive the slot.
    explicit ComparisonSlot(Session& session)
        : m_session(session)
    {
    }

    /// A comparison begins: its ticket for finish().
    uint64_t begin();
    /// Keeps `outcome` and makes its run B the session's reference, unless a comparison begun later
    /// was kept, or end() came, meanwhile.
    void finish(uint64_t ticket, std::shared_ptr<const CompareOutcome> outcome);
    /// Forgets the comparison and the reference (and those still going when they finish).
    void end();
    /// A tensor of run A or B of the comparison kept; nothing when it lacks it or none is kept.
    /// With `comparison` (a CompareOutcome::id), only from that comparison: MovedOnError naming it
    /// once another replaced it or it ended.
    std::optional<Tensor> tensor(CompareSide side, const std::string& name, uint64_t comparison = 0) const;

private:
    Session& m_session;
    mutable std::mutex m_mutex; // taken before the session's own lock, never inside a listener call
    std::shared_ptr<const CompareOutcome> m_kept;
    uint64_t m_begun = 0, m_keptTicket = 0, m_endedAt = 0;
};

} // namespace opscope::debug
