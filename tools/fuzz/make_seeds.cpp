// Cuts seed inputs for the fuzz targets out of .etl traces:
//
//   fuzz_make_seeds FIXTURE_DIR READER_DIR XPRESS_DIR MAX_LEN
//
// For fuzz_etl_reader: prefixes of each trace that end at a buffer boundary or
// in the middle of a buffer, inside the first MAX_LEN bytes (the traces
// themselves are seeds as well; tools/fuzz.sh links them in). For fuzz_xpress:
// the body of every compressed buffer, behind a 3-byte little-endian
// decompressed size (SavedOffset - 0x48), which is the input fuzz_xpress.cpp
// expects.
//
// It walks WMI_BUFFER_HEADERs only (BufferSize at 0x00, SavedOffset at 0x04,
// BufferFlag at 0x34, compressed when it has 0x40; see etl_reader.h) and stops
// at the first header it cannot follow.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<std::uint8_t>;

constexpr std::size_t buffer_header_size = 0x48;
constexpr std::uint16_t flag_compressed = 0x40;

std::uint32_t load_u32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

Bytes read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "fuzz_make_seeds: cannot read '%s'\n", path.c_str());
    std::exit(1);
  }
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

void write_file(const fs::path& path, const std::uint8_t* data, std::size_t size) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out) {
    std::fprintf(stderr, "fuzz_make_seeds: cannot write '%s'\n", path.c_str());
    std::exit(1);
  }
}

struct Buffer {
  std::size_t offset;          // in the file
  std::size_t size;            // BufferSize: bytes in the file
  std::uint32_t saved_offset;  // SavedOffset: decompressed size, header included
  bool compressed;             // BufferFlag has 0x40
};

std::vector<Buffer> buffers_of(const Bytes& trace) {
  std::vector<Buffer> buffers;
  std::size_t offset = 0;
  while (trace.size() - offset >= buffer_header_size) {
    const std::uint8_t* header = trace.data() + offset;
    const std::uint32_t size = load_u32(header);
    if (size < buffer_header_size || size > trace.size() - offset) break;
    const bool compressed = (header[0x34] & flag_compressed) != 0;
    buffers.push_back({offset, size, load_u32(header + 4), compressed});
    offset += size;
  }
  return buffers;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: fuzz_make_seeds FIXTURE_DIR READER_DIR XPRESS_DIR MAX_LEN\n");
    return 2;
  }
  const fs::path fixtures = argv[1];
  const fs::path reader_dir = argv[2];
  const fs::path xpress_dir = argv[3];
  const std::size_t max_len = std::strtoull(argv[4], nullptr, 10);
  fs::create_directories(reader_dir);
  fs::create_directories(xpress_dir);

  std::vector<fs::path> traces;
  for (const auto& entry : fs::directory_iterator(fixtures)) {
    if (entry.is_regular_file() && entry.path().extension() == ".etl") traces.push_back(entry.path());
  }
  std::sort(traces.begin(), traces.end());
  if (traces.empty()) {
    std::fprintf(stderr, "fuzz_make_seeds: no .etl files in '%s'\n", fixtures.c_str());
    return 1;
  }

  std::size_t reader_seeds = 0;
  std::size_t xpress_seeds = 0;
  for (const fs::path& path : traces) {
    const Bytes trace = read_file(path);
    const std::string stem = path.stem().string();
    const std::vector<Buffer> buffers = buffers_of(trace);

    // Ends of the first buffers, halfway into each, and cuts inside the first header.
    std::set<std::size_t> cuts = {buffer_header_size - 1, buffer_header_size, 0x100};
    for (const Buffer& buffer : buffers) {
      cuts.insert(buffer.offset + buffer.size / 2);
      cuts.insert(buffer.offset + buffer.size);
    }
    for (const std::size_t cut : cuts) {
      if (cut > max_len || cut >= trace.size()) continue;
      write_file(reader_dir / (stem + "-prefix-" + std::to_string(cut) + ".etl"), trace.data(), cut);
      ++reader_seeds;
    }

    for (const Buffer& buffer : buffers) {
      if (!buffer.compressed || buffer.saved_offset < buffer_header_size) continue;
      const std::uint32_t capacity = buffer.saved_offset - buffer_header_size;
      Bytes seed = {static_cast<std::uint8_t>(capacity), static_cast<std::uint8_t>(capacity >> 8),
                    static_cast<std::uint8_t>(capacity >> 16)};
      seed.insert(seed.end(), trace.begin() + static_cast<std::ptrdiff_t>(buffer.offset + buffer_header_size),
                  trace.begin() + static_cast<std::ptrdiff_t>(buffer.offset + buffer.size));
      write_file(xpress_dir / (stem + "-buffer-" + std::to_string(buffer.offset) + ".xpress"), seed.data(),
                 seed.size());
      ++xpress_seeds;
    }
  }
  std::printf("fuzz_make_seeds: %zu reader seeds, %zu xpress seeds from %zu traces\n", reader_seeds, xpress_seeds,
              traces.size());
  return 0;
}
