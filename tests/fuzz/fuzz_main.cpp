// opscope's end-to-end fuzzer: mutated symbol JSON, .params and .npy files through the code of
// `opscope-cli run` (with hooks, --dump and --break-on) and `info`; mutated ONNX models likewise, in this process so thousands of
// cases run a minute. docs/FUZZING.md says what it covers and how to run it longer.
//
//   fuzz_cli [--seed N] [--cases N | --minutes M] [--work DIR] [--replay FILE...]
//
// Every case is written to DIR/case-<worker> before it runs, so a crash or a sanitizer report leaves
// the files that caused it there. A case that takes longer than --case-seconds (default 30) aborts
// the run with its folder named: a hang is a failure like a crash. With --replay, each given
// folder (model-symbol.json, model-0000.params, input.npy, as a case is written) is run once.

#include "fuzz/fuzz_cases.h"
#include "ops/registry.h"
#include "tensor/memory_limit.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>

using namespace opscope;
using namespace opscope::fuzz;
namespace fs = std::filesystem;

namespace {

struct Options {
    uint64_t seed = 1;
    long cases = 3000;
    double minutes = 0;
    double caseSeconds = 30;
    fs::path work = fs::temp_directory_path() / "opscope-fuzz";
    fs::path shared;
    std::vector<fs::path> replay;
    bool verbose = false; // each case's statuses and the run's message
};

bool parse(int argc, char** argv, Options& o)
{
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
            return argv[++i];
        };
        try {
            if (a == "--seed")
                o.seed = std::stoull(next());
            else if (a == "--cases")
                o.cases = std::stol(next());
            else if (a == "--minutes")
                o.minutes = std::stod(next());
            else if (a == "--case-seconds")
                o.caseSeconds = std::stod(next());
            else if (a == "--work")
                o.work = next();
            else if (a == "--verbose")
                o.verbose = true;
            else if (a == "--shared")
                o.shared = next();
            else if (a == "--replay")
                while (i + 1 < argc && argv[i + 1][0] != '-')
                    o.replay.emplace_back(argv[++i]);
            else
                throw std::invalid_argument("unknown option " + a);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "fuzz_cli: %s\n", e.what());
            return false;
        }
    }
    return true;
}

// Aborts the process when a case runs longer than the limit (a hang), naming its folder.
class CaseWatchdog {
public:
    explicit CaseWatchdog(double seconds)
        : m_limit(std::chrono::duration<double>(seconds))
        , m_thread([this] { watch(); })
    {
    }
    ~CaseWatchdog()
    {
        {
            std::lock_guard lock(m_mutex);
            m_done = true;
        }
        m_cv.notify_all();
        m_thread.join();
    }
    void begin(const std::string& what)
    {
        std::lock_guard lock(m_mutex);
        m_what = what;
        m_start = std::chrono::steady_clock::now();
        m_busy = true;
        m_cv.notify_all();
    }
    void end()
    {
        std::lock_guard lock(m_mutex);
        m_busy = false;
    }

private:
    void watch()
    {
        std::unique_lock lock(m_mutex);
        while (!m_done) {
            m_cv.wait_for(lock, std::chrono::milliseconds(200));
            if (m_busy && std::chrono::steady_clock::now() - m_start > m_limit) {
                std::fprintf(stderr, "fuzz_cli: TIMEOUT: %s ran longer than %.0f s\n", m_what.c_str(), m_limit.count());
                std::fflush(stderr);
                std::abort();
            }
        }
    }

    std::chrono::duration<double> m_limit;
    std::mutex m_mutex;
    std::condition_variable m_cv;
    std::string m_what;
    std::chrono::steady_clock::time_point m_start;
    bool m_busy = false;
    bool m_done = false;
    std::thread m_thread;
};

} // namespace

int main(int argc, char** argv)
{
    Options o;
    if (!parse(argc, argv, o)) return 2;
    // Small enough that a case asking for gigabytes is refused at once rather than allocated.
    setMemoryLimit(int64_t(512) << 20);
    fs::create_directories(o.work);
    CaseWatchdog watchdog(o.caseSeconds);
    Rng rng(o.seed);
    long failures = 0;

    if (!o.replay.empty()) {
        for (const fs::path& dir : o.replay) {
            const Case c = readCase(dir);
            watchdog.begin(dir.string());
            const Outcome r = runCase(c, o.work / "replay", rng);
            watchdog.end();
            std::printf("%s: statuses %d %d %d%s\n", dir.string().c_str(), r.statuses[0], r.statuses[1], r.statuses[2],
                r.problem.empty() ? "" : (" PROBLEM\n" + r.problem).c_str());
            failures += !r.problem.empty();
        }
        return failures ? 1 : 0;
    }

    const fs::path shared = o.shared.empty() ? fs::path(OPSCOPE_SHARED_DIR) / "models" : o.shared;
    const fs::path fixtures(OPSCOPE_FIXTURES_DIR);
    const std::vector<Case> seeds
        = makeSeeds(shared, { fixtures / "onnx", (fixtures / ".." / ".." / "samples" / "onnx").lexically_normal() });
    const std::vector<std::string> operators = OpRegistry::instance().names();
    const auto start = std::chrono::steady_clock::now();
    const auto deadline = start + std::chrono::duration<double, std::ratio<60>>(o.minutes);
    long cases = 0;
    long histogram[5] = { 0, 0, 0, 0, 0 };
    const fs::path dir = o.work / "case";
    for (;; ++cases) {
        if (o.minutes > 0 ? std::chrono::steady_clock::now() >= deadline : cases >= o.cases) break;
        const Case& seed = seeds[static_cast<size_t>(cases) % seeds.size()];
        const Case c = mutate(seed, rng, operators);
        watchdog.begin("case " + std::to_string(cases) + " (from " + seed.name + ", files in " + dir.string() + ")");
        const Outcome r = runCase(c, dir, rng);
        watchdog.end();
        for (int s : r.statuses)
            if (s >= 0 && s <= 4) ++histogram[s];
        if (o.verbose)
            std::printf("case %ld (%s): %d %d %d  %s", cases, seed.name.c_str(), r.statuses[0], r.statuses[1],
                r.statuses[2], r.messages.empty() ? "\n" : r.messages[0].empty() ? "\n" : r.messages[0].substr(0, 200).c_str());
        if (!r.problem.empty()) {
            ++failures;
            const fs::path keep = o.work / ("failure-" + std::to_string(cases));
            fs::remove_all(keep);
            fs::copy(dir, keep, fs::copy_options::recursive);
            std::fprintf(stderr, "fuzz_cli: case %ld (from %s): %s  files kept in %s\n", cases, seed.name.c_str(),
                r.problem.c_str(), keep.string().c_str());
        }
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("fuzz_cli: seed %llu, %ld cases from %zu seeds in %.1f s (%.0f a minute); statuses 0:%ld 1:%ld 2:%ld "
                "3:%ld 4:%ld; %ld failures\n",
        static_cast<unsigned long long>(o.seed), cases, seeds.size(), seconds, cases / seconds * 60, histogram[0],
        histogram[1], histogram[2], histogram[3], histogram[4], failures);
    return failures ? 1 : 0;
}
