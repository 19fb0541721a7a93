// The fanotify source against the running kernel. It needs root (CI has it);
// without root the source must refuse with the message users see.

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "core/error.h"
#include "sources/live/fanotify_source.h"
#include "temp_dir.h"

using namespace etwaudit;
using etwaudit::test::TempDir;

namespace {

// Runs source until an event satisfies done or the time is up; returns the events.
template <typename Done>
std::vector<FileEvent> collect_until(FanotifySource& source, Catalog& catalog, RunStats& stats, Done done,
                                     std::chrono::milliseconds time = std::chrono::seconds(10)) {
  BoundedQueue<FileEvent> queue(1 << 16);
  std::thread thread([&] { source.run(queue, catalog, stats); });
  std::vector<FileEvent> events;
  const auto deadline = std::chrono::steady_clock::now() + time;
  while (std::chrono::steady_clock::now() < deadline) {
    std::vector<FileEvent> batch;
    queue.pop_until(batch, 4096, std::chrono::steady_clock::now() + std::chrono::milliseconds(50));
    events.insert(events.end(), batch.begin(), batch.end());
    if (std::any_of(batch.begin(), batch.end(), done)) break;
  }
  source.stop();
  thread.join();
  // What the source handed on as it stopped (it holds events back a moment
  // to put them in order).
  for (std::vector<FileEvent> rest; queue.pop_until(rest, 4096, std::chrono::steady_clock::now()) > 0; rest.clear())
    events.insert(events.end(), rest.begin(), rest.end());
  return events;
}

}  // namespace

TEST_CASE("fanotify records what other processes do to files, and nothing of our own", "[fanotify]") {
  if (geteuid() != 0) {
    CHECK_THROWS_WITH(FanotifySource(FanotifyOptions{}), "etwaudit collect needs root on Linux (fanotify)");
    return;
  }
  TempDir dir;
  const std::string root = dir.path().string();
  FanotifySource source(FanotifyOptions{{root}, {}, static_cast<std::uint32_t>(getpid())});
  REQUIRE(source.watched().size() == 1);
  Catalog catalog;
  RunStats stats;
  const std::string script = "cd '" + root +
                             "' && echo hi > a.txt && cat a.txt > /dev/null && echo x > c.txt"
                             " && mv c.txt d.txt && rm d.txt && touch done";
  std::thread workload([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::ofstream(dir.file("ours.txt")) << "written by the collector's own process";
    CHECK(std::system(("sh -c \"" + script + "\"").c_str()) == 0);
  });
  const auto events = collect_until(source, catalog, stats, [&](const FileEvent& e) {
    return e.op == Op::create && catalog.path(e.path) == dir.file("done");
  });
  workload.join();

  const bool whole_renames = std::none_of(source.limitations().begin(), source.limitations().end(),
                                          [](const std::string& s) { return s.find("FAN_RENAME") != s.npos; });
  std::set<std::string> seen;
  for (const FileEvent& event : events) {
    const std::string path = catalog.path(event.path);
    if (path.rfind(root, 0) != 0) continue;  // the rest of the filesystem
    seen.insert(std::string(op_name(event.op)) + " " + path.substr(root.size() + 1));
    // cat is forked by the shell and execs at once: its read is cat's, not the
    // shell's (or unknown, if cat was gone before the collector got to it).
    const std::string image = catalog.process(event.process).image;
    if (event.op == Op::read && path == dir.file("a.txt")) {
      INFO(image);
      CHECK((image == "/usr/bin/cat" || image == "/bin/cat" || image == "[cat]" || image.empty()));
    }
    CHECK(catalog.process(event.process).pid != static_cast<std::uint32_t>(getpid()));
    CHECK(event.size == -1);
    CHECK(event.offset == -1);
    // (FAN_RENAME, Linux 5.17: each row of the rename names both files.)
    if (event.op == Op::rename && whole_renames) {
      CHECK(catalog.path(event.renamed_from) == dir.file("c.txt"));
      CHECK(catalog.path(event.renamed_to) == dir.file("d.txt"));
    }
  }
  for (const char* expected : {"create a.txt", "open a.txt", "write a.txt", "close_write a.txt", "read a.txt",
                               "close a.txt", "create c.txt", "rename c.txt", "rename d.txt", "delete d.txt"}) {
    INFO(expected);
    CHECK(seen.count(expected) == 1);
  }
  CHECK(seen.count("create ours.txt") == 0);
  CHECK(seen.count("write ours.txt") == 0);
  CHECK(source.error().empty());
  CHECK(stats.lost == 0);
}

TEST_CASE("fanotify asks the kernel only for the operations wanted", "[fanotify]") {
  if (geteuid() != 0) return;  // the case above checks the refusal
  TempDir dir;
  FanotifySource source(FanotifyOptions{{dir.path().string()}, {Op::remove}, 0});
  Catalog catalog;
  RunStats stats;
  std::thread workload([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK(std::system(("sh -c \"cd '" + dir.path().string() + "' && echo 1 > f && cat f && rm f\"").c_str()) == 0);
  });
  const auto events =
      collect_until(source, catalog, stats, [&](const FileEvent& e) { return catalog.path(e.path) == dir.file("f"); });
  workload.join();
  for (const FileEvent& event : events) CHECK(event.op == Op::remove);
  CHECK_FALSE(events.empty());
}

TEST_CASE("a --mount that does not exist or --ops fanotify cannot report is a usage error", "[fanotify]") {
  CHECK_THROWS_WITH(FanotifySource(FanotifyOptions{{}, {Op::disk_read, Op::flush}, 0}),
                    Catch::StartsWith("--ops: fanotify reports none of these"));
  if (geteuid() != 0) return;
  CHECK_THROWS_WITH(FanotifySource(FanotifyOptions{{"/no/such/place"}, {}, 0}),
                    "--mount '/no/such/place': No such file or directory");
  // What it had opened by then (two fanotify groups, an eventfd, a mount) is closed.
  auto open_descriptors = [] {
    return std::distance(std::filesystem::directory_iterator("/proc/self/fd"), std::filesystem::directory_iterator{});
  };
  const auto before = open_descriptors();
  for (int attempt = 0; attempt < 5; ++attempt)
    CHECK_THROWS(FanotifySource(FanotifyOptions{{"/", "/no/such/place"}, {}, 0}));
  CHECK(open_descriptors() == before);
}

TEST_CASE("a kernel queue overflow is counted as lost events", "[fanotify]") {
  if (geteuid() != 0) return;
  // Fill the group's queue (max_queued_events long) before reading any of it.
  std::size_t limit = 0;
  std::ifstream("/proc/sys/fs/fanotify/max_queued_events") >> limit;
  REQUIRE(limit > 0);
  if (limit > 200000) {
    WARN("max_queued_events is " << limit << ": too long a queue to fill in a test");
    return;
  }
  TempDir dir;
  FanotifySource source(FanotifyOptions{{dir.path().string()}, {Op::write}, 0});
  for (std::size_t i = 0; i < limit + 1000; ++i) std::ofstream(dir.file("f" + std::to_string(i))) << i;
  Catalog catalog;
  RunStats stats;
  collect_until(
      source, catalog, stats, [](const FileEvent&) { return false; }, std::chrono::milliseconds(500));
  CHECK(source.overflows() >= 1);
  CHECK(stats.lost == source.overflows());
}

TEST_CASE("under load, every file a process creates, writes and closes comes out in that order", "[fanotify]") {
  if (geteuid() != 0) return;  // the first case checks the refusal
  TempDir dir;
  const std::string root = dir.path().string();
  FanotifySource source(FanotifyOptions{{root}, {}, static_cast<std::uint32_t>(getpid())});
  Catalog catalog;
  RunStats stats;
  constexpr int writers = 4, files_each = 300;
  std::thread workload([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    // A busy loop beside the writers, so that they and the collector share the cores.
    const pid_t busy = fork();
    if (busy == 0) {
      volatile unsigned long spins = 0;
      for (;;) spins = spins + 1;
    }
    std::vector<pid_t> children;
    for (int w = 0; w < writers; ++w) {
      const pid_t child = fork();
      if (child == 0) {
        const std::string block(4096, 'x');
        for (int i = 0; i < files_each; ++i) {
          const std::string path = root + "/w" + std::to_string(w) + "-" + std::to_string(i);
          const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
          if (fd < 0 || ::write(fd, block.data(), block.size()) != static_cast<ssize_t>(block.size())) _exit(1);
          ::close(fd);
        }
        _exit(0);
      }
      children.push_back(child);
    }
    for (pid_t child : children) {
      int status = 0;
      ::waitpid(child, &status, 0);
      CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    }
    ::kill(busy, SIGKILL);
    ::waitpid(busy, nullptr, 0);
    CHECK(std::system(("touch '" + root + "/done'").c_str()) == 0);
  });
  const auto events = collect_until(
      source, catalog, stats,
      [&](const FileEvent& e) { return e.op == Op::create && catalog.path(e.path) == dir.file("done"); },
      std::chrono::seconds(60));
  workload.join();
  REQUIRE(stats.lost == 0);

  // Each file's events in the order they came, with their times.
  std::map<std::string, std::vector<const FileEvent*>> by_file;
  for (const FileEvent& event : events) {
    const std::string path = catalog.path(event.path);
    if (path.rfind(root + "/w", 0) == 0) by_file[path].push_back(&event);
  }
  CHECK(by_file.size() == writers * files_each);
  int out_of_order = 0;
  std::string first_bad;
  for (const auto& [path, file_events] : by_file) {
    std::string sequence;
    bool rising = true;
    for (std::size_t i = 0; i < file_events.size(); ++i) {
      sequence += (i ? ", " : "") + std::string(op_name(file_events[i]->op));
      if (i && file_events[i]->time < file_events[i - 1]->time) rising = false;
    }
    // fanotify may merge the queued open, write and close into one record:
    // they come out in that order, after the create.
    const bool ordered = file_events.front()->op == Op::create && file_events.back()->op == Op::close_write &&
                         sequence.find("create, open") == 0 && rising;
    if (!ordered && ++out_of_order == 1) first_bad = path + ": " + sequence;
  }
  INFO(first_bad);
  CHECK(out_of_order == 0);
}

TEST_CASE("a file a shell created before it exec'd another program is the shell's", "[fanotify]") {
  if (geteuid() != 0) return;  // the first case checks the refusal
  TempDir dir;
  const std::string root = dir.path().string();
  FanotifySource source(FanotifyOptions{{root}, {}, static_cast<std::uint32_t>(getpid())});
  Catalog catalog;
  RunStats stats;
  // bash runs its last command, cp, in its own process: one pid, two programs.
  std::thread workload([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK(std::system(("bash -c 'cd \"" + root + "\" && echo hello > notes.txt; cp notes.txt backup.txt'").c_str()) ==
          0);
  });
  const auto events = collect_until(source, catalog, stats, [&](const FileEvent& e) {
    return e.op == Op::close_write && catalog.path(e.path) == dir.file("backup.txt");
  });
  workload.join();
  std::vector<std::string> seen;
  for (const FileEvent& event : events) {
    const std::string path = catalog.path(event.path);
    if (path.rfind(root + "/", 0) != 0) continue;
    const std::string image = catalog.process(event.process).image;
    seen.push_back(std::string(op_name(event.op)) + " " + path.substr(root.size() + 1) + " " +
                   image.substr(image.rfind('/') + 1));
  }
  INFO(Catch::Detail::stringify(seen));
  REQUIRE(seen.size() >= 6);
  CHECK(seen[0] == "create notes.txt bash");
  CHECK(std::find(seen.begin(), seen.end(), "create backup.txt cp") != seen.end());
  CHECK(std::find(seen.begin(), seen.end(), "create notes.txt cp") == seen.end());
}

TEST_CASE("the last events before a quiet spell go on within a moment, not at the next activity", "[fanotify]") {
  if (geteuid() != 0) return;  // the first case checks the refusal
  TempDir dir;
  const std::string root = dir.path().string();
  FanotifySource source(FanotifyOptions{{root}, {}, static_cast<std::uint32_t>(getpid())});
  Catalog catalog;
  RunStats stats;
  BoundedQueue<FileEvent> queue(1 << 16);
  std::thread thread([&] { source.run(queue, catalog, stats); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  for (int round = 0; round < 5; ++round) {
    const std::string file = root + "/quiet" + std::to_string(round);
    CHECK(std::system(("sh -c 'echo hello > " + file + "'").c_str()) == 0);
    // Nothing else happens in the folder: the source must hand on the file's
    // close_write by itself.
    bool seen = false;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (!seen && std::chrono::steady_clock::now() < deadline) {
      std::vector<FileEvent> batch;
      queue.pop_until(batch, 4096, std::chrono::steady_clock::now() + std::chrono::milliseconds(20));
      for (const FileEvent& e : batch) seen = seen || (e.op == Op::close_write && catalog.path(e.path) == file);
    }
    CAPTURE(round);
    CHECK(seen);
  }
  source.stop();
  thread.join();
}
