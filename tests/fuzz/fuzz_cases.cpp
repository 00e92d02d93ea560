#include "fuzz/fuzz_cases.h"

#include "cli/break_command.h"
#include "cli/commands.h"
#include "gluon/export.h"
#include "io/npy.h"
#include "io/onnx_model.h"
#include "fuzz/onnx_mutators.h"
#include "models/registry.h"

#include <algorithm>
#include <fstream>
#include <unistd.h>
#include <iostream>
#include <sstream>

namespace opscope::fuzz {

namespace fs = std::filesystem;

namespace {

    std::string readFile(const fs::path& path)
    {
        std::ifstream in(path, std::ios::binary);
        std::stringstream ss;
        ss << in.rdbuf();
        return ss.str();
    }

    void writeFile(const fs::path& path, const std::string& bytes)
    {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }

    // std::cout and std::cerr to nowhere while a command runs (the fuzzer prints its own summary).
    class Silence {
    public:
        explicit Silence(std::string* err)
            : m_keep(err)
            , m_out(std::cout.rdbuf(m_null.rdbuf()))
            , m_err(std::cerr.rdbuf(m_errText.rdbuf()))
        {
        }
        ~Silence()
        {
            std::cout.rdbuf(m_out);
            std::cerr.rdbuf(m_err);
            if (m_keep) *m_keep = m_errText.str();
        }

    private:
        std::string* m_keep;
        std::ostringstream m_null, m_errText;
        std::streambuf* m_out;
        std::streambuf* m_err;
    };

    bool documented(int status)
    {
        return status >= 0 && status <= 4;
    }

} // namespace

namespace {
    Case mxnetCase(std::string name, std::string symbol, std::string params, std::string npy)
    {
        Case c;
        c.name = std::move(name);
        c.symbol = std::move(symbol);
        c.params = std::move(params);
        c.npy = std::move(npy);
        return c;
    }

    // Every .onnx under `dir` that loads, with inputs of its declared shapes (symbolic dimensions 2)
    // and types.
    void addOnnxSeeds(std::vector<Case>& seeds, const fs::path& dir)
    {
        std::error_code ec;
        std::vector<fs::path> files;
        for (const auto& e : fs::recursive_directory_iterator(dir, ec))
            if (e.path().extension() == ".onnx") files.push_back(e.path());
        std::sort(files.begin(), files.end());
        for (const fs::path& f : files) {
            Case c;
            c.name = f.filename().string();
            try {
                const OnnxDocument doc = OnnxDocument::read(f.string());
                if (doc.inputs().empty()) continue;
                for (size_t i = 0; i < doc.inputs().size(); ++i) {
                    const OnnxInputInfo& in = doc.inputs()[i];
                    Shape s = in.dims.empty() ? Shape::scalar() : Shape();
                    for (int64_t d : in.dims)
                        s.push_back(d < 0 ? 2 : d);
                    if (i == 0) {
                        c.onnxInput = in.name;
                        c.npy = serializeNpy(Tensor::uniform(s, 0, 1).astype(in.dtype).view());
                    } else {
                        c.otherInputs.push_back(in.name + "=" + shapeToX(s) + ":uniform");
                    }
                }
            } catch (const std::exception&) {
                continue; // a fixture that is bad on purpose, or an operator not yet supported
            }
            c.onnx = readFile(f);
            seeds.push_back(std::move(c));
        }
    }
}

std::vector<Case> makeSeeds(const fs::path& sharedModels, const std::vector<fs::path>& onnxDirs)
{
    std::vector<Case> seeds;
    for (const fs::path& d : onnxDirs)
        addOnnxSeeds(seeds, d);
    const fs::path dir = fs::temp_directory_path() / ("opscope_fuzz_seeds_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    for (const std::string& name : samples::sampleNames()) {
        if (name.rfind("onnx-", 0) == 0) continue; // ONNX files: among the ONNX seeds
        samples::Sample s = samples::makeSample(name);
        s.block->hybridize();
        s.block->call(s.defaultInputs);
        const std::string prefix = (dir / name).string();
        gluon::export_(*s.block, prefix, 0);
        seeds.push_back(mxnetCase(name, readFile(prefix + "-symbol.json"), readFile(prefix + "-0000.params"),
            serializeNpy(s.defaultInputs.at(0).view())));
    }
    fs::remove_all(dir);
    std::error_code ec;
    if (fs::exists(sharedModels / "mnist-symbol.json", ec)) {
        const std::string digit = serializeNpy(Tensor::uniform(Shape({ 1, 1, 28, 28 }), 0, 1).view());
        seeds.push_back(mxnetCase("mnist", readFile(sharedModels / "mnist-symbol.json"),
            readFile(sharedModels / "mnist-0035.params"), digit));
        seeds.push_back(mxnetCase("lenet-export", readFile(sharedModels / "lenet-symbol.json"),
            readFile(sharedModels / "lenet-0001.params"), digit));
        seeds.push_back(mxnetCase("legacy-mlp", readFile(sharedModels / "legacy-mlp-symbol.json"),
            readFile(sharedModels / "legacy-mlp-0001.params"), serializeNpy(Tensor::ones(Shape({ 2, 784 })).view())));
    }
    return seeds;
}

Case mutate(const Case& seed, Rng& rng, const std::vector<std::string>& operators)
{
    Case c = seed;
    const int which = std::uniform_int_distribution<int>(0, 99)(rng);
    if (!c.onnx.empty()) {
        static std::vector<std::string> onnxOps;
        if (onnxOps.empty())
            for (const std::string& n : operators)
                if (n.rfind("onnx::", 0) == 0) onnxOps.push_back(n.substr(6));
        if (which < 75)
            c.onnx = mutateOnnx(c.onnx, rng, onnxOps);
        else
            c.npy = mutateNpy(c.npy, rng);
        return c;
    }
    if (which < 50 || (which >= 90 && which < 95)) c.symbol = mutateSymbolJson(c.symbol, rng, operators);
    if ((which >= 50 && which < 75) || which >= 95) c.params = mutateParams(c.params, rng);
    if (which >= 75 && which < 95) c.npy = mutateNpy(c.npy, rng);
    return c;
}

Outcome runCase(const Case& c, const fs::path& dir, Rng& rng)
{
    fs::create_directories(dir);
    std::error_code ec;
    for (const char* f : { "model-symbol.json", "model-0000.params", "model.onnx", "inputs.txt" })
        fs::remove(dir / f, ec);
    const bool onnx = !c.onnx.empty();
    const std::string symbol = (dir / (onnx ? "model.onnx" : "model-symbol.json")).string();
    writeFile(symbol, onnx ? c.onnx : c.symbol);
    // A model without parameters has no .params file (an empty one is a bad file).
    if (!onnx && !c.params.empty()) writeFile(dir / "model-0000.params", c.params);
    writeFile(dir / "input.npy", c.npy);
    if (onnx) {
        std::string lines = c.onnxInput + "\n";
        for (const std::string& s : c.otherInputs)
            lines += s + "\n";
        writeFile(dir / "inputs.txt", lines);
    }

    Outcome out;
    static const char* const kModes[] = { "eager", "hybrid", "static_alloc", "static_shape" };
    cli::RunOptions run;
    run.model = symbol;
    run.inputs = { (onnx ? c.onnxInput : std::string("data")) + "=" + (dir / "input.npy").string() };
    run.inputs.insert(run.inputs.end(), c.otherInputs.begin(), c.otherInputs.end());
    run.mode = kModes[std::uniform_int_distribution<int>(0, 3)(rng)];
    run.monitorAll = true;
    run.hooks = (dir / "hooks.jsonl").string();
    if (std::uniform_int_distribution<int>(0, 9)(rng) < 3) run.dump = (dir / "dump").string();
    auto guarded = [&](const char* what, auto&& command) {
        int status = -1;
        try {
            std::string err;
            {
                Silence quiet(&err);
                status = command();
            }
            out.messages.push_back(err);
        } catch (const std::exception& e) {
            out.problem += std::string(what) + ": an exception escaped: " + e.what() + "\n";
        } catch (...) {
            out.problem += std::string(what) + ": a non-standard exception escaped\n";
        }
        if (status != -1 && !documented(status))
            out.problem += std::string(what) + ": undocumented exit status " + std::to_string(status) + "\n";
        out.statuses.push_back(status);
    };
    guarded("run", [&] { return cli::runCommand(run); });
    cli::RunOptions watched = run;
    watched.hooks.clear();
    watched.breakOn = { "naninf" };
    guarded("run --break-on naninf", [&] { return cli::runWithBreakpoints(watched); });
    guarded("info", [&] { return cli::infoCommand(symbol, {}, run.inputs); });
    return out;
}

Case readCase(const fs::path& dir)
{
    Case c;
    c.name = dir.filename().string();
    c.npy = readFile(dir / "input.npy");
    if (fs::exists(dir / "model.onnx")) {
        c.onnx = readFile(dir / "model.onnx");
        std::istringstream lines(readFile(dir / "inputs.txt"));
        std::getline(lines, c.onnxInput);
        for (std::string l; std::getline(lines, l);)
            if (!l.empty()) c.otherInputs.push_back(l);
        return c;
    }
    c.symbol = readFile(dir / "model-symbol.json");
    c.params = readFile(dir / "model-0000.params");
    return c;
}

} // namespace opscope::fuzz
