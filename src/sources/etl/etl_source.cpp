#include "sources/etl/etl_source.h"

#include <filesystem>

#include "core/error.h"
#include "core/utf8_path.h"

namespace etwaudit {

EtlSource::EtlSource(std::string path, OnBadInput on_bad_input)
    : m_path(std::move(path)), m_on_bad_input(on_bad_input) {}

std::string EtlSource::RecordKind::describe() const {
  return provider.to_string() + (classic ? " opcode " : " id ") + std::to_string(id) + " v" + std::to_string(version);
}

void EtlSource::deliver(const FileEvent& event) {
  m_stats->received.fetch_add(1, std::memory_order_relaxed);
  if (!m_queue->push_waiting(event)) m_queue_closed = true;
}

void EtlSource::run(BoundedQueue<FileEvent>& queue, Catalog& catalog, RunStats& stats) {
  m_queue = &queue;
  m_stats = &stats;
  try {
    std::error_code error;
    m_bytes_total = std::filesystem::file_size(utf8_path(m_path), error);
    EtlReader reader(utf8_path(m_path),
                     m_on_bad_input == OnBadInput::skip ? OnMalformedBuffer::skip : OnMalformedBuffer::stop);
    m_header = reader.header();
    EtwDecoder decoder(catalog, *this);
    RawRecord record;
    std::uint64_t records = 0;
    while (!m_stop && !m_queue_closed && reader.next(record)) {
      const std::uint64_t unknown_before = decoder.stats().unknown;
      decoder.decode(record);
      if (decoder.stats().unknown != unknown_before) {
        const bool classic = record.is_classic();
        ++m_skipped_kinds[RecordKind{record.provider, classic,
                                     static_cast<std::uint16_t>(classic ? record.opcode : record.event_id),
                                     record.version}];
      }
      if ((++records & 0xFFF) == 0) {
        m_records_done.store(records, std::memory_order_relaxed);
        m_bytes_done.store(reader.buffer_offset(), std::memory_order_relaxed);
      }
    }
    if (!m_stop && !m_queue_closed) decoder.flush();  // operations whose OperationEnd the trace lacks
    m_records_done = records;
    m_bytes_done = m_bytes_total.load();
    m_reader_counters = reader.counters();
    m_decoder_stats = decoder.stats();
    stats.lost += m_header.events_lost + m_decoder_stats.lost_markers;
    stats.rundown_names = m_decoder_stats.rundown_names;
    stats.bad_input += m_reader_counters.malformed + m_decoder_stats.malformed;
  } catch (const Error& e) {
    m_error = e.what();
  }
  m_queue = nullptr;
  m_stats = nullptr;
}

}  // namespace etwaudit
