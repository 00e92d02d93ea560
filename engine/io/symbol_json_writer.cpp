// MXNet -symbol.json out: nnvm's SaveJSON through dmlc's JSONWriter, byte for byte (the layout of
// MXNet 1.x's own exports).

#include "core/error.h"
#include "io/symbol_json.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace opscope {

namespace {
// dmlc::JSONWriter's layout: a multi-line scope puts each item on its own line, indented two
// spaces per open scope, after ", " (hence MXNet's trailing spaces).
class DmlcWriter {
public:
    void beginObject(bool multiLine = true) { open('{', multiLine); }
    void endObject() { close('}'); }
    void beginArray(bool multiLine) { open('[', multiLine); }
    void endArray() { close(']'); }
    void key(const std::string& k)
    {
        if (m_count.back() > 0) m_out += ", ";
        separator();
        string(k);
        m_out += ": ";
        ++m_count.back();
    }
    void item()
    {
        if (m_count.back() > 0) m_out += ", ";
        ++m_count.back();
        separator();
    }
    void string(const std::string& s)
    {
        m_out += '"';
        for (const char c : s) {
            switch (c) {
            case '"':
                m_out += "\\\"";
                break;
            case '\\':
                m_out += "\\\\";
                break;
            case '\n':
                m_out += "\\n";
                break;
            case '\r':
                m_out += "\\r";
                break;
            case '\t':
                m_out += "\\t";
                break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
                    m_out += buf;
                } else {
                    m_out += c;
                }
            }
        }
        m_out += '"';
    }
    void number(int64_t v) { m_out += std::to_string(v); }
    void entry(const NodeEntry& e)
    {
        beginArray(false);
        for (uint32_t v : { e.node, e.index, e.version }) {
            item();
            number(v);
        }
        endArray();
    }
    // dmlc writes a vector on one line when it has at most 10 plain elements.
    template <class T, class F> void array(const std::vector<T>& v, F writeOne)
    {
        beginArray(v.size() > 10);
        for (const T& x : v) {
            item();
            writeOne(x);
        }
        endArray();
    }
    // dmlc writes a map on one line when it has one entry.
    void stringMap(const AttrMap& m)
    {
        beginObject(m.size() > 1);
        for (const auto& [k, v] : m) {
            key(k);
            string(v);
        }
        endObject();
    }
    std::string take() { return std::move(m_out); }

private:
    void open(char c, bool multiLine)
    {
        m_out += c;
        m_multi.push_back(multiLine);
        m_count.push_back(0);
    }
    void close(char c)
    {
        const bool multi = m_multi.back();
        const size_t n = m_count.back();
        m_multi.pop_back();
        m_count.pop_back();
        if (multi && n != 0) separator();
        m_out += c;
    }
    void separator()
    {
        if (m_multi.empty() || m_multi.back()) {
            m_out += '\n';
            m_out.append(m_multi.size() * 2, ' ');
        }
    }

    std::string m_out;
    std::vector<bool> m_multi;
    std::vector<size_t> m_count;
};
} // namespace

std::string saveSymbolJson(const Graph& graph)
{
    if (!graph.finalized()) throw UsageError("saveSymbolJson: the graph must be finalized");
    DmlcWriter w;
    w.beginObject();
    w.key("nodes");
    w.beginArray(true);
    for (const Node& n : graph.nodes()) {
        w.item();
        w.beginObject();
        w.key("op");
        // An ONNX node keeps its ONNX op type; its `__domain__` attribute says whose it is.
        w.string(!n.def ? std::string("null") : n.onnx ? n.op : n.def->name);
        w.key("name");
        w.string(n.name);
        if (!n.attrs.empty()) {
            w.key("attrs");
            w.stringMap(n.attrs);
        }
        w.key("inputs");
        w.array(n.inputs, [&](const NodeEntry& e) { w.entry(e); });
        w.endObject();
    }
    w.endArray();
    w.key("arg_nodes");
    w.array(graph.variables(), [&](uint32_t v) { w.number(v); });
    w.key("node_row_ptr");
    w.array(graph.rowPtr(), [&](uint32_t v) { w.number(v); });
    w.key("heads");
    w.array(graph.heads(), [&](const NodeEntry& e) { w.entry(e); });
    w.key("attrs");
    w.beginObject(false);
    w.key("mxnet_version");
    w.beginArray(false);
    w.item();
    w.string("int");
    w.item();
    w.number(kSymbolJsonVersion);
    w.endArray();
    w.endObject();
    w.endObject();
    return w.take();
}

} // namespace opscope
