#pragma once
// XPRESS "plain LZ77" compression (MS-XCA §2.3), the inverse of
// xpress_decompress: what a test needs to write compressed .etl buffers.
//
// Greedy matching through a table of the last position of each 3-byte
// prefix, within the format's 8 KiB window; every length the format can say
// (the 3-bit code, the shared nibble, a byte, 16 and 32 bits) is written when
// a match needs it. The stream ends with a flag word whose unused bits are
// ones (a match bit with no input left).

#include <cstddef>
#include <cstdint>
#include <vector>

namespace etwaudit::test {

std::vector<std::uint8_t> xpress_compress(const std::uint8_t* data, std::size_t size);

}  // namespace etwaudit::test
