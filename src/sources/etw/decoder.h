#pragma once
// EtwDecoder: turns ETW records into FileEvents, on any OS.
//
// Both ETW sources, the live Windows session and the .etl importer, hand each
// record to decode() as a RawRecord (sources/etw/raw_record.h). The decoder
// dispatches on the provider or kernel event-class GUID first, then on the
// opcode (classic kernel events) or the event id (manifest events), then on
// the version, and takes the width of pointer fields from the record's own
// header (doc/etw-format.md §1, §4.1). It knows:
//
//   FileIo {90cbdc39-…}, v2 and v3    names (0, 32, 35, 36), Create 64, Cleanup 65,
//                                     Close 66, Read 67, Write 68, SetInfo 69,
//                                     Delete 70, Rename 71, Flush 73, the path
//                                     events 79-81 (v3), and DirEnum 72,
//                                     QueryInfo 74, FSControl 75, OperationEnd 76,
//                                     DirNotify 77, which are counted only
//   Microsoft-Windows-Kernel-File     ids 10-30, v0 and v1, the same operations
//   DiskIo {3d6fa8d4-…}, v2 and v3    Read 10 and Write 11 (disk_read, disk_write)
//   Process {3d6fa8d0-…}, v3 and v4   Start 1, End 2, DCStart 3, DCEnd 4
//   Microsoft-Windows-Kernel-Process  ProcessStart 1, ProcessStop 2,
//                                     ThreadStart 3, ThreadStop 4
//   Thread {3d6fa8d1-…}, v0 to v4     Start 1, End 2, DCStart 3, DCEnd 4
//   Lost_Event {6a399ae0-…}           RTLostEvent 32, RTLostBuffer 33, RTLostFile 34
//
// Everything else is counted as unknown and never guessed at. Every field is
// read through bounds checks; a record of a known kind that is too short, or
// whose string has no terminator inside the payload, is counted as malformed
// and produces nothing.
//
// File names (doc/etw-format.md §5.1, doc/design.md §6). Two tables map kernel values
// to catalog path ids: FileKey -> name, filled by the name events (FileIo
// Name, FileCreate, FileRundown; Kernel-File NameCreate) and emptied by
// FileDelete / NameDelete; and FileObject -> name, filled by Create and
// emptied by Close. An event's file is looked up by its FileKey first, then
// its FileObject (DiskIo has only the one "FileObject" field, which is
// matched against both tables). When neither is known, the event gets the
// catalog's unresolved entry for the key (the FileKey if the event has one,
// else the FileObject); when a name for that key arrives later, typically in
// the FileRundown at the end of a trace, Catalog::resolve_file_key names the
// entry and the store back-fills what it has written. Names are NT paths as
// the kernel gives them (\Device\HarddiskVolume3\...), converted to UTF-8.
//
// Processes. A process is its pid and start time (ProcessInfo). Process
// events intern it with its image (the short ImageFileName of the kernel
// Process events, the NT path of Kernel-Process) and command line; a pid met
// before any process event is interned with an empty image. Kernel events
// often carry pid 0xFFFFFFFF, or 0 / 4 when the work runs in the System
// context; then the event's thread (the TTID or IssuingThreadId field when it
// has one, else the header's) is looked up in the thread -> process map that
// the Thread events keep. Ends do not remove entries: records of different
// processors reach an .etl file in separate buffers, so an End can be read
// before events that happened earlier; a reused pid or tid is replaced by its
// next Start.
//
// A live source can also ask the running system (ProcessLookup). The decoder
// asks once for each pid that no process event has named, which happens when
// the session lost the process's events; and for each kernel Start or DCStart,
// whose image is only the 15-character ImageFileName and, for a DCStart, has
// no start time. The answer is taken only when it is the same process, for a
// pid is reused as soon as its process is gone and the answer comes a moment
// after the event: the file name of its image must begin with the
// ImageFileName, and, except for a Start, which keeps its own time as the
// start time, it must have been created no later than the event.
//
// Delete and rename may each be reported twice, by the SetInfo-style event
// (FileIo 70/71, Kernel-File 18/19/29) and by the path event (FileIo 79/80,
// Kernel-File 26/27) of the same IRP. Whether Windows logs both for one
// operation is UNVERIFIED, so the decoder delivers whichever comes first and
// folds its partner (same IRP, FileObject and operation) into it.
//
// Steady state allocates nothing: tables are flat arrays that grow only past
// their high-water mark, strings are converted into reused buffers, and the
// catalog allocates only for a path or process it has not seen. decode() is
// noexcept; if memory runs out (or the sink throws) the record is counted as
// failed.

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/catalog.h"
#include "core/file_event.h"
#include "sources/etw/key_table.h"
#include "sources/etw/raw_record.h"

namespace etwaudit {

namespace decoder_detail {
struct FileLayout;                 // where an operation event keeps its fields (decoder.cpp)
enum class Action : std::uint8_t;  // what an operation event does (decoder.cpp)
}  // namespace decoder_detail

struct DecoderStats {
  std::uint64_t records = 0;       // records passed to decode()
  std::uint64_t file_events = 0;   // FileIo / Kernel-File operation records decoded, delivered or counted only
  std::uint64_t delivered = 0;     // FileEvents handed to the sink, disk events included
  std::uint64_t counted_only = 0;  // operation records decoded but not delivered (DirEnum, QueryInfo, FSControl, ...)
  std::uint64_t duplicates = 0;    // delete/rename records folded into their partner of the same IRP
  std::uint64_t deletes_on_close = 0;  // deletes delivered at the Cleanup of a delete-on-close file object
  std::uint64_t paging_io = 0;         // reads and writes of paging I/O, delivered as paging_read/paging_write
  std::uint64_t disk_events = 0;       // DiskIo reads and writes delivered
  std::uint64_t names = 0;          // name records decoded (Name, FileCreate, FileDelete, FileRundown, NameCreate, ...)
  std::uint64_t rundown_names = 0;  // of which FileRundown (FileIo opcode 36)
  std::uint64_t processes = 0;      // process records decoded (kernel Process, Kernel-Process 1 and 2)
  std::uint64_t threads = 0;        // thread records decoded (kernel Thread, Kernel-Process 3 and 4)
  std::uint64_t looked_up = 0;      // processes the ProcessLookup named or completed
  std::uint64_t lost_markers = 0;   // RTLostEvent / RTLostBuffer / RTLostFile markers
  std::uint64_t unknown = 0;        // records of a provider, event or version the decoder does not decode
  std::uint64_t newer_versions = 0;  // records of a version above the newest known (FileIo 3, Process 4, Kernel-Process
                                     // ProcessStart 4), read with its layout
  std::uint64_t malformed = 0;       // records of a known kind with a short or broken payload
  std::uint64_t unresolved = 0;      // delivered events whose file name was not known when delivered
  std::uint64_t system_assumed = 0;  // events without a process id whose thread no event or lookup placed: System (4)
  std::uint64_t completed = 0;       // FileIo operations held until their OperationEnd gave status and actual bytes
  std::uint64_t failed_operations = 0;  // of which failed (an NTSTATUS error)
  std::uint64_t never_completed = 0;    // held operations delivered without their OperationEnd (table full, end)
  std::uint64_t early_ends = 0;         // OperationEnds that came before their start and completed it
  std::uint64_t failed = 0;             // records abandoned because memory ran out or the sink threw
};

// What the running system says about a process (live sources only).
class ProcessLookup {
 public:
  virtual ~ProcessLookup() = default;
  // Fills info.start_time (ns since 1970, the OS's creation time), info.image
  // (full path) and, when it can, info.command_line for the process that has
  // pid now. False when there is none or it cannot be opened.
  virtual bool lookup(std::uint32_t pid, ProcessInfo& info) noexcept = 0;
  // The pid of the process that thread tid belongs to now; 0 when unknown.
  virtual std::uint32_t process_of_thread(std::uint32_t tid) noexcept = 0;
  // DOMAIN\\user for a SID in text form (S-1-5-21-...); empty when unknown.
  virtual std::string account_name(const std::string& sid) noexcept {
    (void)sid;
    return {};
  }
};

// Receives the decoder's events, on the thread that calls decode().
class FileEventSink {
 public:
  virtual ~FileEventSink() = default;
  virtual void deliver(const FileEvent& event) = 0;
};

class EtwDecoder {
 public:
  // Both must outlive the decoder. Interning into catalog happens on the
  // thread that calls decode().
  EtwDecoder(Catalog& catalog, FileEventSink& sink);

  EtwDecoder(const EtwDecoder&) = delete;
  EtwDecoder& operator=(const EtwDecoder&) = delete;

  // Decodes one record: updates the name, thread and process tables and
  // delivers at most one FileEvent. Never throws.
  //
  // Once a trace has shown a FileIo OperationEnd (the session has
  // EVENT_TRACE_FLAG_FILE_IO), Create, Read, Write, SetInfo, Delete and Rename
  // are held until the OperationEnd of their IRP: it gives the NTSTATUS (a
  // failed operation is delivered with it), the bytes a read or write really
  // moved, and whether a Create created the file. At most held_capacity wait;
  // the oldest then goes as it was.
  void decode(const RawRecord& record) noexcept;
  // Delivers what is still held (the end of a trace or of a session).
  void flush() noexcept;
  static constexpr std::size_t held_capacity = 65536;
  // OperationEnds whose start has not come yet (per-processor buffers can
  // deliver an end before its start): kept by IRP, the newest this many.
  static constexpr std::size_t early_end_capacity = 16384;

  const DecoderStats& stats() const { return m_stats; }

  // Asks lookup about processes the trace does not describe fully (see the
  // top of this file); nullptr stops asking. lookup must outlive its use and
  // is called on the thread that calls decode().
  void set_process_lookup(ProcessLookup* lookup) { m_process_lookup = lookup; }

 private:
  // A delete or rename delivered recently, to fold its partner event into.
  struct RecentOperation {
    std::uint64_t irp = 0;          // the IRP of the operation
    std::uint64_t file_object = 0;  // its FileObject
    Op op = Op::remove;             // remove or rename
    bool from_path_event = false;   // delivered by the path event (79/80, 26/27) rather than the SetInfo-style one
  };

  void decode_file_io(const RawRecord& record);
  void decode_kernel_file(const RawRecord& record);
  void decode_disk_io(const RawRecord& record);
  void decode_process(const RawRecord& record);
  void decode_kernel_process(const RawRecord& record);
  void decode_thread(const RawRecord& record);
  void decode_lost_event(const RawRecord& record);
  // OperationEnd (FileIo 76, Kernel-File 24): checked and counted; a FileIo one completes its held operation.
  void count_operation_end(const RawRecord& record);

  // A name event: FileKey then the name (FileIo 0/32/35/36, Kernel-File 10/11).
  void decode_name(const RawRecord& record, bool removes, bool rundown);
  // An operation event with the given layout and action.
  void decode_operation(const RawRecord& record, const decoder_detail::FileLayout& layout,
                        decoder_detail::Action action, Op op);

  // The path id of the file that key_value (a FileKey) or object_value (a
  // FileObject) names, or their unresolved catalog entry.
  std::uint32_t file_path(std::uint64_t key_value, std::uint64_t object_value);
  // The catalog process of an event whose header says pid and whose issuing
  // thread is thread.
  std::uint32_t event_process(std::uint32_t pid, std::uint32_t thread, std::int64_t seen_at);
  // The catalog process for pid. A new pid is interned as the ProcessLookup
  // describes it, or with an empty image; seen_at is the time of the event.
  std::uint32_t process_for_pid(std::uint32_t pid, std::int64_t seen_at);
  // The ProcessLookup's answer for pid, if it is the process an event at
  // seen_at names, whose ImageFileName is short_image when not empty.
  bool look_up_process(std::uint32_t pid, std::int64_t seen_at, std::string_view short_image, ProcessInfo& info);
  // Learns a name for FileKey key_value.
  void name_key(std::uint64_t key_value, std::string_view name);
  // True when this delete/rename was already delivered by its partner event;
  // otherwise remembers it.
  bool fold_into_partner(std::uint64_t irp, std::uint64_t file_object, Op op, bool from_path_event);
  // What an operation changes in the decoder's tables once it succeeded:
  // a file object that will be deleted when its handle is cleaned up (or no
  // longer), a FileKey whose name a rename made stale (a FileKey keeps its
  // name across the rename, and would win over the name the next Create
  // gives the file). Value-initialise it ({}): nothing to change.
  struct OnSuccess {
    std::uint64_t on_close_object;  // 0: none
    bool on_close_set;              // set the delete-on-close mark, or clear it
    std::uint64_t renamed_key;      // 0: none
    std::uint64_t renamed_object;   // a file object that a rename gave new_name; 0: none
    std::uint32_t new_name;
  };
  // Hands the sink one event of record (offset and size -1 when it has
  // none), or holds it under irp for its OperationEnd; then is applied at
  // once, or when the held operation succeeds.
  void deliver(const RawRecord& record, Op op, std::uint32_t path, std::uint32_t thread, std::int64_t offset,
               std::int64_t size, std::uint64_t irp = 0, const OnSuccess& then = {}, std::uint32_t renamed_to = 0);
  // The new name a RenamePath's FileName gives the file at path, or 0.
  std::uint32_t rename_target(std::uint32_t path, std::span<const std::uint8_t> name);
  // Gives the rename already delivered by its partner event the new name
  // renamed_to (a RenamePath's, after the Rename).
  void name_rename_target(std::uint64_t irp, std::uint64_t file_object, std::uint32_t path, std::uint32_t renamed_to,
                          const RawRecord& record, std::uint32_t thread);
  void apply(const OnSuccess& then);
  // Completes the held operation of an OperationEnd, if there is one.
  // An end without a held start is kept a while as an early end (time: its
  // timestamp).
  void complete(std::uint64_t irp, std::uint64_t extra_info, std::uint32_t status, std::int64_t time);
  // Hands the sink an event.
  void emit(const FileEvent& event);

  // An operation waiting for its OperationEnd.
  struct Held {
    FileEvent event;
    std::uint64_t sequence = 0;  // its place in m_held_order
    OnSuccess then{};            // applied once it succeeds
  };

  Catalog& m_catalog;                              // where names and processes are interned
  FileEventSink& m_sink;                           // where events go
  DecoderStats m_stats;                            // what decode() has seen
  KeyTable m_key_names;                            // FileKey -> catalog path id of its name
  KeyTable m_object_names;                         // FileObject -> catalog path id of its name
  KeyTable m_thread_processes;                     // tid -> pid
  KeyTable m_process_ids;                          // pid -> catalog process id
  std::string m_text;                              // scratch: a converted name
  std::string m_image;                             // scratch: a converted process image
  std::string m_command_line;                      // scratch: a converted command line
  ProcessLookup* m_process_lookup = nullptr;       // live sources: the running system's processes
  ProcessInfo m_looked_up;                         // scratch: the ProcessLookup's answer
  std::array<RecentOperation, 16> m_recent{};      // recent deletes and renames, a ring
  std::size_t m_recent_next = 0;                   // where the next one goes in m_recent
  bool m_op_ends_seen = false;                     // the trace has FileIo OperationEnd events: hold operations
  std::unordered_map<std::uint64_t, Held> m_held;  // IRP -> operation waiting for its OperationEnd
  std::deque<std::pair<std::uint64_t, std::uint64_t>> m_held_order;  // (IRP, sequence), oldest first
  // OperationEnds that came before their start. Matched only by a start no
  // later than the end: an old end never completes a reused IRP's next operation.
  struct EarlyEnd {
    std::uint64_t extra_info = 0;
    std::uint32_t status = 0;
    std::int64_t time = 0;
    std::uint64_t sequence = 0;
  };
  std::unordered_map<std::uint64_t, EarlyEnd> m_early_ends;
  std::deque<std::pair<std::uint64_t, std::uint64_t>> m_early_order;  // (IRP, sequence), oldest first
  std::uint64_t m_early_sequence = 0;
  std::uint64_t m_held_sequence = 0;
  // File objects opened with FILE_DELETE_ON_CLOSE, or given that state by a
  // FileDispositionInformationEx: their file goes at their Cleanup.
  std::unordered_set<std::uint64_t> m_delete_on_close;
};

}  // namespace etwaudit
