#include "sources/etl/xpress.h"

#include <cstring>
#include <string>

#include "core/error.h"

namespace etwaudit {
namespace {

[[noreturn]] void corrupt(std::size_t in_pos, std::size_t out_pos, const std::string& what) {
  throw Error("XPRESS data is corrupt at input byte " + std::to_string(in_pos) + " (output byte " +
              std::to_string(out_pos) + "): " + what);
}

std::uint32_t load_u32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

std::uint32_t load_u16(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | p[1] << 8;
}

}  // namespace

std::size_t xpress_decompress(const std::uint8_t* in, std::size_t in_size, std::uint8_t* out,
                              std::size_t out_capacity) {
  constexpr std::size_t no_half_byte = static_cast<std::size_t>(-1);
  std::size_t in_pos = 0;
  std::size_t out_pos = 0;
  std::uint32_t flags = 0;
  int flags_left = 0;
  // Input position of the byte whose high nibble the next length extension uses.
  std::size_t half_byte = no_half_byte;

  while (out_pos < out_capacity) {
    if (flags_left == 0) {
      if (in_size - in_pos < 4) corrupt(in_pos, out_pos, "the input ends inside a flag word");
      flags = load_u32(in + in_pos);
      in_pos += 4;
      flags_left = 32;
    }
    --flags_left;
    if ((flags >> flags_left & 1) == 0) {
      if (in_pos == in_size) corrupt(in_pos, out_pos, "the input ends where a literal byte is expected");
      out[out_pos++] = in[in_pos++];
      continue;
    }

    if (in_pos == in_size) break;  // the end-of-stream marker
    if (in_size - in_pos < 2) corrupt(in_pos, out_pos, "the input ends inside a match");
    const std::uint32_t match = load_u16(in + in_pos);
    in_pos += 2;
    const std::size_t distance = (match >> 3) + 1;
    std::uint64_t length = match & 7;  // 64-bit: a 32-bit length + 3 must not wrap
    if (length == 7) {
      if (half_byte == no_half_byte) {
        if (in_pos == in_size) corrupt(in_pos, out_pos, "the input ends before a match length");
        half_byte = in_pos++;
        length = in[half_byte] & 15;
      } else {
        length = in[half_byte] >> 4;
        half_byte = no_half_byte;
      }
      if (length == 15) {
        if (in_pos == in_size) corrupt(in_pos, out_pos, "the input ends before a match length");
        length = in[in_pos++];
        if (length == 255) {
          if (in_size - in_pos < 2) corrupt(in_pos, out_pos, "the input ends inside a match length");
          length = load_u16(in + in_pos);
          in_pos += 2;
          if (length == 0) {
            if (in_size - in_pos < 4) corrupt(in_pos, out_pos, "the input ends inside a match length");
            length = load_u32(in + in_pos);
            in_pos += 4;
          }
          if (length < 15 + 7) corrupt(in_pos, out_pos, "a long match length is below 22");
          length -= 15 + 7;
        }
        length += 15;
      }
      length += 7;
    }
    length += 3;

    if (distance > out_pos) {
      corrupt(in_pos, out_pos, "a match reaches " + std::to_string(distance) + " bytes back, before the output start");
    }
    if (length > out_capacity - out_pos) {
      corrupt(
          in_pos, out_pos,
          "a match of " + std::to_string(length) + " bytes runs past the output size " + std::to_string(out_capacity));
    }
    const auto count = static_cast<std::size_t>(length);
    std::uint8_t* target = out + out_pos;
    const std::uint8_t* source = target - distance;
    if (distance >= count) {
      std::memcpy(target, source, count);
    } else if (distance == 1) {
      std::memset(target, *source, count);
    } else {
      for (std::size_t i = 0; i < count; ++i) target[i] = source[i];
    }
    out_pos += count;
  }
  return out_pos;
}

}  // namespace etwaudit
