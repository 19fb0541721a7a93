#include "support/etl_writer.h"

#include <fstream>

#include "support/xpress_encoder.h"

namespace etwaudit::test {

constexpr std::size_t buffer_header_size = 0x48;

EtlWriter::EtlWriter(bool is_64, std::uint32_t clock_type, std::uint64_t header_raw_timestamp, std::uint32_t cpu_mhz,
                     std::uint32_t buffer_size)
    : m_is_64(is_64), m_buffer_size(buffer_size) {
  Bytes logfile;
  put(logfile, buffer_size, 4);                           // BufferSize
  put(logfile, 0x05010106, 4);                            // Version
  put(logfile, 7601, 4);                                  // ProviderVersion
  put(logfile, 2, 4);                                     // NumberOfProcessors
  put(logfile, filetime_2026_12_02 + 600'000'000, 8);     // EndTime: a minute later
  put(logfile, 156001, 4);                                // TimerResolution
  put(logfile, 0, 4);                                     // MaximumFileSize
  put(logfile, 0, 4);                                     // LogFileMode
  put(logfile, 3, 4);                                     // BuffersWritten
  put(logfile, 0, 4);                                     // StartBuffers
  put(logfile, is_64 ? 8 : 4, 4);                         // PointerSize
  put(logfile, 0, 4);                                     // EventsLost
  put(logfile, cpu_mhz, 4);                               // CpuSpeedInMHz
  logfile.resize(is_64 ? 0xF8 : 0xF0, 0);                 // name pointers, TimeZone, padding
  put(logfile, filetime_2026_12_02 - 36'000'000'000, 8);  // BootTime: an hour earlier
  put(logfile, 1'000'000, 8);                             // PerfFreq
  put(logfile, filetime_2026_12_02, 8);                   // StartTime
  put(logfile, clock_type, 4);                            // ReservedFlags
  put(logfile, 0, 4);                                     // BuffersLost
  for (const char c : std::string("Test Logger")) put(logfile, static_cast<unsigned char>(c), 2);
  put(logfile, 0, 2);
  put(logfile, 0x00e9, 2);  // é
  put(logfile, 0, 2);
  begin_buffer(0);
  add(kernel(is_64 ? 0x02 : 0x01, 2, 0x0000, header_raw_timestamp, logfile));
  end_buffer(0x0001, 4);
}

void EtlWriter::put(Bytes& bytes, std::uint64_t value, int size) {
  for (int i = 0; i < size; ++i) bytes.push_back(static_cast<char>(value >> (8 * i)));
}

void EtlWriter::put(Bytes& bytes, const Guid& guid) {
  put(bytes, guid.data1, 4);
  put(bytes, guid.data2, 2);
  put(bytes, guid.data3, 2);
  for (const auto byte : guid.data4) put(bytes, byte, 1);
}

void EtlWriter::put(Bytes& bytes, const std::string& text) {
  bytes.insert(bytes.end(), text.begin(), text.end());
}

void EtlWriter::set_size(Bytes& record, std::size_t at) {
  record[at] = static_cast<char>(record.size());
  record[at + 1] = static_cast<char>(record.size() >> 8);
}

EtlWriter::Bytes EtlWriter::kernel(std::uint8_t type, std::uint16_t version_word, std::uint16_t hook_id,
                                   std::uint64_t timestamp, const Bytes& payload, std::uint32_t tid,
                                   std::uint32_t pid) {
  Bytes record;
  put(record, version_word, 2);
  put(record, type, 1);
  put(record, 0xC0, 1);
  put(record, 0, 2);  // Size, set below
  put(record, hook_id, 2);
  if (type >= 0x10) {
    put(record, timestamp, 8);
  } else {
    put(record, tid, 4);
    put(record, pid, 4);
    put(record, timestamp, 8);
    if (type <= 0x02) put(record, 0, 8);  // KernelTime, UserTime
  }
  const int extra = ((version_word & 0x8000) ? 8 : 0) + 8 * ((version_word & 0x0700) >> 8);
  record.resize(record.size() + extra, 'X');
  record.insert(record.end(), payload.begin(), payload.end());
  set_size(record, 4);
  return record;
}

EtlWriter::Bytes EtlWriter::kernel(std::uint8_t type, std::uint16_t version_word, std::uint16_t hook_id,
                                   std::uint64_t timestamp, const std::vector<std::uint8_t>& payload, std::uint32_t tid,
                                   std::uint32_t pid) {
  return kernel(type, version_word, hook_id, timestamp, Bytes(payload.begin(), payload.end()), tid, pid);
}

EtlWriter::Bytes EtlWriter::classic(std::uint8_t type, const Guid& guid, std::uint8_t opcode, std::uint16_t version,
                                    std::uint64_t timestamp, const std::string& payload) {
  Bytes record;
  put(record, 0, 2);
  put(record, type, 1);
  put(record, 0xC0, 1);
  put(record, opcode, 1);
  put(record, 4, 1);  // Level
  put(record, version, 2);
  put(record, 33, 4);
  put(record, 44, 4);
  put(record, timestamp, 8);
  put(record, guid);
  put(record, 0, 8);
  if (type == 0x0B || type == 0x15) {
    put(record, 1, 4);
    put(record, 0, 4);
    put(record, Guid{});
  }
  put(record, payload);
  set_size(record, 0);
  return record;
}

EtlWriter::Bytes EtlWriter::event(std::uint8_t type, const Guid& provider, std::uint16_t id, std::uint8_t version,
                                  std::uint64_t timestamp, const std::vector<std::uint16_t>& item_data_sizes,
                                  const std::string& payload) {
  Bytes record;
  put(record, 0, 2);
  put(record, type, 1);
  put(record, 0xC0, 1);
  put(record, item_data_sizes.empty() ? 0 : 1, 2);  // Flags: EXTENDED_INFO
  put(record, 0, 2);
  put(record, 55, 4);
  put(record, 66, 4);
  put(record, timestamp, 8);
  put(record, provider);
  put(record, id, 2);
  put(record, version, 1);
  put(record, 16, 1);  // Channel
  put(record, 4, 1);   // Level
  put(record, 7, 1);   // Opcode
  put(record, 9, 2);   // Task
  put(record, 0x8000000000000010, 8);
  put(record, 0, 8);
  put(record, Guid{});
  for (std::size_t i = 0; i < item_data_sizes.size(); ++i) {
    const std::uint16_t data_size = item_data_sizes[i];
    const auto item_size = static_cast<std::uint16_t>((8 + data_size + 7) & ~7);
    put(record, item_size, 2);
    put(record, 6, 2);                               // ExtType: STACK_TRACE64
    put(record, i + 1 < item_data_sizes.size(), 2);  // linkage
    put(record, data_size, 2);
    record.resize(record.size() + item_size - 8, 'E');
  }
  put(record, payload);
  set_size(record, 0);
  return record;
}

EtlWriter::Bytes EtlWriter::skipped(std::uint8_t marker_flags, std::uint8_t type, std::size_t size) {
  Bytes record;
  put(record, size, 2);
  put(record, type, 1);
  put(record, marker_flags, 1);
  record.resize(size, 'S');
  return record;
}

void EtlWriter::begin_buffer(std::uint16_t processor) {
  m_records.clear();
  m_processor = processor;
}

void EtlWriter::add(const Bytes& record) {
  m_records.insert(m_records.end(), record.begin(), record.end());
  m_records.resize((m_records.size() + 7) & ~std::size_t{7}, 0);
}

void EtlWriter::add_raw(const Bytes& bytes) {
  m_records.insert(m_records.end(), bytes.begin(), bytes.end());
}

void EtlWriter::end_buffer(std::uint16_t flag, std::uint16_t type, bool compress) {
  const std::size_t filled = buffer_header_size + m_records.size();
  Bytes body = m_records;
  if (compress) {
    const auto compressed = xpress_compress(reinterpret_cast<const std::uint8_t*>(m_records.data()), m_records.size());
    body.assign(compressed.begin(), compressed.end());
  } else if (filled < m_buffer_size) {
    body.resize(m_buffer_size - buffer_header_size, static_cast<char>(0xFF));
  }
  Bytes header;
  put(header, buffer_header_size + body.size(), 4);  // BufferSize
  put(header, compress ? filled : 0, 4);             // SavedOffset
  put(header, 0, 4);
  put(header, 0, 4);
  put(header, 0, 8);
  put(header, 0, 8);
  put(header, 0, 8);
  put(header, m_processor, 2);  // client context
  put(header, 0, 2);
  put(header, 0, 4);
  put(header, filled, 4);  // Offset
  put(header, flag | (compress ? 0x40 : 0) | 0x20, 2);
  put(header, type, 2);
  header.resize(buffer_header_size, 0);
  m_file.insert(m_file.end(), header.begin(), header.end());
  m_file.insert(m_file.end(), body.begin(), body.end());
  m_records.clear();
}

void EtlWriter::append(const Bytes& record, bool compress) {
  const std::size_t padded = (record.size() + 7) & ~std::size_t{7};
  if (!m_records.empty() && buffer_header_size + m_records.size() + padded > m_buffer_size) {
    end_buffer(0, 0, compress);
    begin_buffer(m_processor);
  }
  add(record);
}

void EtlWriter::finish(bool compress) {
  if (!m_records.empty()) end_buffer(0, 0, compress);
}

void EtlWriter::add_zero_tail(std::size_t size) {
  m_file.resize(m_file.size() + size, 0);
}

void EtlWriter::write(const std::string& path) const {
  std::ofstream(path, std::ios::binary).write(m_file.data(), static_cast<std::streamsize>(m_file.size()));
}

}  // namespace etwaudit::test
