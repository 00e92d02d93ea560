// opscope-cli explain: why a classifier gave its answer for one input (debug/explain.h).

#include "cli/explain_command.h"

#include "cli/commands.h"
#include "core/error.h"
#include "debug/explain.h"
#include "io/npy.h"
#include "io/png.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>

namespace opscope::cli {

namespace {

std::string className(const std::vector<std::string>& names, int64_t k)
{
    return k >= 0 && static_cast<size_t>(k) < names.size() ? names[static_cast<size_t>(k)] : std::string();
}

// The explanation over the input (debug::heatOverlayRgb, opacity 0.75), scaled up by whole pixels to
// about 280 pixels on the long side.
std::vector<uint8_t> overlay(const Tensor& input, const Tensor& heat, int& width, int& height)
{
    const std::vector<uint8_t> small = debug::heatOverlayRgb(input, heat, 0.75);
    if (small.empty()) {
        width = height = 0;
        return {};
    }
    const int64_t h = heat.shape()[0], w = heat.shape()[1];
    const int scale = static_cast<int>(std::max<int64_t>(1, 280 / std::max(h, w)));
    width = static_cast<int>(w) * scale;
    height = static_cast<int>(h) * scale;
    std::vector<uint8_t> rgb(static_cast<size_t>(width) * static_cast<size_t>(height) * 3);
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x)
            for (int k = 0; k < 3; ++k)
                rgb[(static_cast<size_t>(y) * static_cast<size_t>(width) + static_cast<size_t>(x)) * 3 + static_cast<size_t>(k)]
                    = small[(static_cast<size_t>(y / scale) * static_cast<size_t>(w) + static_cast<size_t>(x / scale)) * 3
                        + static_cast<size_t>(k)];
    return rgb;
}

} // namespace

int explainCommand(const ExplainOptions& o)
{
    debug::ExplainOptions eo;
    try {
        eo.method = debug::parseMethod(o.method);
    } catch (const Error& e) {
        return fail(kUsage, std::string("explain: ") + e.what());
    }
    eo.classIndex = o.classIndex;
    eo.layer = o.layer;
    eo.patch = o.patch;
    eo.stride = o.stride;
    eo.topK = o.top;
    RunOptions ro;
    ro.model = o.model;
    ro.params = o.params;
    ro.inputs = o.inputs;
    ro.seed = o.seed;
    load::LoadedModel m;
    std::vector<Tensor> inputs;
    if (const int status = prepareRun(ro, m, inputs); status != kOk) return status;
    if (inputs.size() != 1)
        return fail(kUsage, "explain: the model takes " + std::to_string(inputs.size())
                + " inputs; explaining needs a model of one input");
    debug::Explanation e;
    try {
        m.block->hybridize();
        e = debug::explain(*m.block, inputs[0], eo);
    } catch (const UsageError& x) {
        return fail(kUsage, std::string("explain: ") + x.what());
    } catch (const ShapeError& x) {
        return fail(kUsage, std::string("explain: ") + x.what());
    } catch (const std::exception& x) {
        return fail(kRunFailed, std::string("explain: ") + x.what());
    }
    // Where it is strongest.
    int64_t peakAt = 0;
    for (int64_t i = 1; i < e.heat.size(); ++i)
        if (std::fabs(e.heat.data()[i]) > std::fabs(e.heat.data()[peakAt])) peakAt = i;
    const int64_t cols = e.heat.ndim() == 2 ? e.heat.shape()[1] : e.heat.size();
    const std::string name = className(m.classNames, e.classIndex);
    std::cout << debug::methodName(e.method) << " of class " << e.classIndex << (name.empty() ? "" : " (" + name + ")")
              << ", score " << e.score << (e.layer.empty() ? "" : ", layer " + e.layer) << "\n";
    std::cout << "top classes:";
    for (const auto& [k, s] : e.top) {
        const std::string n = className(m.classNames, k);
        std::cout << "  " << k << (n.empty() ? "" : " " + n) << " " << s;
    }
    std::cout << "\nheat " << e.heat.shape().str() << ", strongest at row " << peakAt / cols << ", column "
              << peakAt % cols << " (" << e.heat.data()[peakAt] << ")\n";
    try {
        if (!o.output.empty()) {
            writeNpy(o.output, e.heat.view());
            std::cout << "wrote " << o.output << "\n";
        }
        if (!o.png.empty()) {
            if (inputs[0].ndim() != 4 || e.heat.ndim() != 2)
                return fail(kUsage, "explain: --png needs an image input (1, C, H, W), not " + inputs[0].shape().str());
            int w = 0, h = 0;
            const std::vector<uint8_t> rgb = overlay(inputs[0], e.heat, w, h);
            if (rgb.empty())
                return fail(kUsage, "explain: --png needs a float32 image input (1, C, H, W) and a map of its size");
            writePng(o.png, w, h, rgb);
            std::cout << "wrote " << o.png << "\n";
        }
        if (!o.json.empty()) {
            nlohmann::json j;
            j["method"] = debug::methodName(e.method);
            j["class"] = e.classIndex;
            j["class_name"] = name;
            j["score"] = e.score;
            j["layer"] = e.layer;
            j["top"] = nlohmann::json::array();
            for (const auto& [k, s] : e.top)
                j["top"].push_back({ { "class", k }, { "name", className(m.classNames, k) }, { "score", s } });
            j["heat_shape"] = e.heat.shape().dims();
            j["peak"] = { { "row", peakAt / cols }, { "col", peakAt % cols }, { "value", e.heat.data()[peakAt] } };
            std::ofstream out(o.json);
            out << j.dump(2) << "\n";
            if (!out) throw FileError(o.json + ": cannot write");
            std::cout << "wrote " << o.json << "\n";
        }
    } catch (const FileError& x) {
        return fail(kUsage, std::string("explain: ") + x.what());
    }
    return kOk;
}

} // namespace opscope::cli
