#pragma once
// RecordBuffer: the records of a live ETW session, handed from the thread
// that receives them to the thread that decodes them.
//
// ETW loses events when its consumer is slow: ProcessTrace calls the
// callback for one record after another on one thread, and while a callback
// waits the session's buffers fill. Decoding can wait: naming a process the
// session did not describe opens it (OpenProcess, NtQueryInformationProcess,
// for every process of the start-up rundown), and naming an account asks a
// domain controller (LookupAccountSidW, seconds when it is far away). So the
// callback only copies the record here, and the decoder takes them from
// another thread; whatever it waits for, ProcessTrace goes on.
//
// Two byte vectors, each reserved at capacity once: push() appends to one
// under a mutex (a copy, no allocation), drain() swaps them and decodes the
// other outside the lock. A buffer that holds capacity bytes drops the next
// records and counts them; they are lost events, like those ETW drops.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "sources/etw/raw_record.h"

namespace etwaudit {

class RecordBuffer {
 public:
  explicit RecordBuffer(std::size_t capacity_bytes);

  // Any one thread: copies record and its payload in. False when there is no
  // room; the record is dropped and counted.
  bool push(const RawRecord& record) noexcept;
  // One other thread: waits up to wait for records (or for close()), then
  // calls handle with each record taken, in the order pushed. The record and
  // its payload are valid during the call only. Returns how many.
  std::size_t drain(const std::function<void(const RawRecord&)>& handle, std::chrono::milliseconds wait);
  // Wakes drain() now and from now on; records pushed still come out.
  void close() noexcept;

  // Records dropped for want of room.
  std::uint64_t dropped() const;
  // The most bytes the buffer has held at once.
  std::size_t peak_bytes() const;

 private:
  std::size_t m_capacity;
  mutable std::mutex m_mutex;
  std::condition_variable m_ready;
  std::vector<std::uint8_t> m_incoming;  // what push() appends to (guarded)
  std::vector<std::uint8_t> m_outgoing;  // what drain() reads, outside the lock
  std::uint64_t m_dropped = 0;           // guarded
  std::size_t m_peak = 0;                // guarded
  bool m_closed = false;                 // guarded
  bool m_waiting = false;                // guarded: drain() waits
};

}  // namespace etwaudit
