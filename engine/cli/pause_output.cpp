#include "cli/pause_output.h"

#include "debug/pause_event.h"
#include "debug/run_record.h"
#include "io/file_names.h"
#include "io/npy.h"

#include <filesystem>

namespace opscope::cli {

void WaitingListener::paused(const debug::PauseEvent& e)
{
    std::lock_guard lock(m_mutex);
    if (!m_pause) m_pause = e;
    m_cv.notify_all();
}

void WaitingListener::runFinished(uint64_t, const std::vector<Tensor>& outputs, const debug::RunRecord& record)
{
    std::lock_guard lock(m_mutex);
    m_outputs = outputs;
    m_stopped = record.status == RunStatus::Stopped;
    m_done = true;
    m_cv.notify_all();
}

void WaitingListener::runFailed(uint64_t, const std::string& error)
{
    std::lock_guard lock(m_mutex);
    m_error = error;
    m_done = true;
    m_cv.notify_all();
}

void WaitingListener::waitPausedOrDone()
{
    std::unique_lock lock(m_mutex);
    m_cv.wait(lock, [&] { return m_pause.has_value() || m_done; });
}

void WaitingListener::waitDone()
{
    std::unique_lock lock(m_mutex);
    m_cv.wait(lock, [&] { return m_done; });
}

void WaitingListener::reset()
{
    std::lock_guard lock(m_mutex);
    m_pause.reset();
    m_done = false;
    m_stopped = false;
    m_error.clear();
    m_outputs.clear();
}

namespace {
void printStats(std::ostream& out, const debug::TensorStats& s)
{
    out << "min " << s.min << " max " << s.max << " mean " << s.mean << " std " << s.std << " nan " << s.nan << " inf "
        << s.inf() << " zeros " << s.zeros << " count " << s.count;
}
} // namespace

void printPause(std::ostream& out, const debug::PauseEvent& e, const std::vector<debug::Breakpoint>& bps)
{
    std::vector<Shape> shapes;
    std::vector<debug::TensorStats> stats;
    for (const debug::PausedTensor& t : e.tensors) {
        shapes.push_back(t.values.shape());
        stats.push_back(debug::computeStats(t.values.view()));
    }
    printPause(out, e, bps, shapes, stats);
}

void printPause(std::ostream& out, const debug::PauseEvent& e, const std::vector<debug::Breakpoint>& bps,
    const std::vector<Shape>& shapes, const std::vector<debug::TensorStats>& stats)
{
    out << "paused at node " << e.node << " (" << e.op << "), " << (e.phase == OpPhase::Before ? "before" : "after")
        << "\n";
    out << "  reason: " << debug::toString(e.reason);
    for (int id : e.breakpointIds)
        for (const debug::Breakpoint& b : bps)
            if (b.id == id) out << "; #" << id << " " << b.str();
    out << "\n";
    if (!e.blockPath.empty()) out << "  block: " << e.blockPath << "\n";
    for (size_t i = 0; i < e.tensors.size() && i < shapes.size() && i < stats.size(); ++i) {
        const debug::PausedTensor& t = e.tensors[i];
        out << "  " << (t.isInput ? "input  " : "output ") << t.name << " " << shapes[i].str() << ": ";
        printStats(out, stats[i]);
        out << (static_cast<int>(i) == e.focus ? "  <- focus" : "") << "\n";
    }
    if (const debug::PausedTensor* f = e.focusTensor()) {
        const debug::Histogram& h = e.focusHistogram;
        out << "  histogram of " << f->name << " (" << h.bins.size() << " bins over [" << h.lo << ", " << h.hi
            << "], nan " << h.nan << ", inf " << h.inf << "):";
        for (uint64_t c : h.bins)
            out << " " << c;
        out << "\n";
    }
}

void dumpPause(const debug::PauseEvent& e, const std::string& dir)
{
    if (dir.empty()) return;
    FileNamer names;
    for (const debug::PausedTensor& t : e.tensors)
        writeNpy((std::filesystem::path(dir) / names.fileFor(t.name, ".npy")).string(), t.values.view());
}

} // namespace opscope::cli
