// platform.h on POSIX: signals, /proc, the terminal.

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <vector>

#include "platform/platform.h"

namespace etwaudit {
namespace {
// 0 = keep going; otherwise what asked us to stop (see stop_requested()).
std::atomic<int> g_stop_reason{0};
}  // namespace

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

std::int64_t utc_offset_seconds(std::int64_t ns) {
  const std::time_t seconds = static_cast<std::time_t>(ns / 1'000'000'000 - (ns % 1'000'000'000 < 0));
  std::tm local{};
  if (!::localtime_r(&seconds, &local)) return 0;
  return local.tm_gmtoff;
}

std::optional<std::string> environment_variable(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::optional<std::string>(value) : std::nullopt;
}

std::string service_database_path() {
  return "/var/lib/etwaudit/audit.db";
}

std::string host_name() {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? std::string(name) : std::string();
}

bool stderr_is_terminal() {
  return ::isatty(STDERR_FILENO) != 0;
}

int stderr_columns() {
  winsize size{};
  return ::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 ? size.ws_col : 0;
}

std::vector<std::string> utf8_arguments(int argc, char** argv) {
  return std::vector<std::string>(argv, argv + argc);  // as the user gave them
}

void use_utf8_console() {}

void stdout_bytes_as_written() {}

std::string machine_id() {
  for (const char* file : {"/etc/machine-id", "/var/lib/dbus/machine-id"}) {
    std::ifstream in(file);
    std::string id;
    if (in && std::getline(in, id) && !id.empty()) return id;
  }
  return {};
}

std::FILE* open_for_append(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return nullptr;
  std::FILE* file = ::fdopen(fd, "ab");
  if (!file) ::close(fd);
  return file;
}

void create_owner_only(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd >= 0) ::close(fd);  // (when it fails, the writer's open says why)
}

bool flush_to_disk(std::FILE* file) {
  return std::fflush(file) == 0 && ::fsync(::fileno(file)) == 0;
}

bool stdout_is_terminal() {
  return ::isatty(STDOUT_FILENO) != 0;
}

void lower_this_thread_priority() {
  // Linux keeps a nice value per thread (setpriority on a thread id), and
  // anyone may raise their own; a failure leaves the thread as it was.
  const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
  errno = 0;
  const int now = ::getpriority(PRIO_PROCESS, tid);
  if (errno == 0) ::setpriority(PRIO_PROCESS, tid, std::min(now + 10, 19));
}

}  // namespace etwaudit
