#include "debug/run_record.h"

#include <algorithm>

namespace opscope::debug {

void RunRecord::keepTensor(const std::string& name, const TensorView& values)
{
    const size_t bytes = values.bytes();
    auto same = std::find_if(m_kept.begin(), m_kept.end(), [&](const Kept& k) { return k.name == name; });
    if (same != m_kept.end()) {
        m_keptBytes -= same->values.bytes();
        m_kept.erase(same);
    }
    if (bytes > m_budget) {
        ++m_dropped;
        return;
    }
    while (!m_kept.empty() && m_keptBytes + bytes > m_budget) {
        m_keptBytes -= m_kept.front().values.bytes();
        m_kept.pop_front();
        ++m_dropped;
    }
    m_kept.push_back({ name, Tensor::copyOf(values) });
    m_keptBytes += bytes;
}

const Tensor* RunRecord::tensor(const std::string& name) const
{
    for (auto it = m_kept.rbegin(); it != m_kept.rend(); ++it)
        if (it->name == name) return &it->values;
    return nullptr;
}

std::vector<std::string> RunRecord::keptNames() const
{
    std::vector<std::string> names;
    names.reserve(m_kept.size());
    for (const Kept& k : m_kept)
        names.push_back(k.name);
    return names;
}

} // namespace opscope::debug
