// opscope-cli diff: records run A (and B) with op hooks on every input and output, compares them
// tensor by tensor and names the node where they part ways.

#include "cli/diff_command.h"

#include "cli/commands.h"
#include "debug/compare.h"
#include "io/file_names.h"
#include "io/npy.h"
#include "load/onnx_loader.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace opscope::cli {

namespace fs = std::filesystem;

namespace {

KernelKind kindOf(const std::string& k)
{
    return k == "reference" ? KernelKind::Reference : k == "onednn" ? KernelKind::Dnnl : KernelKind::Auto;
}

std::vector<PrecisionRule> precisionRules(const std::vector<std::string>& half, const std::vector<std::string>& bf16)
{
    std::vector<PrecisionRule> rules;
    for (const std::string& t : half)
        rules.push_back({ t, Precision::Float16 });
    for (const std::string& t : bf16)
        rules.push_back({ t, Precision::BFloat16 });
    return rules;
}

// Runs a model on its inputs, every op's inputs and outputs recorded; returns kOk or the status.
int record(const std::string& model, const std::string& params, const std::vector<std::string>& inputs,
    const std::string& kernels, const std::vector<PrecisionRule>& precision, uint64_t seed, debug::RecordedRun& run,
    std::shared_ptr<const Graph>& graph)
{
    RunOptions o;
    o.model = model;
    o.params = params;
    o.inputs = inputs;
    o.seed = seed;
    load::LoadedModel m;
    std::vector<Tensor> in;
    if (const int status = prepareRun(o, m, in); status != kOk) return status;
    try {
        m.block->hybridize();
        m.block->set_kernel_kind(kindOf(kernels));
        m.block->set_precision(precision);
        auto handle = m.block->register_op_hook(
            [&run](std::string_view name, std::string_view, const TensorView& t) { run.add(std::string(name), t); }, true);
        m.block->call(in);
        graph = m.block->graph();
    } catch (const UsageError& e) {
        return fail(kUsage, e.what());
    } catch (const std::bad_alloc&) {
        return fail(kRunFailed, model + ": out of memory");
    } catch (const std::exception& e) {
        return fail(kRunFailed, e.what());
    }
    return kOk;
}

// Run B as `run --dump DIR` wrote it: A's tensor names, named as the dump names files.
int readDump(const std::string& dir, const debug::RecordedRun& a, debug::RecordedRun& b)
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

std::string num(double v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return buf;
}

} // namespace

int diffCommand(const DiffOptions& o)
{
    debug::RecordedRun a, b;
    std::shared_ptr<const Graph> graphA, graphB;
    if (const int s = record(o.modelA, o.paramsA, o.inputsA, o.kernelsA, precisionRules(o.halfA, o.bf16A), o.seed, a, graphA); s != kOk) return s;
    if (!o.dumpB.empty()) {
        if (const int s = readDump(o.dumpB, a, b); s != kOk) return s;
    } else {
        const std::string model = o.modelB.empty() ? o.modelA : o.modelB;
        const std::vector<std::string>& inputs = o.inputsB.empty() ? o.inputsA : o.inputsB;
        const std::string& params = o.paramsB.empty() && o.modelB.empty() ? o.paramsA : o.paramsB;
        if (const int s = record(model, params, inputs, o.kernelsB, precisionRules(o.halfB, o.bf16B), o.seed, b, graphB); s != kOk) return s;
    }
    const debug::CompareTolerance tol { o.rtol, o.atol };
    const debug::Comparison c = debug::compareRuns(*graphA, a, b, tol);

    std::printf("%-48s %-18s %10s %10s %10s %9s %9s %8s  %s\n", "tensor", "shape", "max_abs", "max_rel", "rel_l2",
        "cosine", "sqnr_db", "beyond", "");
    nlohmann::json tensors = nlohmann::json::array();
    for (const debug::TensorDiff& d : c.diffs) {
        const bool first = c.firstDivergentNode && d.name.rfind(*c.firstDivergentNode + "_", 0) == 0;
        std::string mark = d.problem.empty() ? (d.diverges ? "DIVERGES" : "") : d.problem;
        if (d.nanOnlyA || d.nanOnlyB)
            mark += " (NaN/Inf only in " + std::string(d.nanOnlyB ? "B" : "A") + ")";
        if (first && d.diverges) mark += " <- first divergent node";
        std::printf("%-48s %-18s %10s %10s %10s %9s %9s %7.2f%%  %s\n", d.name.c_str(), d.shapeA.str().c_str(),
            num(d.maxAbs).c_str(), num(d.maxRel).c_str(), num(d.relL2).c_str(), num(d.cosine).c_str(),
            num(d.sqnrDb).c_str(), 100 * d.beyond, mark.c_str());
        tensors.push_back({ { "name", d.name }, { "shape", d.shapeA.str() }, { "max_abs", d.maxAbs },
            { "max_rel", d.maxRel }, { "rel_l2", std::isfinite(d.relL2) ? nlohmann::json(d.relL2) : nlohmann::json("inf") },
            { "cosine", d.cosine }, { "sqnr_db", std::isfinite(d.sqnrDb) ? nlohmann::json(d.sqnrDb) : nlohmann::json("inf") },
            { "beyond", d.beyond }, { "nan_only_a", d.nanOnlyA }, { "nan_only_b", d.nanOnlyB },
            { "diverges", d.diverges }, { "problem", d.problem } });
    }
    for (const std::string& n : c.onlyA)
        std::printf("%-48s only in A\n", n.c_str());
    for (const std::string& n : c.onlyB)
        std::printf("%-48s only in B\n", n.c_str());
    if (!o.json.empty()) {
        std::ofstream out(o.json);
        if (!out) return fail(kUsage, o.json + ": cannot open for writing");
        out << nlohmann::json { { "rtol", o.rtol }, { "atol", o.atol }, { "tensors", tensors }, { "only_a", c.onlyA },
                   { "only_b", c.onlyB },
                   { "first_divergent_node", c.firstDivergentNode ? nlohmann::json(*c.firstDivergentNode) : nlohmann::json() } }
                   .dump(1)
            << "\n";
    }
    if (!c.diverges()) {
        std::printf("no divergence: %zu tensors within rtol %s, atol %s\n", c.diffs.size(), num(o.rtol).c_str(),
            num(o.atol).c_str());
        return kOk;
    }
    if (c.firstDivergentNode)
        std::printf("first divergent node: %s\n", c.firstDivergentNode->c_str());
    else
        std::printf("the runs differ (%zu only in A, %zu only in B), no single node where they part ways\n",
            c.onlyA.size(), c.onlyB.size());
    return kDiverges;
}

} // namespace opscope::cli
