// A session served over loopback against the same session in process: the time from a step command
// to the client having the next pause event (local: the listener's call), a whole tensor streamed
// (GB/s), and a run with no breakpoint from start to the client's run_finished event.

#include "debug/session.h"
#include "models/registry.h"
#include "remote/client.h"
#include "remote/server.h"

#include <benchmark/benchmark.h>

#include <condition_variable>
#include <mutex>

using namespace opscope;

namespace {

// Counts pauses and ends, for both kinds of listener.
struct Counter : debug::SessionListener, remote::RemoteListener {
    std::mutex mutex;
    std::condition_variable cv;
    uint64_t pauses = 0, ends = 0;
    void bump(uint64_t& n)
    {
        {
            std::lock_guard lock(mutex);
            ++n;
        }
        cv.notify_all();
    }
    void paused(const debug::PauseEvent&) override { bump(pauses); }
    void runFinished(uint64_t, const std::vector<Tensor>&, const debug::RunRecord&) override { bump(ends); }
    void paused(const remote::RemotePause&) override { bump(pauses); }
    void runFinished(uint64_t, bool, const std::vector<remote::OutputInfo>&) override { bump(ends); }
    void waitPauses(uint64_t n)
    {
        std::unique_lock lock(mutex);
        cv.wait(lock, [&] { return pauses >= n; });
    }
    void waitEnds(uint64_t n)
    {
        std::unique_lock lock(mutex);
        cv.wait(lock, [&] { return ends >= n; });
    }
};

// lenet's session, served when `remote`.
struct Setup {
    explicit Setup(bool remote, Counter& counter, Tensor input = {})
        : sample(samples::makeSample("lenet"))
    {
        sample.block->hybridize();
        session.load(sample.block, sample.inputNames);
        session.setInputs({ input.defined() ? input : sample.defaultInputs[0] });
        if (remote) {
            server = debug::serve(session, {});
            remote::ConnectOptions o;
            o.address = server->address();
            client = std::make_unique<remote::Client>(o);
            client->subscribe(&counter);
        } else {
            session.setListener(&counter);
        }
    }
    ~Setup()
    {
        if (client) client->detach();
        client.reset();
        server.reset();
        session.stop();
        session.waitUntilIdle(std::chrono::seconds(30));
        session.setListener(nullptr);
    }
    void start(debug::StartMode mode)
    {
        if (client)
            client->start(mode);
        else
            session.start(mode);
    }
    samples::Sample sample;
    debug::Session session;
    std::unique_ptr<debug::Server> server;
    std::unique_ptr<remote::Client> client;
};

void BM_StepToPause(benchmark::State& state)
{
    const bool remote = state.range(0) != 0;
    Counter counter;
    Setup s(remote, counter);
    uint64_t pauses = 0, ends = 0;
    auto begin = [&] {
        s.start(debug::StartMode::PauseAtEntry);
        counter.waitPauses(++pauses);
    };
    begin();
    for (auto _ : state) {
        if (remote)
            s.client->step();
        else
            s.session.step();
        // The step lands on the next op event, or the run ends: then the next run starts paused.
        std::unique_lock lock(counter.mutex);
        counter.cv.wait(lock, [&] { return counter.pauses > pauses || counter.ends > ends; });
        if (counter.ends > ends) {
            ends = counter.ends;
            pauses = counter.pauses;
            lock.unlock();
            state.PauseTiming();
            s.session.waitUntilIdle(std::chrono::seconds(30));
            begin();
            state.ResumeTiming();
        } else {
            pauses = counter.pauses;
        }
    }
    state.SetLabel(remote ? "served, loopback" : "in process");
}
BENCHMARK(BM_StepToPause)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_RunWithoutBreakpoints(benchmark::State& state)
{
    const bool remote = state.range(0) != 0;
    const int64_t batch = state.range(1);
    Counter counter;
    Setup s(remote, counter, batch > 1 ? Tensor::ones(Shape({ batch, 1, 28, 28 })) : Tensor());
    uint64_t ends = 0;
    for (auto _ : state) {
        s.start(debug::StartMode::Run);
        counter.waitEnds(++ends);
        s.session.waitUntilIdle(std::chrono::seconds(30));
    }
    state.SetLabel(std::string(remote ? "served, loopback" : "in process") + ", batch " + std::to_string(batch));
}
// lenet on one image (0.15 ms) and on 256 (milliseconds): the server's cost is a fixed few hundred µs.
BENCHMARK(BM_RunWithoutBreakpoints)->Args({ 0, 1 })->Args({ 1, 1 })->Args({ 0, 256 })->Args({ 1, 256 })
    ->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_FetchTensor(benchmark::State& state)
{
    // A batch of 65,536 of lenet's inputs, 51 M floats (205 MB): the entry pause holds it.
    Counter counter;
    Tensor big = Tensor::ones(Shape({ 65536, 1, 28, 28 }));
    Setup s(true, counter, big);
    s.start(debug::StartMode::PauseAtEntry);
    counter.waitPauses(1);
    const std::string name = s.session.currentPause()->tensors.at(0).name;
    for (auto _ : state) {
        Tensor t = s.client->fetch(name);
        benchmark::DoNotOptimize(t.raw());
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(big.bytes()));
}
BENCHMARK(BM_FetchTensor)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(5);

} // namespace

BENCHMARK_MAIN();
