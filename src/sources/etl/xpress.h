#pragma once
// XPRESS "plain LZ77" decompression (MS-XCA §2.3-2.4), the format of
// compressed buffers in .etl files (doc/etw-format.md §7.6).
//
// The stream is a sequence of 32-bit little-endian flag words, each governing
// the next 32 items, most significant bit first. A 0 bit is one literal byte;
// a 1 bit is a 16-bit match word: distance = (word >> 3) + 1 bytes back in the
// output, length code = word & 7. A length code below 7 means length code + 3.
// Code 7 reads a 4-bit extension: the low nibble of a fresh byte, or, every
// second time, the high nibble of the byte read the time before. Nibble 15
// reads a byte; byte 255 reads a 16-bit length, and a 16-bit 0 reads a 32-bit
// one (both already count the 15 + 7 that were escaped). Matches may overlap
// their own output, so they are copied forwards byte by byte.
//
// A match bit with no input left is the end of the stream.

#include <cstddef>
#include <cstdint>

namespace etwaudit {

// Decompresses in[0, in_size) into out, stopping when out_capacity bytes are
// written or the stream ends. Returns the number of bytes written; a caller
// that knows the decompressed size compares it. Throws Error when the data is
// corrupt: a match reaching before the start of the output or past
// out_capacity, or the input ending inside a flag word, a literal or a match.
// Reads and writes stay within the given ranges whatever the input holds.
std::size_t xpress_decompress(const std::uint8_t* in, std::size_t in_size, std::uint8_t* out, std::size_t out_capacity);

}  // namespace etwaudit
