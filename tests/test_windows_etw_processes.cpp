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
#include <cstring>
#include <string>
#include <vector>

#include "core/bounded_queue.h"
#include "core/catalog.h"
#include "core/file_event.h"
#include "core/run_stats.h"
#include "sources/live/etw_callback.h"
#include "sources/live/etw_live_source.h"
#include "sources/live/etw_processes.h"
#include "sources/live/etw_win32.h"

using namespace etwaudit;

namespace {

// FileIo event class {90cbdc39-4a3e-11d1-84f4-0000f80464e3}, Read (etw-facts.md §3.3).
constexpr GUID file_io_class = {0x90cbdc39, 0x4a3e, 0x11d1, {0x84, 0xf4, 0x00, 0x00, 0xf8, 0x04, 0x64, 0xe3}};
constexpr UCHAR opcode_read = 67;

std::string own_image() {
  std::vector<wchar_t> path(32768);
  const DWORD size = GetModuleFileNameW(nullptr, path.data(), static_cast<DWORD>(path.size()));
  return to_utf8(std::wstring_view(path.data(), size));
}

std::int64_t now_unix_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

TEST_CASE("RunningProcesses gives a running process's image path, creation time and command line", "[windows][etw]") {
  RunningProcesses processes;
  ProcessInfo info;
  REQUIRE(processes.lookup(GetCurrentProcessId(), info));
  CHECK(info.pid == GetCurrentProcessId());
  CHECK(info.image == own_image());
  const std::int64_t now = now_unix_ns();
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

  // FileIo_ReadWrite v2 of a 64-bit system: offset, Irp, thread pointer,
  // FileObject, FileKey, IoSize, IoFlags.
  std::vector<std::uint8_t> payload;
  for (std::uint64_t field : {0ull, 0xFFFFC00055556666ull, 77ull, 0xFFFFB00033334444ull, 0xFFFFA00011112222ull})
    for (int i = 0; i < 8; ++i) payload.push_back(static_cast<std::uint8_t>(field >> (8 * i)));
  for (int i = 0; i < 8; ++i) payload.push_back(i == 0 ? 64 : 0);  // IoSize 64, IoFlags 0

  EVENT_RECORD record;
  std::memset(&record, 0, sizeof record);
  record.EventHeader.Size = sizeof(EVENT_HEADER);
  record.EventHeader.Flags = EVENT_HEADER_FLAG_CLASSIC_HEADER | EVENT_HEADER_FLAG_64_BIT_HEADER;
  record.EventHeader.ProcessId = GetCurrentProcessId();
  record.EventHeader.ThreadId = GetCurrentThreadId();
  FILETIME now;
  GetSystemTimeAsFileTime(&now);
  record.EventHeader.TimeStamp.LowPart = now.dwLowDateTime;
  record.EventHeader.TimeStamp.HighPart = static_cast<LONG>(now.dwHighDateTime);
  record.EventHeader.ProviderId = file_io_class;
  record.EventHeader.EventDescriptor.Opcode = opcode_read;
  record.EventHeader.EventDescriptor.Version = 2;
  record.UserData = payload.data();
  record.UserDataLength = static_cast<USHORT>(payload.size());
  record.UserContext = static_cast<EtwRecordHandler*>(&pipeline);
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
