// Building the engine's Graph from an ONNX graph once the inputs' shapes are known. Nodes are taken
// in file order (ONNX's graphs are topologically sorted). A node whose inputs are all known before
// the run (initializers, Constants, earlier folded nodes; Shape and Size of any tensor whose shape
// is known) is computed now with the engine's own kernel and becomes a constant: what PyTorch's
// shape computations (Shape → Gather → Concat → Reshape) reduce to. Every other node becomes an
// engine node, with the values of its small constant inputs written as `__in<k>__` for the
// operators that need them at shape inference (ops/onnx/onnx_op.h).

#include "core/error.h"
#include "exec/executor.h"
#include "io/onnx_model_impl.h"
#include "io/onnx_proto.h"
#include "io/onnx_tensor.h"
#include "ops/onnx/onnx_op.h"
#include "ops/registry.h"

#include <cinttypes>
#include <cstdio>
#include <map>
#include <set>

namespace opscope::onnx_io {

namespace {
    constexpr int64_t kMaxFoldElements = int64_t(1) << 22; // larger results are computed at run time

    struct Value {
        bool known = false; ///< a constant (its value in `value`)
        Tensor value;
        Shape shape;
        DType dtype = DType::Float32;
        bool inGraph = false;
        NodeEntry entry;
        std::string folded; ///< for a constant made by folding: "<op type> <node name>"
        /// A graph input's value when the caller gives it: written as `__in<k>__` for the operators
        /// that need it before the run (Reshape's shape given as an input), never folded.
        Tensor hint;
        std::string inputName;
    };

    // The same kind of error with `prefix` before its message (the node it concerns).
    [[noreturn]] void rethrowWith(const std::string& prefix, const Error& e)
    {
        const std::string msg = prefix + e.what();
        if (dynamic_cast<const AttributeError*>(&e)) throw AttributeError(msg);
        if (dynamic_cast<const TypeError*>(&e)) throw TypeError(msg);
        if (dynamic_cast<const ShapeError*>(&e)) throw ShapeError(msg);
        if (dynamic_cast<const ResourceError*>(&e)) throw ResourceError(msg);
        throw GraphError(msg);
    }

    std::string formatFloat(double v)
    {
        char buf[40];
        std::snprintf(buf, sizeof buf, "%.9g", v);
        return buf;
    }

    std::string listOf(const std::vector<std::string>& items)
    {
        std::string s = "[";
        for (size_t i = 0; i < items.size(); ++i)
            s += (i ? ", " : "") + items[i];
        return s + "]";
    }

    // An ONNX attribute in the string form ops/onnx/onnx_op.h describes.
    std::string attributeText(const onnx::AttributeProto& a, const std::string& where)
    {
        using A = onnx::AttributeProto;
        switch (a.type()) {
        case A::FLOAT: return formatFloat(a.f());
        case A::INT: return std::to_string(a.i());
        case A::STRING: return a.s();
        case A::FLOATS: {
            std::vector<std::string> v;
            for (float f : a.floats())
                v.push_back(formatFloat(f));
            return listOf(v);
        }
        case A::INTS: {
            std::vector<std::string> v;
            for (int64_t i : a.ints())
                v.push_back(std::to_string(i));
            return listOf(v);
        }
        case A::STRINGS: {
            std::vector<std::string> v(a.strings().begin(), a.strings().end());
            return listOf(v);
        }
        case A::TENSOR: { // a single value (ConstantOfShape's): "<dtype>:<number>"
            const Tensor t = tensorFromProto(a.t(), "", where + ": attribute '" + a.name() + "'");
            if (t.size() != 1)
                throw AttributeError(where + ": attribute '" + a.name() + "' holds " + std::to_string(t.size())
                    + " values where one is expected");
            const double v = t.view().valueAt(0);
            return std::string(dtypeName(t.dtype())) + ":" + (isFloatingType(t.dtype()) ? formatFloat(v) : std::to_string(static_cast<int64_t>(v)));
        }
        default:
            throw AttributeError(where + ": attribute '" + a.name() + "' is a graph, sparse tensor or type, which is not supported");
        }
    }

    // The value of a Constant node.
    Tensor constantValue(const onnx::NodeProto& node, const std::string& baseDir, const std::string& where)
    {
        for (const auto& a : node.attribute()) {
            const std::string what = where + ": attribute '" + a.name() + "'";
            if (a.name() == "value") return tensorFromProto(a.t(), baseDir, what);
            if (a.name() == "value_float") return Tensor::fromTyped<float>(Shape::scalar(), std::vector<float> { a.f() });
            if (a.name() == "value_int")
                return Tensor::fromTyped<int64_t>(Shape::scalar(), std::vector<int64_t> { a.i() });
            if (a.name() == "value_floats") {
                std::vector<float> v(a.floats().begin(), a.floats().end());
                return Tensor::fromTyped<float>(Shape({ static_cast<int64_t>(v.size()) }), v);
            }
            if (a.name() == "value_ints") {
                std::vector<int64_t> v(a.ints().begin(), a.ints().end());
                return Tensor::fromTyped<int64_t>(Shape({ static_cast<int64_t>(v.size()) }), v);
            }
            throw AttributeError(what + " is not supported (strings and sparse tensors are not)");
        }
        throw AttributeError(where + ": a Constant without a value");
    }

    // `__in<k>__` text of a small constant: "[1, -1]".
    std::optional<std::string> inlineValue(const Tensor& t)
    {
        if (t.ndim() > 1 || t.size() > static_cast<int64_t>(onnx_ops::kMaxInlineValues)) return std::nullopt;
        std::vector<std::string> items;
        const TensorView v = t.view();
        for (int64_t i = 0; i < t.size(); ++i)
            items.push_back(isFloatingType(t.dtype()) ? formatFloat(v.valueAt(i))
                                                      : std::to_string(static_cast<int64_t>(v.valueAt(i))));
        return listOf(items);
    }

    // PyTorch writes name scopes into node names ("/layer1/layer1.0/conv1/Conv"): the block path is
    // everything before the last '/'.
    std::string blockPathOf(const std::string& nodeName)
    {
        if (nodeName.empty() || nodeName[0] != '/') return {};
        const size_t last = nodeName.rfind('/');
        return last == 0 ? std::string() : nodeName.substr(1, last - 1);
    }

    class Builder {
    public:
        Builder(const OnnxDocument::Impl& doc)
            : m_doc(doc)
        {
        }

        OnnxGraph run(const std::vector<Shape>& shapes, const std::vector<DType>& types,
            const std::map<std::string, Tensor>& values);

    private:
        void addNode(const onnx::NodeProto& node, const std::string& name);
        bool fold(const onnx::NodeProto& node, const std::string& name, const AttrMap& attrs,
            const std::vector<const Value*>& inputs);
        NodeEntry entryOf(const std::string& valueName);
        void legacyPreluSlope(const onnx::NodeProto& node);
        std::string where(const std::string& name, const std::string& op) const
        {
            return m_doc.path + ": node '" + name + "' (" + op + ")";
        }

        const OnnxDocument::Impl& m_doc;
        std::map<std::string, Value> m_values;
        Graph m_graph;
        OnnxGraph m_out;
        std::set<std::string> m_nodeNames;
    };

    NodeEntry Builder::entryOf(const std::string& valueName)
    {
        Value& v = m_values.at(valueName);
        if (!v.inGraph) { // a constant read by a node that runs: a variable holding it
            AttrMap attrs;
            attrs["__const__"] = "1"; // its value is known before the run (a parameter of the block)
            if (!v.folded.empty()) attrs["__folded__"] = v.folded;
            attrs["__dtype__"] = std::to_string(mxnetCode(v.dtype));
            attrs["__shape__"] = v.shape.str();
            v.entry = { m_graph.addVariable(valueName, attrs), 0, 0 };
            v.inGraph = true;
            m_out.constants[valueName] = v.value;
        }
        return v.entry;
    }

    // Before opset 7, PRelu's 1-D slope of C values was per channel (axis 1); the version converter
    // leaves it as it is, so it is shaped (C, 1, …) for the broadcasting PRelu reads from opset 7.
    void Builder::legacyPreluSlope(const onnx::NodeProto& node)
    {
        if (node.input_size() < 2) return;
        auto x = m_values.find(node.input(0));
        auto slope = m_values.find(node.input(1));
        if (x == m_values.end() || slope == m_values.end() || !slope->second.known || slope->second.inGraph) return;
        const Shape& xs = x->second.shape;
        Tensor& v = slope->second.value;
        if (v.ndim() != 1 || xs.ndim() < 3 || v.size() != xs[1] || v.size() == xs[xs.ndim() - 1]) return;
        Shape s({ v.size() });
        for (int d = 2; d < xs.ndim(); ++d)
            s.push_back(1);
        v = v.reshape(s);
        slope->second.shape = s;
    }

    bool Builder::fold(const onnx::NodeProto& node, const std::string& name, const AttrMap& attrs,
        const std::vector<const Value*>& inputs)
    {
        std::vector<Tensor> outs;
        const std::string& op = node.op_type();
        if ((op == "Shape" || op == "Size") && !inputs.empty() && inputs[0] && inputs[0]->shape.determined()) {
            const Shape& s = inputs[0]->shape;
            if (op == "Size") {
                outs.push_back(Tensor::fromTyped<int64_t>(Shape::scalar(), std::vector<int64_t> { s.size() }));
            } else {
                int64_t rank = s.ndim(), start = 0, end = rank;
                for (const auto& a : node.attribute()) {
                    if (a.name() == "start") start = a.i();
                    if (a.name() == "end") end = a.i();
                }
                if (start < 0) start += rank;
                if (end < 0) end += rank;
                start = std::clamp<int64_t>(start, 0, rank);
                end = std::clamp<int64_t>(end, start, rank);
                std::vector<int64_t> dims(s.dims().begin() + start, s.dims().begin() + end);
                outs.push_back(Tensor::fromTyped<int64_t>(Shape({ static_cast<int64_t>(dims.size()) }), dims));
            }
        } else {
            int64_t elements = 0;
            for (const Value* v : inputs) {
                if (v && !v->known) return false;
                if (v) elements += v->value.size();
            }
            if (elements > kMaxFoldElements) return false;
            Graph tmp;
            std::vector<NodeEntry> entries;
            std::vector<Tensor> values;
            for (const Value* v : inputs) {
                if (!v) continue;
                entries.push_back({ tmp.addVariable("in" + std::to_string(entries.size())), 0, 0 });
                values.push_back(v->value);
            }
            const uint32_t id = tmp.addOp(op, name, attrs, entries);
            std::vector<NodeEntry> heads;
            for (int k = 0; k < tmp.node(id).numOutputs; ++k)
                heads.push_back({ id, static_cast<uint32_t>(k), 0 });
            tmp.setHeads(heads);
            tmp.finalize();
            Executor ex(std::make_shared<Graph>(std::move(tmp)));
            RunResult r = ex.run(values);
            for (Tensor& t : r.outputs)
                outs.push_back(t.copy());
            if (!outs.empty() && outs[0].size() > kMaxFoldElements) return false;
        }
        for (int k = 0; k < node.output_size() && k < static_cast<int>(outs.size()); ++k) {
            if (node.output(k).empty()) continue;
            Value v;
            v.known = true;
            v.value = outs[static_cast<size_t>(k)];
            v.shape = v.value.shape();
            v.dtype = v.value.dtype();
            v.folded = op + " " + name;
            m_values[node.output(k)] = std::move(v);
        }
        ++m_out.foldedNodes;
        return true;
    }

    void Builder::addNode(const onnx::NodeProto& node, const std::string& name)
    {
        const std::string& op = node.op_type();
        const std::string here = where(name, op);
        if (op == "Constant") {
            Value v;
            v.known = true;
            v.value = constantValue(node, m_doc.baseDir, here);
            v.shape = v.value.shape();
            v.dtype = v.value.dtype();
            v.folded = "Constant " + name;
            m_values[node.output(0)] = std::move(v);
            return;
        }
        if (op == "PRelu" && m_doc.originalOpset < 7) legacyPreluSlope(node);
        AttrMap attrs;
        for (const auto& a : node.attribute())
            attrs[a.name()] = attributeText(a, here);
        attrs["__domain__"] = "ai.onnx";
        attrs["__opset__"] = std::to_string(m_doc.opset);
        // Inputs: absent optional ones ("") are left out and the present slots listed.
        std::vector<const Value*> inputs;
        std::vector<std::string> slots;
        int last = -1;
        for (int k = 0; k < node.input_size(); ++k)
            if (!node.input(k).empty()) last = k;
        bool gap = false;
        for (int k = 0; k <= last; ++k) {
            const std::string& in = node.input(k);
            if (in.empty()) {
                gap = true;
                continue;
            }
            auto it = m_values.find(in);
            if (it == m_values.end())
                throw GraphError(here + ": input " + std::to_string(k) + " '" + in + "' is not produced before it");
            inputs.push_back(&it->second);
            slots.push_back(std::to_string(k));
            const Value& in_ = it->second;
            const Tensor& known = in_.known ? in_.value : in_.hint;
            if (known.defined())
                if (auto text = inlineValue(known)) {
                    attrs["__in" + std::to_string(k) + "__"] = *text;
                    if (!in_.known) m_out.valueInputs.insert(in_.inputName);
                }
        }
        attrs["__ninputs__"] = std::to_string(inputs.size());
        if (gap) attrs["__inputs__"] = listOf(slots);
        int outputs = 0;
        for (int k = 0; k < node.output_size(); ++k)
            if (!node.output(k).empty()) outputs = k + 1;
        attrs["__noutputs__"] = std::to_string(std::max(outputs, 1));

        try {
            if (fold(node, name, attrs, inputs)) return;
        } catch (const Error& e) {
            rethrowWith(here + ": ", e);
        }

        std::vector<NodeEntry> entries;
        std::vector<Shape> inShapes;
        std::vector<DType> inTypes;
        for (int k = 0; k <= last; ++k) {
            if (node.input(k).empty()) continue;
            entries.push_back(entryOf(node.input(k)));
            inShapes.push_back(m_values.at(node.input(k)).shape);
            inTypes.push_back(m_values.at(node.input(k)).dtype);
        }
        uint32_t id = 0;
        try {
            id = m_graph.addOp(op, name, attrs, entries, blockPathOf(node.name()));
        } catch (const Error& e) {
            rethrowWith(m_doc.path + ": ", e);
        }
        const Node& n = m_graph.node(id);
        std::vector<Shape> outShapes(static_cast<size_t>(n.numOutputs));
        std::vector<DType> outTypes(static_cast<size_t>(n.numOutputs), DType::Float32);
        try {
            n.def->inferShape(*n.params, inShapes, outShapes);
            n.def->inferTypes(*n.params, inTypes, outTypes);
        } catch (const Error& e) {
            rethrowWith(here + ": ", e);
        }
        for (int k = 0; k < node.output_size() && k < n.numOutputs; ++k) {
            if (node.output(k).empty()) continue;
            Value v;
            v.shape = outShapes[static_cast<size_t>(k)];
            v.dtype = outTypes[static_cast<size_t>(k)];
            v.inGraph = true;
            v.entry = { id, static_cast<uint32_t>(k), 0 };
            m_values[node.output(k)] = std::move(v);
        }
    }

    OnnxGraph Builder::run(const std::vector<Shape>& shapes, const std::vector<DType>& types,
        const std::map<std::string, Tensor>& values)
    {
        const onnx::GraphProto& g = m_doc.model.graph();
        if (shapes.size() != m_doc.inputs.size())
            throw UsageError(m_doc.path + ": " + std::to_string(m_doc.inputs.size()) + " inputs, "
                + std::to_string(shapes.size()) + " shapes given");
        for (const auto& t : g.initializer()) {
            Value v;
            v.known = true;
            v.value = tensorFromProto(t, m_doc.baseDir, m_doc.path + ": initializer '" + t.name() + "'");
            v.shape = v.value.shape();
            v.dtype = v.value.dtype();
            m_values[t.name()] = std::move(v);
        }
        for (size_t i = 0; i < m_doc.inputs.size(); ++i) {
            const OnnxInputInfo& info = m_doc.inputs[i];
            const Shape& s = shapes[i];
            const DType t = i < types.size() ? types[i] : info.dtype;
            if (t != info.dtype)
                throw TypeError(m_doc.path + ": input '" + info.name + "' is " + dtypeName(info.dtype) + ", given "
                    + dtypeName(t));
            if (!s.determined())
                throw ShapeError(m_doc.path + ": input '" + info.name + "' needs a shape " + info.describe());
            bool fits = !info.rankKnown || static_cast<size_t>(s.ndim()) == info.dims.size();
            for (size_t d = 0; fits && info.rankKnown && d < info.dims.size(); ++d)
                fits = info.dims[d] < 0 || info.dims[d] == s[static_cast<int>(d)];
            if (!fits)
                throw ShapeError(m_doc.path + ": input '" + info.name + "': the model declares " + info.describe()
                    + ", given " + s.str());
            Value v;
            v.shape = s;
            v.dtype = t;
            AttrMap attrs;
            if (t != DType::Float32) attrs["__dtype__"] = std::to_string(mxnetCode(t));
            v.entry = { m_graph.addVariable(info.name, attrs), 0, 0 };
            m_graph.pinVariable(v.entry.node);
            v.inGraph = true;
            v.inputName = info.name;
            if (auto it = values.find(info.name); it != values.end() && it->second.shape() == s && it->second.dtype() == t)
                v.hint = it->second;
            m_values[info.name] = std::move(v);
            m_out.inputNames.push_back(info.name);
        }
        std::map<std::string, int> counts;
        for (const auto& node : g.node()) {
            std::string name = node.name().empty() ? node.op_type() + "_" + std::to_string(counts[node.op_type()])
                                                   : node.name();
            ++counts[node.op_type()];
            for (int k = 2; m_nodeNames.count(name); ++k)
                name = (node.name().empty() ? node.op_type() : node.name()) + "_" + std::to_string(k);
            m_nodeNames.insert(name);
            addNode(node, name);
        }
        std::vector<NodeEntry> heads;
        for (const auto& out : g.output()) {
            if (!m_values.count(out.name()))
                throw GraphError(m_doc.path + ": graph output '" + out.name() + "' is not produced by any node");
            heads.push_back(entryOf(out.name()));
            m_out.outputNames.push_back(out.name());
        }
        m_graph.setHeads(heads);
        m_graph.finalize();
        m_out.graph = std::move(m_graph);
        // Only what the finalized graph still reads.
        std::map<std::string, Tensor> kept;
        for (uint32_t v : m_out.graph.variables()) {
            auto it = m_out.constants.find(m_out.graph.node(v).name);
            if (it != m_out.constants.end()) kept.insert(*it);
        }
        m_out.constants = std::move(kept);
        return std::move(m_out);
    }
}

OnnxGraph buildGraph(const OnnxDocument::Impl& doc, const std::vector<Shape>& inputShapes,
    const std::vector<DType>& inputTypes, const std::map<std::string, Tensor>& inputValues)
{
    Builder b(doc);
    return b.run(inputShapes, inputTypes, inputValues);
}

} // namespace opscope::onnx_io
