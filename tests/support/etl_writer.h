#pragma once
// Writes small .etl files byte by byte from the layouts in doc/etw-format.md
// §7: a logfile header record, then buffers of records, plain or compressed
// with XPRESS (support/xpress_encoder.h), for 32- and 64-bit traces. Record
// builders cover every header type the reader knows: system, compact and
// perfinfo kernel headers, full and instance (classic GUID) headers, and
// event headers with extended data items. The tests of the reader use it
// for the header types no real trace has, and the import tests for whole
// traces of the FileIo layouts no public trace has (support/etw_payloads.h).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sources/etw/raw_record.h"

namespace etwaudit::test {

class EtlWriter {
 public:
  using Bytes = std::vector<char>;
  static constexpr std::uint64_t filetime_2026_12_02 = 134406801300000000;  // 2026-12-02T10:15:30Z
  static constexpr std::uint16_t flag_events_lost = 0x0002;                 // buffer flag: the logger lost events

  // clock_type: the logfile's ReservedFlags (1 QPC, 2 system time, 3 CPU
  // cycles); header_raw_timestamp: the logfile header record's timestamp on
  // that clock. Buffers hold buffer_size bytes, header included.
  EtlWriter(bool is_64, std::uint32_t clock_type, std::uint64_t header_raw_timestamp, std::uint32_t cpu_mhz = 0,
            std::uint32_t buffer_size = 0x400);

  // System (0x01/0x02), compact (0x03/0x04) or perfinfo (0x10/0x11) record.
  // version_word: the version in its low byte; 0x8000 and 0x0700 add header
  // extensions. hook_id: the kernel group in its high byte, the opcode low.
  static Bytes kernel(std::uint8_t type, std::uint16_t version_word, std::uint16_t hook_id, std::uint64_t timestamp,
                      const Bytes& payload, std::uint32_t tid = 11, std::uint32_t pid = 22);
  static Bytes kernel(std::uint8_t type, std::uint16_t version_word, std::uint16_t hook_id, std::uint64_t timestamp,
                      const std::vector<std::uint8_t>& payload, std::uint32_t tid, std::uint32_t pid);
  // Full (0x0A/0x14) or instance (0x0B/0x15) record.
  static Bytes classic(std::uint8_t type, const Guid& guid, std::uint8_t opcode, std::uint16_t version,
                       std::uint64_t timestamp, const std::string& payload);
  // Event header record (0x12/0x13) with extended data items of the given sizes.
  static Bytes event(std::uint8_t type, const Guid& provider, std::uint16_t id, std::uint8_t version,
                     std::uint64_t timestamp, const std::vector<std::uint16_t>& item_data_sizes,
                     const std::string& payload);
  // A record the reader skips: a WPP message (flags 0x90) or a typed header.
  static Bytes skipped(std::uint8_t marker_flags, std::uint8_t type, std::size_t size);

  // By hand: a buffer of the given processor, records in it (each padded to
  // 8 bytes), raw bytes, and its end, plain or compressed.
  void begin_buffer(std::uint16_t processor);
  void add(const Bytes& record);
  void add_raw(const Bytes& bytes);
  void end_buffer(std::uint16_t flag = 0, std::uint16_t type = 0, bool compress = false);

  // Or as a logger fills them: appends a record, ending the buffer first
  // when the record would not fit; finish() ends the last one.
  void append(const Bytes& record, bool compress = false);
  void finish(bool compress = false);

  void add_zero_tail(std::size_t size);
  const Bytes& bytes() const { return m_file; }
  void write(const std::string& path) const;

 private:
  static void put(Bytes& bytes, std::uint64_t value, int size);
  static void put(Bytes& bytes, const Guid& guid);
  static void put(Bytes& bytes, const std::string& text);
  static void set_size(Bytes& record, std::size_t at);

  bool m_is_64;
  std::uint32_t m_buffer_size;
  std::uint16_t m_processor = 0;
  Bytes m_records;
  Bytes m_file;
};

}  // namespace etwaudit::test
