// A bounded, seeded mutation fuzz of both readers: valid files with bytes flipped, inserted,
// deleted, duplicated or overwritten with boundary values. Every input must either load or throw
// opscope::Error: no other exception, no crash, no hang, no allocation beyond the input's size.

#include "common/test_paths.h"
#include "io/io_test_util.h"
#include "io/params_file.h"
#include "io/symbol_json.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <gtest/gtest.h>
#include <random>

using namespace opscope;
using namespace opscope::test;

namespace {

class Mutator {
public:
    explicit Mutator(uint32_t seed, std::vector<std::string> tokens)
        : m_rng(seed)
        , m_tokens(std::move(tokens))
    {
    }

    std::string mutate(std::string s)
    {
        const int rounds = 1 + static_cast<int>(m_rng() % 4);
        for (int r = 0; r < rounds; ++r)
            once(s);
        return s;
    }

private:
    size_t pos(const std::string& s) { return s.empty() ? 0 : m_rng() % (s.size() + 1); }

    void once(std::string& s)
    {
        switch (m_rng() % 7) {
        case 0: // flip one bit
            if (!s.empty()) s[m_rng() % s.size()] ^= static_cast<char>(1u << (m_rng() % 8));
            break;
        case 1: // random byte
            if (!s.empty()) s[m_rng() % s.size()] = static_cast<char>(m_rng());
            break;
        case 2: // insert a token (JSON punctuation, a boundary number, …)
            s.insert(pos(s), m_tokens[m_rng() % m_tokens.size()]);
            break;
        case 3: { // delete a range
            const size_t at = pos(s);
            s.erase(at, std::min<size_t>(1 + m_rng() % 16, s.size() - at));
            break;
        }
        case 4: { // duplicate a chunk elsewhere
            if (s.empty()) break;
            const size_t at = m_rng() % s.size();
            const std::string chunk = s.substr(at, 1 + m_rng() % 32);
            s.insert(pos(s), chunk);
            break;
        }
        case 5: { // overwrite 4 or 8 bytes with a boundary value
            static const uint64_t kValues[] = { 0, 1, 0xff, 0x7fffffff, 0x80000000, 0xffffffff, 0xF993fac9, 0xF993faca,
                0x7fffffffffffffffULL, ~0ULL, 1ULL << 32, 6, 7 };
            const uint64_t v = kValues[m_rng() % std::size(kValues)];
            const size_t width = m_rng() % 2 ? 4 : 8;
            if (s.size() < width) break;
            const size_t at = m_rng() % (s.size() - width + 1);
            for (size_t i = 0; i < width; ++i)
                s[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
            break;
        }
        case 6: // truncate
            s.resize(pos(s));
            break;
        }
    }

    std::mt19937 m_rng;
    std::vector<std::string> m_tokens;
};

// OPSCOPE_FUZZ_ITERATIONS scales a run up for a long local session (the suite's default is bounded).
int iterations(int fallback)
{
    const char* env = std::getenv("OPSCOPE_FUZZ_ITERATIONS");
    return env ? std::max(1, std::atoi(env)) : fallback;
}

template <class Fn> void fuzz(const std::vector<std::string>& seeds, Mutator& m, int count, Fn&& read)
{
    int loaded = 0, rejected = 0;
    for (int i = 0; i < count; ++i) {
        const std::string input = m.mutate(seeds[static_cast<size_t>(i) % seeds.size()]);
        try {
            read(input);
            ++loaded;
        } catch (const Error&) {
            ++rejected;
        } catch (const std::exception& e) {
            FAIL() << "iteration " << i << ": not an opscope::Error: " << e.what();
        }
    }
    ::testing::Test::RecordProperty("loaded", loaded);
    ::testing::Test::RecordProperty("rejected", rejected);
    // Both outcomes occur: the mutations are neither all harmless nor all fatal.
    EXPECT_GT(loaded, count / 100);
    EXPECT_GT(rejected, count / 10);
}

} // namespace

TEST(Fuzz, SymbolJsonReader)
{
    OPSCOPE_NEEDS_SHARED("models/mnist-symbol.json", "models/lenet-symbol.json", "models/legacy-mlp-symbol.json", "models/v08-mlp-bn-symbol.json");
    std::vector<std::string> seeds;
    for (const char* f :
        { "mnist-symbol.json", "lenet-symbol.json", "legacy-mlp-symbol.json", "v08-mlp-bn-symbol.json" })
        seeds.push_back(readBytes(shared(std::string("models/") + f)));
    Mutator m(20240917u,
        { "[", "]", "{", "}", ",", ":", "\"", "0", "-1", "4294967296", "1e999", "null", "true", "\"null\"", "[0, 0, 0]",
            "\"op\": \"null\", ", "\\u0000", "\xff", "\"attrs\": {}, " });
    const auto start = std::chrono::steady_clock::now();
    fuzz(seeds, m, iterations(10000), [](const std::string& text) {
        Graph g = parseSymbolJson(text, "fuzz.json");
        // What loads can be written and read back.
        Graph back = parseSymbolJson(saveSymbolJson(g), "fuzz-saved.json");
        if (back.size() != g.size()) throw std::logic_error("round trip changed the node count");
    });
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    RecordProperty("seconds", std::to_string(seconds));
}

TEST(Fuzz, ParamsReader)
{
    OPSCOPE_NEEDS_SHARED("models/legacy-mlp-0001.params", "models/legacy-ndarray.v0", "models/lenet-0001.params");
    std::vector<std::string> seeds;
    for (const char* f : { "legacy-mlp-0001.params", "legacy-ndarray.v0", "lenet-0001.params" })
        seeds.push_back(readBytes(shared(std::string("models/") + f)));
    // V3 records, an empty V2 array, a V1 record, several dtypes.
    Bytes mixed;
    mixed.u64(0x112).u64(0).u64(5);
    mixed.u32(0xF993faca).i32(0).i32(2).i64(2).i64(1).i32(1).i32(0).i32(2).put<uint16_t>(0x3c00).put<uint16_t>(0xc100);
    mixed.u32(0xF993fac9).i32(0).i32(0);
    mixed.u32(0xF993fac8).i32(1).i64(2).i32(1).i32(0).i32(6).i64(-1).i64(3);
    mixed.u32(0xF993faca).i32(0).i32(0).i32(1).i32(0).i32(12).put<uint16_t>(0x3f80);
    mixed.u32(1).u32(3).i32(1).i32(0).i32(3).raw("abc");
    mixed.u64(5).name("arg:a").name("aux:b").name("c").name("d").name("e");
    ASSERT_EQ(parseParams(mixed.str(), "mixed").size(), 5u);
    seeds.push_back(mixed.str());
    Mutator m(7u, { std::string(8, '\0'), std::string(4, '\xff'), "\x12\x01", "\xc9\xfa\x93\xf9", "\x01" });
    fuzz(seeds, m, iterations(10000), [](const std::string& bytes) {
        const NamedTensors arrays = parseParams(bytes, "fuzz.params");
        size_t elements = 0;
        for (const auto& [name, t] : arrays)
            elements += t.defined() ? static_cast<size_t>(t.size()) : 0;
        // Every element read takes at least one byte of the input.
        if (elements > bytes.size()) throw std::logic_error("read more elements than the input has bytes");
    });
}
