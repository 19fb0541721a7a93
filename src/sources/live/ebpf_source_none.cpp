// A build without the eBPF source (no clang, bpftool or libbpf found, or
// -DETWAUDIT_EBPF=OFF): it says so when asked for.

#include "core/error.h"
#include "sources/live/ebpf_source.h"

namespace etwaudit {

struct EbpfSource::Program {};

bool ebpf_built() {
  return false;
}

EbpfSource::EbpfSource(EbpfOptions options) : m_options(options), m_verdicts(options.paths) {
  throw Error(
      "this etwaudit was built without the eBPF source (CMake found no clang, bpftool or libbpf-dev, or was given "
      "-DETWAUDIT_EBPF=OFF)");
}

EbpfSource::~EbpfSource() = default;

void EbpfSource::run(BoundedQueue<FileEvent>&, Catalog&, RunStats&) {}

void EbpfSource::stop() noexcept {}

}  // namespace etwaudit
