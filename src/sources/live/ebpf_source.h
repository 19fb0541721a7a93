#pragma once
// EbpfSource: file activity on Linux, live, from etwaudit's eBPF program
// (ebpf/file_io.bpf.c): every read and write with the bytes it moved and
// where, opens and closes, and each process's identity from its exec or
// fork, recorded by the kernel before the process can exit. The records come
// through one ring buffer in the order they happened and are decoded by
// EbpfDecoder. Records the ring buffer had no room for are counted per CPU
// by the program and added to the run's lost events.
//
// Built when CMake finds clang, bpftool and libbpf (ETWAUDIT_EBPF); loading
// needs root (CAP_BPF and CAP_PERFMON) and a kernel with BTF and BPF ring
// buffers (5.8 or later). x86-64 only, for now.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sources/event_source.h"
#include "sources/live/ebpf_path_verdicts.h"
#include "sources/live/live_source.h"

namespace etwaudit {

// Whether this build has the eBPF source.
bool ebpf_built();

struct EbpfOptions {
  std::uint32_t own_pid = 0;        // never recorded
  std::vector<std::string> mounts;  // record only the filesystems holding these paths; empty: every one
  std::vector<Op> ops;              // --ops: reads, writes, closes and deletes not picked are left in the kernel
  // --include-path, --exclude-path: the reads, writes and closes of a file
  // left out are left in the kernel (its opens still come: they name it).
  SourcePathFilter paths;
  // Given each record as the ring buffer holds it, before it is decoded
  // (the tests' recordings: tests/support/ebpf_recorder.cpp). May be empty.
  std::function<void(const void* record, std::size_t size)> raw_records;
};

class EbpfSource final : public EventSource {
 public:
  // Loads and attaches the program. Throws Error naming what failed: no
  // privilege, no BTF, a kernel that refuses the program.
  explicit EbpfSource(EbpfOptions options);
  ~EbpfSource() override;

  std::string description() const override { return "ebpf"; }
  bool is_live() const override { return true; }
  void run(BoundedQueue<FileEvent>& queue, Catalog& catalog, RunStats& stats) override;
  void stop() noexcept override;
  std::string error() const override { return m_error; }
  // What is recorded, for the note at the start of a run.
  const std::string& watched() const { return m_watched; }

 private:
  struct Program;
  // With --mount: whether a delete or rename lies on a filesystem recorded.
  bool on_watched_mount(const FileEvent& event, const Catalog& catalog) const;

  std::unique_ptr<Program> m_program;
  EbpfOptions m_options;
  EbpfPathVerdicts m_verdicts;
  std::atomic<bool> m_stop{false};
  std::string m_watched = "every filesystem that holds files";
  std::vector<std::string> m_mount_points;  // --mount: where the filesystems recorded are mounted
  std::string m_error;
};

}  // namespace etwaudit
