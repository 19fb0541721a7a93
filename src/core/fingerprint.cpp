#include "core/fingerprint.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

#include "core/error.h"
#include "core/utf8_path.h"

namespace etwaudit {

std::string file_fingerprint(const std::string& path) {
  std::ifstream in(utf8_path(path), std::ios::binary);
  if (!in) throw Error("cannot read '" + path + "': " + std::strerror(errno));
  std::uint64_t hash = 0xcbf29ce484222325ull;
  std::uint64_t size = 0;
  std::vector<char> chunk(1 << 20);
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    for (std::size_t i = 0; i < got; ++i) {
      hash ^= static_cast<unsigned char>(chunk[i]);
      hash *= 0x100000001b3ull;
    }
    size += got;
  }
  if (in.bad()) throw Error("cannot read '" + path + "': read error");
  char text[64];
  std::snprintf(text, sizeof text, "fnv1a64:%016llx:%llu", static_cast<unsigned long long>(hash),
                static_cast<unsigned long long>(size));
  return text;
}

}  // namespace etwaudit
