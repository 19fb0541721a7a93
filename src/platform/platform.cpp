#include "platform/platform.h"

#include <atomic>

#ifdef _WIN32
#include <io.h>
#include <windows.h>
// clang-format off: sddl.h needs windows.h first.
#include <sddl.h>
// clang-format on
#else
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#endif

namespace etwaudit {
namespace {
// 0 = keep going; otherwise what asked us to stop (see stop_requested()).
std::atomic<int> g_stop_reason{0};
}  // namespace

#ifdef _WIN32

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

std::string host_name() {
  char name[MAX_COMPUTERNAME_LENGTH + 1];
  DWORD size = sizeof name;
  return GetComputerNameA(name, &size) ? std::string(name, size) : std::string();
}

bool stderr_is_terminal() {
  return _isatty(_fileno(stderr)) != 0;
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

#else

namespace {
extern "C" void on_signal(int signal_number) {
  g_stop_reason = signal_number;
}
}  // namespace

void install_stop_handlers() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGHUP, &action, nullptr);
}

std::string request_stop(std::uint32_t pid) {
  // The pid comes from a run record: make sure it is still an etwaudit
  // before signalling it (where /proc says).
  std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
  std::string command;
  if (comm && std::getline(comm, command) && command.rfind("etwaudit", 0) != 0)
    return "process " + std::to_string(pid) + " is '" + command + "', no etwaudit collector";
  if (::kill(static_cast<pid_t>(pid), SIGTERM) == 0) return {};
  if (errno == ESRCH) return "there is no process " + std::to_string(pid);
  if (errno == EPERM) return "not allowed to signal process " + std::to_string(pid) + " (run as its user or root)";
  return "kill(" + std::to_string(pid) + ", SIGTERM) failed: " + std::strerror(errno);
}

bool process_alive(std::uint32_t pid) {
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM) return false;
  // A process that has exited but not been waited for yet (state Z) is gone too.
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!stat || !std::getline(stat, line)) return true;
  const std::size_t state = line.rfind(") ");
  return state == std::string::npos || state + 2 >= line.size() || (line[state + 2] != 'Z' && line[state + 2] != 'X');
}

std::string stop_requested() {
  switch (g_stop_reason.load()) {
    case 0: return {};
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    default: return "signal " + std::to_string(g_stop_reason.load());
  }
}

std::uint32_t current_pid() {
  return static_cast<std::uint32_t>(::getpid());
}

std::string host_name() {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? std::string(name) : std::string();
}

bool stderr_is_terminal() {
  return ::isatty(STDERR_FILENO) != 0;
}

#endif

}  // namespace etwaudit
