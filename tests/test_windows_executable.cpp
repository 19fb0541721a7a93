// etwaudit.exe as a Windows user runs it: the version, and what `collect`
// says where it cannot collect. Under Wine ETW does not work (OpenTraceW
// fails with error 5); on Windows without elevation the rights are missing;
// on an elevated Windows it collects.
#include <windows.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/utf8_path.h"
#include "platform/platform.h"
#include "platform/win32.h"
#include "temp_dir.h"

using etwaudit::test::TempDir;

namespace {

struct Result {
  DWORD exit_code = 0;
  std::string out;
  std::string err;
};

std::wstring widen(const std::string& text) {
  return etwaudit::to_wide(text);  // the arguments are UTF-8
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// An inheritable handle to a new file, for a child's stdout or stderr.
HANDLE output_file(const std::filesystem::path& path) {
  SECURITY_ATTRIBUTES inherit{sizeof inherit, nullptr, TRUE};
  HANDLE file = CreateFileW(path.c_str(), GENERIC_WRITE, FILE_SHARE_READ, &inherit, CREATE_ALWAYS, 0, nullptr);
  REQUIRE(file != INVALID_HANDLE_VALUE);
  return file;
}

// Runs etwaudit.exe with args and waits for it.
Result run(const TempDir& dir, const std::vector<std::string>& args) {
  std::wstring exe = widen(ETWAUDIT_EXE);
  for (auto& c : exe)
    if (c == L'/') c = L'\\';
  std::wstring command_line = L"\"" + exe + L"\"";
  for (const auto& arg : args) command_line += L" \"" + widen(arg) + L"\"";

  HANDLE out = output_file(dir.path() / "stdout.txt"), err = output_file(dir.path() / "stderr.txt");
  STARTUPINFOW startup{};
  startup.cb = sizeof startup;
  startup.dwFlags = STARTF_USESTDHANDLES;
  startup.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
  startup.hStdOutput = out;
  startup.hStdError = err;
  PROCESS_INFORMATION process{};
  const BOOL started =
      CreateProcessW(exe.c_str(), command_line.data(), nullptr, nullptr, TRUE, 0, nullptr, nullptr, &startup, &process);
  const DWORD create_error = GetLastError();
  CloseHandle(out);
  CloseHandle(err);
  INFO("CreateProcessW error " << create_error);
  REQUIRE(started);
  WaitForSingleObject(process.hProcess, 60'000);
  Result result;
  GetExitCodeProcess(process.hProcess, &result.exit_code);
  CloseHandle(process.hThread);
  CloseHandle(process.hProcess);
  result.out = read_file(dir.path() / "stdout.txt");
  result.err = read_file(dir.path() / "stderr.txt");
  return result;
}

bool running_under_wine() {
  HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
  return ntdll && GetProcAddress(ntdll, "wine_get_version") != nullptr;
}

}  // namespace

TEST_CASE("etwaudit.exe --version prints the version", "[windows][cli]") {
  TempDir dir;
  const Result result = run(dir, {"--version"});
  CHECK(result.exit_code == 0);
  CHECK(result.out == "etwaudit " ETWAUDIT_VERSION "\r\n");
  CHECK(result.err.empty());
}

TEST_CASE("etwaudit.exe collect says plainly why it cannot collect, and writes nothing", "[windows][cli]") {
  TempDir dir;
  const std::string db = (dir.path() / "audit.db").string();
  if (running_under_wine()) {
    // Wine's StartTraceW pretends; its OpenTraceW fails with ERROR_ACCESS_DENIED.
    const Result result = run(dir, {"collect", "--db", db});
    CHECK(result.exit_code == 1);
    CHECK(result.err ==
          "etwaudit collect: cannot read events from the ETW session 'etwaudit': OpenTraceW failed with error 5 "
          "(Access denied.); real-time ETW is not available here (under Wine it never is)\r\n");
    CHECK_FALSE(std::filesystem::exists(db));
  } else if (!etwaudit::is_elevated()) {
    const Result result = run(dir, {"collect", "--db", db});
    CHECK(result.exit_code == 1);
    CHECK(result.err ==
          "etwaudit collect: etwaudit collect needs administrator rights (run elevated or as SYSTEM)\r\n");
    CHECK_FALSE(std::filesystem::exists(db));
  } else {
    // An elevated Windows: a short live run must work.
    const Result result = run(dir, {"collect", "--db", db, "--duration", "3s", "--quiet"});
    INFO(result.err);
    CHECK(result.exit_code == 0);
    CHECK(std::filesystem::exists(db));
  }
}

TEST_CASE("etwaudit.exe collect refuses impossible ETW buffer settings as a usage error", "[windows][cli]") {
  TempDir dir;
  const Result result = run(dir, {"collect", "--etw-buffer-size", "2"});
  CHECK(result.exit_code == 2);
  CHECK_THAT(result.err, Catch::Contains("--etw-buffer-size must be 4 to 16384 (KB), not 2"));
}

TEST_CASE("etwaudit stop reaches a collector through its named event, and only a collector", "[windows]") {
  // This test process plays the collector: install_stop_handlers() made its event.
  etwaudit::install_stop_handlers();
  CHECK(etwaudit::stop_requested().empty());
  CHECK(etwaudit::request_stop(GetCurrentProcessId()).empty());
  CHECK(etwaudit::stop_requested() == "etwaudit stop");
  CHECK(etwaudit::process_alive(GetCurrentProcessId()));
  // A pid without the event is refused, and one nobody has is not alive.
  CHECK(etwaudit::request_stop(0xFFFFFFF0u) == "process 4294967280 is no etwaudit collector");
  CHECK_FALSE(etwaudit::process_alive(0xFFFFFFF0u));
}

TEST_CASE("non-ASCII names reach etwaudit.exe whole: database, replay file, filters and output", "[windows][cli]") {
  using etwaudit::utf8_name;
  using etwaudit::utf8_path;
  TempDir dir;
  const std::filesystem::path folder = dir.path() / utf8_path("J\xC3\xBCrgen \xCE\xB1\xCE\xB2");  // Jürgen αβ
  std::filesystem::create_directory(folder);
  const std::string input = utf8_name(folder / utf8_path("ereignisse-\xC3\xA4.jsonl"));
  const std::string db = utf8_name(folder / utf8_path("audit-\xC3\xBC.db"));
  const std::string egypt = "C:\\Users\\J\xC3\xBCrgen\\\xC3\x84gypten.txt";  // C:\Users\Jürgen\Ägypten.txt
  {
    std::ofstream out(utf8_path(input), std::ios::binary);
    out << R"({"time":"2026-12-02T10:00:00Z","pid":7,"process":"C:\\Windows\\notepad.exe","op":"write","path":")"
        << "C:\\\\Users\\\\J\xC3\xBCrgen\\\\\xC3\x84gypten.txt"
        << R"(","size":5})"
        << "\n";
    out << R"({"time":"2026-12-02T10:00:01Z","pid":7,"process":"C:\\Windows\\notepad.exe","op":"read","path":)"
        << R"("C:\\Users\\ada\\plain.txt","size":5})"
        << "\n";
  }
  const Result collect = run(dir, {"collect", "--source", "replay:" + input, "--db", db, "--quiet"});
  INFO(collect.err);
  REQUIRE(collect.exit_code == 0);
  CHECK(std::filesystem::exists(utf8_path(db)));

  // A path filter with non-ASCII letters matches; the path prints as UTF-8.
  const Result history =
      run(dir, {"query", "file-history", "C:\\Users\\J\xC3\xBCrgen\\*", "--format", "csv", "--db", db});
  INFO(history.err);
  CHECK(history.exit_code == 0);
  CHECK_THAT(history.out, Catch::Contains("," + egypt + ","));
  const Result count = run(dir, {"query", "--sql", "SELECT count(*) AS n FROM v_events", "--path", "*\xC3\x84gypten*",
                                 "--format", "csv", "--db", db});
  CHECK(count.out == "n\r\n1\r\n");
  const Result excluded = run(dir, {"query", "--sql", "SELECT count(*) AS n FROM v_events", "--exclude-path",
                                    "*\xC3\x84gypten*", "--format", "csv", "--db", db});
  CHECK(excluded.out == "n\r\n1\r\n");

  // --output and report --html to non-ASCII names.
  const std::string csv = utf8_name(folder / utf8_path("bericht-\xC3\xA9.csv"));
  CHECK(run(dir, {"query", "recent", "--output", csv, "--format", "csv", "--db", db}).exit_code == 0);
  CHECK_THAT(read_file(utf8_path(csv)), Catch::Contains(egypt));
  const std::string html = utf8_name(folder / utf8_path("seite-\xC3\xB6.html"));
  CHECK(run(dir, {"report", "--html", html, "--db", db}).exit_code == 0);
  CHECK(std::filesystem::exists(utf8_path(html)));
  const Result status = run(dir, {"status", "--db", db});
  CHECK(status.exit_code == 0);
  CHECK_THAT(status.out, Catch::Contains("audit-\xC3\xBC.db"));
}
