#pragma once
// The ETW event callback: ProcessTrace calls it with each EVENT_RECORD, on
// the consumer thread. It does the least it can: describe the record as the
// portable RawRecord (sources/etw/raw_record.h) and hand it to the handler named in
// the record's UserContext, which decodes it and queues what comes out. No
// allocation, no locks, no exceptions here (doc/etw-format.md §3.5: slow callbacks
// lose events).

#include <windows.h>
// clang-format off: evntcons.h needs windows.h first.
#include <evntcons.h>
// clang-format on

#include "sources/etw/raw_record.h"

namespace etwaudit {

// Receives the records of one consumer.
class EtwRecordHandler {
 public:
  virtual ~EtwRecordHandler() = default;
  // record and its payload are valid only during the call.
  virtual void on_record(const RawRecord& record) noexcept = 0;
};

// The portable view of record: provider or event class, the descriptor
// fields (event id, task, keyword and channel only for manifest events), the
// header's pid, tid and flags, the processor, the payload, and the time.
// raw_timestamp is the header's TimeStamp as delivered; time reads it as a
// FILETIME, which it is unless the consumer asked for raw timestamps (the
// live source does, and sets time from raw_timestamp with its QpcClock).
RawRecord to_raw_record(const EVENT_RECORD& record) noexcept;

// The EventRecordCallback given to OpenTraceW; UserContext is the
// EtwRecordHandler*. Records without one are ignored.
void WINAPI etw_event_record_callback(PEVENT_RECORD record);

}  // namespace etwaudit
