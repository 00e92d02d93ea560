#include "models/onnx_samples.h"

#include "gluon/onnx_block.h"
#include "io/onnx_model.h"
#include "tensor/random.h"

namespace opscope::samples {

extern const unsigned char kOnnxCnn[];
extern const std::size_t kOnnxCnn_size;
extern const unsigned char kOnnxTransformer[];
extern const std::size_t kOnnxTransformer_size;

namespace {
    Sample fromBytes(const unsigned char* bytes, std::size_t size, const std::string& name, std::vector<Tensor> inputs)
    {
        const OnnxDocument doc = OnnxDocument::fromBytes(std::string(reinterpret_cast<const char*>(bytes), size),
            "sample:" + name);
        std::vector<Shape> shapes;
        for (const Tensor& t : inputs)
            shapes.push_back(t.shape());
        OnnxGraph built = doc.build(shapes);
        Sample s;
        s.inputNames = built.inputNames;
        s.block = gluon::blockFromOnnx(std::move(built), "sample:" + name);
        s.defaultInputs = std::move(inputs);
        return s;
    }
}

Sample makeOnnxCnn(uint64_t seed)
{
    Generator gen(seed);
    return fromBytes(kOnnxCnn, kOnnxCnn_size, "onnx-cnn", { Tensor::uniform(Shape({ 1, 1, 28, 28 }), 0, 1, &gen) });
}

Sample makeOnnxTransformer(uint64_t seed)
{
    Generator gen(seed);
    // The last two of the 8 tokens are padding.
    Tensor mask = Tensor::zeros(Shape({ 1, 8 }), DType::Bool);
    mask.dataAs<bool>()[6] = mask.dataAs<bool>()[7] = true;
    return fromBytes(kOnnxTransformer, kOnnxTransformer_size, "onnx-transformer",
        { Tensor::normal(Shape({ 1, 8, 32 }), 0, 1, &gen), mask });
}

} // namespace opscope::samples
