#include "load/onnx_loader.h"

#include "core/error.h"
#include "gluon/onnx_block.h"
#include "io/onnx_model.h"

#include <cstring>

namespace opscope::load {

namespace {
    void buildBlock(LoadedModel& m, const std::vector<Shape>& shapes, const std::map<std::string, Tensor>& values = {})
    {
        OnnxGraph built = m.onnx->build(shapes, m.inputTypes, values);
        const std::set<std::string> valueInputs = built.valueInputs;
        m.foldedNodes = built.foldedNodes;
        auto block = gluon::blockFromOnnx(std::move(built), m.source);
        m.block = std::move(block);
        m.builtShapes = shapes;
        m.builtValues.clear();
        for (const std::string& name : valueInputs)
            m.builtValues[name] = values.at(name).copy();
    }
}

void loadOnnx(const std::string& path, LoadedModel& m)
{
    m.fromFile = true;
    m.format = "onnx";
    try {
        m.onnx = std::make_shared<const OnnxDocument>(OnnxDocument::read(path));
        std::vector<Shape> shapes;
        for (const OnnxInputInfo& in : m.onnx->inputs()) {
            m.inputNames.push_back(in.name);
            m.inputTypes.push_back(in.dtype);
            const Shape s = in.staticShape();
            m.inputShapeHints.push_back(s);
            if (s.determined()) {
                shapes.push_back(s);
                continue;
            }
            if (!in.rankKnown)
                throw FileError(path + ": input '" + in.name + "' has no shape in the model (not even its rank)");
            Shape assumed;
            for (int64_t d : in.dims)
                assumed.push_back(d < 0 ? 1 : d);
            if (in.dims.empty()) assumed = Shape::scalar();
            m.notes.push_back("input '" + in.name + "' " + in.describe() + " has symbolic dimensions, taken as 1 until "
                + "the input is given (--input " + in.name + "=SHAPE)");
            shapes.push_back(assumed);
        }
        m.description = "ONNX model, opset " + std::to_string(m.onnx->opset()) + ", IR "
            + std::to_string(m.onnx->irVersion()) + (m.onnx->producer().empty() ? "" : ", from " + m.onnx->producer());
        buildBlock(m, shapes);
    } catch (const LoadError&) {
        throw;
    } catch (const Error& e) {
        throw LoadError(e.what());
    } catch (const std::bad_alloc&) {
        throw LoadError(path + ": out of memory while loading the model");
    } catch (const std::exception& e) {
        throw LoadError(path + ": " + e.what());
    }
}

void fitToInputs(LoadedModel& m, const std::vector<Shape>& inputShapes)
{
    if (!m.onnx) return;
    std::vector<Shape> shapes(inputShapes.begin(), inputShapes.begin()
            + static_cast<std::ptrdiff_t>(std::min(inputShapes.size(), m.inputNames.size())));
    if (shapes == m.builtShapes && m.builtValues.empty()) return;
    buildBlock(m, shapes);
}

void fitToInputs(LoadedModel& m, const std::vector<Tensor>& inputs)
{
    if (!m.onnx) return;
    std::vector<Shape> shapes;
    std::map<std::string, Tensor> values;
    for (size_t i = 0; i < inputs.size() && i < m.inputNames.size(); ++i) {
        shapes.push_back(inputs[i].shape());
        values[m.inputNames[i]] = inputs[i];
    }
    bool same = shapes == m.builtShapes;
    for (const auto& [name, built] : m.builtValues) {
        const Tensor& now = values.at(name);
        same = same && now.dtype() == built.dtype() && now.bytes() == built.bytes()
            && std::memcmp(now.raw(), built.raw(), built.bytes()) == 0;
    }
    if (same) return;
    buildBlock(m, shapes, values);
}

} // namespace opscope::load
