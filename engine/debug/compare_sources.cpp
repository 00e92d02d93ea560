#include "debug/compare_sources.h"

#include "core/error.h"
#include "io/file_names.h"
#include "io/npy.h"
#include "io/npz.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

namespace opscope::debug {

namespace fs = std::filesystem;

std::optional<RunMode> parseRunMode(const std::string& name)
{
    if (name == "eager") return RunMode::Eager;
    if (name == "hybrid") return RunMode::Hybrid;
    if (name == "static_alloc") return RunMode::StaticAlloc;
    if (name == "static_shape") return RunMode::StaticShape;
    return std::nullopt;
}

const char* runModeName(RunMode mode)
{
    switch (mode) {
    case RunMode::Eager:
        return "eager";
    case RunMode::Hybrid:
        return "hybrid";
    case RunMode::StaticAlloc:
        return "static_alloc";
    case RunMode::StaticShape:
        return "static_shape";
    }
    return "hybrid";
}

std::shared_ptr<const Graph> recordBlockRun(gluon::HybridBlock& block, const std::vector<Tensor>& inputs,
    KernelKind kernels, const std::vector<PrecisionRule>& precision, RecordedRun& run, RunMode mode)
{
    const bool eager = mode == RunMode::Eager && !block.hasFixedGraph();
    if (eager && !precision.empty())
        throw UsageError("reduced precision is emulated in a hybridized run: give a mode other than eager");
    block.hybridize(!eager, mode == RunMode::StaticAlloc || mode == RunMode::StaticShape, mode == RunMode::StaticShape);
    block.set_kernel_kind(kernels);
    block.set_precision(precision);
    auto handle = block.register_op_hook(
        [&run](std::string_view name, std::string_view, const TensorView& t) { run.add(std::string(name), t); }, true);
    block.call(inputs);
    if (!eager) return block.graph();
    // An eager run reports the same names as the graph the block traces to.
    std::vector<Shape> shapes;
    for (const Tensor& t : inputs)
        shapes.push_back(t.shape());
    return block.trace(shapes);
}

RecordedRun readDumpFolder(const std::string& dir, const RecordedRun& a)
{
    if (!fs::is_directory(dir)) throw FileError(dir + ": no such folder");
    RecordedRun b;
    FileNamer names;
    for (const std::string& name : a.order) {
        const fs::path file = fs::path(dir) / names.fileFor(name, ".npy");
        if (fs::exists(file)) b.add(name, readNpy(file.string()).view());
    }
    return b;
}

RecordedRun readNpzRun(const std::string& path)
{
    if (!fs::exists(path)) throw FileError(path + ": no such file");
    RecordedRun b;
    for (auto& [name, t] : readNpz(path)) {
        if (!b.tensors.count(name)) b.order.push_back(name);
        b.tensors[name] = std::move(t);
    }
    return b;
}

std::map<std::string, std::string> readNameMap(const std::string& path, const Graph& graphA, const RecordedRun& a)
{
    std::ifstream in(path);
    if (!in) throw FileError(path + ": cannot open for reading");
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(in);
    } catch (const nlohmann::json::parse_error& e) {
        throw FileError(path + ": byte " + std::to_string(e.byte) + ": not JSON");
    }
    if (!j.is_object()) throw FileError(path + ": expected an object from run B's names to run A's");
    std::map<std::string, std::string> map;
    for (const auto& [from, to] : j.items()) {
        if (!to.is_string()) throw FileError(path + ": '" + from + "': the name in A must be a string");
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
                        if (node.inputs[k].node == *id) tensor = graphA.inputName(n, k);
                }
            }
        }
        if (tensor.empty() || !a.tensors.count(tensor))
            throw UsageError(
                path + ": '" + from + "' maps to '" + target + "', which is no tensor, node or parameter of run A");
        map[from] = tensor;
    }
    return map;
}

RecordedRun renamed(RecordedRun b, const std::map<std::string, std::string>& map)
{
    if (map.empty()) return b;
    RecordedRun r;
    for (const std::string& name : b.order) {
        const auto it = map.find(name);
        const std::string& to = it == map.end() ? name : it->second;
        if (!r.tensors.count(to)) r.order.push_back(to);
        r.tensors[to] = std::move(b.tensors.at(name));
    }
    return r;
}

} // namespace opscope::debug
