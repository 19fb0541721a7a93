// RunningProcesses asks Windows about a process by pid (Wine answers these
// calls as Windows does), and the live pipeline uses it for a process the
// session never described.
#include <windows.h>
// clang-format off: evntcons.h needs windows.h first.
#include <evntcons.h>
// clang-format on

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "core/bounded_queue.h"
#include "core/catalog.h"
#include "core/file_event.h"
#include "core/run_stats.h"
#include "core/time_format.h"
#include "platform/win32.h"
#include "sources/live/etw_callback.h"
#include "sources/live/etw_live_source.h"
#include "sources/live/etw_processes.h"
#include "windows_etw_records.h"

using namespace etwaudit;
using namespace etwaudit::test;

namespace {

std::string own_image() {
  std::vector<wchar_t> path(32768);
  const DWORD size = GetModuleFileNameW(nullptr, path.data(), static_cast<DWORD>(path.size()));
  return to_utf8(std::wstring_view(path.data(), size));
}

}  // namespace

TEST_CASE("RunningProcesses gives a running process's image path, creation time and command line", "[windows][etw]") {
  RunningProcesses processes;
  ProcessInfo info;
  REQUIRE(processes.lookup(GetCurrentProcessId(), info));
  CHECK(info.pid == GetCurrentProcessId());
  CHECK(info.image == own_image());
  const std::int64_t now = now_ns();
  CHECK(info.start_time <= now);
  CHECK(info.start_time > now - std::int64_t{3600} * 1'000'000'000);
  // Windows 8.1 and later say the command line; Wine 8 cannot, and then it
  // stays empty while the rest is still answered.
  const bool wine = GetProcAddress(GetModuleHandleW(L"ntdll.dll"), "wine_get_version") != nullptr;
  CHECK(info.command_line == (wine ? std::string() : to_utf8(GetCommandLineW())));
}

TEST_CASE("RunningProcesses says no for a pid no process has", "[windows][etw]") {
  RunningProcesses processes;
  ProcessInfo info;
  // Windows pids are multiples of 4.
  CHECK_FALSE(processes.lookup(0xFFFFFFF1u, info));
  CHECK(info.image.empty());
}

TEST_CASE("a read by a process the session never announced is named by asking Windows", "[windows][etw]") {
  BoundedQueue<FileEvent> queue(8);
  Catalog catalog;
  RunStats stats;
  RunningProcesses processes;
  EtwEventPipeline pipeline(queue, catalog, stats, &processes);

  // A read by this process, at this moment.
  Payload read = read_write_payload(0, 64, 77);
  EVENT_RECORD record = kernel_record(file_io_class, opcode_read, 2, read, static_cast<EtwRecordHandler*>(&pipeline));
  record.EventHeader.ProcessId = GetCurrentProcessId();
  FILETIME now;
  GetSystemTimeAsFileTime(&now);
  record.EventHeader.TimeStamp.LowPart = now.dwLowDateTime;
  record.EventHeader.TimeStamp.HighPart = static_cast<LONG>(now.dwHighDateTime);
  etw_event_record_callback(&record);

  std::vector<FileEvent> events;
  queue.pop_until(events, 8, std::chrono::steady_clock::now());
  REQUIRE(events.size() == 1);
  const ProcessInfo reader = catalog.process(events[0].process);
  CHECK(reader.pid == GetCurrentProcessId());
  CHECK(reader.image == own_image());
  CHECK(reader.start_time > 0);
  CHECK(pipeline.decoder_stats().looked_up == 1);
}

TEST_CASE("the account of a SID is looked up once, and an unknown SID has none", "[windows][etw]") {
  RunningProcesses processes;
  CHECK(processes.account_name("S-1-5-18").find("SYSTEM") != std::string::npos);
  CHECK(processes.account_name("S-1-5-21-1-2-3-4242").empty());
  CHECK(processes.account_name("not a SID").empty());
}
