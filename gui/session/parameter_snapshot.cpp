#include "gui/session/parameter_snapshot.h"

namespace opscope::gui {

ParameterSnapshot snapshotParameters(const gluon::HybridBlock& block)
{
    ParameterSnapshot out;
    for (const gluon::ParamPtr& p : block.collect_params().values()) {
        if (!p->initialized()) continue;
        out.emplace_back(p->name(), p->data().copy());
    }
    return out;
}

void applyParameters(gluon::HybridBlock& block, const ParameterSnapshot& snapshot)
{
    if (snapshot.empty()) return;
    const gluon::ParameterDict params = block.collect_params();
    for (const gluon::ParamPtr& p : params.values()) {
        if (!p->initialized()) continue;
        for (const auto& [name, value] : snapshot)
            if (name == p->name() && value.shape() == p->data().shape()) {
                p->set_data(value.copy());
                break;
            }
    }
}

QString fingerprint(const ParameterSnapshot& snapshot)
{
    uint64_t h = 1469598103934665603ull;
    auto mix = [&h](const unsigned char* b, size_t n) {
        for (size_t i = 0; i < n; ++i) {
            h ^= b[i];
            h *= 1099511628211ull;
        }
    };
    for (const auto& [name, value] : snapshot) {
        mix(reinterpret_cast<const unsigned char*>(name.data()), name.size());
        mix(static_cast<const unsigned char*>(value.raw()), value.bytes());
    }
    return QString::number(h, 16);
}

} // namespace opscope::gui
