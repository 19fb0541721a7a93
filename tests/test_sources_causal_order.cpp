// The order in which one read of fanotify's two groups goes on (causal_order.h),
// on lists built here: the kernel's part is in test_sources_fanotify.cpp.

#include <catch2/catch.hpp>
#include <string>

#include "sources/live/causal_order.h"

using namespace etwaudit;

namespace {

FileEvent event(Op op, std::uint32_t path, std::int64_t time, std::uint32_t process = 1) {
  FileEvent e;
  e.op = op;
  e.path = path;
  e.time = time;
  e.process = process;
  return e;
}

// "create 1, open 1, ..." for the merged events.
std::string ops(const std::vector<FileEvent>& events) {
  std::string text;
  for (const FileEvent& e : events)
    text += (text.empty() ? "" : ", ") + std::string(op_name(e.op)) + " " + std::to_string(e.path);
  return text;
}

}  // namespace

TEST_CASE("a create goes before what was done to its file, a delete after", "[order]") {
  // Read: the content of files 1 and 2, then their names (file 2 deleted).
  const std::vector<FileEvent> content = {event(Op::open, 1, 100),        event(Op::write, 1, 100),
                                          event(Op::close_write, 1, 100), event(Op::open, 2, 100),
                                          event(Op::write, 2, 100),       event(Op::close_write, 2, 100)};
  const std::vector<NameEvent> names = {
      {event(Op::create, 1, 180), false}, {event(Op::create, 2, 180), false}, {event(Op::remove, 2, 180), true}};
  const auto merged = merge_in_causal_order(content, names);
  CHECK(ops(merged) == "create 1, create 2, open 1, write 1, close_write 1, open 2, write 2, close_write 2, delete 2");
  // Times rise with the order, none later than it was read.
  std::vector<std::int64_t> times;
  for (const FileEvent& e : merged) times.push_back(e.time);
  CHECK(times == std::vector<std::int64_t>{100, 100, 100, 100, 100, 100, 100, 100, 180});
}

TEST_CASE("a rename keeps its two names together, after what was done under the old one", "[order]") {
  const std::vector<FileEvent> content = {event(Op::open, 1, 10), event(Op::write, 1, 10),
                                          event(Op::close_write, 1, 10), event(Op::open, 3, 10)};
  const std::vector<NameEvent> names = {{event(Op::create, 1, 20), false},
                                        {event(Op::rename, 1, 20), true},
                                        {event(Op::rename, 2, 20), false},
                                        {event(Op::create, 3, 20), false}};
  CHECK(ops(merge_in_causal_order(content, names)) ==
        "create 1, create 3, open 1, write 1, close_write 1, rename 1, rename 2, open 3");
}

TEST_CASE("a file written and renamed within one read shows its writes, under the new name, before the rename",
          "[order]") {
  // cp a b.tmp && mv b.tmp b: the content events were read after the rename,
  // under the new name 2.
  const std::vector<FileEvent> content = {event(Op::open, 2, 10), event(Op::write, 2, 10),
                                          event(Op::close_write, 2, 10)};
  const std::vector<NameEvent> names = {
      {event(Op::create, 1, 20), false}, {event(Op::rename, 1, 20), true}, {event(Op::rename, 2, 20), false}};
  const auto merged = merge_in_causal_order(content, names);
  CHECK(ops(merged) == "create 1, open 2, write 2, close_write 2, rename 1, rename 2");
  // The two rows of the rename keep one time.
  CHECK(merged[4].time == merged[5].time);
}

TEST_CASE("the name events of one path keep the kernel's order", "[order]") {
  // Created, written, deleted and created again: the second create cannot go
  // before the delete.
  const std::vector<FileEvent> content = {event(Op::open, 1, 5), event(Op::close_write, 1, 5), event(Op::open, 2, 5)};
  const std::vector<NameEvent> names = {{event(Op::create, 1, 9), false},
                                        {event(Op::remove, 1, 9), true},
                                        {event(Op::create, 1, 9), false},
                                        {event(Op::remove, 7, 9), true}};
  CHECK(ops(merge_in_causal_order(content, names)) ==
        "create 1, delete 7, open 1, close_write 1, delete 1, create 1, open 2");
  CHECK(merge_in_causal_order({}, {}).empty());
  CHECK(ops(merge_in_causal_order(content, {})) == "open 1, close_write 1, open 2");
}

TEST_CASE("a create by a pid that exec'd since is the program's before the exec when that one used the file",
          "[order]") {
  // pid 7: bash (process 1) writes notes, then execs cp (process 2), which
  // reads notes and creates backup.
  const std::vector<FileEvent> content = {event(Op::open, 10, 5, 1), event(Op::write, 10, 5, 1),
                                          event(Op::close_write, 10, 5, 1), event(Op::open, 99, 5, 2),
                                          event(Op::open, 10, 5, 2)};
  const std::vector<ExecSwitch> execs = {{1, 2, 3}};
  CHECK(name_event_process(content, execs, 2, 10, false) == 1);  // create notes: bash's
  CHECK(name_event_process(content, execs, 2, 11, false) == 2);  // create backup: cp's
  CHECK(name_event_process(content, execs, 2, 10, true) == 2);   // a delete stays the current program's
  CHECK(name_event_process(content, execs, 3, 10, false) == 3);  // another process
  CHECK(name_event_process(content, {}, 2, 10, false) == 2);     // no exec seen
}
