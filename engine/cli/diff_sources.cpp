#include "cli/diff_sources.h"

#include "cli/commands.h"
#include "io/file_names.h"
#include "io/npy.h"
#include "io/npz.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

namespace opscope::cli {

namespace fs = std::filesystem;

namespace {
KernelKind kindOf(const std::string& k)
{
    return k == "reference" ? KernelKind::Reference : k == "onednn" ? KernelKind::Dnnl : KernelKind::Auto;
}
}

int recordRun(const LiveRun& live, debug::RecordedRun& run, std::shared_ptr<const Graph>& graph)
{
    RunOptions o;
    o.model = live.model;
    o.params = live.params;
    o.inputs = live.inputs;
    o.seed = live.seed;
    load::LoadedModel m;
    std::vector<Tensor> in;
    if (const int status = prepareRun(o, m, in); status != kOk) return status;
    try {
        m.block->hybridize();
        m.block->set_kernel_kind(kindOf(live.kernels));
        m.block->set_precision(live.precision);
        auto handle = m.block->register_op_hook(
            [&run](std::string_view name, std::string_view, const TensorView& t) { run.add(std::string(name), t); }, true);
        m.block->call(in);
        graph = m.block->graph();
    } catch (const UsageError& e) {
        return fail(kUsage, e.what());
    } catch (const std::bad_alloc&) {
        return fail(kRunFailed, live.model + ": out of memory");
    } catch (const std::exception& e) {
        return fail(kRunFailed, e.what());
    }
    return kOk;
}

int readDumpRun(const std::string& dir, const debug::RecordedRun& a, debug::RecordedRun& b)
{
    if (!fs::is_directory(dir)) return fail(kBadFile, dir + ": no such folder");
    FileNamer names;
    for (const std::string& name : a.order) {
        const fs::path file = fs::path(dir) / names.fileFor(name, ".npy");
        if (!fs::exists(file)) continue;
        try {
            b.add(name, readNpy(file.string()).view());
        } catch (const std::exception& e) {
            return fail(kBadFile, e.what());
        }
    }
    return kOk;
}

int readNpzRun(const std::string& path, debug::RecordedRun& b)
{
    if (!fs::exists(path)) return fail(kBadFile, path + ": no such file");
    try {
        for (const auto& [name, t] : readNpz(path))
            b.add(name, t.view());
    } catch (const std::bad_alloc&) {
        return fail(kRunFailed, path + ": out of memory");
    } catch (const std::exception& e) {
        return fail(kBadFile, e.what());
    }
    return kOk;
}

int readNameMap(const std::string& path, const Graph& graphA, const debug::RecordedRun& a,
    std::map<std::string, std::string>& map)
{
    std::ifstream in(path);
    if (!in) return fail(kBadFile, path + ": cannot open for reading");
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(in);
    } catch (const nlohmann::json::parse_error& e) {
        return fail(kBadFile, path + ": byte " + std::to_string(e.byte) + ": not JSON");
    }
    if (!j.is_object()) return fail(kBadFile, path + ": expected an object from run B's names to run A's");
    for (const auto& [from, to] : j.items()) {
        if (!to.is_string()) return fail(kBadFile, path + ": '" + from + "': the name in A must be a string");
        const std::string target = to.get<std::string>();
        std::string tensor;
        if (a.tensors.count(target)) {
            tensor = target;
        } else if (const auto id = graphA.findNode(target)) {
            if (!graphA.node(*id).isVariable()) {
                tensor = graphA.outputName({ *id, 0, 0 });
            } else {
                // A parameter or the data: the first op input that reads it.
                for (uint32_t n = 0; n < graphA.size() && tensor.empty(); ++n) {
                    const Node& node = graphA.node(n);
                    for (size_t k = 0; k < node.inputs.size() && tensor.empty(); ++k)
                        if (node.inputs[k].node == *id) tensor = node.name + "_" + node.inputSlots[k];
                }
            }
        }
        if (tensor.empty() || !a.tensors.count(tensor))
            return fail(kUsage, path + ": '" + from + "' maps to '" + target
                    + "', which is no tensor, node or parameter of run A");
        map[from] = tensor;
    }
    return kOk;
}

debug::RecordedRun renamed(debug::RecordedRun b, const std::map<std::string, std::string>& map)
{
    if (map.empty()) return b;
    debug::RecordedRun r;
    for (const std::string& name : b.order) {
        const auto it = map.find(name);
        const std::string& to = it == map.end() ? name : it->second;
        if (!r.tensors.count(to)) r.order.push_back(to);
        r.tensors[to] = std::move(b.tensors.at(name));
    }
    return r;
}

} // namespace opscope::cli
