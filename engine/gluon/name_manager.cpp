#include "gluon/name_manager.h"

#include <mutex>

namespace opscope::gluon {

struct NameManager::PrefixScope::State {
    std::string prefix;
    std::map<std::string, int> counter;
};

namespace {
    thread_local NameManager::PrefixScope::State* t_current = nullptr;
    std::mutex g_globalMutex;
    std::map<std::string, int> g_globalCounter;
}

std::string NameManager::get(const std::string& name, const std::string& hint)
{
    if (t_current) {
        if (!name.empty())
            return t_current->prefix + name;
        const int n = t_current->counter[hint]++;
        return t_current->prefix + hint + std::to_string(n);
    }
    if (!name.empty())
        return name;
    std::lock_guard lock(g_globalMutex);
    const int n = g_globalCounter[hint]++;
    return hint + std::to_string(n);
}

const std::string& NameManager::currentPrefix()
{
    static const std::string empty;
    return t_current ? t_current->prefix : empty;
}

void NameManager::resetGlobalCounters()
{
    std::lock_guard lock(g_globalMutex);
    g_globalCounter.clear();
}

NameManager::PrefixScope::PrefixScope(std::string prefix)
    : m_previous(t_current)
    , m_state(new State { std::move(prefix), {} })
{
    t_current = m_state;
}

NameManager::PrefixScope::~PrefixScope()
{
    t_current = m_previous;
    delete m_state;
}

} // namespace opscope::gluon
