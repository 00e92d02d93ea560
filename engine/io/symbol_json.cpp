// MXNet -symbol.json in: MXNet 1.x's LoadLegacyJSON pass (nnvm's LoadJSON plus
// src/nnvm/legacy_json_util.cc: UpgradeJSON_FixParsing and UpgradeJSON_000800_000900).
// The writer is in symbol_json_writer.cpp.

#include "io/symbol_json.h"

#include "core/error.h"
#include "ops/registry.h"

#include <cstdint>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

namespace opscope {

namespace {
using json = nlohmann::json;

// MXNet's kHiddenKeys (src/c_api/c_api_symbolic.cc): legacy spellings of hidden attributes.
const char* const kLegacyHiddenKeys[] = { "ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage" };
constexpr int kVersion0900 = 900;
// No real operator has more outputs; a corrupted attribute (num_outputs) must not allocate.
constexpr int kMaxOutputs = 1 << 16;
// The 0.8 upgrade adds at most this many implicit inputs (BatchNorm adds 2).
constexpr int kMaxImplicitInputs = 16;

// The start of a JSON value for a message, at most kQuoted characters. Only as much of the value
// is visited as is quoted, so a value nested 100,000 deep costs no more than a flat one (and
// nlohmann's recursive dump() is never asked to serialise it).
constexpr size_t kQuoted = 60;
void appendShortJson(const json& v, std::string& out)
{
    if (out.size() >= kQuoted) return;
    if (v.is_array()) {
        out += '[';
        bool first = true;
        for (const json& item : v) {
            if (out.size() >= kQuoted) return;
            if (!first) out += ", ";
            first = false;
            appendShortJson(item, out);
        }
        out += ']';
    } else if (v.is_object()) {
        out += '{';
        bool first = true;
        for (auto it = v.begin(); it != v.end(); ++it) {
            if (out.size() >= kQuoted) return;
            if (!first) out += ", ";
            first = false;
            out += json(it.key()).dump(-1, ' ', false, json::error_handler_t::replace) + ": ";
            appendShortJson(it.value(), out);
        }
        out += '}';
    } else {
        out += v.dump(-1, ' ', false, json::error_handler_t::replace).substr(0, kQuoted);
    }
}

std::string shortJson(const json& v)
{
    std::string s;
    appendShortJson(v, s);
    if (s.size() > kQuoted) s = s.substr(0, kQuoted - 3) + "...";
    return s;
}

std::string typeName(const json& v)
{
    return v.type_name();
}

class Reader {
public:
    explicit Reader(const std::string& file)
        : m_file(file)
    {
    }

    std::string node(size_t i, const std::string& name) const
    {
        return m_file + ": node " + std::to_string(i) + (name.empty() ? "" : " '" + name + "'");
    }
    std::string node(size_t i, const Node& n) const
    {
        return node(i, n.name) + " (" + (n.op == "null" ? std::string("variable") : n.op) + ")";
    }
    [[noreturn]] void fileError(const std::string& what) const { throw FileError(m_file + ": " + what); }

    NodeEntry entry(const json& e, const std::string& where) const
    {
        if (!e.is_array() || e.size() < 2 || e.size() > 3)
            throw FileError(where + ": an entry must be [node, index] or [node, index, version], got " + shortJson(e));
        uint32_t v[3] = { 0, 0, 0 };
        for (size_t k = 0; k < e.size(); ++k) {
            if (!e[k].is_number_unsigned() || e[k].get<uint64_t>() > std::numeric_limits<uint32_t>::max())
                throw FileError(where + ": an entry must hold non-negative integers, got " + shortJson(e));
            v[k] = static_cast<uint32_t>(e[k].get<uint64_t>());
        }
        return { v[0], v[1], v[2] };
    }

    // nnvm reads `attrs`/`attr` into the node's dict (a key read later wins) and then inserts
    // `param` without overwriting.
    void attrMap(const json& obj, AttrMap& into, bool overwrite, const std::string& where, const char* key) const
    {
        if (!obj.is_object()) throw FileError(where + ": \"" + key + "\" must be an object, got " + typeName(obj));
        for (auto it = obj.begin(); it != obj.end(); ++it) {
            if (!it.value().is_string())
                throw FileError(where + ": attribute \"" + it.key() + "\" in \"" + key + "\" must be a string, got "
                    + shortJson(it.value()));
            if (overwrite)
                into[it.key()] = it.value().get<std::string>();
            else
                into.emplace(it.key(), it.value().get<std::string>());
        }
    }

    int version(const json& root) const
    {
        auto attrs = root.find("attrs");
        if (attrs == root.end()) return 800; // MXNet: a file without a version stamp is 0.8
        if (!attrs->is_object()) fileError("top-level \"attrs\" must be an object, got " + typeName(*attrs));
        auto v = attrs->find("mxnet_version");
        if (v == attrs->end()) return 800;
        if (!v->is_array() || v->size() != 2 || !(*v)[1].is_number_integer())
            fileError("\"mxnet_version\" must be [\"int\", <version>], got " + shortJson(*v));
        return static_cast<int>((*v)[1].get<int64_t>());
    }

private:
    const std::string& m_file;
};

struct OpInfo {
    const OpDef* def = nullptr;
    ParamsPtr params;
};

// The operator's registered input names (MXNet's FListInputNames: the first numInputs of what it
// registers), or none; never asked when the operator wants far more inputs than the node has (a
// corrupted num_args must not allocate).
std::vector<std::string> registeredInputNames(const OpInfo& op, size_t haveInputs)
{
    if (!op.def || !op.def->inputNames) return {};
    const int n = op.def->numInputs(*op.params);
    if (n < 0 || static_cast<size_t>(n) > haveInputs + kMaxImplicitInputs) return {};
    std::vector<std::string> names = op.def->inputNames(*op.params);
    if (names.size() > static_cast<size_t>(n)) names.resize(static_cast<size_t>(n));
    return names;
}

// UpgradeJSON_FixParsing: `ctx_group` → `__ctx_group__`; an op's `<input>_lr_mult` moves to
// that input when it is a variable, as `__lr_mult__`.
void fixLegacyHiddenKeys(std::vector<Node>& nodes, const std::vector<OpInfo>& ops, size_t i)
{
    Node& n = nodes[i];
    std::vector<std::pair<std::string, std::string>> hidden;
    for (auto it = n.attrs.begin(); it != n.attrs.end();) {
        bool isHidden = false;
        for (const std::string key : kLegacyHiddenKeys) {
            const size_t pos = it->first.rfind(key);
            if (pos == 0 || (pos != std::string::npos && pos == it->first.size() - key.size())) {
                isHidden = true;
                break;
            }
        }
        if (isHidden) {
            hidden.emplace_back(*it);
            it = n.attrs.erase(it);
        } else {
            ++it;
        }
    }
    for (const auto& [k, v] : hidden) {
        bool moved = false;
        for (const std::string key : kLegacyHiddenKeys) {
            const size_t pos = k.rfind(key);
            if (pos == 0 && key.size() == k.size()) {
                n.attrs["__" + key + "__"] = v;
                moved = true;
                break;
            }
            if (pos != std::string::npos && pos > 1 && pos == k.size() - key.size()) {
                if (n.op == "null") break;
                const auto names = registeredInputNames(ops[i], n.inputs.size());
                const std::string arg = k.substr(0, pos - 1);
                for (size_t idx = 0; idx < names.size() && idx < n.inputs.size(); ++idx) {
                    if (names[idx] != arg) continue;
                    Node& input = nodes[n.inputs[idx].node];
                    if (input.op == "null") {
                        input.attrs["__" + key + "__"] = v;
                        moved = true;
                    }
                    break;
                }
                break;
            }
        }
        if (!moved) n.attrs[k] = v;
    }
}

// Iterative three-colour DFS over every node; reports the first cycle with indexes and names.
void checkAcyclic(const std::vector<Node>& nodes, const Reader& r)
{
    enum : uint8_t { kWhite, kGray, kBlack };
    std::vector<uint8_t> color(nodes.size(), kWhite);
    std::vector<std::pair<uint32_t, size_t>> stack;
    for (uint32_t root = 0; root < nodes.size(); ++root) {
        if (color[root] != kWhite) continue;
        color[root] = kGray;
        stack.emplace_back(root, 0);
        while (!stack.empty()) {
            auto& [id, next] = stack.back();
            if (next < nodes[id].inputs.size()) {
                const uint32_t in = nodes[id].inputs[next++].node;
                if (color[in] == kGray)
                    throw GraphError(r.node(in, nodes[in]) + ": cycle in the graph: the node depends on itself"
                        + (in == id ? std::string()
                                    : " through node " + std::to_string(id) + " '" + nodes[id].name + "'"));
                if (color[in] == kWhite) {
                    color[in] = kGray;
                    stack.emplace_back(in, 0);
                }
            } else {
                color[id] = kBlack;
                stack.pop_back();
            }
        }
    }
}

// Re-throws an engine error with the file name in front, keeping its type.
[[noreturn]] void rethrowWithFile(const std::string& file)
{
    try {
        throw;
    } catch (const GraphError& e) {
        throw GraphError(file + ": " + e.what());
    } catch (const AttributeError& e) {
        throw AttributeError(file + ": " + e.what());
    } catch (const ShapeError& e) {
        throw ShapeError(file + ": " + e.what());
    } catch (const Error& e) {
        throw GraphError(file + ": " + e.what());
    }
}
} // namespace

Graph parseSymbolJson(const std::string& text, const std::string& fileName)
{
    const Reader r(fileName);
    json root;
    try {
        root = json::parse(text);
    } catch (const json::parse_error& e) {
        throw FileError(fileName + ": byte " + std::to_string(e.byte) + ": malformed JSON: " + e.what());
    } catch (const json::exception& e) { // e.g. a number too large for a double
        throw FileError(fileName + ": malformed JSON: " + e.what());
    }
    if (!root.is_object()) r.fileError("expected a JSON object at the top level, got " + typeName(root));
    auto jnodes = root.find("nodes");
    if (jnodes == root.end()) r.fileError("missing \"nodes\" (not an MXNet symbol file?)");
    if (!jnodes->is_array()) r.fileError("\"nodes\" must be an array, got " + typeName(*jnodes));
    auto jheads = root.find("heads");
    if (jheads == root.end()) r.fileError("missing \"heads\" (the graph's outputs)");
    if (!jheads->is_array()) r.fileError("\"heads\" must be an array, got " + typeName(*jheads));
    const int version = r.version(root);

    const size_t count = jnodes->size();
    std::vector<Node> nodes(count);
    std::vector<OpInfo> ops(count);
    for (size_t i = 0; i < count; ++i) {
        const json& jn = (*jnodes)[i];
        if (!jn.is_object()) throw FileError(r.node(i, "") + ": expected an object, got " + typeName(jn));
        Node& n = nodes[i];
        auto name = jn.find("name");
        if (name == jn.end() || !name->is_string()) throw FileError(r.node(i, "") + ": missing \"name\" string");
        n.name = name->get<std::string>();
        auto op = jn.find("op");
        if (op == jn.end() || !op->is_string()) throw FileError(r.node(i, n.name) + ": missing \"op\" string");
        n.op = op->get<std::string>();
        const std::string where = r.node(i, n.name);
        auto inputs = jn.find("inputs");
        if (inputs == jn.end() || !inputs->is_array()) throw FileError(where + ": missing \"inputs\" array");
        for (size_t k = 0; k < inputs->size(); ++k) {
            const NodeEntry e = r.entry((*inputs)[k], where + ": input " + std::to_string(k));
            if (e.node >= count)
                throw GraphError(where + ": input " + std::to_string(k) + " refers to node " + std::to_string(e.node)
                    + ", but the file has only " + std::to_string(count) + " nodes");
            n.inputs.push_back(e);
        }
        for (const char* key : { "attr", "attrs" }) {
            auto a = jn.find(key);
            if (a != jn.end()) r.attrMap(*a, n.attrs, true, where, key);
        }
        if (auto p = jn.find("param"); p != jn.end()) r.attrMap(*p, n.attrs, false, where, "param");

        if (n.op == "null") continue;
        OpInfo& info = ops[i];
        // A node of ONNX's default domain (a graph built from an ONNX model, saved) is ONNX's op.
        const auto domain = n.attrs.find("__domain__");
        const bool onnx = domain != n.attrs.end() && domain->second == "ai.onnx";
        info.def = OpRegistry::instance().find(onnx ? "onnx::" + n.op : n.op);
        if (!info.def) throw GraphError(where + ": unknown operator '" + n.op + "'");
        try {
            info.params = info.def->parse(n.attrs);
        } catch (const std::exception& e) {
            throw AttributeError(where + " (" + n.op + "): " + e.what());
        }
        const int outputs = info.def->numOutputs(*info.params);
        if (outputs < 1 || outputs > kMaxOutputs)
            throw GraphError(where + " (" + n.op + "): the attributes ask for " + std::to_string(outputs) + " outputs");
    }

    for (size_t i = 0; i < count; ++i)
        fixLegacyHiddenKeys(nodes, ops, i);

    // UpgradeJSON_000800_000900: auxiliary states were implicit before 0.9; add them as variables
    // `<node>_<input name>` carrying the node's attributes.
    if (version < kVersion0900) {
        for (size_t i = 0; i < count; ++i) {
            if (!ops[i].def) continue;
            const size_t have = nodes[i].inputs.size();
            const int want = ops[i].def->numInputs(*ops[i].params);
            if (want < 0 || static_cast<size_t>(want) <= have) continue;
            const auto names = registeredInputNames(ops[i], have);
            if (names.size() < static_cast<size_t>(want)) continue;
            for (size_t k = have; k < static_cast<size_t>(want); ++k) {
                Node var;
                var.op = "null";
                var.name = nodes[i].name.empty() ? names[k] : nodes[i].name + "_" + names[k];
                var.attrs = nodes[i].attrs;
                nodes.push_back(std::move(var));
                ops.emplace_back();
                nodes[i].inputs.push_back({ static_cast<uint32_t>(nodes.size() - 1), 0, 0 });
            }
        }
    }

    // Structure, checked here so that messages give the node's index in the file.
    auto outputsOf = [&](uint32_t id) { return ops[id].def ? ops[id].def->numOutputs(*ops[id].params) : 1; };
    for (size_t i = 0; i < nodes.size(); ++i) {
        const Node& n = nodes[i];
        for (size_t k = 0; k < n.inputs.size(); ++k) {
            const NodeEntry& e = n.inputs[k];
            if (e.index >= static_cast<uint32_t>(outputsOf(e.node)))
                throw GraphError(r.node(i, n) + ": input " + std::to_string(k) + " refers to output "
                    + std::to_string(e.index) + " of node " + std::to_string(e.node) + " '" + nodes[e.node].name
                    + "', which has " + std::to_string(outputsOf(e.node)) + " output(s)");
        }
        if (!ops[i].def) {
            if (!n.inputs.empty()) throw GraphError(r.node(i, n) + ": a variable cannot have inputs");
            continue;
        }
        const int want = ops[i].def->numInputs(*ops[i].params);
        if (want < 0 || static_cast<size_t>(want) != n.inputs.size())
            throw GraphError(r.node(i, n) + ": expected " + std::to_string(want) + " inputs, got "
                + std::to_string(n.inputs.size()));
    }
    std::vector<NodeEntry> heads;
    for (size_t k = 0; k < jheads->size(); ++k) {
        const NodeEntry h = r.entry((*jheads)[k], fileName + ": head " + std::to_string(k));
        if (h.node >= count)
            throw GraphError(fileName + ": head " + std::to_string(k) + " refers to node " + std::to_string(h.node)
                + ", but the file has only " + std::to_string(count) + " nodes");
        if (h.index >= static_cast<uint32_t>(outputsOf(h.node)))
            throw GraphError(fileName + ": head " + std::to_string(k) + " refers to output " + std::to_string(h.index)
                + " of node " + std::to_string(h.node) + " '" + nodes[h.node].name + "', which has "
                + std::to_string(outputsOf(h.node)) + " output(s)");
        heads.push_back(h);
    }
    if (heads.empty()) r.fileError("\"heads\" is empty: the graph has no outputs");
    checkAcyclic(nodes, r);

    try {
        return Graph::fromNodes(std::move(nodes), std::move(heads));
    } catch (const Error&) {
        rethrowWithFile(fileName);
    }
}

Graph loadSymbolJson(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) throw FileError(path + ": cannot open for reading");
    std::stringstream ss;
    ss << in.rdbuf();
    if (in.bad()) throw FileError(path + ": read failed");
    return parseSymbolJson(ss.str(), path);
}

} // namespace opscope
