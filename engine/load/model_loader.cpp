#include "load/model_loader.h"

#include "core/error.h"
#include "gluon/symbol_block.h"
#include "io/params_file.h"
#include "io/symbol_json.h"
#include "load/input_spec.h"
#include "models/registry.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

namespace opscope::load {

namespace fs = std::filesystem;

std::string findParamsBeside(const std::string& symbolFile)
{
    const std::string suffix = "-symbol.json";
    if (symbolFile.size() <= suffix.size()
        || symbolFile.compare(symbolFile.size() - suffix.size(), suffix.size(), suffix) != 0)
        return {};
    const fs::path prefix(symbolFile.substr(0, symbolFile.size() - suffix.size()));
    const fs::path dir = prefix.has_parent_path() ? prefix.parent_path() : fs::path(".");
    const std::string stem = prefix.filename().string() + "-";
    std::string best;
    long bestEpoch = -1;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        const std::string name = entry.path().filename().string();
        if (name.size() <= stem.size() + 7 || name.compare(0, stem.size(), stem) != 0
            || name.compare(name.size() - 7, 7, ".params") != 0)
            continue;
        const std::string epoch = name.substr(stem.size(), name.size() - stem.size() - 7);
        if (epoch.empty() || epoch.find_first_not_of("0123456789") != std::string::npos) continue;
        const long e = std::stol(epoch);
        if (e > bestEpoch) {
            bestEpoch = e;
            best = entry.path().string();
        }
    }
    return best;
}

LoadedModel loadModel(const std::string& spec, const std::string& paramsFile, uint64_t seed)
{
    LoadedModel m;
    m.source = spec;
    if (spec.rfind("sample:", 0) == 0) {
        try {
            samples::Sample s = samples::makeSample(spec.substr(7), seed);
            m.block = s.block;
            m.inputNames = s.inputNames;
            m.defaultInputs = s.defaultInputs;
            for (const Tensor& t : s.defaultInputs)
                m.inputShapeHints.push_back(t.shape());
        } catch (const Error& e) {
            throw LoadError(e.what());
        } catch (const std::exception& e) {
            throw LoadError(spec + ": " + e.what());
        }
        return m;
    }
    m.fromFile = true;
    if (!fs::exists(spec)) throw LoadError(spec + ": no such file");
    m.paramsFile = paramsFile.empty() ? findParamsBeside(spec) : paramsFile;
    try {
        Graph g = loadSymbolJson(spec);
        std::set<std::string> paramNames;
        if (!m.paramsFile.empty()) {
            for (const auto& [name, value] : loadParams(m.paramsFile))
                paramNames.insert(stripParamPrefix(name));
        }
        auto looksLikeParameter = [](const std::string& name) {
            for (const char* suffix : { "_weight", "_bias", "_gamma", "_beta", "_moving_mean", "_moving_var",
                     "_running_mean", "_running_var" }) {
                const std::string s(suffix);
                if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) return true;
            }
            return false;
        };
        for (uint32_t v : g.variables()) {
            const Node& n = g.node(v);
            // A parameter the file lacks stays a parameter, so the import names it as missing.
            if (paramNames.count(n.name) || (!m.paramsFile.empty() && looksLikeParameter(n.name))) continue;
            m.inputNames.push_back(n.name);
            Shape hint;
            auto it = n.attrs.find("__shape__");
            if (it != n.attrs.end()) {
                try {
                    const auto dims = parseTupleAttr(it->second);
                    hint = Shape(std::span<const int64_t>(dims));
                } catch (const std::exception&) {
                }
            }
            m.inputShapeHints.push_back(hint.known() ? hint : Shape());
        }
        if (m.paramsFile.empty() && !m.inputNames.empty()) {
            // Without a params file every variable would be an input: say what is missing instead.
            std::string names;
            for (const auto& n : m.inputNames)
                if (n != "data" && n.find("label") == std::string::npos) names += (names.empty() ? "" : ", ") + n;
            if (!names.empty())
                throw LoadError(spec + ": no .params file found beside it (looked for "
                    + spec.substr(0, spec.size() - 12) + "-NNNN.params); parameters without values: " + names);
        }
        m.block = gluon::SymbolBlock::imports(spec, m.inputNames, m.paramsFile);
    } catch (const LoadError&) {
        throw;
    } catch (const Error& e) {
        throw LoadError(e.what());
    } catch (const std::bad_alloc&) {
        throw LoadError(spec + ": out of memory while loading the model");
    } catch (const std::exception& e) {
        // Nothing the file holds may end the program: any other failure is a bad file too.
        throw LoadError(spec + ": " + e.what());
    }
    return m;
}

// Inputs in model order: from --input specs, else the sample's default, else ones of the hinted shape.
std::vector<Tensor> gatherInputs(const LoadedModel& m, const std::vector<std::string>& specs, uint64_t seed)
{
    std::map<std::string, InputSpec> byName;
    for (const std::string& s : specs) {
        InputSpec spec = parseInputSpec(s);
        if (std::find(m.inputNames.begin(), m.inputNames.end(), spec.name) == m.inputNames.end()) {
            std::string names;
            for (const auto& n : m.inputNames)
                names += (names.empty() ? "" : ", ") + n;
            throw UsageError("--input " + spec.name + ": the model has no input of that name (inputs: " + names + ")");
        }
        byName[spec.name] = spec;
    }
    std::vector<Tensor> inputs;
    for (size_t i = 0; i < m.inputNames.size(); ++i) {
        auto it = byName.find(m.inputNames[i]);
        if (it != byName.end()) {
            const InputSpec& spec = it->second;
            try {
                inputs.push_back(makeInput(spec, seed + i));
            } catch (const FileError& e) {
                throw LoadError(e.what());
            } catch (const ResourceError& e) {
                // A generated input the machine cannot hold is a bad argument; a file's, a bad file.
                const std::string what = "input '" + spec.name + "': " + e.what();
                if (spec.file.empty()) throw UsageError(what);
                throw LoadError(spec.file + ": " + what);
            } catch (const std::exception& e) {
                if (spec.file.empty()) throw UsageError("input '" + spec.name + "': " + e.what());
                throw LoadError(spec.file + ": " + e.what());
            }
        } else if (i < m.defaultInputs.size()) {
            inputs.push_back(m.defaultInputs[i]);
        } else if (i < m.inputShapeHints.size() && m.inputShapeHints[i].known()) {
            inputs.push_back(Tensor::ones(m.inputShapeHints[i]));
        } else {
            throw UsageError("input '" + m.inputNames[i] + "' needs a value: --input " + m.inputNames[i]
                + "=FILE.npy or --input " + m.inputNames[i] + "=SHAPE");
        }
    }
    return inputs;
}

ModelGraph graphOf(const LoadedModel& m, const std::vector<Shape>& inputShapes)
{
    bool known = inputShapes.size() == m.inputNames.size();
    for (const Shape& s : inputShapes)
        known = known && s.known();
    ModelGraph out;
    if (m.block->hasFixedGraph())
        out.graph = m.block->graph();
    else if (known)
        out.graph = m.block->trace(inputShapes);
    else
        throw UsageError(m.source + ": the input shapes are needed to trace the model");
    if (!known) return out;
    std::vector<Shape> varShapes;
    const gluon::ParameterDict p = m.block->collect_params();
    for (uint32_t v : out.graph->variables()) {
        const std::string& name = out.graph->node(v).name;
        auto it = std::find(m.inputNames.begin(), m.inputNames.end(), name);
        if (it != m.inputNames.end())
            varShapes.push_back(inputShapes[static_cast<size_t>(it - m.inputNames.begin())]);
        else
            varShapes.push_back(p.contains(name) ? p.at(name)->shape() : Shape());
    }
    out.entryShapes = out.graph->inferShapes(varShapes);
    return out;
}

} // namespace opscope::load
