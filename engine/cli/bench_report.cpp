#include "cli/bench_report.h"

#include "exec/op_flops.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <ostream>
#include <set>

namespace opscope::cli {

namespace {
    double ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }

    std::string fixed(double v, int decimals)
    {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
        return buf;
    }

    std::string padLeft(const std::string& s, size_t width)
    {
        return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
    }

    // "Conv+Relu" for a fused group.
    std::string opLabel(const OpFigures& o)
    {
        std::string s = o.op;
        for (const std::string& f : o.fusedOps)
            s += "+" + f;
        return s;
    }

    std::string padRight(const std::string& s, size_t width)
    {
        return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
    }
}

double median(std::vector<double> values)
{
    if (values.empty()) return 0;
    const size_t mid = values.size() / 2;
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
    const double upper = values[mid];
    if (values.size() % 2) return upper;
    const double lower = *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
    return (lower + upper) / 2;
}

BenchFigures summarize(const Executor& executor, const RunProfile& first, const std::vector<RunProfile>& measured,
    std::vector<double> passMs, std::vector<double> profiledMs)
{
    const Graph& g = executor.graph();
    BenchFigures f;
    f.passMs = std::move(passMs);
    f.medianMs = median(f.passMs);
    if (!f.passMs.empty()) {
        f.minMs = *std::min_element(f.passMs.begin(), f.passMs.end());
        f.maxMs = *std::max_element(f.passMs.begin(), f.passMs.end());
    }
    f.profiledMedianMs = median(std::move(profiledMs));
    f.firstCallMs = ms(first.totalNs());
    f.planMs = ms(first.planNs);

    // Per node: its kernel and observer times over the measured passes.
    std::map<uint32_t, std::pair<std::vector<double>, std::vector<double>>> times;
    std::vector<uint32_t> order;
    for (const RunProfile& run : measured)
        for (const StepTiming& s : run.steps) {
            auto [it, added] = times.try_emplace(s.node);
            if (added) order.push_back(s.node);
            it->second.first.push_back(ms(s.kernelNs()));
            it->second.second.push_back(ms(s.observerNs()));
        }
    std::map<uint32_t, double> firstCall;
    for (const StepTiming& s : first.steps)
        firstCall[s.node] = ms(s.kernelNs());

    const std::vector<std::string> backends = executor.kernelBackends();
    for (uint32_t id : order) {
        const auto& [kernel, observer] = times[id];
        OpFigures o;
        o.node = id;
        o.name = g.node(id).name;
        o.op = g.node(id).opName();
        o.backend = id < backends.size() ? backends[id] : "";
        const std::vector<uint32_t> fusedWith = executor.fusedWith(id);
        for (uint32_t f : fusedWith) {
            o.fused.push_back(g.node(f).name);
            o.fusedOps.push_back(g.node(f).opName());
        }
        const uint32_t written = g.entryId(fusedWith.empty() ? id : fusedWith.back(), 0);
        o.nativeOutput = executor.nativeLayout(written);
        f.nativeTensors += o.nativeOutput ? 1 : 0;
        o.selfMs = median(kernel);
        o.minMs = *std::min_element(kernel.begin(), kernel.end());
        o.maxMs = *std::max_element(kernel.begin(), kernel.end());
        o.observerMs = median(observer);
        o.share = f.profiledMedianMs > 0 ? o.selfMs / f.profiledMedianMs : 0;
        o.flops = opFlops(g, id, executor.entryShapes());
        for (uint32_t f : fusedWith) // a depthwise convolution computed in the same primitive
            if (const int64_t more = opFlops(g, f, executor.entryShapes()); more > 0 && o.flops >= 0) o.flops += more;
        o.gflops = o.flops >= 0 && o.selfMs > 0 ? static_cast<double>(o.flops) / (o.selfMs * 1e6) : 0;
        o.prepareMs = ms(executor.prepareNs(id));
        o.firstCallMs = firstCall.count(id) ? firstCall[id] : 0;
        f.opsMs += o.selfMs;
        f.observerMs += o.observerMs;
        f.ops.push_back(std::move(o));
    }
    std::stable_sort(f.ops.begin(), f.ops.end(), [](const OpFigures& a, const OpFigures& b) { return a.selfMs > b.selfMs; });
    std::set<int64_t> buffers;
    for (uint32_t e = 0; e < executor.entryShapes().size(); ++e) {
        if (executor.sharedBuffer(e) < 0) continue;
        ++f.sharedTensors;
        buffers.insert(executor.sharedBuffer(e));
        f.unsharedBytes += executor.entryShapes()[e].size() * static_cast<int64_t>(dtypeSize(executor.entryTypes()[e]));
    }
    f.sharedBuffers = static_cast<int>(buffers.size());
    f.sharedBytes = executor.sharedBufferBytes();
    return f;
}

void printTable(std::ostream& out, const BenchFigures& f)
{
    out << f.model << ": mode " << f.mode << ", kernels " << f.kernels << ", " << f.threads
        << (f.threads == 1 ? " thread" : " threads") << ", " << f.repeat << " passes after " << f.warmup
        << " warm-up" << (f.hooked ? ", a no-op op hook on every op" : "") << (f.fuse ? ", fusion on" : "")
        << "\n";
    out << "pass: median " << fixed(f.medianMs, 3) << " ms, min " << fixed(f.minMs, 3) << " ms, max "
        << fixed(f.maxMs, 3) << " ms; with each op timed (the figures below): median " << fixed(f.profiledMedianMs, 3)
        << " ms\n";
    out << "first call: " << fixed(f.firstCallMs, 3) << " ms, of which planning (shapes, kernels) "
        << fixed(f.planMs, 3) << " ms\n";
    const double opsShare = f.profiledMedianMs > 0 ? 100 * f.opsMs / f.profiledMedianMs : 0;
    out << f.ops.size() << " ops: their median self times sum to " << fixed(f.opsMs, 3) << " ms ("
        << fixed(opsShare, 1) << " % of a pass with each op timed)";
    if (f.hooked || f.observerMs > 0) out << ", observers " << fixed(f.observerMs, 3) << " ms";
    out << "\n";
    if (f.nativeTensors > 0)
        out << f.nativeTensors << " tensors stay in oneDNN's blocked layout from the kernel that writes them to those that read them\n";
    if (f.sharedTensors > 0)
        out << f.sharedTensors << " tensors nobody watches share " << f.sharedBuffers << " buffers: "
            << fixed(static_cast<double>(f.sharedBytes) / 1e6, 1) << " MB instead of "
            << fixed(static_cast<double>(f.unsharedBytes) / 1e6, 1) << " MB\n";
    out << "\n";
    size_t opWidth = 22; // a fused group's label may be longer
    for (const OpFigures& o : f.ops)
        opWidth = std::max(opWidth, opLabel(o).size() + 2);
    out << padLeft("self ms", 10) << padLeft("min ms", 10) << padLeft("share", 8) << padLeft("GFLOP/s", 9)
        << padLeft("first ms", 10) << padLeft("prep ms", 9) << "  " << padRight("op", opWidth) << padRight("backend", 11)
        << "node\n";
    for (const OpFigures& o : f.ops) {
        out << padLeft(fixed(o.selfMs, 4), 10) << padLeft(fixed(o.minMs, 4), 10)
            << padLeft(fixed(100 * o.share, 1) + "%", 8) << padLeft(o.flops >= 0 ? fixed(o.gflops, 1) : "-", 9)
            << padLeft(fixed(o.firstCallMs, 3), 10) << padLeft(fixed(o.prepareMs, 3), 9) << "  "
            << padRight(opLabel(o), opWidth) << padRight(o.backend.empty() ? "-" : o.backend, 11) << o.name;
        for (const std::string& f : o.fused)
            out << " + " << f;
        out << "\n";
    }
}

nlohmann::json toJson(const BenchFigures& f)
{
    nlohmann::json j;
    j["model"] = f.model;
    j["mode"] = f.mode;
    j["kernels"] = f.kernels;
    j["threads"] = f.threads;
    j["repeat"] = f.repeat;
    j["warmup"] = f.warmup;
    j["hooked"] = f.hooked;
    j["fuse"] = f.fuse;
    j["median_ms"] = f.medianMs;
    j["min_ms"] = f.minMs;
    j["max_ms"] = f.maxMs;
    j["passes_ms"] = f.passMs;
    j["profiled_median_ms"] = f.profiledMedianMs;
    j["first_call_ms"] = f.firstCallMs;
    j["plan_ms"] = f.planMs;
    j["ops_ms"] = f.opsMs;
    j["observers_ms"] = f.observerMs;
    j["native_tensors"] = f.nativeTensors;
    j["shared_tensors"] = f.sharedTensors;
    j["shared_buffers"] = f.sharedBuffers;
    j["shared_buffer_bytes"] = f.sharedBytes;
    j["unshared_bytes"] = f.unsharedBytes;
    nlohmann::json ops = nlohmann::json::array();
    for (const OpFigures& o : f.ops) {
        nlohmann::json op;
        op["node"] = o.name;
        op["op"] = o.op;
        op["backend"] = o.backend;
        op["fused"] = o.fused;
        op["fused_ops"] = o.fusedOps;
        op["self_ms"] = o.selfMs;
        op["min_ms"] = o.minMs;
        op["max_ms"] = o.maxMs;
        op["share"] = o.share;
        op["flops"] = o.flops >= 0 ? nlohmann::json(o.flops) : nlohmann::json(nullptr);
        op["gflops"] = o.flops >= 0 ? nlohmann::json(o.gflops) : nlohmann::json(nullptr);
        op["observers_ms"] = o.observerMs;
        op["prepare_ms"] = o.prepareMs;
        op["first_call_ms"] = o.firstCallMs;
        op["native_output"] = o.nativeOutput;
        ops.push_back(std::move(op));
    }
    j["ops"] = std::move(ops);
    return j;
}

nlohmann::json traceJson(
    const Graph& g, const Executor& executor, const std::vector<RunProfile>& runs, const std::vector<std::string>& labels)
{
    // Times in microseconds from the first run's start, as the trace-event format counts them.
    const int64_t origin = runs.empty() ? 0 : runs.front().begin;
    auto us = [origin](int64_t ns) { return static_cast<double>(ns - origin) / 1e3; };
    const std::vector<std::string> backends = executor.kernelBackends();
    nlohmann::json events = nlohmann::json::array();
    events.push_back({ { "name", "process_name" }, { "ph", "M" }, { "pid", 1 }, { "args", { { "name", "opscope" } } } });
    std::map<uint64_t, bool> threads;
    auto slice = [&](const std::string& name, const char* cat, int64_t begin, int64_t end, uint64_t tid,
                     nlohmann::json args) {
        events.push_back({ { "name", name }, { "cat", cat }, { "ph", "X" }, { "ts", us(begin) },
            { "dur", static_cast<double>(end - begin) / 1e3 }, { "pid", 1 }, { "tid", tid }, { "args", std::move(args) } });
    };
    for (size_t r = 0; r < runs.size(); ++r) {
        const RunProfile& run = runs[r];
        if (!threads[run.thread]) {
            threads[run.thread] = true;
            events.push_back({ { "name", "thread_name" }, { "ph", "M" }, { "pid", 1 }, { "tid", run.thread },
                { "args", { { "name", "executor (thread " + std::to_string(run.thread) + ")" } } } });
        }
        const std::string label = r < labels.size() ? labels[r] : "run " + std::to_string(r + 1);
        slice(label, "pass", run.begin, run.end, run.thread, { { "plan_ms", ms(run.planNs) } });
        if (run.planNs > 0) slice("planning", "plan", run.begin, run.begin + run.planNs, run.thread, nlohmann::json::object());
        for (const StepTiming& s : run.steps) {
            const Node& n = g.node(s.node);
            const std::string backend = s.node < backends.size() ? backends[s.node] : "";
            std::vector<std::string> fused;
            for (uint32_t f : executor.fusedWith(s.node))
                fused.push_back(g.node(f).name);
            slice(n.name, "op", s.kernelBegin, s.kernelEnd, run.thread,
                { { "op", n.opName() }, { "backend", backend }, { "pass", label }, { "first_call", s.firstCall },
                    { "fused", fused } });
            if (s.beforeEnd > s.beforeBegin)
                slice(n.name + " (observers before)", "observer", s.beforeBegin, s.beforeEnd, run.thread,
                    { { "op", n.opName() }, { "pass", label } });
            if (s.afterEnd > s.afterBegin)
                slice(n.name + " (observers after)", "observer", s.afterBegin, s.afterEnd, run.thread,
                    { { "op", n.opName() }, { "pass", label } });
        }
    }
    return { { "traceEvents", std::move(events) }, { "displayTimeUnit", "ms" } };
}

} // namespace opscope::cli
