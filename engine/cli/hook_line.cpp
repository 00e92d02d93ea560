#include "cli/hook_line.h"

#include <nlohmann/json.hpp>

#include <cmath>

namespace opscope::cli {

std::string hookLineJson(const HookLine& l)
{
    auto number = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
    nlohmann::json shape = nlohmann::json::array();
    for (int64_t d : l.shape.dims())
        shape.push_back(d);
    nlohmann::json j;
    j["seq"] = l.seq;
    j["name"] = l.name;
    j["op"] = l.op;
    j["node"] = l.node;
    j["slot"] = l.slot;
    j["phase"] = l.phase;
    j["shape"] = shape;
    j["min"] = number(l.stats.min);
    j["max"] = number(l.stats.max);
    j["mean"] = number(l.stats.mean);
    j["std"] = number(l.stats.std);
    j["nan"] = l.stats.nan;
    j["inf"] = l.stats.inf();
    j["zeros"] = l.stats.zeros;
    if (!l.file.empty()) j["file"] = l.file;
    return j.dump();
}

} // namespace opscope::cli
