#pragma once
// What the program needs from the operating system about processes, signals
// and the console: one header, POSIX in platform_posix.cpp and Windows in
// platform_win32.cpp.

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace etwaudit {

// Installs handlers so that Ctrl+C, SIGTERM (POSIX) or a console close or
// shutdown (Windows) ask the program to stop instead of killing it.
void install_stop_handlers();
// The name of the signal or event that asked us to stop, or empty.
std::string stop_requested();

// Asks the etwaudit collector running as process pid to stop, as Ctrl+C
// would: SIGTERM on POSIX (only to a process whose command is etwaudit), the
// named event Global\etwaudit-stop-<pid> that install_stop_handlers() made
// on Windows. Returns "" when asked, else why it could not.
std::string request_stop(std::uint32_t pid);
// Whether process pid still runs.
bool process_alive(std::uint32_t pid);

// Whether names that differ only in ASCII case name the same file (Windows).
#ifdef _WIN32
inline constexpr bool file_names_ignore_case = true;
#else
inline constexpr bool file_names_ignore_case = false;
#endif

// The program's arguments as UTF-8. On Windows they come from the UTF-16
// command line: main's argv holds them in the ANSI code page, where
// C:\Users\Jürgen becomes another name or a '?'.
std::vector<std::string> utf8_arguments(int argc, char** argv);
// Makes a console show the program's UTF-8 output as text (Windows: the
// console's output code page, put back when the program ends; nothing
// elsewhere).
void use_utf8_console();
// Writes standard output byte for byte from now on (Windows: binary mode,
// so that CSV's own \r\n line ends do not become \r\r\n; nothing elsewhere).
void stdout_bytes_as_written();

std::uint32_t current_pid();
// The local time zone's offset east of UTC at an instant (ns since 1970),
// in seconds: 3600 in Berlin in winter, 7200 in summer.
std::int64_t utc_offset_seconds(std::int64_t ns_since_epoch);
// An environment variable's value (UTF-8), or nullopt when it is not set.
std::optional<std::string> environment_variable(const char* name);
// Where etwaudit's service (the scheduled task, the systemd unit) keeps its
// database: /var/lib/etwaudit/audit.db, %ProgramData%\etwaudit\audit.db.
std::string service_database_path();
std::string host_name();
// The machine's own stable id (Linux: /etc/machine-id; Windows: the
// MachineGuid of HKLM\SOFTWARE\Microsoft\Cryptography); "" when it has none.
std::string machine_id();
// Opens a file to append to, by its UTF-8 name; null (errno set) on failure.
// A file it creates is its owner's alone (POSIX 0600), like the database
// whose events it holds.
std::FILE* open_for_append(const std::string& path);
// Creates path, empty and its owner's alone (POSIX 0600), when it does not
// exist, for a writer that opens it next; an existing file keeps its mode.
void create_owner_only(const std::string& path);
// Flushes file and asks the OS to put it on disk; false on failure.
bool flush_to_disk(std::FILE* file);
bool stderr_is_terminal();
// How many columns the terminal standard error writes to has; 0 when it is
// no terminal or does not say.
int stderr_columns();
bool stdout_is_terminal();
// Lets the calling thread yield the CPU to the process's others when they
// compete (Linux: nice +10 for this thread; Windows: below normal): for
// work that can wait, such as shipping beside a collector.
void lower_this_thread_priority();

#ifdef _WIN32
// True when the process token is elevated (an administrator past UAC, or
// SYSTEM): what starting a kernel trace session needs.
bool is_elevated();
#endif

}  // namespace etwaudit
