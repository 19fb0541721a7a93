// The ETW session controller where it can be tested without a working ETW:
// one collector per session name. (Under Wine StartTraceW succeeds without
// doing anything; on an elevated Windows these are real, short sessions.)
#include <catch2/catch.hpp>
#include <cwctype>
#include <string>
#include <thread>

#include "core/error.h"
#include "platform/platform.h"
#include "sources/live/etw_session.h"

using namespace etwaudit;

TEST_CASE("a second collector cannot take a session name in use, and can once the first has ended", "[windows][etw]") {
  EtwSessionOptions options;
  options.name = L"etwaudit-test-" + std::to_wstring(GetCurrentProcessId());
  const std::string upper_name = "ETWAUDIT-TEST-" + std::to_string(GetCurrentProcessId());
  if (!is_elevated()) {
    EtwSession session(options);
    CHECK_THROWS_WITH(session.start(), Catch::StartsWith("etwaudit collect needs administrator rights"));
    return;
  }
  REQUIRE(windows_version().at_least(6, 2));  // a private session name (the prefix says Windows 10)

  std::string second_error = "(no error)";
  {
    EtwSession first(options);
    first.start();
    CHECK(first.name() == options.name);
    // Another thread, as another process would: the owner of the name may
    // take it again itself.
    std::thread([&] {
      // Windows compares session names without case.
      EtwSessionOptions same_name = options;
      for (wchar_t& c : same_name.name) c = static_cast<wchar_t>(std::towupper(c));
      EtwSession second(same_name);
      try {
        second.start();
      } catch (const Error& e) {
        second_error = e.what();
      }
    }).join();
  }
  CHECK(second_error == "another etwaudit collect is using the ETW session '" + upper_name +
                            "'; give a second collector its own session with --etw-session NAME");

  bool third_started = false;
  std::thread([&] {
    EtwSession third(options);
    third.start();
    third_started = true;
  }).join();
  CHECK(third_started);
}

TEST_CASE("each session name has a GUID of its own, the same in any case", "[windows][etw]") {
  const GUID a = session_guid(L"etwaudit"), upper = session_guid(L"ETWAUDIT"), b = session_guid(L"etwaudit-2");
  CHECK(IsEqualGUID(a, upper));
  CHECK_FALSE(IsEqualGUID(a, b));
  CHECK_FALSE(IsEqualGUID(a, SystemTraceControlGuid));
  CHECK((a.Data3 & 0xF000) == 0x8000);  // version 8: made from a name by our own rule
  CHECK((a.Data4[0] & 0xC0) == 0x80);   // the RFC variant
  CHECK(session_key(L"EtwAudit-\u00e9") == L"ETWAUDIT-\u00c9");
  // A name longer than a kernel object name may be still gets a mutex.
  EtwSessionOptions options;
  options.name = std::wstring(1000, L'x');
  if (is_elevated()) {
    EtwSession session(options);
    CHECK_NOTHROW(session.start());
  }
}

TEST_CASE("only a session etwaudit left behind is taken for stale; another program's never is", "[windows][etw]") {
  EVENT_TRACE_PROPERTIES left{};
  left.LogFileMode = EVENT_TRACE_REAL_TIME_MODE | EVENT_TRACE_SYSTEM_LOGGER_MODE | EVENT_TRACE_INDEPENDENT_SESSION_MODE;
  left.EnableFlags = etwaudit_enable_flags();
  left.Wnode.Guid = session_guid(L"etwaudit");
  CHECK(is_left_etwaudit_session(left, L"etwaudit"));
  CHECK(is_left_etwaudit_session(left, L"ETWAUDIT"));
  // A query that reports no GUID is judged by the mode and flags alone.
  EVENT_TRACE_PROPERTIES no_guid = left;
  no_guid.Wnode.Guid = GUID{};
  CHECK(is_left_etwaudit_session(no_guid, L"etwaudit"));

  // An event log channel's session (--etw-session EventLog-System): no
  // system logger, no kernel file flags.
  EVENT_TRACE_PROPERTIES channel{};
  channel.LogFileMode = EVENT_TRACE_REAL_TIME_MODE;
  channel.Wnode.Guid = GUID{0x12345678, 0x1234, 0x1234, {1, 2, 3, 4, 5, 6, 7, 8}};
  CHECK_FALSE(is_left_etwaudit_session(channel, L"EventLog-System"));
  // Another tool's kernel session of the same name: its own GUID.
  EVENT_TRACE_PROPERTIES other = left;
  other.Wnode.Guid = channel.Wnode.Guid;
  CHECK_FALSE(is_left_etwaudit_session(other, L"etwaudit"));
  // A system logger without the file events.
  EVENT_TRACE_PROPERTIES no_files = left;
  no_files.EnableFlags = EVENT_TRACE_FLAG_PROCESS;
  CHECK_FALSE(is_left_etwaudit_session(no_files, L"etwaudit"));
  // Written to a file rather than read live.
  EVENT_TRACE_PROPERTIES to_file = left;
  to_file.LogFileMode = EVENT_TRACE_FILE_MODE_SEQUENTIAL | EVENT_TRACE_SYSTEM_LOGGER_MODE;
  CHECK_FALSE(is_left_etwaudit_session(to_file, L"etwaudit"));
}

TEST_CASE("when every system-logger slot is taken, the message names the sessions that hold them", "[windows][etw]") {
  CHECK(slots_full_message("the ETW session 'etwaudit'", {L"SenseNdr", L"Circular Kernel Context Logger"}) ==
        "cannot start the ETW session 'etwaudit': every system-logger slot of this Windows is taken (it runs at most "
        "8 such sessions); these hold them: SenseNdr, Circular Kernel Context Logger. Stop one that is not needed "
        "(logman stop NAME -ets) and start etwaudit again");
  // Listing them never fails, whatever this Windows (or Wine) has running.
  CHECK_NOTHROW(system_logger_sessions());
}
