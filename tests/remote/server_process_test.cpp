// opscope-server and `opscope-cli … --connect` as processes: the same output and files as a local
// run, exit 5 when refused, a token file made with mode 0600, SIGTERM ends the server, and a client
// survives the server being killed in the middle of a tensor stream.

#include "../cli/cli_run.h"
#include "remote_test_util.h"
#include "server_process.h"

#include <csignal>
#include <grpcpp/grpcpp.h>
#include <fcntl.h>
#include <sys/stat.h>

namespace opscope::remote::test {

namespace fs = std::filesystem;
using opscope::test::run;

namespace {

std::string fileText(const fs::path& p)
{
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

} // namespace

TEST(ServerProcess, InfoAndRunOverConnectPrintWhatALocalRunPrints)
{
    Watchdog dog("info and run over --connect", std::chrono::seconds(200));
    ServerProcess server({ "sample:lenet" });
    ASSERT_FALSE(server.address().empty()) << server.firstLine() << server.errors();
    EXPECT_TRUE(debug::isLoopback(server.address()));
    const auto localInfo = run("info sample:lenet");
    const auto remoteInfo = run("info --connect " + server.address());
    EXPECT_EQ(remoteInfo.status, 0) << opscope::test::lastStderr();
    EXPECT_EQ(remoteInfo.out, localInfo.out);

    const fs::path dir = opscope::test::tempDir("remote_run");
    const std::string node = "hybridsequential0_conv1_fwd:after";
    const auto localBreak = run("run sample:lenet --break " + node + " --dump " + (dir / "local").string());
    const auto remoteBreak = run("run --connect " + server.address() + " --break " + node + " --dump " + (dir / "remote").string());
    EXPECT_EQ(localBreak.status, 0);
    EXPECT_EQ(remoteBreak.status, 0) << opscope::test::lastStderr();
    EXPECT_EQ(remoteBreak.out, localBreak.out);
    size_t files = 0;
    for (const auto& f : fs::directory_iterator(dir / "local")) {
        EXPECT_EQ(fileText(dir / "remote" / f.path().filename()), fileText(f.path())) << f.path().filename();
        ++files;
    }
    EXPECT_EQ(files, 4u);

    const auto localHooks = run("run sample:lenet --hooks - --output " + (dir / "local.npy").string());
    const auto remoteHooks = run("run --connect " + server.address() + " --hooks - --output " + (dir / "remote.npy").string());
    EXPECT_EQ(remoteHooks.status, 0);
    EXPECT_EQ(remoteHooks.out, localHooks.out);
    EXPECT_EQ(fileText(dir / "remote.npy"), fileText(dir / "local.npy"));

    const auto noHit = run("run --connect " + server.address() + " --break-on \"max>1e30\"");
    EXPECT_EQ(noHit.status, 1);
    EXPECT_EQ(opscope::test::lastLine(noHit.out), "no breakpoint hit");
    const auto unknown = run("run --connect " + server.address() + " --break nosuchnode");
    EXPECT_EQ(unknown.status, 2);
    EXPECT_NE(opscope::test::lastStderr().find("nosuchnode"), std::string::npos);
    const auto both = run("run sample:lenet --connect " + server.address());
    EXPECT_EQ(both.status, 2);
    EXPECT_NE(opscope::test::lastStderr().find("MODEL cannot be combined with --connect"), std::string::npos);
    EXPECT_EQ(server.terminate(), 0);
    EXPECT_NE(server.errors().find("stopped"), std::string::npos);
}

TEST(ServerProcess, MonitorAllOverConnectReportsEveryOpsInputsAsALocalRunDoes)
{
    Watchdog dog("--monitor-all over --connect", std::chrono::seconds(200));
    ServerProcess server({ "sample:lenet" });
    ASSERT_FALSE(server.address().empty()) << server.errors();
    const fs::path dir = opscope::test::tempDir("remote_monitor_all");
    const auto local = run("run sample:lenet --monitor-all --hooks - --dump " + (dir / "local").string());
    const auto remote = run("run --connect " + server.address() + " --monitor-all --hooks - --dump " + (dir / "remote").string());
    ASSERT_EQ(local.status, 0);
    EXPECT_EQ(remote.status, 0) << opscope::test::lastStderr();
    EXPECT_EQ(remote.out, local.out);
    EXPECT_NE(local.out.find("\"phase\":\"input\""), std::string::npos) << "the inputs are reported";
    EXPECT_NE(local.out.find("hybridsequential0_conv0_fwd_weight"), std::string::npos);
    size_t files = 0;
    for (const auto& f : fs::directory_iterator(dir / "local")) {
        EXPECT_EQ(fileText(dir / "remote" / f.path().filename()), fileText(f.path())) << f.path().filename();
        ++files;
    }
    EXPECT_GT(files, 20u);
    // The server's options are as they were: the next plain run reports outputs only.
    const auto plain = run("run --connect " + server.address() + " --hooks -");
    EXPECT_EQ(plain.status, 0);
    EXPECT_EQ(plain.out.find("\"phase\":\"input\""), std::string::npos);
    EXPECT_EQ(server.terminate(), 0);
}

TEST(ServerProcess, ARefusedConnectionOrTokenExitsFiveWithTheReason)
{
    Watchdog dog("refused connections", std::chrono::seconds(120));
    const fs::path dir = opscope::test::tempDir("remote_token");
    const fs::path token = dir / "token";
    ServerProcess server({ "sample:mlp", "--listen", "0.0.0.0:0", "--token-file", token.string() });
    ASSERT_FALSE(server.address().empty()) << server.errors();
    struct stat st {};
    ASSERT_EQ(stat(token.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    std::string secret = fileText(token);
    while (!secret.empty() && secret.back() == '\n') secret.pop_back();
    EXPECT_EQ(secret.size(), 64u);
    EXPECT_NE(server.errors().find(secret), std::string::npos) << "the new token is printed once";
    const std::string port = server.address().substr(server.address().rfind(':') + 1);
    const std::string address = "127.0.0.1:" + port;

    EXPECT_EQ(run("info --connect " + address).status, 5);
    EXPECT_NE(opscope::test::lastStderr().find("token"), std::string::npos) << opscope::test::lastStderr();
    std::ofstream(dir / "wrong") << "0123\n";
    EXPECT_EQ(run("info --connect " + address + " --token-file " + (dir / "wrong").string()).status, 5);
    EXPECT_NE(opscope::test::lastStderr().find("wrong token"), std::string::npos);
    EXPECT_EQ(run("info --connect " + address + " --token-file " + token.string()).status, 0);
    EXPECT_NE(server.errors().find("wrong token"), std::string::npos) << "refusals are logged";
    server.killNow();
    // Nobody listens there now.
    const auto gone = run("run --connect " + address);
    EXPECT_EQ(gone.status, 5);
    EXPECT_NE(opscope::test::lastStderr().find("cannot connect"), std::string::npos);
}

TEST(ServerProcess, AClientSurvivesTheServerKilledMidStream)
{
    Watchdog dog("server killed mid-stream", std::chrono::seconds(120));
    // A 160 MB input: the fetch is many chunks long.
    ServerProcess server({ "sample:mlp", "--input", "data=20000000x2:uniform" });
    ASSERT_FALSE(server.address().empty()) << server.errors();
    ConnectOptions o;
    o.address = server.address();
    EventRecorder events;
    Client c(o);
    c.subscribe(&events);
    c.start(debug::StartMode::PauseAtEntry);
    ASSERT_TRUE(events.waitPauses(1));
    const std::string name = events.pause(0).event.tensors.at(0).name;
    bool killed = false;
    try {
        c.fetch(name, [&](size_t received, size_t total) {
            if (!killed && received > total / 8) {
                server.killNow();
                killed = true;
            }
        });
        FAIL() << "the fetch completed although the server died";
    } catch (const RemoteError& e) {
        EXPECT_TRUE(killed);
        EXPECT_NE(std::string(e.what()), "");
    }
    ASSERT_TRUE(events.waitFor([&] { return !events.gone.empty(); }));
    EXPECT_THROW(c.state(), RemoteError);
}

TEST(ServerProcess, ATrainingLoopServedPausesAtABackwardBreakpointUntilContinued)
{
    Watchdog dog("served training", std::chrono::seconds(120));
    ServerProcess server({ "sample:mlp", "--train", "--epochs", "1" });
    ASSERT_FALSE(server.address().empty()) << server.errors();
    ConnectOptions o;
    o.address = server.address();
    o.clientName = "debugger";
    EventRecorder events;
    Client c(o);
    c.subscribe(&events);
    // The loop starts the runs; a client sets breakpoints and steps through them.
    const int id = c.addBreakpoint(debug::Breakpoint::watch(debug::Condition::parse("grad norm>0")));
    ASSERT_TRUE(events.waitPauses(1)) << server.errors();
    const RemotePause p = events.pause(0);
    EXPECT_EQ(p.event.reason, debug::PauseReason::Watchpoint);
    EXPECT_NE(p.event.node.find("_backward"), std::string::npos) << p.event.node;
    EXPECT_EQ(codeOf([&] { c.start(); }), grpc::StatusCode::FAILED_PRECONDITION);
    const debug::ModelDescription model = c.model(); // the training step's graph
    ASSERT_NE(model.graph, nullptr);
    EXPECT_TRUE(model.graph->findNode(p.event.node).has_value());
    c.step();
    ASSERT_TRUE(events.waitPauses(2));
    c.removeBreakpoint(id);
    c.continueRun();
    // The loop goes on: its steps finish one after another.
    ASSERT_TRUE(events.waitFor([&] { return events.finished.size() >= 3; })) << server.errors();
    EXPECT_EQ(server.terminate(), 0);
    EXPECT_NE(server.errors().find("opscope-server: training"), std::string::npos) << server.errors();
}

TEST(ServerProcess, EverySampleDescribesAndRunsOverConnectAsLocally)
{
    Watchdog dog("every sample over --connect", std::chrono::seconds(240));
    // ONNX graphs too: their nodes travel as ONNX operators (symbol JSON with `__domain__`).
    for (const std::string sample : { "mlp", "mini-resnet", "tiny-transformer", "onnx-cnn", "onnx-transformer" }) {
        ServerProcess server({ "sample:" + sample });
        ASSERT_FALSE(server.address().empty()) << sample << ": " << server.errors();
        const auto localInfo = run("info sample:" + sample);
        const auto remoteInfo = run("info --connect " + server.address());
        EXPECT_EQ(remoteInfo.status, 0) << sample << ": " << opscope::test::lastStderr();
        EXPECT_EQ(remoteInfo.out, localInfo.out) << sample;
        const auto localHooks = run("run sample:" + sample + " --hooks -");
        const auto remoteHooks = run("run --connect " + server.address() + " --hooks -");
        EXPECT_EQ(remoteHooks.status, 0) << sample;
        EXPECT_EQ(remoteHooks.out, localHooks.out) << sample;
    }
}

} // namespace opscope::remote::test
