// opscope-server: runs a model's debug session and serves it over gRPC (engine/remote), so that the
// window (File > Attach to Server) and `opscope-cli info|run --connect` debug it from this or another
// machine. The first line of stdout is "listening on ADDR:PORT".

#include "cli/commands.h"
#include "cli/model_info.h"
#include "cli/remote_commands.h"
#include "compare/compare_job.h"
#include "compare/explain_job.h"
#include "core/error.h"
#include "remote/server.h"
#include "server/served_training.h"
#include "server/token.h"

#include <CLI/CLI.hpp>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <pthread.h>
#include <thread>

using namespace opscope;
using namespace opscope::cli;

int main(int argc, char** argv)
{
    setProgramName("opscope-server");
    CLI::App app { "opscope-server: serve a model's debug session to opscope windows and opscope-cli --connect" };
    RunOptions r;
    std::string listen = "127.0.0.1:0", tokenFile, tlsCert, tlsKey, onDetach = "pause";
    app.add_option("MODEL", r.model, "a .onnx, a -symbol.json or sample:NAME")->required();
    app.add_option("--params", r.params, "parameter file (default: beside the symbol file, highest epoch)");
    app.add_option("--input", r.inputs, "NAME=FILE.npy or NAME=SHAPE[:ones|zeros|uniform|normal]");
    app.add_option("--seed", r.seed, "seed of generated inputs and of sample parameters");
    app.add_option("--mode", r.mode, "hybrid (default), static_alloc or static_shape")
        ->check(CLI::IsMember({ "hybrid", "static_alloc", "static_shape" }));
    app.add_option("--listen", listen, "ADDR:PORT to listen on (default 127.0.0.1:0: loopback, a free port)");
    app.add_option("--token-file", tokenFile,
        "clients must send the token in this file; created (mode 0600) with a new token when missing. "
        "Required for an address other than loopback (default there: ./opscope-server.token)");
    app.add_option("--tls-cert", tlsCert, "PEM certificate: serve over TLS (with --tls-key)");
    app.add_option("--tls-key", tlsKey, "PEM private key of --tls-cert");
    app.add_option("--on-detach", onDetach, "when the client in control vanishes while paused: pause (stay) or continue")
        ->check(CLI::IsMember({ "pause", "continue" }));
    bool train = false;
    std::string data;
    int epochs = 0;
    app.add_flag("--train", train,
        "train the sample (sample:mlp, sample:lenet, sample:fashion) with each mini-batch step a debuggable run; "
        "clients set breakpoints and step through the steps")
        ->excludes("--params", "--input", "--mode");
    app.add_option("--data", data, "with --train: the data set (default: the sample's own)");
    app.add_option("--epochs", epochs, "with --train: epochs (default: the sample's)")->check(CLI::PositiveNumber);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int status = app.exit(e);
        return status == 0 ? 0 : kUsage;
    }

    // SIGINT / SIGTERM end the server: blocked here (every thread inherits the mask), taken by sigwait.
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);

    try {
        debug::Session session;
        debug::ServeOptions options;
        load::LoadedModel m;
        std::vector<Tensor> inputs;
        samples::Sample sample;
        samples::TrainSetup setup;
        if (train) {
            if (r.model.rfind("sample:", 0) != 0)
                return fail(kUsage, "--train: only built-in samples train (sample:mlp, sample:lenet, sample:fashion)");
            try {
                sample = samples::makeSample(r.model.substr(7), r.seed, false);
                setup = samples::trainingSetup(r.model.substr(7), r.seed, data);
            } catch (const std::exception& e) {
                return fail(kUsage, std::string("--train: ") + e.what());
            }
            if (epochs > 0) setup.epochs = epochs;
            options.clientsStart = false; // the training loop starts every run
            options.modelName = r.model + " (training on " + setup.data + ")";
        } else {
            if (const int status = prepareRun(r, m, inputs); status != kOk) return status;
            ExecFlags flags;
            flags.static_alloc = r.mode != "hybrid";
            flags.static_shape = r.mode == "static_shape";
            m.block->hybridize(true, flags);
            session.load(m.block, load::blockInputNames(m));
            session.setInputs(inputs);
            options.model = describeModel(m, inputs);
            // A comparison's run A: the model loaded again as it was here, on the same inputs.
            options.comparer = debug::comparerFor(r.model, r.params, r.seed, inputs);
            // An explanation's model: loaded again as it was here (the session's block stays the run's).
            options.explainer = debug::explainerFor(r.model, r.params, r.seed);
        }
        options.listen = listen;
        options.tlsCertFile = tlsCert;
        options.tlsKeyFile = tlsKey;
        options.onDetach = onDetach == "continue" ? debug::OnDetach::Continue : debug::OnDetach::Pause;
        if (tokenFile.empty() && !debug::isLoopback(listen)) tokenFile = "opscope-server.token";
        if (!tokenFile.empty()) {
            bool created = false;
            options.token = server::loadOrCreateToken(tokenFile, &created);
            if (created) std::cerr << "opscope-server: token " << options.token << " (written to " << tokenFile << ", mode 0600)\n";
        }
        std::unique_ptr<debug::Server> server = debug::serve(session, options);
        std::cout << "listening on " << server->address() << std::endl;
        std::cerr << "opscope-server: serving " << (train ? options.modelName : m.source) << "\n";

        std::atomic<bool> stop { false };
        std::thread trainer;
        if (train) {
            trainer = std::thread([&] {
                try {
                    server::trainServed(session, sample, setup, r.seed, [](const samples::EpochReport& e) {
                        char line[160];
                        std::snprintf(line, sizeof line, "opscope-server: epoch %d: loss %.4f  train accuracy %.4f  test accuracy %.4f",
                            e.epoch, e.loss, e.trainAccuracy, e.testAccuracy);
                        std::cerr << line << std::endl;
                    }, stop);
                    std::cerr << "opscope-server: training " << (stop ? "stopped" : "finished") << "; still serving\n";
                } catch (const std::exception& e) {
                    std::cerr << "opscope-server: training failed: " << e.what() << "\n";
                }
            });
        }
        std::thread waiter([&] {
            int sig = 0;
            sigwait(&signals, &sig);
            stop = true;
            if (trainer.joinable()) trainer.join();
            server->shutdown();
        });
        server->wait();
        // shutdown() came from the signal; a server that ended otherwise still needs the waiter gone.
        if (waiter.joinable()) {
            pthread_kill(waiter.native_handle(), SIGTERM);
            waiter.join();
        }
        std::cerr << "opscope-server: stopped\n";
        return kOk;
    } catch (const UsageError& e) {
        return fail(kUsage, e.what());
    } catch (const std::exception& e) {
        return fail(kRunFailed, e.what());
    }
}
