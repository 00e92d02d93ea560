#include "cli/diff_sources.h"

#include "cli/commands.h"
#include "debug/compare_sources.h"

namespace opscope::cli {

namespace {
// Runs `f`, turning what it throws into an exit status with its message.
template <class F> int guarded(const std::string& what, F f)
{
    try {
        f();
    } catch (const UsageError& e) {
        return fail(kUsage, e.what());
    } catch (const FileError& e) {
        return fail(kBadFile, e.what());
    } catch (const std::bad_alloc&) {
        return fail(kRunFailed, what + ": out of memory");
    } catch (const std::exception& e) {
        return fail(kRunFailed, e.what());
    }
    return kOk;
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
    return guarded(live.model, [&] {
        graph = debug::recordBlockRun(*m.block, in, kernelKindOf(live.kernels), live.precision, run,
            debug::parseRunMode(live.mode).value_or(debug::RunMode::Hybrid));
    });
}

int readDumpRun(const std::string& dir, const debug::RecordedRun& a, debug::RecordedRun& b)
{
    return guarded(dir, [&] { b = debug::readDumpFolder(dir, a); });
}

int readNpzRun(const std::string& path, debug::RecordedRun& b)
{
    return guarded(path, [&] { b = debug::readNpzRun(path); });
}

int applyNameMap(const std::string& path, const Graph& graphA, const debug::RecordedRun& a, debug::RecordedRun& b)
{
    return guarded(path, [&] { b = debug::renamed(std::move(b), debug::readNameMap(path, graphA, a)); });
}

} // namespace opscope::cli
