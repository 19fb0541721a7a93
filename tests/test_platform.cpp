#include <algorithm>
#include <catch2/catch.hpp>
#include <thread>

#ifdef _WIN32
#include <windows.h>
#else
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#endif

#include "platform/platform.h"

using namespace etwaudit;

namespace {

// The calling thread's priority: its nice value (Linux), its Win32 priority.
int this_thread_priority() {
#ifdef _WIN32
  return ::GetThreadPriority(::GetCurrentThread());
#else
  errno = 0;
  const int nice = ::getpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)));
  REQUIRE(errno == 0);
  return nice;
#endif
}

}  // namespace

TEST_CASE("a thread that lowers its priority lowers its own only", "[platform]") {
  const int before = this_thread_priority();
  int lowered = 0, others = 0;
  std::thread worker([&] {
    lower_this_thread_priority();
    lowered = this_thread_priority();
  });
  worker.join();
  std::thread other([&] { others = this_thread_priority(); });
  other.join();
#ifdef _WIN32
  CHECK(lowered == THREAD_PRIORITY_BELOW_NORMAL);
#else
  CHECK(lowered == std::min(before + 10, 19));  // nicer: fewer of the CPU's turns when the others want them
#endif
  CHECK(this_thread_priority() == before);
  CHECK(others == before);
}
