// opscope-cli bench: the model is hybridized as the options say, run once to plan, warmed up, then
// timed pass by pass, each pass followed by one with the executor's profile on for the per-op
// figures; they go to stdout, --json and --trace.

#include "cli/bench_command.h"

#include "cli/bench_report.h"
#include "cli/commands.h"

#include <omp.h>

#include <chrono>
#include <fstream>
#include <iostream>

namespace opscope::cli {

namespace {
    // Opens FILE for writing before the model runs, so that a path that cannot be written is
    // refused at once rather than after the passes.
    bool openOut(const std::string& path, std::ofstream& out)
    {
        if (path.empty()) return true;
        out.open(path, std::ios::trunc);
        return static_cast<bool>(out);
    }
}

int benchCommand(const BenchOptions& o)
{
    if (o.mode != "hybrid" && o.mode != "static_alloc" && o.mode != "static_shape")
        return fail(kUsage, "bench times hybridized runs: --mode hybrid, static_alloc or static_shape, not " + o.mode);
    if (o.repeat < 1 || o.warmup < 0 || o.threads < 0)
        return fail(kUsage, "--repeat must be at least 1, --warmup and --threads at least 0");
    std::ofstream traceFile, jsonFile;
    if (!openOut(o.trace, traceFile)) return fail(kUsage, o.trace + ": cannot open for writing");
    if (!openOut(o.json, jsonFile)) return fail(kUsage, o.json + ": cannot open for writing");

    RunOptions r;
    r.model = o.model;
    r.params = o.params;
    r.inputs = o.inputs;
    r.seed = o.seed;
    RunProfile profile; // outlives the model, whose executor writes it
    load::LoadedModel m;
    std::vector<Tensor> inputs;
    if (const int status = prepareRun(r, m, inputs); status != kOk) return status;
    if (o.threads > 0) omp_set_num_threads(o.threads);

    BenchFigures figures;
    nlohmann::json trace;
    try {
        ExecFlags flags;
        flags.static_alloc = o.mode != "hybrid";
        flags.static_shape = o.mode == "static_shape";
        flags.fuse = !o.noFuse;
        m.block->hybridize(true, flags);
        m.block->set_kernel_kind(kernelKindOf(o.kernels));
        gluon::HookHandle hook;
        if (o.hook) hook = m.block->register_op_hook([](std::string_view, std::string_view, const TensorView&) {});

        // Each repeat is two passes: one timed as a user's call (no profile: nothing watched runs
        // the kernels alone), then one with the executor's profile on, whose per-op times the
        // figures give (timing every op costs some, which is why the pass time is taken apart).
        std::vector<RunProfile> runs;
        std::vector<std::string> labels;
        std::vector<double> passMs, profiledMs;
        const auto call = [&] {
            const auto t0 = std::chrono::steady_clock::now();
            m.block->call(inputs);
            return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        };
        auto profiled = [&](const std::string& label) {
            m.block->set_profile(&profile);
            const double t = call();
            m.block->set_profile(nullptr);
            runs.push_back(profile);
            labels.push_back(label);
            return t;
        };
        const double firstCallMs = profiled("first call"); // makes the executor and its plan
        Executor* exec = m.block->executor();
        if (!exec) return fail(kRunFailed, "the model did not run as a cached graph");
        for (int k = 0; k < o.warmup; ++k) {
            call();
            profiled("warm-up " + std::to_string(k + 1));
        }
        for (int k = 0; k < o.repeat; ++k) {
            passMs.push_back(call());
            profiledMs.push_back(profiled("pass " + std::to_string(k + 1)));
        }
        const std::vector<RunProfile> measured(runs.end() - o.repeat, runs.end());
        figures = summarize(*exec, runs.front(), measured, passMs, profiledMs);
        figures.firstCallMs = firstCallMs; // tracing the graph included
        if (!o.trace.empty()) trace = traceJson(exec->graph(), *exec, runs, labels);
    } catch (const std::bad_alloc&) {
        return fail(kRunFailed, "out of memory while running the model");
    } catch (const std::exception& e) {
        return fail(kRunFailed, e.what());
    }
    figures.model = o.model;
    figures.mode = o.mode;
    figures.kernels = o.kernels;
    figures.threads = omp_get_max_threads();
    figures.repeat = o.repeat;
    figures.warmup = o.warmup;
    figures.hooked = o.hook;
    figures.fuse = !o.noFuse && o.mode != "hybrid";
    printTable(std::cout, figures);
    if (jsonFile.is_open()) {
        jsonFile << toJson(figures).dump(1) << "\n";
        if (!jsonFile.flush()) return fail(kUsage, o.json + ": cannot write");
    }
    if (traceFile.is_open()) {
        traceFile << trace.dump() << "\n";
        if (!traceFile.flush()) return fail(kUsage, o.trace + ": cannot write");
    }
    return kOk;
}

} // namespace opscope::cli
