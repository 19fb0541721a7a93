// The ETW controller and consumer calls (see etw_session.h). The only
// translation unit that defines the ETW GUIDs: without INITGUID before
// <evntrace.h>, SystemTraceControlGuid is an undefined reference with mingw.
#define INITGUID
#include <windows.h>
// clang-format off: evntrace.h and evntcons.h need windows.h first.
#include <evntcons.h>
#include <evntrace.h>
// clang-format on

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <cwchar>
#include <string_view>

#include "core/error.h"
#include "platform/win32.h"
#include "sources/live/etw_clock.h"
#include "sources/live/etw_session.h"

namespace etwaudit {
namespace {

// FNV-1a over the bytes of text, from seed.
std::uint64_t fnv1a(std::wstring_view text, std::uint64_t seed) {
  std::uint64_t hash = seed;
  for (const wchar_t unit : text) {
    for (int shift = 0; shift < 16; shift += 8) {
      hash ^= static_cast<std::uint8_t>(static_cast<std::uint16_t>(unit) >> shift);
      hash *= 0x100000001b3ull;
    }
  }
  return hash;
}

}  // namespace

std::wstring session_key(std::wstring_view name) {
  std::wstring upper(name);
  if (!upper.empty()) {
    const int size = LCMapStringEx(LOCALE_NAME_INVARIANT, LCMAP_UPPERCASE, upper.data(), static_cast<int>(upper.size()),
                                   upper.data(), static_cast<int>(upper.size()), nullptr, nullptr, 0);
    if (size <= 0) {  // cannot happen for a valid string; ASCII letters at least
      upper = name;
      for (wchar_t& c : upper)
        if (c >= L'a' && c <= L'z') c = static_cast<wchar_t>(c - L'a' + L'A');
    }
  }
  return upper;
}

GUID session_guid(std::wstring_view name) {
  // A name-based GUID (RFC 9562 version 8, the variant bits set): the same
  // for the same name in any case, different for different names.
  const std::wstring key = session_key(name);
  const std::uint64_t high = fnv1a(key, 0xcbf29ce484222325ull), low = fnv1a(key, 0x84222325cbf29ce4ull ^ high);
  GUID guid;
  guid.Data1 = static_cast<unsigned long>(high >> 32);
  guid.Data2 = static_cast<unsigned short>(high >> 16);
  guid.Data3 = static_cast<unsigned short>((high & 0x0FFF) | 0x8000);
  for (int i = 0; i < 8; ++i) guid.Data4[i] = static_cast<unsigned char>(low >> (56 - 8 * i));
  guid.Data4[0] = static_cast<unsigned char>((guid.Data4[0] & 0x3F) | 0x80);
  return guid;
}

namespace {

// OpenTraceW's failure value is (UINT64)UINTPTR_MAX: all ones in a 64-bit
// process, 0x00000000FFFFFFFF in a 32-bit one, where mingw's macro
// sign-extends to all ones instead (doc/etw-format.md §3.2). Check both.
bool is_invalid_trace_handle(TRACEHANDLE handle) {
  return handle == static_cast<TRACEHANDLE>(UINTPTR_MAX) || handle == INVALID_PROCESSTRACE_HANDLE;
}

// Whether ControlTraceW(STOP) left the session stopped: ERROR_MORE_DATA only
// says the properties had no room for the log file name, and
// ERROR_WMI_INSTANCE_NOT_FOUND that it was gone already.
bool stopped_by(ULONG status) {
  return status == ERROR_SUCCESS || status == ERROR_MORE_DATA || status == ERROR_WMI_INSTANCE_NOT_FOUND;
}

// The 8 group masks of TraceSystemTraceEnableFlagsInfo (PERFINFO_GROUPMASK);
// the first holds the classic EnableFlags.
struct GroupMasks {
  ULONG masks[8] = {};
};

}  // namespace

unsigned long etwaudit_enable_flags() noexcept {
  // FILE_IO adds the OperationEnd of each operation: its status and the bytes it moved.
  return EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD | EVENT_TRACE_FLAG_DISK_IO | EVENT_TRACE_FLAG_DISK_FILE_IO |
         EVENT_TRACE_FLAG_FILE_IO_INIT | EVENT_TRACE_FLAG_FILE_IO;
}

bool is_left_etwaudit_session(const EVENT_TRACE_PROPERTIES& queried, std::wstring_view name) noexcept {
  constexpr ULONG modes = EVENT_TRACE_REAL_TIME_MODE | EVENT_TRACE_SYSTEM_LOGGER_MODE;
  constexpr ULONG file_flags = EVENT_TRACE_FLAG_FILE_IO_INIT | EVENT_TRACE_FLAG_DISK_FILE_IO;
  if ((queried.LogFileMode & modes) != modes || (queried.EnableFlags & file_flags) != file_flags) return false;
  const GUID& guid = queried.Wnode.Guid;
  const GUID none{}, ours = session_guid(name);
  return std::memcmp(&guid, &none, sizeof guid) == 0 || std::memcmp(&guid, &ours, sizeof guid) == 0;
}

std::vector<std::wstring> system_logger_sessions() {
  constexpr ULONG most = 64;  // the most sessions Windows runs at once
  struct Slot {
    EVENT_TRACE_PROPERTIES properties;
    wchar_t names[2 * 1024 + 2];  // the session name, then the log file name
  };
  std::vector<Slot> all(most);
  std::vector<EVENT_TRACE_PROPERTIES*> pointers(most);
  for (ULONG i = 0; i < most; ++i) {
    std::memset(&all[i], 0, sizeof all[i]);
    all[i].properties.Wnode.BufferSize = sizeof all[i];
    all[i].properties.LoggerNameOffset = offsetof(Slot, names);
    all[i].properties.LogFileNameOffset = offsetof(Slot, names) + 1024 * sizeof(wchar_t);
    pointers[i] = &all[i].properties;
  }
  ULONG count = 0;
  std::vector<std::wstring> names;
  if (QueryAllTracesW(pointers.data(), most, &count) != ERROR_SUCCESS) return names;
  for (ULONG i = 0; i < count && i < most; ++i) {
    if (!(all[i].properties.LogFileMode & EVENT_TRACE_SYSTEM_LOGGER_MODE)) continue;
    names.emplace_back(all[i].names);
  }
  return names;
}

std::string slots_full_message(const std::string& session, const std::vector<std::wstring>& holders) {
  std::string message = "cannot start " + session +
                        ": every system-logger slot of this Windows is taken (it runs at most 8 such sessions)";
  if (!holders.empty()) {
    message += "; these hold them:";
    for (std::size_t i = 0; i < holders.size(); ++i) message += (i ? ", " : " ") + to_utf8(holders[i]);
  }
  return message + ". Stop one that is not needed (logman stop NAME -ets) and start etwaudit again";
}

WindowsVersion windows_version() noexcept {
  WindowsVersion version;
  using RtlGetVersionFunction = LONG(WINAPI*)(OSVERSIONINFOW*);
  HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
  auto rtl_get_version =
      ntdll ? reinterpret_cast<RtlGetVersionFunction>(reinterpret_cast<void*>(GetProcAddress(ntdll, "RtlGetVersion")))
            : nullptr;
  OSVERSIONINFOW info{};
  info.dwOSVersionInfoSize = sizeof info;
  if (rtl_get_version && rtl_get_version(&info) == 0) {
    version.major = info.dwMajorVersion;
    version.minor = info.dwMinorVersion;
    version.build = info.dwBuildNumber;
  }
  return version;
}

EtwSession::EtwSession(EtwSessionOptions options) : m_options(std::move(options)) {
  // Windows 8 brought system-logger mode; before it only the NT Kernel Logger
  // receives kernel events.
  m_nt_kernel_logger = !windows_version().at_least(6, 2);
  m_name = m_nt_kernel_logger ? std::wstring(KERNEL_LOGGER_NAMEW) : m_options.name;
  m_enable_flags = etwaudit_enable_flags();
  // Windows 7's kernel logger knows neither NO_SYSCONFIG nor buffers above 1 MB.
  if (m_nt_kernel_logger)
    m_options.buffer_size_kb = std::min(m_options.buffer_size_kb, 1024u);
  else
    m_enable_flags |= EVENT_TRACE_FLAG_NO_SYSCONFIG;
}

EtwSession::~EtwSession() {
  stop();
  if (m_owner) {
    ReleaseMutex(m_owner);
    CloseHandle(m_owner);
  }
}

void EtwSession::prepare_properties(bool for_start) {
  std::memset(&m_properties, 0, sizeof m_properties);
  EVENT_TRACE_PROPERTIES& p = m_properties.properties;
  p.Wnode.BufferSize = sizeof m_properties;
  p.Wnode.Flags = WNODE_FLAG_TRACED_GUID;
  p.LoggerNameOffset = offsetof(Properties, names);
  p.LogFileNameOffset = 0;  // real time only
  if (!for_start) return;
  // Any GUID but SystemTraceControlGuid for a private session, and one of
  // its own: StartTraceW refuses a GUID that another session has.
  p.Wnode.Guid = m_nt_kernel_logger ? SystemTraceControlGuid : session_guid(m_name);
  p.Wnode.ClientContext = 1;  // QPC timestamps, delivered raw (etw_clock.h)
  p.BufferSize = m_options.buffer_size_kb;
  p.MinimumBuffers = m_options.minimum_buffers;
  p.MaximumBuffers = m_options.maximum_buffers;
  p.FlushTimer = m_options.flush_timer_seconds;
  p.EnableFlags = m_enable_flags;
  p.LogFileMode = EVENT_TRACE_REAL_TIME_MODE;
  if (!m_nt_kernel_logger) {
    p.LogFileMode |= EVENT_TRACE_SYSTEM_LOGGER_MODE;
    // Windows 8.1 and later: our buffers do not suffer when another
    // session's writes fail (doc/etw-format.md §3.5).
    if (windows_version().at_least(6, 3)) p.LogFileMode |= EVENT_TRACE_INDEPENDENT_SESSION_MODE;
  }
}

unsigned long EtwSession::control(unsigned long code) {
  prepare_properties(false);
  // By name, not by m_session: if someone else stopped the session, its
  // logger id may already belong to another one, and a handle would win.
  return ControlTraceW(0, m_name.c_str(), &m_properties.properties, code);
}

EtwLossCounters EtwSession::counters_of(const EVENT_TRACE_PROPERTIES& properties) {
  return {properties.EventsLost, properties.RealTimeBuffersLost, properties.LogBuffersLost, properties.NumberOfBuffers,
          properties.BufferSize};
}

EtwSessionOptions default_session_options() noexcept {
  EtwSessionOptions options;
  const DWORD processors = GetActiveProcessorCount(ALL_PROCESSOR_GROUPS);
  const unsigned buffers = std::clamp<unsigned>(32 * std::max<DWORD>(processors, 1), 256, 2048);
  options.minimum_buffers = options.maximum_buffers = buffers;
  return options;
}

void EtwSession::start() {
  std::lock_guard lock(m_mutex);
  if (m_running) return;
  const std::string session = "the ETW session '" + to_utf8(m_name) + "'";
  if (!m_owner) {
    // One collector per session name: a second one would take the session
    // of the first for a stale one and stop it.
    // Session names are compared without case and may be longer than a
    // kernel object name: the mutex is named by the session's GUID.
    const GUID guid = session_guid(m_name);
    wchar_t guid_text[40];
    std::swprintf(guid_text, 40, L"%08lx-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x", guid.Data1, guid.Data2,
                  guid.Data3, guid.Data4[0], guid.Data4[1], guid.Data4[2], guid.Data4[3], guid.Data4[4], guid.Data4[5],
                  guid.Data4[6], guid.Data4[7]);
    const std::wstring mutex_name = L"Global\\etwaudit-session-" + std::wstring(guid_text);
    const std::string in_use = "another etwaudit collect is using " + session +
                               "; give a second collector its own session with --etw-session NAME";
    HANDLE owner = CreateMutexW(nullptr, FALSE, mutex_name.c_str());
    // Access denied: the mutex exists, made by another account (SYSTEM, for
    // the scheduled task), so its collector runs.
    if (!owner && GetLastError() == ERROR_ACCESS_DENIED) throw Error(in_use);
    if (!owner) throw Error("cannot claim " + session + ": " + win32_failure("CreateMutexW", GetLastError()));
    const DWORD wait = WaitForSingleObject(owner, 0);
    if (wait == WAIT_TIMEOUT) {
      CloseHandle(owner);
      throw Error(in_use);
    }
    if (wait != WAIT_OBJECT_0 && wait != WAIT_ABANDONED) {  // abandoned: its owner died
      const DWORD error = GetLastError();
      CloseHandle(owner);
      throw Error("cannot claim " + session + ": " + win32_failure("WaitForSingleObject", error));
    }
    m_owner = owner;
  }
  prepare_properties(true);
  ULONG status = StartTraceW(&m_session, m_name.c_str(), &m_properties.properties);
  if (status == ERROR_ALREADY_EXISTS) {
    if (m_nt_kernel_logger)
      throw Error("cannot start " + session + ": another program is using it (" + win32_failure("StartTraceW", status) +
                  "); stop that trace (e.g. logman stop \"NT Kernel Logger\" -ets) and try again");
    // Our own session, left by a run that could not stop it: stop it and
    // start again. Anything else of that name is not ours to stop.
    const ULONG queried = control(EVENT_TRACE_CONTROL_QUERY);
    if (queried != ERROR_SUCCESS && queried != ERROR_MORE_DATA)
      throw Error("cannot start " + session + ": a session of that name exists and cannot be queried (" +
                  win32_failure("ControlTraceW(QUERY)", queried) + "); choose another name with --etw-session NAME");
    if (!is_left_etwaudit_session(m_properties.properties, m_name))
      throw Error("cannot start " + session +
                  ": another program's trace session has that name, and etwaudit never "
                  "stops a session it did not start; choose another name with --etw-session NAME");
    prepare_properties(false);
    const ULONG stopped = ControlTraceW(0, m_name.c_str(), &m_properties.properties, EVENT_TRACE_CONTROL_STOP);
    if (!stopped_by(stopped))
      throw Error("cannot stop the stale " + session.substr(4) + ": " + win32_failure("ControlTraceW(STOP)", stopped));
    // The name can stay taken for a moment after the stop.
    for (int attempt = 0; attempt < 5; ++attempt) {
      prepare_properties(true);
      status = StartTraceW(&m_session, m_name.c_str(), &m_properties.properties);
      if (status != ERROR_ALREADY_EXISTS) break;
      Sleep(200);
    }
  }
  if (status == ERROR_ACCESS_DENIED)
    throw Error("etwaudit collect needs administrator rights (run elevated or as SYSTEM): " +
                win32_failure("StartTraceW", status));
  // (No free system-logger slot: StartTraceW says it has no resources.)
  if (status == ERROR_NO_SYSTEM_RESOURCES && !m_nt_kernel_logger)
    throw Error(slots_full_message(session, system_logger_sessions()) + " (" + win32_failure("StartTraceW", status) +
                ")");
  if (status != ERROR_SUCCESS) throw Error("cannot start " + session + ": " + win32_failure("StartTraceW", status));
  m_running = true;
  m_final.reset();
}

void EtwSession::open(PEVENT_RECORD_CALLBACK callback, void* context) {
  std::lock_guard lock(m_mutex);
  EVENT_TRACE_LOGFILEW logfile;
  std::memset(&logfile, 0, sizeof logfile);
  logfile.LoggerName = const_cast<wchar_t*>(m_name.c_str());
  // EVENT_RECORD selects EventRecordCallback of the union (doc/etw-format.md §3.1);
  // RAW_TIMESTAMP leaves the counter values for QpcClock to convert.
  logfile.ProcessTraceMode =
      PROCESS_TRACE_MODE_REAL_TIME | PROCESS_TRACE_MODE_EVENT_RECORD | PROCESS_TRACE_MODE_RAW_TIMESTAMP;
  logfile.EventRecordCallback = callback;
  logfile.Context = context;
  SetLastError(ERROR_SUCCESS);
  TRACEHANDLE trace = OpenTraceW(&logfile);
  m_raw_qpc = true;
  if (!is_invalid_trace_handle(trace) && !raw_timestamps_are_qpc(logfile.LogfileHeader, qpc_frequency())) {
    // Not the counter we convert from: let ETW convert to FILETIMEs.
    CloseTrace(trace);
    logfile.ProcessTraceMode &= ~static_cast<ULONG>(PROCESS_TRACE_MODE_RAW_TIMESTAMP);
    SetLastError(ERROR_SUCCESS);
    trace = OpenTraceW(&logfile);
    m_raw_qpc = false;
  }
  if (is_invalid_trace_handle(trace)) {
    const DWORD error = GetLastError();
    throw Error("cannot read events from the ETW session '" + to_utf8(m_name) +
                "': " + win32_failure("OpenTraceW", error) +
                (error == ERROR_ACCESS_DENIED ? "; real-time ETW is not available here (under Wine it never is)" : ""));
  }
  m_trace = trace;
  m_trace_open = true;
}

unsigned long EtwSession::process() noexcept {
  TRACEHANDLE trace;
  {
    std::lock_guard lock(m_mutex);
    if (!m_trace_open) return ERROR_INVALID_HANDLE;
    trace = m_trace;
  }
  return ProcessTrace(&trace, 1, nullptr, nullptr);
}

std::string EtwSession::request_file_rundown() {
  std::lock_guard lock(m_mutex);
  if (!m_running) return "the session is not running";
  if (m_nt_kernel_logger) return "the NT Kernel Logger of Windows 7 cannot give them";
  // KernelRundownGuid, keyword 0x10: a FileRundown (FileIo opcode 36) for
  // every open file, into this session.
  constexpr GUID kernel_rundown = {0x3b9c9951, 0x3480, 0x4220, {0x93, 0x77, 0x9c, 0x8e, 0x51, 0x84, 0xf5, 0xcd}};
  const ULONG enabled =
      EnableTraceEx2(m_session, &kernel_rundown, EVENT_CONTROL_CODE_ENABLE_PROVIDER, 0, 0x10, 0, INFINITE, nullptr);
  if (enabled == ERROR_SUCCESS) return {};
  // The older way: the kernel writes a rundown when the group masks change.
  GroupMasks masks;
  ULONG status = TraceSetInformation(m_session, TraceSystemTraceEnableFlagsInfo, &masks, sizeof masks);
  if (status != ERROR_SUCCESS)
    return win32_failure("EnableTraceEx2(KernelRundown)", enabled) + "; " +
           win32_failure("TraceSetInformation", status);
  masks.masks[0] = m_enable_flags;
  for (int attempt = 0; attempt < 3; ++attempt) {  // the masks were set a moment ago: a failure is brief
    status = TraceSetInformation(m_session, TraceSystemTraceEnableFlagsInfo, &masks, sizeof masks);
    if (status == ERROR_SUCCESS) break;
    Sleep(100);
  }
  if (status != ERROR_SUCCESS)
    throw Error("cannot re-enable the kernel events of the ETW session '" + to_utf8(m_name) +
                "' after the file rundown: " + win32_failure("TraceSetInformation", status));
  return {};
}

std::optional<EtwLossCounters> EtwSession::query() noexcept {
  std::lock_guard lock(m_mutex);
  if (!m_running) return std::nullopt;
  if (control(EVENT_TRACE_CONTROL_QUERY) != ERROR_SUCCESS) return std::nullopt;
  return counters_of(m_properties.properties);
}

std::optional<EtwLossCounters> EtwSession::final_counters() const {
  std::lock_guard lock(m_mutex);
  return m_final;
}

void EtwSession::stop_session() noexcept {
  std::lock_guard lock(m_mutex);
  if (!m_running) return;
  // ERROR_WMI_INSTANCE_NOT_FOUND: someone stopped it already; nothing left to do.
  const ULONG status = control(EVENT_TRACE_CONTROL_STOP);
  if (status == ERROR_SUCCESS || status == ERROR_MORE_DATA) m_final = counters_of(m_properties.properties);
  m_running = false;
  m_session = 0;
}

void EtwSession::close_consumer() noexcept {
  std::lock_guard lock(m_mutex);
  if (!m_trace_open) return;
  // ERROR_CTX_CLOSE_PENDING is success: ProcessTrace delivers what is
  // buffered and returns. Any other result leaves nothing we could do.
  CloseTrace(m_trace);
  m_trace_open = false;
  m_trace = 0;
}

}  // namespace etwaudit
