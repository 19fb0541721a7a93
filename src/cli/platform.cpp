#include "cli/platform.h"

#include <atomic>

#ifdef _WIN32
#include <io.h>
#include <windows.h>
#else
#include <unistd.h>

#include <csignal>
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

void install_stop_handlers() {
  SetConsoleCtrlHandler(on_console_event, TRUE);
}

std::string stop_requested() {
  switch (g_stop_reason.load()) {
    case 0:
      return {};
    case CTRL_C_EVENT + 1:
      return "Ctrl+C";
    case CTRL_BREAK_EVENT + 1:
      return "Ctrl+Break";
    case CTRL_CLOSE_EVENT + 1:
      return "console closed";
    case CTRL_LOGOFF_EVENT + 1:
      return "logoff";
    case CTRL_SHUTDOWN_EVENT + 1:
      return "shutdown";
    default:
      return "stop requested";
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

std::string stop_requested() {
  switch (g_stop_reason.load()) {
    case 0:
      return {};
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "signal " + std::to_string(g_stop_reason.load());
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
