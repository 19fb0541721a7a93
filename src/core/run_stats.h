#pragma once
// Counters of one collector run, shared by the source, the queue's owner, the
// collector and the status line. Each is written by one thread and read by others.

#include <atomic>
#include <cstdint>

namespace etwaudit {

struct RunStats {
  std::atomic<std::uint64_t> received{0};       // events the source delivered (source thread)
  std::atomic<std::uint64_t> dropped{0};        // events our queue refused because it was full
  std::atomic<std::uint64_t> lost{0};           // events the source reports it lost before we saw them
  std::atomic<std::uint64_t> bad_input{0};      // input records that could not be decoded
  std::atomic<std::uint64_t> written{0};        // events committed (collector thread)
  std::atomic<std::uint64_t> excluded{0};       // events a filter left out (--include-path, --op, ...)
  std::atomic<std::uint64_t> own{0};            // events of etwaudit itself: its process, its database files
  std::atomic<std::uint64_t> unresolved{0};     // events written without a file name
  std::atomic<std::uint64_t> rundown_names{0};  // file names from a rundown (ETW sources)
  std::atomic<std::uint64_t> batches{0};        // transactions committed
};

}  // namespace etwaudit
