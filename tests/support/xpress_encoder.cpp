#include "support/xpress_encoder.h"

#include <algorithm>
#include <array>

namespace etwaudit::test {
namespace {

constexpr std::size_t window = 8192;  // a match word holds distance - 1 in 13 bits
constexpr std::size_t min_match = 3;
constexpr int hash_bits = 14;

std::uint32_t hash3(const std::uint8_t* p) {
  const std::uint32_t value = p[0] | p[1] << 8 | p[2] << 16;
  return (value * 2654435761u) >> (32 - hash_bits);
}

class Output {
 public:
  // One item: a literal byte (flag 0) or a match (flag 1).
  void literal(std::uint8_t byte) {
    flag(false);
    m_bytes.push_back(byte);
  }

  void match(std::size_t distance, std::size_t length) {
    flag(true);
    const std::size_t extra = length - min_match;  // what the length code and extensions say
    put16(static_cast<std::uint32_t>((distance - 1) << 3 | std::min<std::size_t>(extra, 7)));
    if (extra < 7) return;
    const std::size_t nibble = extra - 7;
    if (m_half_byte == none) {  // a new byte; its high nibble is for the next long match
      m_half_byte = m_bytes.size();
      m_bytes.push_back(static_cast<std::uint8_t>(std::min<std::size_t>(nibble, 15)));
    } else {
      m_bytes[m_half_byte] |= static_cast<std::uint8_t>(std::min<std::size_t>(nibble, 15) << 4);
      m_half_byte = none;
    }
    if (nibble < 15) return;
    if (nibble - 15 < 255) {
      m_bytes.push_back(static_cast<std::uint8_t>(nibble - 15));
      return;
    }
    m_bytes.push_back(255);
    if (extra <= 0xFFFF) {
      put16(static_cast<std::uint32_t>(extra));
    } else {
      put16(0);
      put16(static_cast<std::uint32_t>(extra & 0xFFFF));
      put16(static_cast<std::uint32_t>(extra >> 16));
    }
  }

  // The end: the flag word's unused bits are ones.
  std::vector<std::uint8_t> finish() {
    if (m_flag_count == 32) {
      store32(m_flag_at, m_flags);
      start_flags();
    }
    const int unused = 32 - m_flag_count;
    const std::uint32_t flags = unused == 32 ? 0xFFFFFFFFu : (m_flags << unused) | ((std::uint32_t{1} << unused) - 1);
    store32(m_flag_at, flags);
    return std::move(m_bytes);
  }

  Output() { start_flags(); }

 private:
  static constexpr std::size_t none = static_cast<std::size_t>(-1);

  void flag(bool set) {
    if (m_flag_count == 32) {
      store32(m_flag_at, m_flags);
      start_flags();
    }
    m_flags = m_flags << 1 | (set ? 1 : 0);
    ++m_flag_count;
  }
  void start_flags() {
    m_flag_at = m_bytes.size();
    m_bytes.resize(m_bytes.size() + 4);
    m_flags = 0;
    m_flag_count = 0;
  }
  void put16(std::uint32_t value) {
    m_bytes.push_back(static_cast<std::uint8_t>(value));
    m_bytes.push_back(static_cast<std::uint8_t>(value >> 8));
  }
  void store32(std::size_t at, std::uint32_t value) {
    for (int i = 0; i < 4; ++i) m_bytes[at + i] = static_cast<std::uint8_t>(value >> (8 * i));
  }

  std::vector<std::uint8_t> m_bytes;
  std::size_t m_flag_at = 0;
  std::uint32_t m_flags = 0;
  int m_flag_count = 0;
  std::size_t m_half_byte = none;
};

}  // namespace

std::vector<std::uint8_t> xpress_compress(const std::uint8_t* data, std::size_t size) {
  Output out;
  std::vector<std::size_t> last(std::size_t{1} << hash_bits, static_cast<std::size_t>(-1));
  std::size_t at = 0;
  auto remember = [&](std::size_t position) {
    if (position + min_match <= size) last[hash3(data + position)] = position;
  };
  while (at < size) {
    std::size_t length = 0, distance = 0;
    if (at + min_match <= size) {
      const std::size_t candidate = last[hash3(data + at)];
      if (candidate != static_cast<std::size_t>(-1) && at - candidate <= window) {
        while (at + length < size && data[candidate + length] == data[at + length]) ++length;
        distance = at - candidate;
      }
    }
    if (length >= min_match) {
      out.match(distance, length);
      for (std::size_t i = 0; i < length; ++i) remember(at + i);
      at += length;
    } else {
      out.literal(data[at]);
      remember(at);
      ++at;
    }
  }
  return out.finish();
}

}  // namespace etwaudit::test
