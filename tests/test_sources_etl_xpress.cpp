#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "sources/etl/xpress.h"
#include "support/xpress_encoder.h"

using namespace etwaudit;

namespace {

using Bytes = std::vector<std::uint8_t>;

void append_u16(Bytes& bytes, std::uint32_t value) {
  bytes.push_back(static_cast<std::uint8_t>(value));
  bytes.push_back(static_cast<std::uint8_t>(value >> 8));
}

void append_u32(Bytes& bytes, std::uint32_t value) {
  append_u16(bytes, value & 0xFFFF);
  append_u16(bytes, value >> 16);
}

void append_text(Bytes& bytes, const std::string& text) {
  bytes.insert(bytes.end(), text.begin(), text.end());
}

// A match word: distance 1..8192, length code 0..7.
std::uint32_t match_word(std::uint32_t distance, std::uint32_t length_code) {
  return (distance - 1) << 3 | length_code;
}

std::string decompress(const Bytes& in, std::size_t capacity) {
  std::string out(capacity, '\0');
  const std::size_t written =
      xpress_decompress(in.data(), in.size(), reinterpret_cast<std::uint8_t*>(out.data()), capacity);
  out.resize(written);
  return out;
}

}  // namespace

TEST_CASE("xpress literals in .etl buffers are copied as they are", "[xpress]") {
  Bytes in;
  append_u32(in, 0x00000000);  // 32 literals
  append_text(in, "abc");
  CHECK(decompress(in, 3) == "abc");
}

TEST_CASE("an .etl xpress stream ends at a match bit with no input left", "[xpress]") {
  Bytes in;
  append_u32(in, 0x1FFFFFFF);  // 3 literals, then match bits
  append_text(in, "abc");
  CHECK(decompress(in, 100) == "abc");
}

TEST_CASE("an .etl xpress match copies earlier output", "[xpress]") {
  Bytes in;
  append_u32(in, 0x1FFFFFFF);  // 3 literals, a match, the end
  append_text(in, "abc");
  append_u16(in, match_word(3, 0));  // 3 back, length 3
  CHECK(decompress(in, 100) == "abcabc");
}

TEST_CASE("an .etl xpress match may overlap the output it is producing", "[xpress]") {
  SECTION("a repeated pair") {
    Bytes in;
    append_u32(in, 0x3FFFFFFF);  // 2 literals, a match, the end
    append_text(in, "ab");
    append_u16(in, match_word(2, 4));  // 2 back, length 7
    CHECK(decompress(in, 100) == "ababababa");
  }
  SECTION("a run of one byte") {
    Bytes in;
    append_u32(in, 0x7FFFFFFF);  // 1 literal, a match, the end
    append_text(in, "a");
    append_u16(in, match_word(1, 7));
    in.push_back(0x00);  // length nibble 0: 0 + 7 + 3 = 10
    CHECK(decompress(in, 100) == std::string(11, 'a'));
  }
}

TEST_CASE("two .etl xpress length nibbles share one byte, low nibble first", "[xpress]") {
  Bytes in;
  append_u32(in, 0x7FFFFFFF);  // 1 literal, matches
  append_text(in, "x");
  append_u16(in, match_word(1, 7));
  in.push_back(0x42);                // low nibble 2 for this match, high nibble 4 for the next
  append_u16(in, match_word(1, 7));  // uses the 4: length 14
  append_u16(in, match_word(1, 7));  // needs a fresh byte
  in.push_back(0x01);                // length 11
  const std::string out = decompress(in, 1000);
  CHECK(out.size() == 1 + 12 + 14 + 11);
  CHECK(out == std::string(out.size(), 'x'));

  SECTION("and a short match between them does not disturb the shared byte") {
    Bytes mixed;
    append_u32(mixed, 0x3FFFFFFF);  // 2 literals, matches
    append_text(mixed, "pq");
    append_u16(mixed, match_word(2, 7));
    mixed.push_back(0x31);                // low nibble 1: length 11; high nibble 3 kept for later
    append_u16(mixed, match_word(1, 0));  // length 3
    append_u16(mixed, match_word(2, 7));  // high nibble 3: length 13
    CHECK(decompress(mixed, 1000).size() == 2 + 11 + 3 + 13);
  }
}

TEST_CASE(".etl xpress match lengths escape to a byte, a 16-bit and a 32-bit value", "[xpress]") {
  Bytes prefix;
  append_u32(prefix, 0x7FFFFFFF);
  append_text(prefix, "y");
  append_u16(prefix, match_word(1, 7));

  SECTION("nibble 15 then a byte below 255: byte + 15 + 7 + 3") {
    Bytes in = prefix;
    in.push_back(0x0F);
    in.push_back(100);
    CHECK(decompress(in, 10'000) == std::string(1 + 125, 'y'));
  }
  SECTION("byte 255 then a 16-bit length that already counts the escapes") {
    Bytes in = prefix;
    in.push_back(0x0F);
    in.push_back(0xFF);
    append_u16(in, 1000);
    CHECK(decompress(in, 10'000) == std::string(1 + 1003, 'y'));
  }
  SECTION("a 16-bit 0 then a 32-bit length") {
    Bytes in = prefix;
    in.push_back(0x0F);
    in.push_back(0xFF);
    append_u16(in, 0);
    append_u32(in, 70'000);
    CHECK(decompress(in, 100'000) == std::string(1 + 70'003, 'y'));
  }
}

TEST_CASE(".etl xpress reads a new flag word after 32 items, most significant bit first", "[xpress]") {
  Bytes in;
  append_u32(in, 0x00000000);
  append_text(in, "0123456789abcdefghijklmnopqrstuv");  // 32 literals
  append_u32(in, 0x3FFFFFFF);                           // 2 literals, a match, the end
  append_text(in, "wx");
  append_u16(in, match_word(34, 1));  // the first 4 bytes again
  CHECK(decompress(in, 100) == "0123456789abcdefghijklmnopqrstuvwx0123");
}

TEST_CASE("an .etl xpress match may reach 8192 bytes back", "[xpress]") {
  Bytes in;
  std::string expected;
  for (int word = 0; word < 8192 / 32; ++word) {
    append_u32(in, 0);
    for (int i = 0; i < 32; ++i) {
      const auto byte = static_cast<char>('a' + (word * 32 + i) % 26);
      in.push_back(static_cast<std::uint8_t>(byte));
      expected += byte;
    }
  }
  append_u32(in, 0xFFFFFFFF);
  append_u16(in, match_word(8192, 0));
  expected += "abc";
  CHECK(decompress(in, 10'000) == expected);
}

TEST_CASE(".etl xpress output stops at the capacity even when more input follows", "[xpress]") {
  Bytes in;
  append_u32(in, 0x00000000);
  append_text(in, "abcdef");
  CHECK(decompress(in, 4) == "abcd");
  CHECK(decompress(in, 0).empty());
}

TEST_CASE("corrupt .etl xpress data is refused with a reason", "[xpress]") {
  auto problem = [](const Bytes& in, std::size_t capacity) -> std::string {
    try {
      decompress(in, capacity);
    } catch (const Error& error) {
      return error.what();
    }
    return "no error";
  };
  using Catch::Matchers::Contains;

  SECTION("a match reaching before the start of the output") {
    Bytes in;
    append_u32(in, 0x7FFFFFFF);
    append_text(in, "a");
    append_u16(in, match_word(2, 0));
    CHECK_THAT(problem(in, 100), Contains("before the output start"));
    Bytes first;
    append_u32(first, 0xFFFFFFFF);
    append_u16(first, match_word(1, 0));
    CHECK_THAT(problem(first, 100), Contains("before the output start"));
  }
  SECTION("a match running past the capacity") {
    Bytes in;
    append_u32(in, 0x7FFFFFFF);
    append_text(in, "a");
    append_u16(in, match_word(1, 6));  // length 9
    CHECK_THAT(problem(in, 5), Contains("runs past the output size 5"));
  }
  SECTION("input that ends inside a flag word") {
    CHECK_THAT(problem({}, 5), Contains("inside a flag word"));
    CHECK_THAT(problem({0x00, 0x00}, 5), Contains("inside a flag word"));
  }
  SECTION("input that ends where a literal is expected") {
    Bytes in;
    append_u32(in, 0x00000000);
    append_text(in, "ab");
    CHECK_THAT(problem(in, 5), Contains("where a literal byte is expected"));
  }
  SECTION("input that ends inside a match word or its length") {
    Bytes in;
    append_u32(in, 0x7FFFFFFF);
    append_text(in, "a");
    Bytes half_match = in;
    half_match.push_back(0x10);
    CHECK_THAT(problem(half_match, 100), Contains("inside a match"));
    Bytes no_nibble = in;
    append_u16(no_nibble, match_word(1, 7));
    CHECK_THAT(problem(no_nibble, 100), Contains("before a match length"));
    Bytes no_byte = no_nibble;
    no_byte.push_back(0x0F);
    CHECK_THAT(problem(no_byte, 100), Contains("before a match length"));
    Bytes short_16 = no_byte;
    short_16.push_back(0xFF);
    short_16.push_back(0x10);
    CHECK_THAT(problem(short_16, 100), Contains("inside a match length"));
    Bytes short_32 = no_byte;
    short_32.push_back(0xFF);
    append_u16(short_32, 0);
    append_u16(short_32, 0x1234);
    CHECK_THAT(problem(short_32, 100), Contains("inside a match length"));
  }
  SECTION("a long length below the escaped 22") {
    Bytes in;
    append_u32(in, 0x7FFFFFFF);
    append_text(in, "a");
    append_u16(in, match_word(1, 7));
    in.push_back(0x0F);
    in.push_back(0xFF);
    append_u16(in, 21);
    CHECK_THAT(problem(in, 100), Contains("below 22"));
  }
}

TEST_CASE("random bytes given to the .etl xpress decoder decode or throw, and stay in bounds", "[xpress]") {
  std::mt19937 random(20260214);
  for (int round = 0; round < 2000; ++round) {
    Bytes in(random() % 200);
    for (auto& byte : in) byte = static_cast<std::uint8_t>(random());
    const std::size_t capacity = random() % 600;
    Bytes out(capacity);
    try {
      const std::size_t written = xpress_decompress(in.data(), in.size(), out.data(), out.size());
      CHECK(written <= capacity);
    } catch (const Error&) {
    }
  }
}

// The test encoder (tests/support) against the decoder: what one writes the
// other reads back, whatever the data, and each length form is used.
namespace {
std::string round_trip(const std::string& text, std::size_t* compressed_size = nullptr) {
  const auto* data = reinterpret_cast<const std::uint8_t*>(text.data());
  const Bytes compressed = etwaudit::test::xpress_compress(data, text.size());
  if (compressed_size) *compressed_size = compressed.size();
  // With room to spare: the stream's own end marker must stop it.
  std::string out = decompress(compressed, text.size() + 64);
  return out;
}
}  // namespace

TEST_CASE("the test XPRESS encoder writes what the decoder reads back", "[xpress]") {
  std::mt19937_64 random(7);
  SECTION("nothing, one byte, and short texts") {
    for (const std::string text : {"", "a", "ab", "abc", "abcabc", "aaaa", "abcdefgh"}) CHECK(round_trip(text) == text);
  }
  SECTION("random bytes, which do not compress") {
    std::string text(100'000, '\0');
    for (char& c : text) c = static_cast<char>(random());
    CHECK(round_trip(text) == text);
  }
  SECTION("text from a small alphabet, with matches of every length form") {
    std::string text;
    while (text.size() < 300'000) {
      const auto kind = random() % 4;
      if (kind == 0) text += std::string(1 + random() % 40, static_cast<char>('a' + random() % 4));
      if (kind == 1 && text.size() > 100) text += text.substr(text.size() - 1 - random() % 100, random() % 30);
      if (kind == 2) text += static_cast<char>(random());
      if (kind == 3) text += std::string(random() % 400, 'z');
    }
    std::size_t size = 0;
    CHECK(round_trip(text, &size) == text);
    CHECK(size < text.size() / 2);
  }
  SECTION("runs long enough for the byte, 16-bit and 32-bit lengths") {
    for (std::size_t run : {10u, 17u, 21u, 22u, 24u, 276u, 277u, 278u, 1000u, 65'537u, 65'538u, 70'000u, 300'000u}) {
      INFO(run);
      const std::string text = "q" + std::string(run, 'r') + "s" + std::string(run, 'r');
      std::size_t size = 0;
      CHECK(round_trip(text, &size) == text);
      CHECK(size < 40);
    }
  }
  SECTION("exactly 32 items, so the end takes a flag word of its own") {
    std::string text;
    for (int i = 0; i < 32; ++i) text += static_cast<char>('A' + i);
    CHECK(round_trip(text) == text);
  }
}
