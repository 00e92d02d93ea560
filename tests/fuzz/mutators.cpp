#include "fuzz/mutators.h"

#include "io/params_file.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace opscope::fuzz {

using json = nlohmann::json;

namespace {

    template <class T> T pick(const std::vector<T>& v, Rng& rng)
    {
        return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
    }

    size_t below(size_t n, Rng& rng)
    {
        return n == 0 ? 0 : std::uniform_int_distribution<size_t>(0, n - 1)(rng);
    }

    bool chance(Rng& rng, int percent)
    {
        return std::uniform_int_distribution<int>(0, 99)(rng) < percent;
    }

    void writeInteger(std::string& data, size_t at, int64_t v, size_t width)
    {
        for (size_t i = 0; i < width && at + i < data.size(); ++i)
            data[at + i] = static_cast<char>((static_cast<uint64_t>(v) >> (8 * i)) & 0xff);
    }

    const std::vector<std::string>& attributeValues()
    {
        static const std::vector<std::string> v { "0", "1", "-1", "2", "3", "7", "2147483647", "2147483648", "-2147483648",
            "4294967296", "9223372036854775807", "1e400", "-0", "nan", "inf", "None", "True", "False", "", " ", "(0, 0)",
            "(1, 1)", "(3, 3)", "(-1, -1)", "(100000, 100000)", "(2147483647, 1)", "(1, 0, 1)", "()", "(1,)",
            "(1, 1, 1, 1, 1, 1, 1)", "[2, 2]", "((1, 2), 3)", "max", "avg", "sum", "relu", "tanh", "sigmoid", "full",
            "valid", "channel", "instance", "NCHW", "NHWC", "(-1,)", "(0, -1)", "(-2,)", "(-3, -2)", "(-4, 2, -1)" };
        return v;
    }

    std::string randomName(Rng& rng)
    {
        static const std::vector<std::string> names { "", "data", "../../escape", "/tmp/abs", "a/b/c", "x\u00e9",
            std::string(300, 'n'), "con", ".", "..", "name with spaces", "tab\there", "node_0" };
        return pick(names, rng);
    }

    json& randomNode(json& root, Rng& rng)
    {
        json& nodes = root["nodes"];
        return nodes[below(nodes.size(), rng)];
    }

    // A value nested `depth` arrays deep. nlohmann's dump() recurses, so the value is a marker
    // string that expandDeep() replaces with the brackets once the file is written.
    json deepNest(size_t depth)
    {
        return "@@deep:" + std::to_string(depth) + "@@";
    }

    std::string expandDeep(std::string text)
    {
        for (size_t at = text.find("\"@@deep:"); at != std::string::npos; at = text.find("\"@@deep:", at)) {
            const size_t end = text.find("@@\"", at + 8);
            if (end == std::string::npos) break;
            const size_t depth = std::stoul(text.substr(at + 8, end - at - 8));
            text.replace(at, end + 3 - at, std::string(depth, '[') + "0" + std::string(depth, ']'));
        }
        return text;
    }

    json entry(Rng& rng, size_t nodes)
    {
        const std::vector<int64_t>& ints = interestingIntegers();
        auto field = [&](int64_t fallback) -> json {
            if (chance(rng, 70)) return fallback;
            const int64_t v = pick(ints, rng);
            return v < 0 ? json(v) : json(static_cast<uint64_t>(v));
        };
        json e = json::array({ field(static_cast<int64_t>(below(nodes, rng))), field(0), field(0) });
        if (chance(rng, 10)) e.erase(e.size() - 1);
        if (chance(rng, 5)) e.push_back(1);
        return e;
    }

    void mutateNode(json& root, Rng& rng, const std::vector<std::string>& operators)
    {
        if (!root.contains("nodes") || !root["nodes"].is_array() || root["nodes"].empty()) return;
        json& node = randomNode(root, rng);
        if (!node.is_object()) {
            node = json::object({ { "op", "null" }, { "name", randomName(rng) }, { "inputs", json::array() } });
            return;
        }
        const size_t nodes = root["nodes"].size();
        switch (below(9, rng)) {
        case 0:
            node["op"] = chance(rng, 80) ? pick(operators, rng) : randomName(rng);
            break;
        case 1:
            node["name"] = randomName(rng);
            break;
        case 2:
        case 3: {
            const char* key = node.contains("attr") ? "attr" : node.contains("param") ? "param" : "attrs";
            json& attrs = node[key];
            if (!attrs.is_object()) attrs = json::object();
            std::vector<std::string> keys;
            for (auto it = attrs.begin(); it != attrs.end(); ++it)
                keys.push_back(it.key());
            static const std::vector<std::string> extra { "kernel", "stride", "pad", "num_filter", "num_hidden",
                "shape", "axis", "pool_type", "act_type", "num_group", "dilate", "global_pool", "no_bias", "flatten",
                "num_outputs", "__shape__", "eps", "p", "axes", "transpose_a", "input_dim", "output_dim" };
            const std::string k = keys.empty() || chance(rng, 30) ? pick(extra, rng) : pick(keys, rng);
            static const std::vector<std::string> plausible { "0", "1", "2", "3", "4", "8", "16", "(1, 1)", "(2, 2)",
                "(3, 3)", "(1, 2)", "(0, 1)", "(5, 5)", "(1, 1, 1)", "True", "False", "max", "avg", "relu", "(2,)",
                "(-1,)", "(0, -1)", "1", "-1" };
            if (chance(rng, 5))
                attrs[k] = deepNest(1000 + below(20000, rng)); // not a string, and deep
            else if (chance(rng, 5))
                attrs.erase(k);
            else if (chance(rng, 55))
                attrs[k] = pick(plausible, rng); // a value the operator may well accept: reaches the kernels
            else
                attrs[k] = pick(attributeValues(), rng);
            break;
        }
        case 4:
        case 5: {
            json& inputs = node["inputs"];
            if (!inputs.is_array()) inputs = json::array();
            if (inputs.empty() || chance(rng, 20))
                inputs.push_back(entry(rng, nodes));
            else if (chance(rng, 20))
                inputs.erase(inputs.begin() + static_cast<std::ptrdiff_t>(below(inputs.size(), rng)));
            else
                inputs[below(inputs.size(), rng)] = chance(rng, 5) ? deepNest(1000 + below(50000, rng)) : entry(rng, nodes);
            break;
        }
        case 6:
            node.erase(chance(rng, 50) ? "inputs" : "op");
            break;
        case 7: {
            // Duplicate a node: names repeat, indexes shift.
            json copy = node;
            json& list = root["nodes"];
            list.insert(list.begin() + static_cast<std::ptrdiff_t>(below(list.size(), rng)), copy);
            break;
        }
        default: {
            json& list = root["nodes"];
            if (list.size() > 1) list.erase(list.begin() + static_cast<std::ptrdiff_t>(below(list.size(), rng)));
            break;
        }
        }
    }

    void mutateHeads(json& root, Rng& rng)
    {
        const size_t nodes = root.contains("nodes") && root["nodes"].is_array() ? root["nodes"].size() : 1;
        json& heads = root["heads"];
        if (!heads.is_array() || heads.empty() || chance(rng, 20)) {
            heads = json::array({ entry(rng, nodes) });
            return;
        }
        if (chance(rng, 10))
            heads = json::array();
        else if (chance(rng, 20))
            heads.push_back(entry(rng, nodes));
        else
            heads[below(heads.size(), rng)] = entry(rng, nodes);
    }

    // The text of a .npy file's header dictionary, its start and length, or false.
    bool npyHeader(const std::string& bytes, size_t& start, size_t& length)
    {
        if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) return false;
        if (bytes[6] == 1) {
            start = 10;
            length = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
        } else {
            if (bytes.size() < 12) return false;
            start = 12;
            length = 0;
            for (int i = 0; i < 4; ++i)
                length |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + static_cast<size_t>(i)])) << (8 * i);
        }
        return start + length <= bytes.size();
    }

} // namespace

const std::vector<int64_t>& interestingIntegers()
{
    static const std::vector<int64_t> v { 0, 1, 2, 3, 6, 7, 8, 16, 255, 256, 65535, 65536, -1, -2, 0x7fffffff,
        static_cast<int64_t>(0x80000000u), static_cast<int64_t>(0xffffffffu), int64_t(1) << 32, int64_t(1) << 40,
        int64_t(1) << 62, INT64_MAX, INT64_MIN, 0x112, 0xF993fac8, 0xF993fac9, 0xF993faca };
    return v;
}

std::string mutateBytes(const std::string& input, Rng& rng, const std::vector<std::string>& dictionary)
{
    std::string data = input;
    const int edits = 1 + static_cast<int>(below(4, rng));
    for (int e = 0; e < edits; ++e) {
        const size_t n = data.size();
        switch (below(7, rng)) {
        case 0:
            if (n) data[below(n, rng)] ^= static_cast<char>(1u << below(8, rng));
            break;
        case 1:
            if (n) data[below(n, rng)] = static_cast<char>(below(256, rng));
            break;
        case 2: {
            if (!n) break;
            static const size_t widths[] = { 1, 2, 4, 8 };
            writeInteger(data, below(n, rng), pick(interestingIntegers(), rng), widths[below(4, rng)]);
            break;
        }
        case 3: {
            if (!n) break;
            const size_t at = below(n, rng), len = std::min(n - at, 1 + below(64, rng));
            data.insert(below(data.size(), rng), data.substr(at, len));
            break;
        }
        case 4:
            if (n) data.erase(below(n, rng), 1 + below(std::min<size_t>(n, 64), rng));
            break;
        case 5:
            if (n) data.resize(below(n, rng));
            break;
        default:
            if (!dictionary.empty()) data.insert(n ? below(n, rng) : 0, pick(dictionary, rng));
            break;
        }
    }
    return data;
}

std::string mutateSymbolJson(const std::string& text, Rng& rng, const std::vector<std::string>& operators)
{
    json root = json::parse(text, nullptr, false);
    if (root.is_discarded() || !root.is_object() || chance(rng, 15)) {
        static const std::vector<std::string> tokens { "[", "]", "{", "}", ",", ":", "\"", "0", "-1", "4294967295",
            "1e999", "null", "true", "[0, 0, 0]", "\"op\": \"null\", ", "\\u0000", "\xff", "\"attrs\": {}, " };
        return mutateBytes(text, rng, tokens);
    }
    const int edits = 1 + static_cast<int>(below(3, rng));
    for (int e = 0; e < edits; ++e) {
        switch (below(10, rng)) {
        case 0:
            mutateHeads(root, rng);
            break;
        case 1:
            if (chance(rng, 50))
                root["arg_nodes"] = json::array({ pick(interestingIntegers(), rng) });
            else
                root["node_row_ptr"] = json::array({ 0, pick(interestingIntegers(), rng) });
            break;
        case 2:
            root["attrs"]["mxnet_version"] = json::array({ "int", pick(interestingIntegers(), rng) });
            break;
        default:
            mutateNode(root, rng, operators);
            break;
        }
    }
    try {
        return expandDeep(root.dump());
    } catch (const std::exception&) {
        return text;
    }
}

std::string mutateParams(const std::string& input, Rng& rng)
{
    if (chance(rng, 30)) {
        // Well-formed, but one array of another shape or with NaN and Inf: past the reader, into the model.
        try {
            NamedTensors arrays = parseParams(input, "seed.params");
            if (!arrays.empty()) {
                auto& [name, t] = arrays[below(arrays.size(), rng)];
                if (chance(rng, 50) && t.defined()) {
                    Tensor copy = t.copy();
                    for (float& v : copy.values())
                        if (chance(rng, 20)) v = chance(rng, 50) ? std::numeric_limits<float>::quiet_NaN() : 1e38f;
                    t = copy;
                } else {
                    Shape shape;
                    const size_t ndim = below(5, rng);
                    for (size_t i = 0; i < ndim; ++i)
                        shape.push_back(static_cast<int64_t>(1 + below(12, rng)));
                    t = ndim ? Tensor::uniform(shape, -1, 1) : Tensor();
                }
                if (chance(rng, 10)) name = "arg:" + std::string(chance(rng, 50) ? "stray_weight" : "");
                return serializeParams(arrays);
            }
        } catch (const std::exception&) {
        }
    }
    if (input.size() < 24 || chance(rng, 30)) return mutateBytes(input, rng, { std::string(8, '\0'), std::string(4, '\xff') });
    std::string data = input;
    // Record starts: the magic numbers of V1-V3 records, else any 4-byte aligned field.
    std::vector<size_t> records;
    for (size_t i = 24; i + 4 <= data.size(); ++i) {
        uint32_t word;
        std::memcpy(&word, data.data() + i, 4);
        if (word == 0xF993faca || word == 0xF993fac9 || word == 0xF993fac8) records.push_back(i);
    }
    const int edits = 1 + static_cast<int>(below(2, rng));
    for (int e = 0; e < edits; ++e) {
        size_t at;
        if (!records.empty() && chance(rng, 80))
            at = pick(records, rng) + 4 + 4 * below(8, rng); // stype, ndim, dims, device, dtype
        else
            at = 8 * below(data.size() / 8, rng); // the header's count, reserved field, name lengths
        writeInteger(data, at, pick(interestingIntegers(), rng), chance(rng, 50) ? 4 : 8);
    }
    return data;
}

// A well-formed .npy of another shape and dtype, with values that include NaN, Inf and extremes:
// what gets past the reader and into the model.
std::string validNpy(Rng& rng)
{
    static const std::vector<std::pair<std::string, size_t>> types { { "<f4", 4 }, { "<f8", 8 }, { "<f2", 2 },
        { "<i4", 4 }, { "<i8", 8 }, { "|u1", 1 }, { "|b1", 1 }, { "|i1", 1 } };
    const auto& [descr, size] = types[below(types.size(), rng)];
    const size_t ndim = below(7, rng);
    std::string shape;
    size_t count = 1;
    for (size_t i = 0; i < ndim; ++i) {
        const size_t d = chance(rng, 10) ? 0 : 1 + below(chance(rng, 70) ? 4 : 40, rng);
        if (count * std::max<size_t>(d, 1) > (1u << 20)) break;
        count *= d;
        shape += std::to_string(d) + ", ";
    }
    std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + shape + "), }";
    while ((10 + header.size() + 1) % 64 != 0)
        header += ' ';
    header += '\n';
    std::string out = "\x93NUMPY";
    out += '\x01';
    out += '\0';
    out += static_cast<char>(header.size() & 0xff);
    out += static_cast<char>(header.size() >> 8);
    out += header;
    static const float specials[] = { 0.0f, 1.0f, -1.0f, 1e30f, -1e30f, 3.4e38f, 1e-40f,
        std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
        -std::numeric_limits<float>::infinity() };
    std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
    for (size_t i = 0; i < count; ++i) {
        const float v = chance(rng, 5) ? specials[below(10, rng)] : uniform(rng);
        char bytes[8] = {};
        if (descr == "<f4") {
            std::memcpy(bytes, &v, 4);
        } else if (descr == "<f8") {
            const double d = v;
            std::memcpy(bytes, &d, 8);
        } else if (descr == "<f2") {
            bytes[0] = static_cast<char>(below(256, rng));
            bytes[1] = static_cast<char>(below(256, rng));
        } else {
            const int64_t n = std::isfinite(v) ? static_cast<int64_t>(v * 10) : 0;
            std::memcpy(bytes, &n, size);
        }
        out.append(bytes, size);
    }
    return out;
}

std::string mutateNpy(const std::string& input, Rng& rng)
{
    if (chance(rng, 35)) return validNpy(rng);
    size_t start = 0, length = 0;
    if (!npyHeader(input, start, length) || chance(rng, 20))
        return mutateBytes(input, rng, { "'shape': (", "'descr': '<f4'", "True", ")", "}" });
    std::string header = input.substr(start, length);
    std::string data = input.substr(start + length);
    switch (below(5, rng)) {
    case 0: {
        const size_t open = header.find("'shape': (");
        const size_t close = open == std::string::npos ? open : header.find(')', open);
        if (close == std::string::npos) break;
        std::string shape;
        const size_t dims = below(8, rng);
        for (size_t i = 0; i < dims; ++i)
            shape += std::to_string(chance(rng, 50) ? pick(interestingIntegers(), rng) : int64_t(below(5, rng))) + ", ";
        header = header.substr(0, open + 10) + shape + header.substr(close);
        break;
    }
    case 1: {
        static const std::vector<std::string> descrs { "<f4", "<f8", "<f2", "<i4", "<i8", "|u1", "|b1", "|i1", ">f4",
            "<U8", "|O", "<c8", "", "'" };
        const size_t at = header.find("'descr': '");
        if (at == std::string::npos) break;
        const size_t end = header.find('\'', at + 10);
        if (end == std::string::npos) break;
        header = header.substr(0, at + 10) + pick(descrs, rng) + header.substr(end);
        break;
    }
    case 2: {
        const size_t at = header.find("False");
        if (at != std::string::npos) header.replace(at, 5, "True");
        break;
    }
    case 3:
        data.resize(below(data.size() + 64, rng), '\0');
        break;
    default:
        header = mutateBytes(header, rng, { "'shape': ()", "}", "{", "'", "(" });
        break;
    }
    std::string out = input.substr(0, start) + header + data;
    if (chance(rng, 90)) writeInteger(out, 8, static_cast<int64_t>(header.size()), start == 10 ? 2 : 4);
    return out;
}

} // namespace opscope::fuzz
