// gzip_compress (platform/http.h) with zlib: Debian's zlib1g-dev, vcpkg's
// zlib, or Debian's zlib source package in the mingw build.

#include <zlib.h>

#include "platform/http.h"

namespace etwaudit {

std::string gzip_compress(const std::string& text) {
  z_stream stream{};
  // windowBits 15 + 16: a gzip header and trailer; level 1: JSON lines shrink
  // about 15 times at a few hundred MB/s.
  if (deflateInit2(&stream, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return {};
  std::string out(deflateBound(&stream, static_cast<uLong>(text.size())), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  stream.avail_in = static_cast<uInt>(text.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int result = deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return result == Z_STREAM_END ? out : std::string();
}

}  // namespace etwaudit
