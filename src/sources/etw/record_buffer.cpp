#include "sources/etw/record_buffer.h"

#include <cstring>
#include <type_traits>

namespace etwaudit {
namespace {

static_assert(std::is_trivially_copyable_v<RawRecord>, "RawRecord is copied as bytes");

// Each record: the RawRecord itself, then its payload, the whole rounded up
// to 8 bytes so that the next RawRecord is aligned.
constexpr std::size_t align = 8;
std::size_t stored_size(std::uint32_t payload_size) {
  return (sizeof(RawRecord) + payload_size + align - 1) / align * align;
}

}  // namespace

RecordBuffer::RecordBuffer(std::size_t capacity_bytes) : m_capacity(capacity_bytes) {
  m_incoming.reserve(m_capacity);
  m_outgoing.reserve(m_capacity);
}

bool RecordBuffer::push(const RawRecord& record) noexcept {
  const std::uint32_t payload_size = record.payload ? record.payload_size : 0;
  const std::size_t size = stored_size(payload_size);
  bool wake = false;
  {
    std::lock_guard lock(m_mutex);
    const std::size_t at = m_incoming.size();
    if (at + size > m_capacity) {
      ++m_dropped;
      return false;
    }
    m_incoming.resize(at + size);  // within the reserved capacity: no allocation
    std::memcpy(m_incoming.data() + at, &record, sizeof record);
    if (payload_size) std::memcpy(m_incoming.data() + at + sizeof record, record.payload, payload_size);
    m_peak = std::max(m_peak, m_incoming.size());
    wake = m_waiting;
  }
  if (wake) m_ready.notify_one();
  return true;
}

std::size_t RecordBuffer::drain(const std::function<void(const RawRecord&)>& handle, std::chrono::milliseconds wait) {
  {
    std::unique_lock lock(m_mutex);
    if (m_incoming.empty() && !m_closed) {
      m_waiting = true;
      m_ready.wait_for(lock, wait, [&] { return !m_incoming.empty() || m_closed; });
      m_waiting = false;
    }
    m_outgoing.clear();
    m_outgoing.swap(m_incoming);
  }
  std::size_t count = 0;
  for (std::size_t at = 0; at + sizeof(RawRecord) <= m_outgoing.size(); ++count) {
    RawRecord record;
    std::memcpy(&record, m_outgoing.data() + at, sizeof record);
    const std::uint32_t payload_size = record.payload ? record.payload_size : 0;
    record.payload = payload_size ? m_outgoing.data() + at + sizeof record : nullptr;
    handle(record);
    at += stored_size(payload_size);
  }
  return count;
}

void RecordBuffer::close() noexcept {
  {
    std::lock_guard lock(m_mutex);
    m_closed = true;
  }
  m_ready.notify_all();
}

std::uint64_t RecordBuffer::dropped() const {
  std::lock_guard lock(m_mutex);
  return m_dropped;
}

std::size_t RecordBuffer::peak_bytes() const {
  std::lock_guard lock(m_mutex);
  return m_peak;
}

}  // namespace etwaudit
