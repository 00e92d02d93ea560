// onnx_conformance [DIR...] [--json FILE] [--min-pass N] [--known-failures FILE]
//
// Runs ONNX's backend conformance tests (each a folder with model.onnx and test_data_set_*/
// {input,output}_*.pb) through the engine: loads the model, runs every data set and compares every
// output with ONNX's tolerances (rtol 1e-3, atol 1e-7; element types and shapes must match). Prints
// one line per test: `pass`, `FAIL` with the worst element, or `unsupported` with the reason the
// importer refused the model at load time; then `N passed, M failed, K skipped`.
// A DIR is a test folder or a folder of them; the default is Debian's libonnx-testdata folders.
// Exit status: 1 when a test fails that --known-failures does not list, or fewer than --min-pass
// pass; 2 for a usage error.

#include "core/error.h"
#include "exec/executor.h"
#include "io/onnx_model.h"
#include "io/onnx_tensor.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

using namespace opscope;
namespace fs = std::filesystem;

namespace {

const char* kDefaultRoot = "/usr/share/libonnx-testdata/data";

struct Outcome {
    std::string name;
    std::string status; // pass, FAIL, unsupported
    std::string detail;
    std::vector<std::string> ops; // the model's op types
};

std::vector<fs::path> sortedPb(const fs::path& dir, const std::string& prefix)
{
    std::vector<std::pair<int, fs::path>> found;
    for (const auto& e : fs::directory_iterator(dir)) {
        const std::string n = e.path().filename().string();
        if (n.rfind(prefix, 0) == 0 && e.path().extension() == ".pb")
            found.emplace_back(std::atoi(n.c_str() + prefix.size()), e.path());
    }
    std::sort(found.begin(), found.end());
    std::vector<fs::path> out;
    for (auto& [i, p] : found)
        out.push_back(p);
    return out;
}

std::string indexText(const Shape& s, int64_t flat)
{
    std::string out = "[";
    std::vector<int64_t> idx(static_cast<size_t>(s.ndim()));
    for (int d = s.ndim() - 1; d >= 0; --d) {
        idx[static_cast<size_t>(d)] = s[d] ? flat % s[d] : 0;
        flat = s[d] ? flat / s[d] : 0;
    }
    for (size_t d = 0; d < idx.size(); ++d)
        out += (d ? ", " : "") + std::to_string(idx[d]);
    return out + "]";
}

// Empty when `got` matches `want`; else what differs (the worst element).
std::string compare(const Tensor& got, const Tensor& want, double rtol, double atol)
{
    if (got.dtype() != want.dtype())
        return std::string("type ") + dtypeName(got.dtype()) + ", expected " + dtypeName(want.dtype());
    if (got.shape() != want.shape()) return "shape " + got.shape().str() + ", expected " + want.shape().str();
    const TensorView g = got.view(), w = want.view();
    double worst = 0;
    int64_t at = -1;
    for (int64_t i = 0; i < got.size(); ++i) {
        const double a = g.valueAt(i), b = w.valueAt(i);
        if (std::isnan(b) && std::isnan(a)) continue;
        if (a == b) continue;
        const double excess = std::fabs(a - b) - (atol + rtol * std::fabs(b));
        if (std::isnan(excess) || excess > 0) {
            const double score = std::isnan(excess) ? INFINITY : excess;
            if (at < 0 || score > worst) {
                worst = score;
                at = i;
            }
        }
    }
    if (at < 0) return {};
    std::ostringstream os;
    os.precision(9);
    os << "element " << indexText(got.shape(), at) << " is " << g.valueAt(at) << ", expected " << w.valueAt(at);
    return os.str();
}

Outcome runTest(const fs::path& dir)
{
    Outcome o;
    o.name = dir.filename().string();
    o.ops = onnxOpTypes((dir / "model.onnx").string());
    OnnxDocument doc;
    try {
        doc = OnnxDocument::read((dir / "model.onnx").string());
    } catch (const Error& e) {
        o.status = "unsupported";
        o.detail = e.what();
        return o;
    }
    std::vector<fs::path> sets;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
    std::sort(sets.begin(), sets.end());
    if (sets.empty()) {
        o.status = "unsupported";
        o.detail = "no test_data_set_* folder";
        return o;
    }
    for (const fs::path& set : sets) {
        const std::string setName = set.filename().string();
        try {
            // Inputs: by name where the tensor carries one the model has, else in order.
            std::vector<Tensor> inputs(doc.inputs().size());
            const auto files = sortedPb(set, "input_");
            size_t next = 0;
            std::vector<Tensor> unnamed;
            for (const fs::path& f : files) {
                std::string name;
                Tensor t = readTensorPb(f.string(), &name);
                const auto& ins = doc.inputs();
                auto it = std::find_if(ins.begin(), ins.end(), [&](const OnnxInputInfo& i) { return i.name == name; });
                if (!name.empty() && it != ins.end())
                    inputs[static_cast<size_t>(it - ins.begin())] = std::move(t);
                else
                    unnamed.push_back(std::move(t));
            }
            for (Tensor& t : unnamed) {
                while (next < inputs.size() && inputs[next].defined())
                    ++next;
                if (next == inputs.size()) break; // an initializer's value: the model's own is used
                inputs[next++] = std::move(t);
            }
            std::vector<Shape> shapes;
            std::vector<DType> types;
            for (size_t i = 0; i < inputs.size(); ++i) {
                if (!inputs[i].defined()) throw UsageError("no data for input '" + doc.inputs()[i].name + "'");
                shapes.push_back(inputs[i].shape());
                types.push_back(inputs[i].dtype());
            }
            OnnxGraph built;
            try {
                // Inputs' values are known before the run here: an operator that needs one at
                // shape inference (Reshape's shape given as a graph input) reads it.
                std::map<std::string, Tensor> values;
                for (size_t i = 0; i < inputs.size(); ++i)
                    values[doc.inputs()[i].name] = inputs[i];
                built = doc.build(shapes, types, values);
            } catch (const AttributeError& e) { // refused as unsupported, with its reason
                o.status = "unsupported";
                o.detail = e.what();
                return o;
            } catch (const TypeError& e) {
                o.status = "unsupported";
                o.detail = e.what();
                return o;
            }
            std::vector<Tensor> vars;
            for (uint32_t v : built.graph.variables()) {
                const std::string& n = built.graph.node(v).name;
                auto it = std::find(built.inputNames.begin(), built.inputNames.end(), n);
                if (it != built.inputNames.end())
                    vars.push_back(inputs[static_cast<size_t>(it - built.inputNames.begin())]);
                else
                    vars.push_back(built.constants.at(n));
            }
            Executor ex(std::make_shared<Graph>(std::move(built.graph)));
            RunResult r = ex.run(vars);
            const auto expected = sortedPb(set, "output_");
            if (expected.size() != r.outputs.size())
                throw UsageError(std::to_string(r.outputs.size()) + " outputs, the data has " + std::to_string(expected.size()));
            for (size_t k = 0; k < expected.size(); ++k) {
                const Tensor want = readTensorPb(expected[k].string());
                const std::string diff = compare(r.outputs[k], want, 1e-3, 1e-7);
                if (!diff.empty()) {
                    o.status = "FAIL";
                    o.detail = setName + ": output " + std::to_string(k) + " '" + built.outputNames[k] + "': " + diff;
                    return o;
                }
            }
        } catch (const std::exception& e) {
            o.status = "FAIL";
            o.detail = setName + ": " + e.what();
            return o;
        }
    }
    o.status = "pass";
    return o;
}

std::vector<fs::path> expand(const std::vector<std::string>& dirs)
{
    std::vector<fs::path> tests;
    for (const std::string& d : dirs) {
        const fs::path p(d);
        if (fs::exists(p / "model.onnx")) {
            tests.push_back(p);
            continue;
        }
        std::vector<fs::path> found;
        std::error_code ec;
        for (const auto& e : fs::directory_iterator(p, ec))
            if (fs::exists(e.path() / "model.onnx")) found.push_back(e.path());
        if (ec) throw UsageError(d + ": no such folder");
        std::sort(found.begin(), found.end());
        tests.insert(tests.end(), found.begin(), found.end());
    }
    return tests;
}

} // namespace

int main(int argc, char** argv)
{
    std::vector<std::string> dirs;
    std::string jsonFile, knownFile;
    long minPass = 0;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::cerr << "onnx_conformance: " << a << " needs a value\n";
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--json") jsonFile = value();
        else if (a == "--min-pass") minPass = std::atol(value().c_str());
        else if (a == "--known-failures") knownFile = value();
        else if (a == "-h" || a == "--help") {
            std::cout << "usage: onnx_conformance [DIR...] [--json FILE] [--min-pass N] [--known-failures FILE]\n";
            return 0;
        } else if (!a.empty() && a[0] == '-') {
            std::cerr << "onnx_conformance: unknown option " << a << "\n";
            return 2;
        } else
            dirs.push_back(a);
    }
    if (dirs.empty())
        for (const char* sub : { "node", "pytorch-converted", "pytorch-operator", "simple" })
            dirs.push_back(std::string(kDefaultRoot) + "/" + sub);
    std::set<std::string> known;
    if (!knownFile.empty()) {
        std::ifstream in(knownFile);
        if (!in) {
            std::cerr << "onnx_conformance: cannot read " << knownFile << "\n";
            return 2;
        }
        for (std::string line; std::getline(in, line);)
            if (!line.empty() && line[0] != '#') known.insert(line.substr(0, line.find_first_of(" \t")));
    }
    std::vector<fs::path> tests;
    try {
        tests = expand(dirs);
    } catch (const Error& e) {
        std::cerr << "onnx_conformance: " << e.what() << "\n";
        return 2;
    }
    int passed = 0, failed = 0, skipped = 0, unexpected = 0;
    nlohmann::json results = nlohmann::json::array();
    for (const fs::path& t : tests) {
        Outcome o = runTest(t);
        const std::string suite = t.parent_path().filename().string();
        if (o.status == "pass") ++passed;
        else if (o.status == "FAIL") {
            ++failed;
            if (!known.count(o.name)) ++unexpected;
        } else
            ++skipped;
        std::cout << o.status << "  " << suite << "/" << o.name << (o.detail.empty() ? "" : ": " + o.detail) << "\n";
        results.push_back({ { "test", o.name }, { "suite", suite }, { "status", o.status }, { "detail", o.detail },
            { "ops", o.ops } });
    }
    std::cout << passed << " passed, " << failed << " failed, " << skipped << " skipped\n";
    if (!jsonFile.empty()) {
        std::ofstream out(jsonFile);
        out << nlohmann::json { { "passed", passed }, { "failed", failed }, { "skipped", skipped }, { "tests", results } }.dump(1)
            << "\n";
    }
    if (unexpected > 0) {
        std::cerr << unexpected << " test(s) failed that are not known failures\n";
        return 1;
    }
    if (passed < minPass) {
        std::cerr << "only " << passed << " passed, fewer than the floor of " << minPass << "\n";
        return 1;
    }
    return 0;
}
