#pragma once
// EtwSession: the kernel trace session etwaudit collects from, and its
// real-time consumer (doc/etw-format.md §2, §3; doc/design.md §6).
//
// Controller. On Windows 8 and later a privately named session ("etwaudit")
// in system-logger mode, so it never takes the singleton "NT Kernel Logger"
// from another tool; on Windows 7 that logger is the only way to kernel file
// events and is used instead. Kernel flags: file I/O start events
// (FILE_IO_INIT: Create, Read, Write, Cleanup, Close, SetInfo, Delete,
// Rename, Flush) and their ends (FILE_IO: OperationEnd, with the status and
// the bytes moved), file names (DISK_FILE_IO, which needs DISK_IO), process
// and thread events; the names of files opened before the start come from
// the kernel rundown provider, enabled once the session runs. A session of
// our own name left by a run that was killed
// (ERROR_ALREADY_EXISTS) is stopped and started again; any other session is
// never touched. Whether a session of our name is stale or belongs to a
// collector that still runs, a named mutex tells: each collector holds
// Global\etwaudit-session-<GUID> while its session exists, and Windows
// releases it when the process dies. The GUID, also the session's
// Wnode.Guid, is derived from the name without regard to case, as Windows
// compares session names; StartTraceW refuses a GUID in use, so each name
// needs its own.
//
// Consumer. OpenTraceW in event-record, real-time mode with raw (QPC)
// timestamps, which the live source converts (etw_clock.h), or ETW's
// FILETIMEs when the header shows another clock; process() runs
// ProcessTrace and blocks, so it gets its own thread. Ending it takes two
// steps: stop_session() (ControlTraceW(STOP)) makes the kernel write its
// last buffers and the end-of-session rundown (file names, DCEnd), which
// ProcessTrace still delivers before it returns; close_consumer()
// (CloseTrace; ERROR_CTX_CLOSE_PENDING is its success) makes ProcessTrace
// return at once and drops what has not been delivered, so it comes last.
//
// This and etw_session.cpp are the only places that call the ETW controller
// and consumer APIs; etw_session.cpp is the one translation unit that defines
// the ETW GUIDs (INITGUID).

#include <windows.h>
// clang-format off: evntrace.h needs windows.h first.
#include <evntrace.h>
// clang-format on

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace etwaudit {

struct EtwSessionOptions {
  std::wstring name = L"etwaudit";   // private session name (Windows 8 and later)
  unsigned buffer_size_kb = 64;      // size of each trace buffer, 4-16384 KB
  unsigned minimum_buffers = 256;    // buffers allocated at start
  unsigned maximum_buffers = 256;    // most buffers before ETW loses events
  unsigned flush_timer_seconds = 1;  // longest wait before a partly filled buffer is delivered
};

// The defaults for this machine, as Microsoft advises for a kernel session
// in production: 64 KB buffers, and as many at the start as at most (ETW
// cannot add a buffer for an event logged at DPC level, so a session that
// must grow loses those events): 32 a processor, 256 to 2048 (16 to 128 MB).
EtwSessionOptions default_session_options() noexcept;

// What ETW says the session lost (ControlTraceW QUERY or the final STOP).
struct EtwLossCounters {
  std::uint64_t events_lost = 0;            // events the session dropped (EventsLost)
  std::uint64_t realtime_buffers_lost = 0;  // buffers not delivered to the consumer (RealTimeBuffersLost)
  std::uint64_t log_buffers_lost = 0;       // buffers not written (LogBuffersLost)
  std::uint32_t buffers = 0;                // buffers the session has (NumberOfBuffers)
  std::uint32_t buffer_size_kb = 0;         // their size (BufferSize)
};

// The Windows version, from RtlGetVersion (GetVersionEx lies to programs
// without a manifest).
struct WindowsVersion {
  unsigned long major = 0;  // 6 for Windows 7/8/8.1, 10 for Windows 10/11
  unsigned long minor = 0;  // 1 Windows 7, 2 Windows 8, 3 Windows 8.1
  unsigned long build = 0;
  bool at_least(unsigned long want_major, unsigned long want_minor) const {
    return major > want_major || (major == want_major && minor >= want_minor);
  }
};
WindowsVersion windows_version() noexcept;

// What the live source needs of a trace session: EtwSession, or a stand-in
// in tests (Wine has no ETW to drive the live source's own logic with).
class TraceSession {
 public:
  virtual ~TraceSession() = default;

  // Starts the session. Throws Error naming the failing call and its code.
  virtual void start() = 0;
  // The session's name, as messages give it.
  virtual const std::wstring& name() const = 0;

  // Opens the real-time consumer: process() will call callback with each
  // EVENT_RECORD, whose UserContext is context. Throws Error naming the call.
  virtual void open(PEVENT_RECORD_CALLBACK callback, void* context) = 0;
  // After open(): true when the records' TimeStamp are raw performance
  // counter values (QpcClock converts them), false when they are FILETIMEs.
  virtual bool raw_qpc_timestamps() const = 0;
  // Delivers events until the session stops or stop() is called; returns
  // ProcessTrace's result (ERROR_SUCCESS normally).
  virtual unsigned long process() noexcept = 0;

  // Asks the kernel for the names of the files that are already open
  // (FileRundown events). Returns "" when asked, or why this Windows cannot
  // give them (the session is unchanged then). Throws Error if the session
  // was left without its events; the live source warns and goes on either way.
  virtual std::string request_file_rundown() = 0;

  // What the session has lost so far; nullopt when that cannot be asked or
  // the session is stopped.
  virtual std::optional<EtwLossCounters> query() noexcept = 0;
  // After stop(): the counters of the final stop, if it gave any.
  virtual std::optional<EtwLossCounters> final_counters() const = 0;

  // Stops the session: the kernel flushes what it holds, then process()
  // returns. Any thread; idempotent.
  virtual void stop_session() noexcept = 0;
  // Closes the consumer: process() returns soon, dropping what it has not
  // delivered. Any thread; idempotent.
  virtual void close_consumer() noexcept = 0;
  // Both.
  void stop() noexcept {
    stop_session();
    close_consumer();
  }
};

// The GUID of a private session of this name (case does not matter), and
// the name as Windows compares it.
GUID session_guid(std::wstring_view name);
std::wstring session_key(std::wstring_view name);

// The kernel flags etwaudit's session enables (doc/etw-format.md §2).
unsigned long etwaudit_enable_flags() noexcept;
// Whether the session found under name, as ControlTraceW(QUERY) described
// it, is one an etwaudit collector started and left behind: real-time, in
// system-logger mode, with etwaudit's file flags, and with the GUID etwaudit
// gives that name when the query reports one. Only such a session is
// stopped to start again; any other (--etw-session EventLog-System, another
// tool's) is never touched.
bool is_left_etwaudit_session(const EVENT_TRACE_PROPERTIES& queried, std::wstring_view name) noexcept;

// The names of the running sessions in system-logger mode (QueryAllTracesW),
// and the message for a StartTraceW that found every system-logger slot
// taken (Windows runs at most 8 such sessions), naming those that hold them.
std::vector<std::wstring> system_logger_sessions();
std::string slots_full_message(const std::string& session, const std::vector<std::wstring>& holders);

class EtwSession final : public TraceSession {
 public:
  explicit EtwSession(EtwSessionOptions options);
  ~EtwSession() override;  // stop()
  EtwSession(const EtwSession&) = delete;
  EtwSession& operator=(const EtwSession&) = delete;

  void start() override;
  // options.name, or "NT Kernel Logger" on Windows 7.
  const std::wstring& name() const override { return m_name; }
  bool uses_nt_kernel_logger() const { return m_nt_kernel_logger; }

  // OpenTraceW in real-time, event-record mode, with raw timestamps when the
  // header says they are the counter's (etw_clock.h), else converted by ETW.
  void open(PEVENT_RECORD_CALLBACK callback, void* context) override;
  bool raw_qpc_timestamps() const override { return m_raw_qpc; }
  // ProcessTrace.
  unsigned long process() noexcept override;
  // Enables the kernel rundown provider's file keyword in the session, the
  // documented way for a system-logger session; when that fails, sets the
  // session's group masks to empty and back (doc/etw-format.md §5.2), which is proven
  // only on the NT Kernel Logger.
  std::string request_file_rundown() override;
  // ControlTraceW(QUERY).
  std::optional<EtwLossCounters> query() noexcept override;
  // From the final ControlTraceW(STOP).
  std::optional<EtwLossCounters> final_counters() const override;
  // ControlTraceW(STOP).
  void stop_session() noexcept override;
  // CloseTrace.
  void close_consumer() noexcept override;

 private:
  // EVENT_TRACE_PROPERTIES followed by room for the session name, which
  // StartTraceW and ControlTraceW copy there.
  struct Properties {
    EVENT_TRACE_PROPERTIES properties;
    wchar_t names[2 * 1024 + 2];
  };
  // Fills m_properties for a StartTraceW or ControlTraceW call.
  void prepare_properties(bool for_start);
  unsigned long control(unsigned long code);  // ControlTraceW on m_name, under m_mutex
  static EtwLossCounters counters_of(const EVENT_TRACE_PROPERTIES& properties);

  EtwSessionOptions m_options;
  std::wstring m_name;
  bool m_nt_kernel_logger = false;         // Windows 7: the singleton kernel logger
  unsigned long m_enable_flags = 0;        // kernel EnableFlags
  mutable std::mutex m_mutex;              // guards everything below
  Properties m_properties{};               // reused for every controller call
  TRACEHANDLE m_session = 0;               // from StartTraceW; 0 when not started
  bool m_running = false;                  // started and not yet stopped
  TRACEHANDLE m_trace = 0;                 // from OpenTraceW; 0 when not open
  std::atomic<bool> m_trace_open{false};   // m_trace is valid for ProcessTrace
  bool m_raw_qpc = true;                   // set by open()
  std::optional<EtwLossCounters> m_final;  // from the STOP call
  HANDLE m_owner = nullptr;                // the named mutex that marks the session as ours
};

}  // namespace etwaudit
