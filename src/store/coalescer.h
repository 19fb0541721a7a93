#pragma once
// Coalescer: turns runs of like events into one row each.
//
// A busy process reads or writes the same file in many small pieces: a copy
// of a 1 GiB file in 64 KiB reads is 16,384 events that say one thing. With a
// window of N ms, events of one process on one file with the same operation
// that begin within N ms of the first of them become one FileEvent: count
// events, the first one's time, offset and thread, the sum of their sizes,
// and end_offset = the end of the last one's byte range. Totals (events and
// bytes) stay exact; what is lost is the order of those events inside the
// window. Events whose size is known are never merged with ones whose size
// is not, so byte totals never mix known and unknown.
//
// Groups are held until the newest event seen is more than N ms past their
// first event, then handed out in the order they began, so the rows stay in
// time order across batches. An event older than that (a late event) is
// handed out alone. flush() hands out every group, for an idle source and at
// the end of a run.

#include <chrono>
#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

#include "core/file_event.h"

namespace etwaudit {

class Coalescer {
 public:
  explicit Coalescer(std::chrono::nanoseconds window) : m_window(window.count()) {}

  // Takes the events of batch (sorting it by time first) and appends to ready
  // the rows whose window has closed.
  void add(std::vector<FileEvent>& batch, std::vector<FileEvent>& ready);
  // Appends every held row to ready.
  void flush(std::vector<FileEvent>& ready);
  // Events held in open groups (they are not in ready yet).
  std::uint64_t held_events() const { return m_held_events; }

 private:
  struct Key {
    std::uint32_t process;
    std::uint32_t path;
    Op op;
    bool sized;                              // size known
    std::uint32_t status;                    // a failed operation never joins a successful one
    std::uint32_t renamed_from, renamed_to;  // only renames of the same names join
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& key) const noexcept;
  };

  void close_before(std::int64_t time, std::vector<FileEvent>& ready);

  std::int64_t m_window;                                    // ns
  std::int64_t m_newest = INT64_MIN;                        // latest event time seen
  std::deque<FileEvent> m_open;                             // open groups, in the order they began
  std::uint64_t m_first_index = 0;                          // index of m_open.front() since the start
  std::unordered_map<Key, std::uint64_t, KeyHash> m_index;  // key -> index of its open group
  std::uint64_t m_held_events = 0;
};

}  // namespace etwaudit
