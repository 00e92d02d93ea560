#include "fuzz/fuzz_cases.h"

#include "cli/break_command.h"
#include "cli/commands.h"
#include "gluon/export.h"
#include "io/npy.h"
#include "models/registry.h"

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

std::vector<Case> makeSeeds(const fs::path& sharedModels)
{
    std::vector<Case> seeds;
    const fs::path dir = fs::temp_directory_path() / ("opscope_fuzz_seeds_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    for (const std::string& name : samples::sampleNames()) {
        samples::Sample s = samples::makeSample(name);
        s.block->hybridize();
        s.block->call(s.defaultInputs);
        const std::string prefix = (dir / name).string();
        gluon::export_(*s.block, prefix, 0);
        seeds.push_back({ name, readFile(prefix + "-symbol.json"), readFile(prefix + "-0000.params"),
            serializeNpy(s.defaultInputs.at(0).view()) });
    }
    fs::remove_all(dir);
    std::error_code ec;
    if (fs::exists(sharedModels / "mnist-symbol.json", ec)) {
        const std::string digit = serializeNpy(Tensor::uniform(Shape({ 1, 1, 28, 28 }), 0, 1).view());
        seeds.push_back({ "mnist", readFile(sharedModels / "mnist-symbol.json"), readFile(sharedModels / "mnist-0035.params"),
            digit });
        seeds.push_back({ "lenet-export", readFile(sharedModels / "lenet-symbol.json"),
            readFile(sharedModels / "lenet-0001.params"), digit });
        seeds.push_back({ "legacy-mlp", readFile(sharedModels / "legacy-mlp-symbol.json"),
            readFile(sharedModels / "legacy-mlp-0001.params"), serializeNpy(Tensor::ones(Shape({ 2, 784 })).view()) });
    }
    return seeds;
}

Case mutate(const Case& seed, Rng& rng, const std::vector<std::string>& operators)
{
    Case c = seed;
    const int which = std::uniform_int_distribution<int>(0, 99)(rng);
    if (which < 50 || (which >= 90 && which < 95)) c.symbol = mutateSymbolJson(c.symbol, rng, operators);
    if ((which >= 50 && which < 75) || which >= 95) c.params = mutateParams(c.params, rng);
    if (which >= 75 && which < 95) c.npy = mutateNpy(c.npy, rng);
    return c;
}

Outcome runCase(const Case& c, const fs::path& dir, Rng& rng)
{
    fs::create_directories(dir);
    const std::string symbol = (dir / "model-symbol.json").string();
    writeFile(symbol, c.symbol);
    // A model without parameters has no .params file (an empty one is a bad file).
    std::error_code ec;
    fs::remove(dir / "model-0000.params", ec);
    if (!c.params.empty()) writeFile(dir / "model-0000.params", c.params);
    writeFile(dir / "input.npy", c.npy);

    Outcome out;
    static const char* const kModes[] = { "eager", "hybrid", "static_alloc", "static_shape" };
    cli::RunOptions run;
    run.model = symbol;
    run.inputs = { "data=" + (dir / "input.npy").string() };
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

} // namespace opscope::fuzz
