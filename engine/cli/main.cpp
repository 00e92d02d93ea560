// opscope-cli: runs and inspects models without a window, for scripts and CI.

#include "cli/bench_command.h"
#include "cli/break_command.h"
#include "cli/commands.h"
#include "cli/diff_command.h"
#include "cli/explain_command.h"
#include "cli/remote_commands.h"
#include "cli/train_command.h"

#include <CLI/CLI.hpp>
#include <iostream>

using namespace opscope::cli;

int main(int argc, char** argv)
{
    CLI::App app { "opscope-cli: run and inspect neural-network models (MXNet files or built-in samples)" };
    app.require_subcommand(1);

    app.add_subcommand("list", "list the built-in samples");

    std::string infoModel, infoParams;
    std::vector<std::string> infoInputs;
    auto* info = app.add_subcommand("info", "inputs, outputs, operators, parameters and inferred shapes of a model");
    info->add_option("MODEL", infoModel, "a -symbol.json file or sample:NAME");
    info->add_option("--params", infoParams, "parameter file (default: beside the symbol file, highest epoch)");
    info->add_option("--input", infoInputs, "NAME=SHAPE for shape inference, e.g. data=1x1x28x28");

    ConnectArgs infoConnect;
    auto addConnect = [](CLI::App* cmd, ConnectArgs& c) {
        cmd->add_option("--connect", c.address, "HOST:PORT of an opscope-server: ask it, not a local MODEL");
        cmd->add_option("--token-file", c.tokenFile, "with --connect: the file holding the server's token");
        cmd->add_option("--tls-ca", c.tlsCa, "with --connect: TLS, trusting this PEM certificate");
    };
    addConnect(info, infoConnect);

    RunOptions r;
    auto* run = app.add_subcommand("run", "run a model on inputs and report what its operators compute");
    run->add_option("MODEL", r.model, "a -symbol.json file or sample:NAME");
    ConnectArgs runConnect;
    addConnect(run, runConnect);
    run->add_option("--params", r.params, "parameter file (default: beside the symbol file, highest epoch)");
    run->add_option("--input", r.inputs, "NAME=FILE.npy or NAME=SHAPE[:ones|zeros|uniform|normal]");
    run->add_option("--seed", r.seed, "seed of generated inputs and of sample parameters");
    run->add_option("--mode", r.mode, "eager, hybrid, static_alloc or static_shape")
        ->check(CLI::IsMember({ "eager", "hybrid", "static_alloc", "static_shape" }));
    run->add_flag("--monitor-all", r.monitorAll, "report operator inputs too (MXNet's monitor_all)");
    run->add_flag("--no-fuse", r.noFuse,
        "static_alloc/static_shape: run every op's own kernel (by default a relu nobody watches is fused into its "
        "convolution)");
    run->add_option("--hooks", r.hooks, "write one JSON object per op-hook call to FILE, or - for stdout");
    run->add_option("--dump", r.dump, "write each hooked tensor to DIR/<name>.npy");
    run->add_option("--output", r.output, "write the first output to FILE.npy");
    run->add_option("--outputs", r.outputs, "write every output to DIR/output<i>.npy");
    run->add_option("--break", r.breaks, "stop at NODE[:before|:after], print it, write its tensors to --dump DIR");
    run->add_option("--break-on", r.breakOn,
        "stop at the first op whose output matches: nan, inf, naninf, zero, \"max>T\", \"min<T\", \"absmax>T\", "
        "\"mean>T\", \"mean<T\", \"std>T\", \"std<T\", \"zeros>P\", \"norm>T\", \"diff>T\" (against --reference)");
    run->add_option("--reference", r.reference,
        "for diff>T: the run to compare each tensor with (an .npz, or a folder run --monitor-all --dump wrote)");

    TrainOptions t;
    auto* train = app.add_subcommand("train", "train a built-in sample on a data set (mlp: spirals, lenet: real MNIST digits, fashion: Fashion-MNIST)");
    train->add_option("MODEL", t.model, "sample:mlp, sample:lenet or sample:fashion")->required();
    train->add_option("--data", t.data,
        "the data set: mnist, fashion, digits (synthetic), spirals or moons (default: the sample's own)");
    train->add_option("--augment", t.augment,
        "add K randomly rotated, scaled, sheared and shifted copies of each training image (default: the sample's)")
        ->check(CLI::Range(0, 20));
    train->add_option("--epochs", t.epochs, "epochs (default: the sample's)")->check(CLI::PositiveNumber);
    train->add_option("--batch", t.batch, "mini-batch size (default: the sample's)")->check(CLI::PositiveNumber);
    train->add_option("--lr", t.lr, "learning rate (default: the sample's)")->check(CLI::PositiveNumber);
    train->add_option("--seed", t.seed, "seed of the data, the initial parameters and the shuffling");
    train->add_option("--save", t.save, "write PREFIX-symbol.json and PREFIX-0000.params after training");
    train->add_option("--break", t.breaks,
        "stop at NODE[:before|:after] of a training step (forward, loss or NODE_backward), print it, write its "
        "tensors to --dump DIR");
    train->add_option("--break-on", t.breakOn,
        "stop at the first op whose output matches COND (the conditions of run --break-on); \"grad naninf\", "
        "\"grad norm>T\" test gradients only");
    train->add_option("--dump", t.dump, "with --break/--break-on: write the paused node's tensors to DIR/<name>.npy");

    DiffOptions d;
    auto* diff = app.add_subcommand("diff",
        "run a model twice (or against a --dump folder) and compare every tensor: where the two runs part ways");
    diff->add_option("MODEL_A", d.modelA, "run A's model: a .onnx, a -symbol.json or sample:NAME")->required();
    diff->add_option("MODEL_B", d.modelB, "run B's model (default: MODEL_A)");
    diff->add_option("--params-a", d.paramsA, "run A's parameter file");
    diff->add_option("--params-b", d.paramsB, "run B's parameter file (a checkpoint)");
    diff->add_option("--input-a", d.inputsA, "run A's NAME=FILE.npy or NAME=SHAPE[:fill]");
    diff->add_option("--input-b", d.inputsB, "run B's inputs (default: A's)");
    diff->add_option("--kernels-a", d.kernelsA, "auto, reference or onednn")
        ->check(CLI::IsMember({ "auto", "reference", "onednn" }));
    diff->add_option("--kernels-b", d.kernelsB, "auto, reference or onednn")
        ->check(CLI::IsMember({ "auto", "reference", "onednn" }));
    diff->add_option("--mode-a", d.modeA, "how run A executes: eager, hybrid (default), static_alloc, static_shape")
        ->check(CLI::IsMember({ "eager", "hybrid", "static_alloc", "static_shape" }));
    diff->add_option("--mode-b", d.modeB, "how run B executes: eager, hybrid (default), static_alloc, static_shape")
        ->check(CLI::IsMember({ "eager", "hybrid", "static_alloc", "static_shape" }));
    diff->add_option("--half-a", d.halfA, "run A computes NODE, every node of OP, or all in float16 (emulated)");
    diff->add_option("--half-b", d.halfB, "run B computes NODE, every node of OP, or all in float16 (emulated)");
    diff->add_option("--bf16-a", d.bf16A, "run A computes NODE, OP or all in bfloat16 (emulated)");
    diff->add_option("--bf16-b", d.bf16B, "run B computes NODE, OP or all in bfloat16 (emulated)");
    diff->add_option("--dump-b", d.dumpB, "run B is the tensors `run --monitor-all --dump DIR` wrote");
    diff->add_option("--npz-b", d.npzB, "run B is the arrays of an .npz archive (numpy.savez), by name");
    diff->add_option("--map", d.map, "a JSON object from run B's tensor names to run A's (tensor, node or parameter)");
    diff->add_option("--overlay", d.overlay, "write each node's divergence as Google Model Explorer node data");
    diff->add_option("--metric", d.metric, "what --overlay colours by: rel_l2 (default), max_abs, max_rel, cosine, sqnr_db, beyond")
        ->check(CLI::IsMember({ "rel_l2", "max_abs", "max_rel", "cosine", "sqnr_db", "beyond" }));
    diff->add_option("--seed", d.seed, "seed of generated inputs and of sample parameters");
    diff->add_option("--rtol", d.rtol, "relative tolerance (default 1e-3)")->check(CLI::NonNegativeNumber);
    diff->add_option("--atol", d.atol, "absolute tolerance (default 1e-5)")->check(CLI::NonNegativeNumber);
    diff->add_option("--json", d.json, "write every tensor's metrics and the first divergent node to FILE");

    ExplainOptions x;
    auto* explain = app.add_subcommand("explain", "why a classifier gave its answer: saliency, gradient×input, Grad-CAM or occlusion");
    explain->add_option("MODEL", x.model, "a .onnx, a -symbol.json or sample:NAME")->required();
    explain->add_option("--params", x.params, "parameter file (default: beside the symbol file, highest epoch)");
    explain->add_option("--input", x.inputs, "NAME=FILE.npy or NAME=SHAPE[:fill] (default: a sample's own input)");
    explain->add_option("--seed", x.seed, "seed of generated inputs and of sample parameters");
    explain->add_option("--method", x.method, "saliency (default), gradient-x-input, gradcam or occlusion")
        ->check(CLI::IsMember({ "saliency", "gradient-x-input", "gradxinput", "gradcam", "occlusion" }));
    explain->add_option("--class", x.classIndex, "the class to explain (default: the top one)")->check(CLI::NonNegativeNumber);
    explain->add_option("--layer", x.layer, "gradcam: the node whose feature maps to use (default: the last convolution)");
    explain->add_option("--patch", x.patch, "occlusion: patch side in pixels (default: a seventh of the height)")
        ->check(CLI::PositiveNumber);
    explain->add_option("--stride", x.stride, "occlusion: step between patches (default: half the patch)")
        ->check(CLI::PositiveNumber);
    explain->add_option("--top", x.top, "how many top classes to list (default 5)")->check(CLI::PositiveNumber);
    explain->add_option("--output", x.output, "write the heat map as .npy (float32, (H, W) for an image)");
    explain->add_option("--png", x.png, "write the heat map over the input as a PNG");
    explain->add_option("--json", x.json, "write the class, its score, the top classes and the peak as JSON");

    BenchOptions b;
    auto* bench = app.add_subcommand("bench", "time whole passes of a model and each of its ops, slowest first");
    bench->add_option("MODEL", b.model, "a .onnx, a -symbol.json or sample:NAME")->required();
    bench->add_option("--params", b.params, "parameter file (default: beside the symbol file, highest epoch)");
    bench->add_option("--input", b.inputs, "NAME=FILE.npy or NAME=SHAPE[:ones|zeros|uniform|normal]");
    bench->add_option("--seed", b.seed, "seed of generated inputs and of sample parameters");
    bench->add_option("--mode", b.mode, "hybrid, static_alloc or static_shape (default)")
        ->check(CLI::IsMember({ "hybrid", "static_alloc", "static_shape" }));
    bench->add_option("--kernels", b.kernels, "auto (default), reference or onednn")
        ->check(CLI::IsMember({ "auto", "reference", "onednn" }));
    bench->add_option("--threads", b.threads, "threads of the kernels (default: OMP_NUM_THREADS, else every core)")
        ->check(CLI::PositiveNumber);
    bench->add_option("--repeat", b.repeat, "timed passes (default 20)")->check(CLI::PositiveNumber);
    bench->add_option("--warmup", b.warmup, "passes run before timing (default 3)")->check(CLI::NonNegativeNumber);
    bench->add_flag("--hook", b.hook, "watch every op with a no-op op hook (what watching costs)");
    bench->add_flag("--no-fuse", b.noFuse, "run every op's own kernel (no relu fused into its convolution)");
    bench->add_option("--trace", b.trace, "write a Chrome trace-event file (Perfetto, chrome://tracing)");
    bench->add_option("--json", b.json, "write the figures to FILE as JSON");

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e);
        return kUsage;
    }
    // Each command turns its own failures into its exit status; this is the last line of defence,
    // so that nothing a file or an argument does ends the program without a message.
    try {
        if (app.got_subcommand("list")) return listCommand();
        if (app.got_subcommand("train")) return trainCommand(t);
        if (app.got_subcommand("bench")) return benchCommand(b);
        if (app.got_subcommand("explain")) return explainCommand(x);
        if (app.got_subcommand("info")) {
            if (!infoConnect.address.empty()) {
                if (!infoModel.empty() || !infoParams.empty() || !infoInputs.empty())
                    return fail(kUsage, "info: give MODEL or --connect, not both (the server describes its own model)");
                return infoRemote(infoConnect);
            }
            if (infoModel.empty()) return fail(kUsage, "info: MODEL is required (or --connect HOST:PORT)");
            return infoCommand(infoModel, infoParams, infoInputs);
        }
        if (app.got_subcommand("diff")) {
            if (!d.modelB.empty() + !d.dumpB.empty() + !d.npzB.empty() > 1)
                return fail(kUsage, "diff: give one of MODEL_B, --dump-b and --npz-b");
            if ((!d.dumpB.empty() || !d.npzB.empty()) && (!d.halfB.empty() || !d.bf16B.empty()))
                return fail(kUsage, "diff: --half-b and --bf16-b change how run B computes; a saved run B is not run");
            return diffCommand(d);
        }
        if (!runConnect.address.empty()) return runRemote(r, runConnect);
        if (r.model.empty()) return fail(kUsage, "run: MODEL is required (or --connect HOST:PORT)");
        if (!r.breaks.empty() || !r.breakOn.empty()) return runWithBreakpoints(r);
        return runCommand(r);
    } catch (const std::bad_alloc&) {
        return fail(kRunFailed, "out of memory");
    } catch (const std::exception& e) {
        return fail(kRunFailed, e.what());
    }
}
