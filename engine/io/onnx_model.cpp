// Reading an ONNX model: parse, onnx::checker, version conversion of old opsets, ONNX's shape
// inference, then what the engine needs to know before building: the inputs the user gives and
// every operator it lacks.

#include "io/onnx_model.h"

#include "core/error.h"
#include "io/onnx_model_impl.h"
#include "io/onnx_proto.h"
#include "io/onnx_tensor.h"
#include "ops/attrs.h"
#include "ops/registry.h"

#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>
#include <set>

namespace opscope {

Shape OnnxInputInfo::staticShape() const
{
    if (!rankKnown) return Shape();
    if (dims.empty()) return Shape::scalar();
    Shape s;
    for (int64_t d : dims) {
        if (d < 0) return Shape();
        s.push_back(d);
    }
    return s;
}

std::string OnnxInputInfo::describe() const
{
    if (!rankKnown) return "(rank unknown)";
    std::string out = "(";
    for (size_t i = 0; i < dims.size(); ++i) {
        if (i) out += ", ";
        out += dims[i] >= 0 ? std::to_string(dims[i]) : symbols[i].empty() ? "?" : symbols[i];
    }
    return out + (dims.size() == 1 ? ",)" : ")");
}

std::vector<std::string> onnxOpTypes(const std::string& path)
{
    onnx::ModelProto model;
    std::vector<std::string> out;
    try {
        onnx_io::parseProtoFile(path, model, "ONNX model");
    } catch (const Error&) {
        return out;
    }
    for (const auto& n : model.graph().node())
        if (std::find(out.begin(), out.end(), n.op_type()) == out.end()) out.push_back(n.op_type());
    return out;
}

bool isOnnxPath(const std::string& path)
{
    if (path.size() < 5) return false;
    std::string ext = path.substr(path.size() - 5);
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
    return ext == ".onnx";
}

namespace {
    constexpr int kMinOpset = 7;
    constexpr int kMaxOpset = 17;

    bool isOnnxDomain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

    // An exception from ONNX's libraries on one line (the checker's carry the node's context on
    // following lines).
    std::string onnxMessage(const std::exception& e)
    {
        std::string s;
        for (const char* p = e.what(); *p; ++p) { // one line: runs of white space become one space
            const bool space = *p == '\n' || *p == ' ' || *p == '\t';
            if (space && (s.empty() || s.back() == ' ')) continue;
            s += space ? ' ' : *p;
        }
        while (!s.empty() && s.back() == ' ')
            s.pop_back();
        return s;
    }
}

namespace {
    // ONNX 1.12's shape inference divides by some attributes without checking them (a Conv with
    // strides 0 is a division by zero in convPoolShapeInference): what it would trip on is refused
    // first, naming the node.
    // ONNX's shape inference takes a convolution's window from its weight when kernel_shape is not
    // given, and indexes pads, strides and dilations (sized by the input's rank) with it: a weight of
    // another rank than the input reads past their ends. With the window written out (what the
    // attribute means anyway), the inference compares the ranks and fails cleanly instead.
    void pinConvolutionWindows(onnx::GraphProto& g, std::map<std::string, std::vector<int64_t>> known = {})
    {
        // Weights whose shapes the file states: initializers, Constant outputs, fully typed inputs.
        for (const auto& t : g.initializer())
            known[t.name()] = { t.dims().begin(), t.dims().end() };
        for (const auto& in : g.input()) {
            if (!in.type().has_tensor_type() || !in.type().tensor_type().has_shape()) continue;
            std::vector<int64_t> dims;
            bool all = true;
            for (const auto& d : in.type().tensor_type().shape().dim()) {
                all = all && d.has_dim_value();
                dims.push_back(d.dim_value());
            }
            if (all && !known.count(in.name())) known[in.name()] = dims;
        }
        for (const auto& node : g.node())
            if (node.op_type() == "Constant" && node.output_size() == 1)
                for (const auto& a : node.attribute())
                    if (a.name() == "value" && a.has_t()) known[node.output(0)] = { a.t().dims().begin(), a.t().dims().end() };
        for (auto& node : *g.mutable_node()) {
            // Convolutions inside If, Loop and Scan bodies see the outer graph's names too.
            for (auto& a : *node.mutable_attribute()) {
                if (a.has_g()) pinConvolutionWindows(*a.mutable_g(), known);
                for (auto& sub : *a.mutable_graphs())
                    pinConvolutionWindows(sub, known);
            }
            const std::string& op = node.op_type();
            int weight = -1;
            if (op == "Conv" || op == "ConvTranspose" || op == "ConvInteger" || op == "DeformConv") weight = 1;
            if (op == "QLinearConv") weight = 3;
            if (weight < 0 || node.input_size() <= weight) continue;
            bool given = false;
            for (const auto& a : node.attribute())
                given = given || a.name() == "kernel_shape";
            auto it = known.find(node.input(weight));
            if (given || it == known.end() || it->second.size() < 3) continue;
            bool positive = true;
            for (size_t d = 2; d < it->second.size(); ++d)
                positive = positive && it->second[d] >= 1 && it->second[d] <= kMaxAttrInt;
            if (!positive) continue; // an empty window is refused with the weight named, later
            onnx::AttributeProto* a = node.add_attribute();
            a->set_name("kernel_shape");
            a->set_type(onnx::AttributeProto::INTS);
            for (size_t d = 2; d < it->second.size(); ++d)
                a->add_ints(it->second[d]);
        }
    }

    void checkBeforeOnnxInference(const onnx::GraphProto& g, const std::string& path)
    {
        // The version converter's import also assumes every value is produced once, before it is
        // read, and every graph output produced (it crashes otherwise).
        std::set<std::string> produced;
        for (const auto& vi : g.input())
            produced.insert(vi.name());
        for (const auto& t : g.initializer())
            produced.insert(t.name());
        std::map<std::string, int> seen;
        for (const auto& node : g.node()) {
            const std::string name = node.name().empty() ? node.op_type() + "_" + std::to_string(seen[node.op_type()]) : node.name();
            ++seen[node.op_type()];
            for (const auto& in : node.input())
                if (!in.empty() && !produced.count(in))
                    throw FileError(path + ": node '" + name + "' (" + node.op_type() + ") reads '" + in
                        + "', which nothing before it produces");
            for (const auto& out : node.output())
                if (!out.empty() && !produced.insert(out).second)
                    throw FileError(path + ": node '" + name + "' (" + node.op_type() + ") produces '" + out
                        + "', which is produced already");
        }
        for (const auto& vi : g.output())
            if (!produced.count(vi.name()))
                throw FileError(path + ": graph output '" + vi.name() + "' is not produced by any node");
        static const std::set<std::string> windowed = { "Conv", "ConvTranspose", "ConvInteger", "QLinearConv",
            "MaxPool", "AveragePool", "LpPool", "MaxUnpool", "MaxRoiPool", "DeformConv" };
        std::map<std::string, int> counts;
        for (const auto& node : g.node()) {
            const std::string name = node.name().empty() ? node.op_type() + "_" + std::to_string(counts[node.op_type()])
                                                         : node.name();
            ++counts[node.op_type()];
            if (!windowed.count(node.op_type())) continue;
            for (const auto& a : node.attribute()) {
                const bool positive = a.name() == "strides" || a.name() == "dilations" || a.name() == "kernel_shape"
                    || a.name() == "group";
                const bool nonNegative = a.name() == "pads" || a.name() == "output_padding";
                if (!positive && !nonNegative) continue;
                auto bad = [&](int64_t v) { return positive ? v < 1 : v < 0; };
                bool wrong = a.type() == onnx::AttributeProto::INT && bad(a.i());
                for (int64_t v : a.ints())
                    wrong = wrong || bad(v) || v > kMaxAttrInt;
                if (wrong)
                    throw FileError(path + ": node '" + name + "' (" + node.op_type() + "): attribute '" + a.name()
                        + "' must be " + (positive ? "positive" : "zero or more"));
            }
        }
    }
}

OnnxDocument OnnxDocument::read(const std::string& path)
{
    auto impl = std::make_shared<Impl>();
    impl->path = path;
    impl->baseDir = std::filesystem::path(path).parent_path().string();
    onnx_io::parseProtoFile(path, impl->model, "ONNX model");
    return normalise(std::move(impl), true);
}

OnnxDocument OnnxDocument::fromBytes(const std::string& bytes, const std::string& name)
{
    auto impl = std::make_shared<Impl>();
    impl->path = name;
    if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()) || !impl->model.ParseFromString(bytes))
        throw FileError(name + ": not a valid ONNX model (protobuf parse error in " + std::to_string(bytes.size())
            + " bytes)");
    return normalise(std::move(impl), false);
}

OnnxDocument OnnxDocument::normalise(std::shared_ptr<Impl> impl, bool fromFile)
{
    const std::string& path = impl->path;
    onnx::ModelProto& model = impl->model;
    if (!model.has_graph()) throw FileError(path + ": not an ONNX model (it has no graph)");

    int opset = -1;
    for (const auto& imp : model.opset_import()) {
        if (isOnnxDomain(imp.domain())) opset = static_cast<int>(imp.version());
    }
    if (opset < 0 && model.ir_version() < 3) opset = 1; // IR 1-2 had no opset_import: ONNX's default
    if (opset < 0) throw FileError(path + ": the model imports no opset of ONNX's default domain");
    if (opset > kMaxOpset)
        throw FileError(path + ": opset " + std::to_string(opset) + " is newer than this build supports (7 to "
            + std::to_string(kMaxOpset) + ")");

    try {
        // External data is checked relative to the model's folder, which only the path form knows.
        bool external = false;
        for (const auto& t : model.graph().initializer())
            external = external || t.data_location() == onnx::TensorProto::EXTERNAL;
        if (external && !fromFile)
            throw FileError(path + ": external data is only read beside a model file");
        if (external)
            onnx::checker::check_model(path);
        else
            onnx::checker::check_model(model);
    } catch (const std::exception& e) {
        throw FileError(path + ": the model fails ONNX's checker: " + onnxMessage(e));
    }
    impl->originalOpset = opset;
    checkBeforeOnnxInference(model.graph(), path);
    pinConvolutionWindows(*model.mutable_graph());
    if (opset < kMinOpset) {
        try {
            // The converter's adapters need the shapes shape inference gives.
            onnx::shape_inference::InferShapes(model);
            model = onnx::version_conversion::ConvertVersion(model, kMinOpset);
        } catch (const std::exception& e) {
            throw FileError(path + ": opset " + std::to_string(opset) + " is older than 7 and ONNX's version converter "
                + "cannot upgrade it: " + onnxMessage(e));
        }
        opset = kMinOpset;
    }
    checkBeforeOnnxInference(model.graph(), path); // the converter may have added nodes
    try {
        onnx::shape_inference::InferShapes(model);
    } catch (const std::exception& e) {
        throw FileError(path + ": ONNX's shape inference fails: " + onnxMessage(e));
    }
    impl->opset = opset;

    const onnx::GraphProto& g = model.graph();
    // Every operator the engine lacks, with every node using it, at once.
    std::map<std::string, std::vector<std::string>> missing;
    std::map<std::string, int> counts;
    for (const auto& node : g.node()) {
        const std::string name = node.name().empty() ? node.op_type() + "_" + std::to_string(counts[node.op_type()])
                                                     : node.name();
        ++counts[node.op_type()];
        if (!isOnnxDomain(node.domain())) {
            missing[node.domain() + "." + node.op_type()].push_back(name);
            continue;
        }
        if (node.op_type() == "Constant") continue;
        if (!OpRegistry::instance().find("onnx::" + node.op_type())) missing[node.op_type()].push_back(name);
    }
    if (!missing.empty()) {
        std::string list;
        for (const auto& [op, nodes] : missing) {
            list += (list.empty() ? "" : "; ") + op + " (";
            for (size_t i = 0; i < nodes.size() && i < 5; ++i)
                list += (i ? ", " : "") + nodes[i];
            if (nodes.size() > 5) list += " and " + std::to_string(nodes.size() - 5) + " more";
            list += ")";
        }
        throw FileError(path + ": unsupported operator" + (missing.size() > 1 ? "s: " : ": ") + list);
    }
    std::set<std::string> initialized;
    for (const auto& t : g.initializer())
        initialized.insert(t.name());
    for (const auto& vi : g.input()) {
        if (initialized.count(vi.name())) continue; // IR < 4 lists initializers among inputs: a parameter
        OnnxInputInfo info;
        info.name = vi.name();
        const auto& type = vi.type();
        if (!type.has_tensor_type())
            throw FileError(path + ": input '" + vi.name() + "' is not a tensor (sequences and maps are not supported)");
        const auto dt = dtypeFromOnnx(type.tensor_type().elem_type());
        if (!dt)
            throw FileError(path + ": input '" + vi.name() + "' has element type "
                + onnxTypeName(type.tensor_type().elem_type()) + ", which is not supported");
        info.dtype = *dt;
        if (type.tensor_type().has_shape()) {
            info.rankKnown = true;
            for (const auto& d : type.tensor_type().shape().dim()) {
                info.dims.push_back(d.has_dim_value() && d.dim_value() >= 0 ? d.dim_value() : -1);
                info.symbols.push_back(d.has_dim_param() ? d.dim_param() : "");
            }
        }
        for (int64_t d : info.dims)
            if (d > (int64_t(1) << 40))
                throw FileError(path + ": input '" + vi.name() + "' declares dimension " + std::to_string(d)
                    + ", more than any tensor can have");
        if (info.dims.size() > static_cast<size_t>(Shape::kMaxDims))
            throw FileError(path + ": input '" + vi.name() + "' has " + std::to_string(info.dims.size())
                + " dimensions; tensors have at most " + std::to_string(Shape::kMaxDims));
        try {
            (void)info.staticShape().size(); // the declared element count must fit int64
        } catch (const ResourceError& e) {
            throw FileError(path + ": input '" + vi.name() + "' " + info.describe() + ": " + e.what());
        }
        impl->inputs.push_back(std::move(info));
    }

    OnnxDocument doc;
    doc.m = std::move(impl);
    return doc;
}

const std::string& OnnxDocument::path() const
{
    return m->path;
}

int OnnxDocument::opset() const
{
    return m->opset;
}

int64_t OnnxDocument::irVersion() const
{
    return m->model.ir_version();
}

std::string OnnxDocument::producer() const
{
    const auto& model = m->model;
    return model.producer_name() + (model.producer_version().empty() ? "" : " " + model.producer_version());
}

const std::vector<OnnxInputInfo>& OnnxDocument::inputs() const
{
    return m->inputs;
}

std::vector<std::string> OnnxDocument::outputs() const
{
    std::vector<std::string> out;
    for (const auto& vi : m->model.graph().output())
        out.push_back(vi.name());
    return out;
}

size_t OnnxDocument::nodeCount() const
{
    return static_cast<size_t>(m->model.graph().node_size());
}

OnnxGraph OnnxDocument::build(const std::vector<Shape>& inputShapes, const std::vector<DType>& inputTypes,
    const std::map<std::string, Tensor>& inputValues) const
{
    return onnx_io::buildGraph(*m, inputShapes, inputTypes, inputValues);
}

} // namespace opscope
