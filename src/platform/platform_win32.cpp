// platform.h on Windows: console control events, the named stop event, the process token.

#include <fcntl.h>
#include <io.h>
#include <windows.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "platform/platform.h"
#include "platform/win32.h"
// clang-format off: sddl.h needs windows.h first.
#include <sddl.h>
// clang-format on

namespace etwaudit {
namespace {
// 0 = keep going; otherwise what asked us to stop (see stop_requested()).
std::atomic<int> g_stop_reason{0};
}  // namespace

namespace {
// True in session 0, where services and SYSTEM tasks run, with no user.
bool in_session_zero() {
  DWORD session = 0;
  return ProcessIdToSessionId(GetCurrentProcessId(), &session) && session == 0;
}

BOOL WINAPI on_console_event(DWORD type) {
  // Every console process gets CTRL_LOGOFF_EVENT when any user logs off,
  // without saying which user: a collector running as SYSTEM at boot (the
  // scheduled task) is not that user's and keeps going.
  if (type == CTRL_LOGOFF_EVENT && in_session_zero()) return TRUE;
  g_stop_reason = static_cast<int>(type) + 1;
  // For close/logoff/shutdown Windows ends the process as soon as this
  // returns, and at its own deadline anyway. Never return then: the
  // collector drains, commits and exits the process itself, or Windows ends
  // it at the deadline, which a committed database survives.
  if (type == CTRL_CLOSE_EVENT || type == CTRL_LOGOFF_EVENT || type == CTRL_SHUTDOWN_EVENT) Sleep(INFINITE);
  return TRUE;
}
}  // namespace

// Set by `etwaudit stop` (request_stop); null when it could not be made.
HANDLE g_stop_event = nullptr;

std::wstring stop_event_name(std::uint32_t pid) {
  return L"Global\\etwaudit-stop-" + std::to_wstring(pid);
}

void install_stop_handlers() {
  SetConsoleCtrlHandler(on_console_event, TRUE);
  // Only SYSTEM and administrators may signal it: a collector runs as one of them.
  SECURITY_ATTRIBUTES attributes{sizeof attributes, nullptr, FALSE};
  if (!ConvertStringSecurityDescriptorToSecurityDescriptorW(L"D:P(A;;GA;;;SY)(A;;GA;;;BA)", SDDL_REVISION_1,
                                                            &attributes.lpSecurityDescriptor, nullptr))
    return;
  g_stop_event = CreateEventW(&attributes, TRUE, FALSE, stop_event_name(GetCurrentProcessId()).c_str());
  LocalFree(attributes.lpSecurityDescriptor);
}

std::string request_stop(std::uint32_t pid) {
  HANDLE event = OpenEventW(EVENT_MODIFY_STATE, FALSE, stop_event_name(pid).c_str());
  if (!event) {
    const DWORD error = GetLastError();
    if (error == ERROR_FILE_NOT_FOUND) return "process " + std::to_string(pid) + " is no etwaudit collector";
    if (error == ERROR_ACCESS_DENIED) return "not allowed to stop process " + std::to_string(pid) + " (run elevated)";
    return "cannot reach process " + std::to_string(pid) + ": OpenEventW failed with error " + std::to_string(error);
  }
  const bool set = SetEvent(event) != FALSE;
  const DWORD error = GetLastError();
  CloseHandle(event);
  return set ? std::string() : "SetEvent failed with error " + std::to_string(error);
}

bool process_alive(std::uint32_t pid) {
  HANDLE process = OpenProcess(SYNCHRONIZE, FALSE, pid);
  if (!process) return GetLastError() == ERROR_ACCESS_DENIED;
  const bool running = WaitForSingleObject(process, 0) == WAIT_TIMEOUT;
  CloseHandle(process);
  return running;
}

std::string stop_requested() {
  if (g_stop_event && WaitForSingleObject(g_stop_event, 0) == WAIT_OBJECT_0) return "etwaudit stop";
  switch (g_stop_reason.load()) {
    case 0: return {};
    case CTRL_C_EVENT + 1: return "Ctrl+C";
    case CTRL_BREAK_EVENT + 1: return "Ctrl+Break";
    case CTRL_CLOSE_EVENT + 1: return "console closed";
    case CTRL_LOGOFF_EVENT + 1: return "logoff";
    case CTRL_SHUTDOWN_EVENT + 1: return "shutdown";
    default: return "stop requested";
  }
}

std::uint32_t current_pid() {
  return GetCurrentProcessId();
}

std::int64_t utc_offset_seconds(std::int64_t ns) {
  const __time64_t seconds = ns / 1'000'000'000 - (ns % 1'000'000'000 < 0);
  std::tm local{};
  if (_localtime64_s(&local, &seconds) != 0) return 0;
  const __time64_t as_utc = _mkgmtime64(&local);  // the local wall clock read as UTC
  return as_utc == -1 ? 0 : static_cast<std::int64_t>(as_utc - seconds);
}

std::optional<std::string> environment_variable(const char* name) {
  const wchar_t* value = _wgetenv(to_wide(name).c_str());
  return value ? std::optional<std::string>(to_utf8(value)) : std::nullopt;
}

std::string service_database_path() {
  const auto data = environment_variable("ProgramData");
  return (data ? *data : std::string("C:\\ProgramData")) + "\\etwaudit\\audit.db";
}

std::string host_name() {
  char name[MAX_COMPUTERNAME_LENGTH + 1];
  DWORD size = sizeof name;
  return GetComputerNameA(name, &size) ? std::string(name, size) : std::string();
}

bool stderr_is_terminal() {
  return _isatty(_fileno(stderr)) != 0;
}

int stderr_columns() {
  CONSOLE_SCREEN_BUFFER_INFO info{};
  if (!GetConsoleScreenBufferInfo(GetStdHandle(STD_ERROR_HANDLE), &info)) return 0;
  return info.srWindow.Right - info.srWindow.Left + 1;
}

std::vector<std::string> utf8_arguments(int argc, char** argv) {
  int count = 0;
  LPWSTR* wide = CommandLineToArgvW(GetCommandLineW(), &count);
  std::vector<std::string> arguments;
  if (wide == nullptr || count != argc) {  // cannot happen; argv is better than nothing
    if (wide != nullptr) LocalFree(wide);
    for (int i = 0; i < argc; ++i) arguments.emplace_back(argv[i]);
    return arguments;
  }
  for (int i = 0; i < count; ++i) arguments.push_back(to_utf8(wide[i]));
  LocalFree(wide);
  return arguments;
}

namespace {
UINT g_console_output_cp = 0;  // the console's code page before use_utf8_console(); 0: unchanged
void restore_console_cp() {
  if (g_console_output_cp != 0) SetConsoleOutputCP(g_console_output_cp);
}
}  // namespace

void use_utf8_console() {
  const UINT before = GetConsoleOutputCP();
  if (before == 0 || before == CP_UTF8) return;  // no console, or UTF-8 already
  if (!SetConsoleOutputCP(CP_UTF8)) return;
  g_console_output_cp = before;
  std::atexit(restore_console_cp);
}

std::string machine_id() {
  wchar_t guid[64];
  DWORD size = sizeof guid;
  if (RegGetValueW(HKEY_LOCAL_MACHINE, L"SOFTWARE\\Microsoft\\Cryptography", L"MachineGuid",
                   RRF_RT_REG_SZ | RRF_SUBKEY_WOW6464KEY, nullptr, guid, &size) != ERROR_SUCCESS)
    return {};
  return to_utf8(guid);
}

std::FILE* open_for_append(const std::string& path) {
  return _wfopen(to_wide(path).c_str(), L"ab");
}

void create_owner_only(const std::string&) {
  // The folder's access control list decides who may read it.
}

bool flush_to_disk(std::FILE* file) {
  return std::fflush(file) == 0 && _commit(_fileno(file)) == 0;
}

void stdout_bytes_as_written() {
  std::fflush(stdout);
  _setmode(_fileno(stdout), _O_BINARY);
}

bool stdout_is_terminal() {
  return _isatty(_fileno(stdout)) != 0;
}

void lower_this_thread_priority() {
  // Not THREAD_MODE_BACKGROUND_BEGIN: it also lowers the thread's I/O and
  // memory priority, and its reads of the database would queue behind the
  // whole machine's.
  ::SetThreadPriority(::GetCurrentThread(), THREAD_PRIORITY_BELOW_NORMAL);
}

bool is_elevated() {
  HANDLE token = nullptr;
  if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &token)) return false;
  TOKEN_ELEVATION elevation{};
  DWORD size = 0;
  const bool elevated =
      GetTokenInformation(token, TokenElevation, &elevation, sizeof elevation, &size) && elevation.TokenIsElevated != 0;
  CloseHandle(token);
  return elevated;
}

}  // namespace etwaudit
