#pragma once
// EbpfPathVerdicts: the path filters (--include-path, --exclude-path) as
// etwaudit's eBPF program applies them (ebpf/records.h: verdicts). Its
// reads, writes and closes carry no name, so the program leaves a file out
// by a verdict on the file (device, inode), made from the name of its last
// open:
// - at the open, the program itself, by the globs that are a literal path
//   and a '*' (compared byte for byte: kernel_prefixes()), so that nothing
//   of the file gets out before the collector has read the open;
// - after it, the collector, by the whole filter: it writes a verdict when
//   the program's differs (a glob the program cannot compare; a name with a
//   backslash, which the globs match without regard to case), for a file
//   opened before the collector (named from /proc), and when a rename moves
//   a file into or out of the names left out.
// Pure: it says what to write; EbpfSource writes it.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sources/live/live_source.h"

namespace etwaudit {

class EbpfPathVerdicts {
 public:
  explicit EbpfPathVerdicts(SourcePathFilter filter);

  // Whether there is a path filter at all.
  bool active() const { return static_cast<bool>(m_filter.keeps); }
  // The prefixes the program compares (those that fit in it): the first
  // includes() of them are --include-path's, the rest --exclude-path's.
  const std::vector<std::string>& kernel_prefixes() const { return m_prefixes; }
  std::size_t includes() const { return m_includes; }
  // The program's own verdict at an open of path.
  bool kernel_leaves_out(std::string_view path) const;

  struct Verdict {
    std::uint64_t open_seq;  // the open it holds for
    bool left_out;
  };
  // File (dev, ino) got a name (catalog id path_id, text path) from an open
  // (open_seq from its record), from /proc (0) or from a rename (the
  // number of the open before it): the verdict to write, when the
  // program's is not the filter's.
  std::optional<Verdict> named(std::uint64_t dev, std::uint64_t ino, std::uint64_t open_seq, std::uint32_t path_id,
                               const std::string& path);

 private:
  SourcePathFilter m_filter;
  std::vector<std::string> m_prefixes;
  std::size_t m_includes = 0;
  std::vector<std::int8_t> m_keeps;  // by catalog path id: 0 not judged, 1 kept, -1 left out
  std::map<std::pair<std::uint64_t, std::uint64_t>, Verdict> m_in_kernel;  // what the program holds per file
};

}  // namespace etwaudit
