#include "models/registry.h"

#include "core/error.h"
#include "gluon/name_manager.h"
#include "io/params_file.h"
#include "models/onnx_samples.h"
#include "models/real_data.h"
#include "models/sample_models.h"
#include "tensor/random.h"

#include <mutex>

namespace opscope::samples {

extern const unsigned char kLenetWeights[];
extern const std::size_t kLenetWeights_size;
extern const unsigned char kFashionWeights[];
extern const std::size_t kFashionWeights_size;

namespace {
struct Entry {
    const char* name;
    const char* description;
    Sample (*make)(uint64_t seed);
    // Shipped trained weights (a .params file built into the library) and what they reach; none: the
    // weights are random from the seed.
    const char* trained = nullptr;
    const unsigned char* weights = nullptr;
    const std::size_t* weightsSize = nullptr;
    const char* weightsFile = nullptr;
    // Weights the model file itself holds (an ONNX sample's initializers): what they are.
    const char* ownWeights = nullptr;
};
const Entry kEntries[] = {
    { "mlp", "multilayer perceptron on 2-D points (spirals): Dense(32, relu), Dense(32, relu), Dense(3)", makeMlp },
    { "lenet", "the MNIST network of MXNet's Gluon tutorial: two tanh Conv2D + max pooling, two tanh Dense",
        makeLenet, "98.6 % on 1,996 held-out real MNIST digits", kLenetWeights, &kLenetWeights_size,
        "lenet-0000.params (built in)" },
    { "fashion", "a small CNN for Fashion-MNIST (clothes): two relu Conv2D + max pooling, Dense(64, relu), Dense(10)",
        makeFashion, "91.9 % on Fashion-MNIST's 10,000 test images", kFashionWeights, &kFashionWeights_size,
        "fashion-0000.params (built in)" },
    { "mini-resnet", "small residual network: Conv2D, BatchNorm, residual add, global average pooling",
        makeMiniResnet },
    { "tiny-transformer",
        "one attention block: Embedding, batch_dot attention, softmax, LayerNorm, Dense(flatten=false)",
        makeTinyTransformer },
    { "nan-demo", "a network whose log node turns negative values into NaN for its default input", makeNanDemo },
    { "onnx-cnn",
        "an ONNX model exported by PyTorch: two Conv, BatchNormalization, Relu and MaxPool stages, then Gemm",
        makeOnnxCnn, nullptr, nullptr, nullptr, nullptr, "the file's weights (PyTorch's initialisation, seed 0)" },
    { "onnx-transformer",
        "an ONNX model exported by PyTorch: two transformer encoder layers with a padding mask, GELU and "
        "LayerNormalization",
        makeOnnxTransformer, nullptr, nullptr, nullptr, nullptr,
        "the file's weights (PyTorch's initialisation, seed 0)" },
};
} // namespace

std::vector<std::string> sampleNames()
{
    std::vector<std::string> out;
    for (const Entry& e : kEntries)
        out.emplace_back(e.name);
    return out;
}

std::string sampleDescription(const std::string& name)
{
    for (const Entry& e : kEntries)
        if (name == e.name) return e.description;
    return {};
}

std::string sampleWeights(const std::string& name)
{
    for (const Entry& e : kEntries)
        if (name == e.name)
            return e.trained ? std::string("trained weights (") + e.trained + ")"
                : e.ownWeights ? std::string(e.ownWeights)
                               : std::string("random weights (from the seed)");
    return {};
}

Sample makeSample(const std::string& name, uint64_t seed, bool pretrained)
{
    // The names restart and the global generator is seeded for each sample: two threads making
    // samples at once (the window loading a model while a comparison makes its own) take turns.
    static std::mutex making;
    const std::lock_guard<std::mutex> lock(making);
    for (const Entry& e : kEntries) {
        if (name != e.name) continue;
        gluon::resetNaming();
        globalGenerator().seed(seed);
        Sample s = e.make(seed);
        if (pretrained && e.weights) {
            const std::string bytes(reinterpret_cast<const char*>(e.weights), *e.weightsSize);
            const gluon::ParameterDict params = s.block->collect_params();
            for (const auto& [key, value] : parseParams(bytes, e.weightsFile)) {
                const std::string pname = stripParamPrefix(key);
                if (!params.contains(pname)) throw Error(std::string(e.weightsFile) + ": unknown parameter " + pname);
                params.at(pname)->set_data(value.copy());
            }
        }
        // The parameters are fixed now (as they would be by the first call on the default input):
        // an input of another shape that contradicts them is refused, in the CLI and the window alike.
        std::vector<Shape> shapes;
        for (const Tensor& t : s.defaultInputs)
            shapes.push_back(t.shape());
        s.block->initializeFor(shapes);
        s.name = e.name;
        s.description = e.description;
        s.trainedWeights = pretrained && e.weights;
        if (s.name == "lenet") {
            for (int d = 0; d < 10; ++d)
                s.classNames.push_back(std::to_string(d));
        } else if (s.name == "fashion") {
            s.classNames = fashionClassNames();
        }
        if (s.inputNames.empty()) {
            for (size_t i = 0; i < s.defaultInputs.size(); ++i)
                s.inputNames.push_back(s.defaultInputs.size() == 1 ? std::string("data") : "data" + std::to_string(i));
        }
        return s;
    }
    std::string known;
    for (const Entry& e : kEntries)
        known += (known.empty() ? "" : ", ") + std::string(e.name);
    throw UsageError("unknown sample '" + name + "' (built-in samples: " + known + ")");
}

} // namespace opscope::samples
