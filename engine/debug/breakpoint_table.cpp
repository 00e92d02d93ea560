#include "debug/breakpoint_table.h"

namespace opscope::debug {

int BreakpointTable::add(Breakpoint b)
{
    std::lock_guard lock(m_mutex);
    b.id = m_nextId++;
    b.hitCount = 0;
    const int id = b.id;
    m_items.emplace(id, std::move(b));
    bump();
    return id;
}

bool BreakpointTable::remove(int id)
{
    std::lock_guard lock(m_mutex);
    const bool removed = m_items.erase(id) > 0;
    if (removed) bump();
    return removed;
}

bool BreakpointTable::update(int id, const Breakpoint& b)
{
    std::lock_guard lock(m_mutex);
    auto it = m_items.find(id);
    if (it == m_items.end()) return false;
    const int64_t hits = it->second.hitCount;
    it->second = b;
    it->second.id = id;
    it->second.hitCount = hits;
    bump();
    return true;
}

bool BreakpointTable::setEnabled(int id, bool enabled)
{
    std::lock_guard lock(m_mutex);
    auto it = m_items.find(id);
    if (it == m_items.end()) return false;
    it->second.enabled = enabled;
    bump();
    return true;
}

void BreakpointTable::clear()
{
    std::lock_guard lock(m_mutex);
    m_items.clear();
    bump();
}

std::optional<Breakpoint> BreakpointTable::get(int id) const
{
    std::lock_guard lock(m_mutex);
    auto it = m_items.find(id);
    if (it == m_items.end()) return std::nullopt;
    return it->second;
}

std::vector<Breakpoint> BreakpointTable::list() const
{
    std::lock_guard lock(m_mutex);
    std::vector<Breakpoint> out;
    for (const auto& [id, b] : m_items)
        out.push_back(b);
    return out;
}

bool BreakpointTable::anyEnabled() const
{
    std::lock_guard lock(m_mutex);
    for (const auto& [id, b] : m_items)
        if (b.enabled) return true;
    return false;
}

std::vector<Breakpoint> BreakpointTable::snapshot(uint64_t& version) const
{
    std::lock_guard lock(m_mutex);
    version = m_version.load(std::memory_order_acquire);
    std::vector<Breakpoint> out;
    for (const auto& [id, b] : m_items)
        if (b.enabled) out.push_back(b);
    return out;
}

bool BreakpointTable::hit(int id)
{
    std::lock_guard lock(m_mutex);
    auto it = m_items.find(id);
    if (it == m_items.end() || !it->second.enabled) return false;
    ++it->second.hitCount;
    return it->second.hitCount > it->second.ignoreCount;
}

void BreakpointTable::resetHitCounts()
{
    std::lock_guard lock(m_mutex);
    for (auto& [id, b] : m_items)
        b.hitCount = 0;
}

} // namespace opscope::debug
