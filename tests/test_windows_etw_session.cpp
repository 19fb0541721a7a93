// The ETW session controller where it can be tested without a working ETW:
// one collector per session name. (Under Wine StartTraceW succeeds without
// doing anything; on an elevated Windows these are real, short sessions.)
#include <catch2/catch.hpp>
#include <string>
#include <thread>

#include "cli/platform.h"
#include "core/error.h"
#include "sources/live/etw_session.h"

using namespace etwaudit;

TEST_CASE("a second collector cannot take a session name in use, and can once the first has ended", "[windows][etw]") {
  EtwSessionOptions options;
  options.name = L"etwaudit-test-" + std::to_wstring(GetCurrentProcessId());
  const std::string name = "etwaudit-test-" + std::to_string(GetCurrentProcessId());
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
      EtwSession second(options);
      try {
        second.start();
      } catch (const Error& e) {
        second_error = e.what();
      }
    }).join();
  }
  CHECK(second_error == "another etwaudit collect is using the ETW session '" + name +
                            "'; give a second collector its own session with --etw-session NAME");

  bool third_started = false;
  std::thread([&] {
    EtwSession third(options);
    third.start();
    third_started = true;
  }).join();
  CHECK(third_started);
}
