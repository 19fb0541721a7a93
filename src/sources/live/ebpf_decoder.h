#pragma once
// EbpfDecoder: the records of etwaudit's eBPF program (ebpf/records.h) as
// FileEvents, with the processes they name. Pure: what it needs of the
// system (a process or a descriptor that predates the collector, a user's
// name) it asks an EbpfHost, so the tests feed it recorded bytes.
//
// Processes: an exec record gives a process its identity (pid, start time,
// program, arguments, parent, uid) before any of its I/O, a fork record a
// child that runs its parent's program; a process first seen in a file
// record started before the collector and is asked of the host (/proc).
// An exit record ends a pid's identity (the pid may be used again).
// Files: an open record names a file (its device and inode) by the path the
// kernel walked (and says whether the open created it: a create event
// first); a rename moves that name to the new one (a directory renamed
// leaves the names of what it holds as they were); an unlink or a rename
// names the files as the call gave them, after the path of their directory; a read, write or close of a file opened
// before the collector is named by the host (/proc/PID/fd/N) while the process lives, else by its device and inode.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/catalog.h"
#include "core/file_event.h"

namespace etwaudit {

struct EbpfHost {
  // A process seen for the first time in a file record: its identity now.
  std::function<ProcessInfo(std::uint32_t pid)> process;
  // The path of a descriptor of a living process; "" when unknown.
  std::function<std::string(std::uint32_t pid, std::int64_t fd)> descriptor_path;
  // The name of a user id (or the number).
  std::function<std::string(std::uint32_t uid)> user_name;
  // Told each name a file (device, inode) gets, from an open (its number,
  // records.h), /proc (0) or a rename (the open's number again), for the
  // path filters' verdicts. May be empty.
  std::function<void(std::uint64_t dev, std::uint64_t ino, std::uint64_t open_seq, std::uint32_t path)> file_named;
};

class EbpfDecoder {
 public:
  // boot_to_epoch_ns: added to the kernel's boot clock to get ns since 1970.
  EbpfDecoder(Catalog& catalog, std::int64_t boot_to_epoch_ns, EbpfHost host);

  // One record as the ring buffer gave it; the event it stands for, if
  // any, appended to out. False when the bytes are not a record (too short
  // for its type, an unknown type): they are bad input.
  bool decode(const void* data, std::size_t size, std::vector<FileEvent>& out);

 private:
  struct Process {
    std::uint32_t id = 0;  // catalog id
    std::string image, command_line;
  };
  const Process& process(std::uint32_t pid);
  std::uint32_t file(std::uint32_t pid, std::int64_t fd, std::uint64_t dev, std::uint64_t ino);
  Process& describe(ProcessInfo info);
  void name_file(std::uint64_t dev, std::uint64_t ino, std::uint32_t path, std::uint64_t open_seq);

  Catalog& m_catalog;
  std::int64_t m_boot_to_epoch;
  EbpfHost m_host;
  std::unordered_map<std::uint32_t, Process> m_processes;  // by pid
  struct FileName {
    std::uint32_t path = 0;  // catalog id
    std::uint64_t open_seq = 0;
  };
  std::map<std::pair<std::uint64_t, std::uint64_t>, FileName> m_files;                     // by (dev, ino)
  std::unordered_map<std::uint32_t, std::pair<std::uint64_t, std::uint64_t>> m_file_keys;  // path -> (dev, ino)
};

}  // namespace etwaudit
