#include "io/png.h"

#include "core/error.h"

#include <zlib.h>

#include <fstream>

namespace opscope {

namespace {

void put32(std::string& out, uint32_t v)
{
    for (int s = 24; s >= 0; s -= 8)
        out += static_cast<char>((v >> s) & 0xff);
}

void chunk(std::string& out, const char* type, const std::string& data)
{
    put32(out, static_cast<uint32_t>(data.size()));
    const std::string body = std::string(type, 4) + data;
    out += body;
    put32(out, static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(body.data()), static_cast<uInt>(body.size()))));
}

} // namespace

void writePng(const std::string& path, int width, int height, const std::vector<uint8_t>& rgb)
{
    if (width < 1 || height < 1 || rgb.size() != static_cast<size_t>(width) * static_cast<size_t>(height) * 3)
        throw UsageError(path + ": a PNG of " + std::to_string(width) + "×" + std::to_string(height) + " needs "
            + std::to_string(static_cast<int64_t>(width) * height * 3) + " bytes, not " + std::to_string(rgb.size()));
    // Each row: filter type 0 (none), then the row's bytes.
    std::string raw;
    raw.reserve(static_cast<size_t>(height) * (static_cast<size_t>(width) * 3 + 1));
    for (int y = 0; y < height; ++y) {
        raw += '\0';
        raw.append(reinterpret_cast<const char*>(rgb.data()) + static_cast<size_t>(y) * width * 3, static_cast<size_t>(width) * 3);
    }
    uLongf packedSize = compressBound(static_cast<uLong>(raw.size()));
    std::string packed(packedSize, '\0');
    if (compress2(reinterpret_cast<Bytef*>(packed.data()), &packedSize, reinterpret_cast<const Bytef*>(raw.data()),
            static_cast<uLong>(raw.size()), 6)
        != Z_OK)
        throw FileError(path + ": cannot compress the image");
    packed.resize(packedSize);
    std::string header;
    put32(header, static_cast<uint32_t>(width));
    put32(header, static_cast<uint32_t>(height));
    header += std::string { 8, 2, 0, 0, 0 }; // 8 bits, RGB, deflate, adaptive filtering, no interlace
    std::string file = "\x89PNG\r\n\x1a\n";
    chunk(file, "IHDR", header);
    chunk(file, "IDAT", packed);
    chunk(file, "IEND", {});
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(file.data(), static_cast<std::streamsize>(file.size()));
    if (!out) throw FileError(path + ": cannot write");
}

} // namespace opscope
