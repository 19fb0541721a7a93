// libFuzzer target: xpress_decompress over arbitrary bytes.
//
// Input: a 3-byte little-endian output capacity (its low 20 bits, so up to
// 1 MiB, 16 times an .etl buffer), then the compressed stream. The seeds
// (make_seeds.cpp) are compressed .etl buffers with their real decompressed
// size in front. The stream is passed in place, so a read past its end hits the
// end of libFuzzer's allocation, and the output is allocated at exactly the
// capacity, so a write past it is caught too.
//
// Error is the expected way to refuse corrupt data. Also checked, from the
// contract in xpress.h: the result never exceeds the capacity, and decoding
// again into a smaller capacity either throws or yields exactly that prefix.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "core/error.h"
#include "sources/etl/xpress.h"

namespace {

constexpr std::size_t capacity_bytes = 3;
constexpr std::size_t capacity_mask = (std::size_t{1} << 20) - 1;

[[noreturn]] void violated(const char* what, std::size_t capacity, std::size_t produced) {
  std::fprintf(stderr, "fuzz_xpress: %s (capacity %zu, produced %zu)\n", what, capacity, produced);
  std::abort();
}

// Decodes into exactly capacity bytes; returns the bytes written, or
// capacity + 1 when the data was refused with an Error.
std::size_t decode(const std::uint8_t* in, std::size_t in_size, std::unique_ptr<std::uint8_t[]>& out,
                   std::size_t capacity) {
  out.reset(capacity == 0 ? nullptr : new std::uint8_t[capacity]);
  try {
    const std::size_t produced = etwaudit::xpress_decompress(in, in_size, out.get(), capacity);
    if (produced > capacity) violated("more bytes written than the capacity", capacity, produced);
    return produced;
  } catch (const etwaudit::Error&) {
    return capacity + 1;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < capacity_bytes) return 0;
  const std::size_t capacity =
      (std::size_t{data[0]} | std::size_t{data[1]} << 8 | std::size_t{data[2]} << 16) & capacity_mask;
  const std::uint8_t* in = size > capacity_bytes ? data + capacity_bytes : nullptr;
  const std::size_t in_size = size - capacity_bytes;

  std::unique_ptr<std::uint8_t[]> full;
  const std::size_t produced = decode(in, in_size, full, capacity);
  if (produced > capacity || produced == 0) return 0;

  // The same stream into the exact size it produced, and into half of it.
  for (const std::size_t smaller : {produced, produced / 2}) {
    std::unique_ptr<std::uint8_t[]> part;
    const std::size_t again = decode(in, in_size, part, smaller);
    if (again == smaller + 1 && smaller < produced) continue;  // a match ran past the smaller capacity
    if (again != smaller) violated("a smaller capacity did not yield that many bytes", smaller, again);
    if (smaller != 0 && std::memcmp(part.get(), full.get(), smaller) != 0) {
      violated("a smaller capacity yielded different bytes", smaller, again);
    }
  }
  return 0;
}
