// A program's own training loop made debuggable in one call: debug::serve(session, options).
//
// Trains the `mlp` sample on 2-D spirals with each mini-batch step run as a training step of a
// debug session, and serves that session over gRPC: attach with the window (File > Attach to
// Server) or `opscope-cli run --connect` and set breakpoints or watchpoints on any node of the
// step (forward, loss, `<node>_backward`); the loop pauses there until the debugger continues.
//
//   serve_training [ADDR:PORT] [STEPS] [--wait]
//
// Default: 127.0.0.1:0 (a free port, printed), 300 steps, no waiting for a client. With --wait it
// waits until a client attaches before the first step.

#include "debug/session.h"
#include "gluon/loss.h"
#include "models/datasets.h"
#include "models/registry.h"
#include "remote/server.h"

#include <cstring>
#include <iostream>
#include <thread>

using namespace opscope;

int main(int argc, char** argv)
{
    std::string listen = "127.0.0.1:0";
    int steps = 300;
    bool wait = false;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--wait") == 0)
            wait = true;
        else if (std::strchr(argv[i], ':'))
            listen = argv[i];
        else
            steps = std::atoi(argv[i]);
    }
    try {
        // The model, its loss and optimizer, as any training program has them.
        samples::Sample mlp = samples::makeSample("mlp", 0, false);
        mlp.block->hybridize();
        auto loss = std::make_shared<gluon::SoftmaxCrossEntropyLoss>();
        auto trainer = std::make_shared<gluon::Trainer>(
            mlp.block->collect_params(), "adam", std::map<std::string, double> { { "learning_rate", 0.01 } });
        const samples::Dataset data = samples::spirals(3000, 3, 0.15, 1);

        // The session runs each step; serving it is one call.
        debug::Session session;
        session.load(mlp.block, mlp.inputNames);
        session.setTraining(loss, trainer);
        debug::ServeOptions options;
        options.listen = listen;
        options.clientsStart = false; // this loop starts the runs
        options.modelName = "serve_training: sample mlp on spirals";
        std::unique_ptr<debug::Server> server = debug::serve(session, options);
        std::cout << "listening on " << server->address() << std::endl;
        while (wait && server->clientCount() == 0)
            std::this_thread::sleep_for(std::chrono::milliseconds(50));

        const int64_t batch = 30, n = data.data.shape()[0];
        double lossSum = 0;
        for (int step = 0; step < steps; ++step) {
            const int64_t begin = (step * batch) % n;
            session.setInputs({ data.data.slice(begin, begin + batch) });
            session.setLabel(data.label.slice(begin, begin + batch));
            session.startTrainStep();
            session.waitUntilIdle(std::chrono::hours(24 * 365)); // paused steps wait for the debugger
            const auto result = session.lastTrainStep();
            if (result && !result->error.empty()) throw std::runtime_error(result->error);
            lossSum += result && result->completed ? result->lossSum / batch : 0;
            if ((step + 1) % 100 == 0) {
                std::cout << "step " << step + 1 << ": mean loss " << lossSum / 100 << std::endl;
                lossSum = 0;
            }
        }
        std::cout << "trained " << steps << " steps" << std::endl;
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "serve_training: " << e.what() << "\n";
        return 1;
    }
}
