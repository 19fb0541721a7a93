#pragma once
// QpcClock: event times of the live session, from the raw QPC timestamps.
//
// The session stamps events with the performance counter (Wnode.ClientContext
// = 1, the finest clock). Left to itself, ProcessTrace turns those into
// FILETIMEs from one reference taken when the session starts, so a collector
// that runs for days drifts from the system clock (by seconds a day, the
// counter's own drift) and never follows a clock step (time sync, a resumed
// virtual machine). The consumer therefore asks for raw timestamps
// (PROCESS_TRACE_MODE_RAW_TIMESTAMP) and this clock converts them from an
// anchor - a counter value and the system time at that moment - that the
// live source takes again every second.
//
// reanchor() on one thread, unix_ns() on another: a sequence lock, no waits.
//
// The raw values are counter ticks when the consumer's log file header says
// so: ReservedFlags (the session's clock type, its Wnode.ClientContext) 1,
// and PerfFreq this machine's counter frequency; or when it says nothing
// (both 0, as a real-time header may), since our session asked for the
// counter. A session that ETW gave another clock is read with ETW's own
// conversion instead (EtwSession::open); the run records which (clock).

#include <windows.h>
// clang-format off: evntrace.h needs windows.h first.
#include <evntrace.h>
// clang-format on

#include <atomic>
#include <cstdint>

namespace etwaudit {

// Whether a consumer opened with PROCESS_TRACE_MODE_RAW_TIMESTAMP gets
// performance counter values at qpc_frequency.
bool raw_timestamps_are_qpc(const TRACE_LOGFILE_HEADER& header, std::int64_t qpc_frequency) noexcept;
std::int64_t qpc_frequency() noexcept;

class QpcClock {
 public:
  // Reads the counter's frequency and takes the first anchor.
  QpcClock() noexcept;
  // Takes a new anchor now. One thread at a time.
  void reanchor() noexcept;
  // The time, in ns since 1970, at which the counter read ticks.
  std::int64_t unix_ns(std::int64_t ticks) const noexcept;

 private:
  std::int64_t m_frequency = 1;                   // counter ticks per second
  std::atomic<std::uint64_t> m_sequence{0};       // odd while the anchor is being written
  std::atomic<std::int64_t> m_anchor_ticks{0};    // counter value of the anchor
  std::atomic<std::int64_t> m_anchor_unix_ns{0};  // system time at that value
};

}  // namespace etwaudit
