#pragma once
// EtlSource: the events of one .etl trace file, through the shared decoder.
//
// The reader turns the file into RawRecords, the decoder (the same one the
// live Windows collector uses) turns those into FileEvents, names and
// processes, and the events go to the queue, waiting for room rather than
// dropping: a file can always be read more slowly. Names that arrive after
// the events that need them (the rundown at the end of a kernel trace) reach
// the store as catalog resolutions, which it back-fills.

#include <atomic>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <tuple>

#include "sources/etl/etl_reader.h"
#include "sources/etw/decoder.h"
#include "sources/event_source.h"

namespace etwaudit {

class EtlSource final : public EventSource, private FileEventSink {
 public:
  // on_bad_input: stop at the first broken buffer, or skip it and count it.
  EtlSource(std::string path, OnBadInput on_bad_input);

  std::string description() const override { return "etl:" + m_path; }
  bool is_live() const override { return false; }
  void run(BoundedQueue<FileEvent>& queue, Catalog& catalog, RunStats& stats) override;
  void stop() noexcept override { m_stop = true; }
  std::string error() const override { return m_error; }

  // Any thread, while run() runs: bytes of the file read so far, its size,
  // and records read.
  std::uint64_t bytes_done() const { return m_bytes_done.load(std::memory_order_relaxed); }
  std::uint64_t bytes_total() const { return m_bytes_total.load(std::memory_order_relaxed); }
  std::uint64_t records_done() const { return m_records_done.load(std::memory_order_relaxed); }

  // After run(): what the reader and the decoder saw.
  const EtlReaderCounters& reader_counters() const { return m_reader_counters; }
  const EtlLogfileHeader& logfile_header() const { return m_header; }
  const DecoderStats& decoder_stats() const { return m_decoder_stats; }

  // A kind of record the decoder does not decode: provider or event class,
  // opcode (classic events) or event id (manifest events), version.
  struct RecordKind {
    Guid provider;
    bool classic;
    std::uint16_t id;
    std::uint8_t version;
    bool operator<(const RecordKind& other) const {
      return std::tie(provider, classic, id, version) <
             std::tie(other.provider, other.classic, other.id, other.version);
    }
    std::string describe() const;  // "{guid} opcode 10 v2"
  };
  // After run(): records skipped by kind.
  const std::map<RecordKind, std::uint64_t>& skipped_kinds() const { return m_skipped_kinds; }

 private:
  void deliver(const FileEvent& event) override;

  std::string m_path;
  OnBadInput m_on_bad_input;
  std::atomic<bool> m_stop{false};
  std::string m_error;                         // set by run() before it returns
  BoundedQueue<FileEvent>* m_queue = nullptr;  // during run()
  RunStats* m_stats = nullptr;                 // during run()
  bool m_queue_closed = false;                 // the collector gave up; stop reading
  EtlReaderCounters m_reader_counters;
  EtlLogfileHeader m_header;
  DecoderStats m_decoder_stats;
  std::map<RecordKind, std::uint64_t> m_skipped_kinds;
  std::atomic<std::uint64_t> m_bytes_done{0};
  std::atomic<std::uint64_t> m_bytes_total{0};
  std::atomic<std::uint64_t> m_records_done{0};
};

}  // namespace etwaudit
