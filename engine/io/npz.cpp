#include "io/npz.h"

#include "core/error.h"
#include "io/npy.h"
#include "tensor/memory_limit.h"

#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <iterator>
#include <map>
#include <set>

namespace opscope {

namespace {

constexpr uint32_t kLocalSig = 0x04034b50, kCentralSig = 0x02014b50, kEndSig = 0x06054b50;
constexpr uint32_t kEnd64Sig = 0x06064b50, kLocator64Sig = 0x07064b50;
constexpr uint32_t kMax32 = 0xffffffffu;

[[noreturn]] void fail(const std::string& path, uint64_t offset, const std::string& why)
{
    throw FileError(path + ": byte " + std::to_string(offset) + ": " + why);
}

uint64_t le(const std::string& b, size_t at, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i)
        v = (v << 8) | static_cast<unsigned char>(b[at + static_cast<size_t>(i)]);
    return v;
}

class Archive {
public:
    explicit Archive(const std::string& path)
        : m_path(path)
        , m_in(path, std::ios::binary)
    {
        if (!m_in) throw FileError(path + ": cannot open for reading");
        m_in.seekg(0, std::ios::end);
        m_size = static_cast<uint64_t>(m_in.tellg());
    }

    // `n` bytes at `offset`, or a FileError saying what was being read.
    std::string read(uint64_t offset, uint64_t n, const char* what)
    {
        if (offset > m_size || n > m_size - offset)
            fail(m_path, offset, std::string(what) + " of " + std::to_string(n) + " bytes runs past the end of the file ("
                    + std::to_string(m_size) + " bytes)");
        std::string b(n, '\0');
        m_in.seekg(static_cast<std::streamoff>(offset));
        if (n > 0 && !m_in.read(b.data(), static_cast<std::streamsize>(n))) fail(m_path, offset, "read failed");
        return b;
    }
    uint64_t size() const { return m_size; }
    const std::string& path() const { return m_path; }

private:
    std::string m_path;
    std::ifstream m_in;
    uint64_t m_size = 0;
};

struct Member {
    std::string name;
    uint16_t flags = 0, method = 0;
    uint32_t crc = 0;
    uint64_t compressed = 0, size = 0, localOffset = 0;
    uint64_t centralOffset = 0; // where its central directory record is (for messages)
};

// The central directory: where it starts, how long it is, how many records.
void findDirectory(Archive& z, uint64_t& dirOffset, uint64_t& dirSize, uint64_t& entries)
{
    if (z.size() < 22) fail(z.path(), 0, "not a zip archive (" + std::to_string(z.size()) + " bytes, no end record)");
    const uint64_t tailLen = std::min<uint64_t>(z.size(), 22 + 0xffff);
    const std::string tail = z.read(z.size() - tailLen, tailLen, "the end of the archive");
    size_t at = std::string::npos;
    for (size_t i = tail.size() - 22 + 1; i-- > 0;)
        if (le(tail, i, 4) == kEndSig) {
            at = i;
            break;
        }
    if (at == std::string::npos) fail(z.path(), z.size(), "not a zip archive (no end of central directory record)");
    const uint64_t endOffset = z.size() - tailLen + at;
    if (le(tail, at + 4, 2) != 0 || le(tail, at + 6, 2) != 0)
        fail(z.path(), endOffset + 4, "a multi-disk archive is not supported");
    entries = le(tail, at + 10, 2);
    dirSize = le(tail, at + 12, 4);
    dirOffset = le(tail, at + 16, 4);
    if (entries == 0xffff || dirSize == kMax32 || dirOffset == kMax32) {
        // zip64: a locator just before the end record points at the zip64 end record.
        if (endOffset < 20) fail(z.path(), endOffset, "zip64 values without a zip64 locator");
        const std::string loc = z.read(endOffset - 20, 20, "the zip64 locator");
        if (le(loc, 0, 4) != kLocator64Sig) fail(z.path(), endOffset - 20, "zip64 values without a zip64 locator");
        const uint64_t end64 = le(loc, 8, 8);
        const std::string rec = z.read(end64, 56, "the zip64 end record");
        if (le(rec, 0, 4) != kEnd64Sig) fail(z.path(), end64, "no zip64 end of central directory record here");
        entries = le(rec, 32, 8);
        dirSize = le(rec, 40, 8);
        dirOffset = le(rec, 48, 8);
    }
    if (dirOffset > z.size() || dirSize > z.size() - dirOffset)
        fail(z.path(), endOffset, "the central directory (" + std::to_string(dirSize) + " bytes at byte "
                + std::to_string(dirOffset) + ") lies outside the file");
}

std::vector<Member> readDirectory(Archive& z)
{
    uint64_t dirOffset = 0, dirSize = 0, entries = 0;
    findDirectory(z, dirOffset, dirSize, entries);
    const std::string dir = z.read(dirOffset, dirSize, "the central directory");
    std::vector<Member> members;
    size_t at = 0;
    for (uint64_t e = 0; e < entries; ++e) {
        const uint64_t here = dirOffset + at;
        if (dir.size() - at < 46) fail(z.path(), here, "central directory ends inside record " + std::to_string(e));
        if (le(dir, at, 4) != kCentralSig) fail(z.path(), here, "expected a central directory record");
        Member m;
        m.centralOffset = here;
        m.flags = static_cast<uint16_t>(le(dir, at + 8, 2));
        m.method = static_cast<uint16_t>(le(dir, at + 10, 2));
        m.crc = static_cast<uint32_t>(le(dir, at + 16, 4));
        m.compressed = le(dir, at + 20, 4);
        m.size = le(dir, at + 24, 4);
        const size_t nameLen = le(dir, at + 28, 2), extraLen = le(dir, at + 30, 2), commentLen = le(dir, at + 32, 2);
        m.localOffset = le(dir, at + 42, 4);
        if (dir.size() - at - 46 < nameLen + extraLen + commentLen)
            fail(z.path(), here, "central directory record " + std::to_string(e) + " runs past the directory");
        m.name = dir.substr(at + 46, nameLen);
        // The zip64 extra field holds, in this order, the values the record marks 0xffffffff.
        size_t x = at + 46 + nameLen;
        const size_t xEnd = x + extraLen;
        while (x + 4 <= xEnd) {
            const uint64_t id = le(dir, x, 2), len = le(dir, x + 2, 2);
            if (x + 4 + len > xEnd) fail(z.path(), dirOffset + x, "extra field runs past its record");
            if (id == 0x0001) {
                size_t p = x + 4;
                for (uint64_t* v : { &m.size, &m.compressed, &m.localOffset }) {
                    if (*v != kMax32) continue;
                    if (p + 8 > x + 4 + len) fail(z.path(), dirOffset + p, "zip64 extra field too short");
                    *v = le(dir, p, 8);
                    p += 8;
                }
            }
            x += 4 + len;
        }
        at += 46 + nameLen + extraLen + commentLen;
        members.push_back(std::move(m));
    }
    return members;
}

std::string inflateMember(const Archive& z, const Member& m, const std::string& packed, uint64_t dataOffset)
{
    std::string out(m.size, '\0');
    z_stream s {};
    if (inflateInit2(&s, -MAX_WBITS) != Z_OK) fail(z.path(), dataOffset, "cannot start decompressing");
    s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(packed.data()));
    s.next_out = reinterpret_cast<Bytef*>(out.data());
    // zlib counts in 32 bits: feed and drain in chunks.
    uint64_t inLeft = packed.size(), outLeft = out.size();
    int rc = Z_OK;
    while (rc == Z_OK) {
        const uInt inChunk = static_cast<uInt>(std::min<uint64_t>(inLeft, 1u << 30));
        const uInt outChunk = static_cast<uInt>(std::min<uint64_t>(outLeft, 1u << 30));
        s.avail_in = inChunk;
        s.avail_out = outChunk;
        rc = inflate(&s, Z_NO_FLUSH);
        inLeft -= inChunk - s.avail_in;
        outLeft -= outChunk - s.avail_out;
        if (rc == Z_OK && s.avail_in == inChunk && s.avail_out == outChunk) rc = Z_BUF_ERROR; // no progress
    }
    const std::string why = s.msg ? s.msg : "";
    inflateEnd(&s);
    if (rc != Z_STREAM_END)
        fail(z.path(), dataOffset + (packed.size() - inLeft),
            "member '" + m.name + "': deflated data is corrupt or ends early" + (why.empty() ? "" : " (" + why + ")"));
    if (outLeft != 0)
        fail(z.path(), dataOffset, "member '" + m.name + "': inflates to " + std::to_string(m.size - outLeft)
                + " bytes, the directory says " + std::to_string(m.size));
    return out;
}

} // namespace

std::vector<std::pair<std::string, Tensor>> readNpz(const std::string& path)
{
    Archive z(path);
    std::vector<std::pair<std::string, Tensor>> arrays;
    std::set<std::string> names;
    // What the members hold together must fit too (records may point at the same data: a small
    // file that inflates to much more is refused, not read until memory runs out).
    uint64_t total = 0;
    std::map<uint64_t, uint64_t> ranges; // member data: begin -> end
    for (const Member& m : readDirectory(z)) {
        const std::string where = "member '" + m.name + "'";
        if (m.flags & 1u) fail(path, m.centralOffset, where + " is encrypted");
        if (m.method != 0 && m.method != 8)
            fail(path, m.centralOffset, where + ": compression method " + std::to_string(m.method)
                    + " (only stored and deflated members are read)");
        if (m.method == 0 && m.compressed != m.size)
            fail(path, m.centralOffset, where + " is stored but its sizes differ (" + std::to_string(m.compressed)
                    + " against " + std::to_string(m.size) + ")");
        if (static_cast<int64_t>(std::min<uint64_t>(m.size, std::numeric_limits<int64_t>::max())) > memoryLimit())
            throw ResourceError(path + ": " + where + " holds " + formatBytes(static_cast<int64_t>(std::min<uint64_t>(
                                    m.size, std::numeric_limits<int64_t>::max())))
                + ", more than the memory limit " + formatBytes(memoryLimit()));
        if (m.method == 8 && m.size / 1032 > m.compressed + 1)
            fail(path, m.centralOffset, where + ": " + std::to_string(m.compressed) + " deflated bytes cannot hold the "
                    + std::to_string(m.size) + " the directory says");
        const std::string local = z.read(m.localOffset, 30, "a local header");
        if (le(local, 0, 4) != kLocalSig) fail(path, m.localOffset, where + ": no local header here");
        const uint64_t dataOffset = m.localOffset + 30 + le(local, 26, 2) + le(local, 28, 2);
        total += m.size;
        if (total > static_cast<uint64_t>(memoryLimit()))
            throw ResourceError(path + ": the members hold more than the memory limit " + formatBytes(memoryLimit()));
        if (m.compressed > 0) {
            const uint64_t end = dataOffset + m.compressed;
            auto next = ranges.lower_bound(dataOffset);
            const bool overlaps = (next != ranges.end() && next->first < end)
                || (next != ranges.begin() && std::prev(next)->second > dataOffset);
            if (overlaps) fail(path, m.centralOffset, where + ": its data overlaps another member's");
            ranges[dataOffset] = end;
        }
        const std::string packed = z.read(dataOffset, m.compressed, (where + "'s data").c_str());
        std::string bytes = m.method == 0 ? packed : inflateMember(z, m, packed, dataOffset);
        const uLong crc = crc32_z(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(bytes.data()), bytes.size());
        if (crc != m.crc) fail(path, dataOffset, where + ": CRC-32 does not match (the data is damaged)");
        std::string name = m.name;
        if (name.size() > 4 && name.ends_with(".npy")) name.resize(name.size() - 4);
        if (!names.insert(name).second) fail(path, m.centralOffset, where + ": a second array named '" + name + "'");
        arrays.emplace_back(name, parseNpy(bytes, path + ": " + where + " (data at byte " + std::to_string(dataOffset) + ")"));
    }
    return arrays;
}

namespace {
void put(std::string& b, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; ++i)
        b.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
}

void writeNpz(const std::string& path, const std::vector<std::pair<std::string, TensorView>>& arrays)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw FileError(path + ": cannot open for writing");
    std::string dir;
    uint64_t offset = 0;
    for (const auto& [name, view] : arrays) {
        const std::string member = name + ".npy";
        const std::string data = serializeNpy(view);
        const uint32_t crc = static_cast<uint32_t>(
            crc32_z(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(data.data()), data.size()));
        const bool big = data.size() >= kMax32 || offset >= kMax32;
        std::string localExtra, extra; // zip64: the sizes (and in the directory the offset)
        if (big) {
            put(localExtra, 0x0001, 2);
            put(localExtra, 16, 2);
            put(localExtra, data.size(), 8);
            put(localExtra, data.size(), 8);
            put(extra, 0x0001, 2);
            put(extra, 24, 2);
            put(extra, data.size(), 8);
            put(extra, data.size(), 8);
            put(extra, offset, 8);
        }
        std::string local;
        put(local, kLocalSig, 4);
        put(local, big ? 45 : 20, 2);
        put(local, 0, 2); // flags
        put(local, 0, 2); // stored
        put(local, 0, 2); // time
        put(local, 0x21, 2); // date: 1980-01-01
        put(local, crc, 4);
        put(local, big ? kMax32 : data.size(), 4);
        put(local, big ? kMax32 : data.size(), 4);
        put(local, member.size(), 2);
        put(local, localExtra.size(), 2);
        local += member;
        local += localExtra;
        out.write(local.data(), static_cast<std::streamsize>(local.size()));
        out.write(data.data(), static_cast<std::streamsize>(data.size()));
        put(dir, kCentralSig, 4);
        put(dir, big ? 45 : 20, 2); // made by
        put(dir, big ? 45 : 20, 2); // needed
        put(dir, 0, 2);
        put(dir, 0, 2);
        put(dir, 0, 2);
        put(dir, 0x21, 2);
        put(dir, crc, 4);
        put(dir, big ? kMax32 : data.size(), 4);
        put(dir, big ? kMax32 : data.size(), 4);
        put(dir, member.size(), 2);
        put(dir, extra.size(), 2);
        put(dir, 0, 2); // comment
        put(dir, 0, 2); // disk
        put(dir, 0, 2); // internal attributes
        put(dir, 0, 4); // external attributes
        put(dir, big ? kMax32 : offset, 4);
        dir += member;
        dir += extra;
        offset += local.size() + data.size();
    }
    std::string end;
    const bool big = offset >= kMax32 || arrays.size() >= 0xffff;
    if (big) {
        put(end, kEnd64Sig, 4);
        put(end, 44, 8);
        put(end, 45, 2);
        put(end, 45, 2);
        put(end, 0, 4);
        put(end, 0, 4);
        put(end, arrays.size(), 8);
        put(end, arrays.size(), 8);
        put(end, dir.size(), 8);
        put(end, offset, 8);
        put(end, kLocator64Sig, 4);
        put(end, 0, 4);
        put(end, offset + dir.size(), 8);
        put(end, 1, 4);
    }
    put(end, kEndSig, 4);
    put(end, 0, 2);
    put(end, 0, 2);
    put(end, big ? 0xffff : arrays.size(), 2);
    put(end, big ? 0xffff : arrays.size(), 2);
    put(end, big ? kMax32 : dir.size(), 4);
    put(end, big ? kMax32 : offset, 4);
    put(end, 0, 2);
    out.write(dir.data(), static_cast<std::streamsize>(dir.size()));
    out.write(end.data(), static_cast<std::streamsize>(end.size()));
    if (!out) throw FileError(path + ": write failed");
}

} // namespace opscope
