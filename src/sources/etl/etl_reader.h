#pragma once
// EtlReader: the records of an .etl trace file, on any OS.
//
// An .etl file is a sequence of buffers, each starting with a 0x48-byte
// WMI_BUFFER_HEADER; the next buffer starts BufferSize bytes further on.
// Records start right after the header and run to the header's Offset field
// (bytes filled, header included); a marker of 0xFFFFFFFF ends them early. A
// buffer with BufferFlag 0x40 is XPRESS-compressed (xpress.h): its BufferSize
// is the size on disk, its body decompresses to SavedOffset - 0x48 bytes, and
// compressed buffers follow each other back to back. Uncompressed buffers do
// not need SavedOffset and may leave it 0 (the header buffer of a Windows 7
// trace does), so the end of the records always comes from Offset. A buffer
// header of all zero bytes ends the file: the unused tail of a preallocated
// file.
//
// Each record starts with a 32-bit marker: byte 3 holds flags (0xC0 for a typed
// header, 0x80 without 0x40 for a WPP message), byte 2 the header type, and the
// record is 8-byte aligned. The header type says how the rest is laid out and
// whether the payload's pointers are 4 or 8 bytes wide (doc/etw-format.md §7.2):
//   system, compact, perfinfo   kernel events; Size at +4, HookId at +6 (type,
//                               group), tid/pid at +8 (not in perfinfo), the
//                               clock at +0x10 (+8 in perfinfo); bits 0x8000
//                               and 0x0700 of the version word add 8 and
//                               8 x n header bytes before the payload
//   full header, instance       classic (MOF) events: the 0x30-byte
//                               EVENT_TRACE_HEADER with the class GUID, type
//                               and version; instance adds InstanceId,
//                               ParentInstanceId and ParentGuid (0x48 bytes)
//   event header                manifest and TraceLogging events: the 0x50-byte
//                               EVENT_HEADER; with Flags 0x1, extended data
//                               items {u16 size, u16 type, u16 linkage bit,
//                               u16 data size} come before the payload, chained
//                               while the linkage bit is set
//   message, timed, error, wnode  not events the decoder uses: counted, skipped
// A kernel HookId's group selects the event-class GUID (FileIo is group 4) and
// its type becomes the opcode, as ETW does for live consumers.
//
// The first record of the first buffer is the TRACE_LOGFILE_HEADER (a system
// header with HookId 0). It is read into header() and not delivered as a
// record. Raw timestamps count in the clock its ReservedFlags names (QPC at
// PerfFreq, FILETIME, or CPU cycles at CpuSpeedInMHz) and are converted as
// StartTime + (raw - raw of the header record) (doc/etw-format.md §7.4, §7.5).
//
// Buffers are per processor, so records are in time order within a buffer but
// not across buffers. Everything read from the file is bounds-checked; a
// broken structure is an Error that names the file, the buffer and what is
// wrong, or, with OnMalformedBuffer::skip, is counted and the rest of that
// buffer skipped. The reader reuses two buffers for the whole file and does
// not allocate per record.

#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include "sources/etw/raw_record.h"

namespace etwaudit {

// What the file's TRACE_LOGFILE_HEADER says about the trace.
struct EtlLogfileHeader {
  std::uint32_t buffer_size = 0;           // bytes per buffer as the logger allocated them
  std::uint32_t version = 0;               // OS version bytes, low to high: major, minor, sub, sub-minor
  std::uint32_t provider_version = 0;      // OS build number
  std::uint32_t number_of_processors = 0;  // processors of the recording machine
  std::uint32_t timer_resolution = 0;      // clock interrupt period in 100 ns units
  std::uint32_t maximum_file_size = 0;     // the logger's file size limit in MB; 0 when none
  std::uint32_t log_file_mode = 0;         // EVENT_TRACE_*_MODE bits of the session
  std::uint32_t buffers_written = 0;       // buffers the logger says it wrote
  std::uint32_t pointer_size = 0;          // 4 or 8: pointer width of the recording kernel
  std::uint32_t events_lost = 0;           // events the logger could not record
  std::uint32_t cpu_speed_mhz = 0;         // processor clock, for clock_type 3
  std::uint32_t clock_type = 0;            // ReservedFlags: 1 QPC, 2 system time (FILETIME), 3 CPU cycles
  std::uint32_t buffers_lost = 0;          // buffers the logger could not write
  std::uint64_t perf_freq = 0;             // QPC ticks per second, for clock_type 1
  std::uint64_t start_timestamp_raw = 0;   // raw clock value of the header record: the conversion's anchor
  std::int64_t start_time = 0;             // StartTime in ns since 1970 UTC; 0 when not after 1970 or out of range
  std::int64_t end_time = 0;               // EndTime in ns since 1970 UTC; 0 when the file does not say (as StartTime)
  std::int64_t boot_time = 0;              // BootTime in ns since 1970 UTC; 0 when the file does not say (as StartTime)
  std::string logger_name;                 // session name (UTF-8), e.g. "NT Kernel Logger"
  std::string log_file_name;               // file name the logger wrote (UTF-8)
};

// What the reader has seen so far.
struct EtlReaderCounters {
  std::uint64_t buffers = 0;                   // buffers read, the header buffer included
  std::uint64_t compressed_buffers = 0;        // of which XPRESS-compressed
  std::uint64_t buffers_with_lost_events = 0;  // buffers flagged EVENTS_LOST or BUFFER_LOST by the logger
  std::uint64_t bytes_read = 0;                // bytes of buffers read from the file
  std::uint64_t bytes_decompressed = 0;        // bytes produced by decompressing buffers
  std::uint64_t records = 0;                   // records delivered by next()
  std::uint64_t records_skipped = 0;           // message, timed, error and wnode records (not delivered)
  std::uint64_t malformed = 0;                 // broken structures skipped (OnMalformedBuffer::skip only)
  std::array<std::uint64_t, trace_header_type_count> by_header_type{};  // delivered + skipped, by TraceHeaderType

  std::uint64_t of_type(TraceHeaderType type) const { return by_header_type[static_cast<std::size_t>(type)]; }
};

// What a broken structure in a buffer does: throw (stop), or count it, skip
// the rest of that buffer and go on (skip). A file that ends inside a buffer,
// or a buffer size that makes the next buffer impossible to find, ends the
// reading under skip, counted as malformed.
enum class OnMalformedBuffer { stop, skip };

class EtlReader {
 public:
  // Opens path and reads the logfile header. Throws Error when the file cannot
  // be read or does not start like an .etl file.
  explicit EtlReader(const std::filesystem::path& path, OnMalformedBuffer on_malformed = OnMalformedBuffer::stop);
  // Reads a trace held in memory, named name in messages. bytes must outlive
  // the reader. Throws Error as the file constructor does.
  EtlReader(std::span<const std::uint8_t> bytes, const std::filesystem::path& name,
            OnMalformedBuffer on_malformed = OnMalformedBuffer::stop);

  EtlReader(const EtlReader&) = delete;
  EtlReader& operator=(const EtlReader&) = delete;

  // Fills record with the next record and returns true, or returns false at the
  // end of the file. record.payload stays valid until the next call.
  bool next(RawRecord& record);

  // Calls on_record(const RawRecord&) for every remaining record.
  template <typename Callback>
  void for_each(Callback&& on_record) {
    RawRecord record;
    while (next(record)) on_record(static_cast<const RawRecord&>(record));
  }

  const EtlLogfileHeader& header() const noexcept { return m_header; }
  const EtlReaderCounters& counters() const noexcept { return m_counters; }
  // The last broken structure skipped under OnMalformedBuffer::skip; empty when none.
  const std::string& last_error() const noexcept { return m_last_error; }

  // About the record next() returned last:
  // index of its buffer in the file (0 is the header buffer),
  std::uint64_t buffer_index() const noexcept { return m_buffer_index; }
  // file offset of that buffer,
  std::uint64_t buffer_offset() const noexcept { return m_buffer_offset; }
  // its extended data items as stored (event headers with Flags 0x1; else empty).
  std::span<const std::uint8_t> extended_data() const noexcept { return m_extended_data; }

  // ns since 1970 UTC for a raw timestamp of this file's clock.
  std::int64_t to_unix_ns(std::uint64_t raw_timestamp) const noexcept;

 private:
  bool load_next_buffer();
  std::size_t read_compressed_body(std::uint64_t offset, std::size_t body_size, std::uint32_t saved_offset);
  // Copies count bytes at file offset at into into; fails fatally when they are not all there.
  void read_at(std::uint64_t at, std::uint8_t* into, std::size_t count);
  // Checks the size and reads the logfile header; the constructors' common part.
  void open_trace();
  void read_logfile_header();
  bool parse_record(RawRecord& record);
  // Where the record being parsed starts in the buffer, and the bytes left from there.
  struct RecordAt {
    const std::uint8_t* bytes;
    std::size_t position;
    std::size_t room;
  };
  // Checks a record's Size against its header and the buffer, and moves past it (8-byte aligned).
  void take_record(const RecordAt& at, std::size_t size, std::size_t header_size, const char* header_name);
  // Moves past a record of a header type that carries no event; counts it. Returns false.
  bool skip_record(const RecordAt& at, TraceHeaderType type, const char* header_name);
  // Each reads one family of headers into record and size, and returns the header's size.
  std::size_t read_kernel_header(const RecordAt& at, TraceHeaderType type, RawRecord& record, std::size_t& size);
  std::size_t read_classic_header(const RecordAt& at, TraceHeaderType type, RawRecord& record, std::size_t& size);
  std::size_t read_event_header(const RecordAt& at, std::uint16_t width_flag, RawRecord& record, std::size_t& size);
  // Throw an Error naming the file and the current buffer. fatal: the next
  // buffer cannot be found, so reading cannot go on even under skip.
  [[noreturn]] void fail(const std::string& what, bool fatal) const;
  // The same, naming the record being parsed too.
  [[noreturn]] void fail_record(const std::string& what) const;

  std::filesystem::path m_path;                   // for messages
  std::ifstream m_file;                           // the trace, unless it is in memory
  std::span<const std::uint8_t> m_memory;         // the trace when it is in memory
  bool m_in_memory = false;                       // read from m_memory rather than m_file
  std::uint64_t m_file_size = 0;                  // bytes in the file
  OnMalformedBuffer m_on_malformed;               // throw or skip on broken structures
  EtlLogfileHeader m_header;                      // read by the constructor
  EtlReaderCounters m_counters;                   // what was seen so far
  std::string m_last_error;                       // last skipped broken structure
  std::uint64_t m_ticks_per_second = 0;           // of the file's clock
  std::uint64_t m_next_buffer_offset = 0;         // file offset of the buffer after the current one
  std::uint64_t m_buffer_offset = 0;              // file offset of the current buffer
  std::uint64_t m_buffer_index = 0;               // index of the current buffer
  bool m_have_buffer = false;                     // a buffer has been loaded
  bool m_at_end = false;                          // no more buffers
  std::vector<std::uint8_t> m_buffer;             // the current buffer, decompressed, header included
  std::vector<std::uint8_t> m_compressed;         // compressed body of the current buffer
  std::size_t m_filled = 0;                       // end of the records in m_buffer
  std::size_t m_position = 0;                     // offset of the next record in m_buffer
  std::size_t m_record_offset = 0;                // offset of the record being parsed, for messages
  std::uint32_t m_processor = 0;                  // processor of the current buffer
  std::span<const std::uint8_t> m_extended_data;  // of the last record
};

}  // namespace etwaudit
