#include "sources/live/etw_clock.h"

#include <windows.h>

#include "core/time_format.h"

namespace etwaudit {
namespace {

std::int64_t counter() {
  LARGE_INTEGER value;
  QueryPerformanceCounter(&value);
  return value.QuadPart;
}

// The system time with the finest resolution this Windows has
// (GetSystemTimePreciseAsFileTime is Windows 8 and later).
std::int64_t system_time_unix_ns() {
  using PreciseTime = void(WINAPI*)(FILETIME*);
  static const auto precise = reinterpret_cast<PreciseTime>(
      reinterpret_cast<void*>(GetProcAddress(GetModuleHandleW(L"kernel32.dll"), "GetSystemTimePreciseAsFileTime")));
  FILETIME now;
  if (precise)
    precise(&now);
  else
    GetSystemTimeAsFileTime(&now);
  return unix_ns_from_filetime(ULARGE_INTEGER{{now.dwLowDateTime, now.dwHighDateTime}}.QuadPart);
}

}  // namespace

std::int64_t qpc_frequency() noexcept {
  LARGE_INTEGER frequency;
  return QueryPerformanceFrequency(&frequency) && frequency.QuadPart > 0 ? frequency.QuadPart : 0;
}

bool raw_timestamps_are_qpc(const TRACE_LOGFILE_HEADER& header, std::int64_t frequency) noexcept {
  if (frequency <= 0) return false;
  // A real-time consumer's header may say nothing (both 0): then the clock
  // is the one our session was started with, the counter (ClientContext 1).
  if (header.ReservedFlags == 0 && header.PerfFreq.QuadPart == 0) return true;
  return header.ReservedFlags == 1 && header.PerfFreq.QuadPart == frequency;
}

QpcClock::QpcClock() noexcept {
  if (const std::int64_t frequency = qpc_frequency()) m_frequency = frequency;
  reanchor();
}

void QpcClock::reanchor() noexcept {
  // The counter on both sides of the system time: the anchor is their middle.
  const std::int64_t before = counter();
  const std::int64_t now = system_time_unix_ns();
  const std::int64_t after = counter();
  const std::uint64_t sequence = m_sequence.load(std::memory_order_relaxed);
  m_sequence.store(sequence + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  m_anchor_ticks.store(before + (after - before) / 2, std::memory_order_relaxed);
  m_anchor_unix_ns.store(now, std::memory_order_relaxed);
  m_sequence.store(sequence + 2, std::memory_order_release);
}

std::int64_t QpcClock::unix_ns(std::int64_t ticks) const noexcept {
  std::int64_t anchor_ticks, anchor_ns;
  std::uint64_t first, second;
  do {
    first = m_sequence.load(std::memory_order_acquire);
    anchor_ticks = m_anchor_ticks.load(std::memory_order_relaxed);
    anchor_ns = m_anchor_unix_ns.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    second = m_sequence.load(std::memory_order_relaxed);
  } while ((first & 1) != 0 || first != second);
  // Whole seconds and the rest apart, so that no product overflows.
  const std::int64_t delta = ticks - anchor_ticks;
  const std::int64_t seconds = delta / m_frequency, rest = delta % m_frequency;
  return anchor_ns + seconds * 1'000'000'000 + rest * 1'000'000'000 / m_frequency;
}

}  // namespace etwaudit
