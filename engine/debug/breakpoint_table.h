#pragma once

#include "debug/breakpoint.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

namespace opscope::debug {

/// The session's breakpoints, under a mutex: any thread may add, change or remove them at any
/// time, even during a run. Every change bumps version(), which the worker polls (one atomic
/// load per op) to take a fresh snapshot.
class BreakpointTable {
public:
    /// Stores a copy, gives it the next id (from 1) and returns the id.
    int add(Breakpoint b);
    bool remove(int id);
    /// Replaces a breakpoint's definition (kind, location, phase, condition, enabled, ignore
    /// count); its id and hit count stay. False for an unknown id.
    bool update(int id, const Breakpoint& b);
    bool setEnabled(int id, bool enabled);
    void clear();
    std::optional<Breakpoint> get(int id) const;
    /// All of them, by id.
    std::vector<Breakpoint> list() const;
    /// True when an enabled breakpoint exists.
    bool anyEnabled() const;

    uint64_t version() const { return m_version.load(std::memory_order_acquire); }
    /// Enabled breakpoints and the version they belong to.
    std::vector<Breakpoint> snapshot(uint64_t& version) const;
    /// Counts a hit; true when the run should pause (hit count above the ignore count).
    /// False for a breakpoint removed or disabled meanwhile.
    bool hit(int id);
    void resetHitCounts();

private:
    void bump() { m_version.fetch_add(1, std::memory_order_acq_rel); }

    mutable std::mutex m_mutex;
    std::map<int, Breakpoint> m_items;
    int m_nextId = 1;
    std::atomic<uint64_t> m_version { 1 };
};

} // namespace opscope::debug
