#include "load/input_spec.h"

#include "core/error.h"
#include "io/npy.h"
#include "tensor/random.h"

namespace opscope::load {

Shape parseShapeX(const std::string& text)
{
    Shape s;
    size_t start = 0;
    while (true) {
        const size_t x = text.find('x', start);
        const std::string part = text.substr(start, x == std::string::npos ? std::string::npos : x - start);
        if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos)
            throw UsageError("shape '" + text + "': expected positive integers separated by 'x', like 1x1x28x28");
        if (part.size() > 18)
            throw UsageError("shape '" + text + "': dimension " + part + " is too large");
        const int64_t d = std::stoll(part);
        if (d <= 0) throw UsageError("shape '" + text + "': dimensions must be positive");
        if (s.ndim() == Shape::kMaxDims) throw UsageError("shape '" + text + "': at most 6 dimensions");
        s.push_back(d);
        if (x == std::string::npos) break;
        start = x + 1;
    }
    return s;
}

InputSpec parseInputSpec(const std::string& text)
{
    const size_t eq = text.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
        throw UsageError("--input '" + text + "': expected NAME=FILE.npy or NAME=SHAPE[:ones|zeros|uniform|normal]");
    InputSpec spec;
    spec.name = text.substr(0, eq);
    const std::string value = text.substr(eq + 1);
    if (value.size() > 4 && value.compare(value.size() - 4, 4, ".npy") == 0) {
        spec.file = value;
        return spec;
    }
    const size_t colon = value.find(':');
    spec.shape = parseShapeX(value.substr(0, colon));
    if (colon != std::string::npos) {
        spec.fill = value.substr(colon + 1);
        if (spec.fill != "ones" && spec.fill != "zeros" && spec.fill != "uniform" && spec.fill != "normal")
            throw UsageError(
                "--input '" + text + "': unknown fill '" + spec.fill + "' (ones, zeros, uniform or normal)");
    }
    return spec;
}

Tensor makeInput(const InputSpec& spec, uint64_t seed)
{
    if (!spec.file.empty()) return readNpy(spec.file);
    Generator gen(seed);
    if (spec.fill == "zeros") return Tensor::zeros(spec.shape);
    if (spec.fill == "uniform") return Tensor::uniform(spec.shape, 0.0f, 1.0f, &gen);
    if (spec.fill == "normal") return Tensor::normal(spec.shape, 0.0f, 1.0f, &gen);
    return Tensor::ones(spec.shape);
}

} // namespace opscope::load
