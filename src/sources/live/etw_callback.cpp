#include "sources/live/etw_callback.h"

#include "core/time_format.h"

namespace etwaudit {

RawRecord to_raw_record(const EVENT_RECORD& record) noexcept {
  const EVENT_HEADER& header = record.EventHeader;
  const EVENT_DESCRIPTOR& descriptor = header.EventDescriptor;
  RawRecord raw;
  raw.provider.data1 = header.ProviderId.Data1;
  raw.provider.data2 = header.ProviderId.Data2;
  raw.provider.data3 = header.ProviderId.Data3;
  for (int i = 0; i < 8; ++i) raw.provider.data4[i] = header.ProviderId.Data4[i];
  raw.raw_timestamp = static_cast<std::uint64_t>(header.TimeStamp.QuadPart);
  // A FILETIME unless the session delivers raw counter values, which the
  // live source converts itself (etw_clock.h); either way never an overflow.
  raw.time = unix_ns_from_filetime(static_cast<std::uint64_t>(header.TimeStamp.QuadPart));
  raw.payload = static_cast<const std::uint8_t*>(record.UserData);
  raw.payload_size = record.UserData ? record.UserDataLength : 0;
  raw.pid = header.ProcessId;
  raw.tid = header.ThreadId;
  raw.processor = (header.Flags & EVENT_HEADER_FLAG_PROCESSOR_INDEX) ? record.BufferContext.ProcessorIndex
                                                                     : record.BufferContext.ProcessorNumber;
  raw.flags = header.Flags;
  raw.opcode = descriptor.Opcode;
  raw.version = descriptor.Version;
  raw.level = descriptor.Level;
  // A classic (kernel) event's type is its opcode; its Id, task, keyword and
  // channel mean nothing (doc/etw-format.md §4.1), so they stay 0 as in .etl files.
  if (!(header.Flags & EVENT_HEADER_FLAG_CLASSIC_HEADER)) {
    raw.event_id = descriptor.Id;
    raw.task = descriptor.Task;
    raw.keyword = descriptor.Keyword;
    raw.channel = descriptor.Channel;
  }
  return raw;
}

void WINAPI etw_event_record_callback(PEVENT_RECORD record) {
  if (!record || !record->UserContext) return;
  static_cast<EtwRecordHandler*>(record->UserContext)->on_record(to_raw_record(*record));
}

}  // namespace etwaudit
