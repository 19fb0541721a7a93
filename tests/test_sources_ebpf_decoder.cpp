#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "core/catalog.h"
#include "sources/live/ebpf/records.h"
#include "sources/live/ebpf_decoder.h"

using namespace etwaudit;

namespace {

constexpr std::int64_t boot_epoch = 1796600000000000000;  // the boot, ns since 1970

// Records as the eBPF program writes them (ebpf/records.h).
std::vector<char> header_only(std::uint32_t type, std::uint32_t pid, std::uint64_t time) {
  etwaudit_record_header header{type, pid, pid, sizeof header, time};
  std::vector<char> bytes(sizeof header);
  std::memcpy(bytes.data(), &header, sizeof header);
  return bytes;
}

std::vector<char> file_record(std::uint32_t type, std::uint32_t pid, std::uint64_t time, std::int64_t fd,
                              std::int64_t offset, std::int64_t result, std::uint64_t ino,
                              const std::string& path = {}) {
  etwaudit_file_record record{};
  record.header = {type, pid, pid + 1, 0, time};
  record.fd = fd;
  record.offset = offset;
  record.result = result;
  record.dev = (8u << 20) | 1;
  record.ino = ino;
  record.path_size = path.empty() ? 0 : static_cast<std::uint32_t>(path.size() + 1);
  record.header.size = sizeof record + record.path_size;
  std::vector<char> bytes(record.header.size);
  std::memcpy(bytes.data(), &record, sizeof record);
  if (!path.empty()) std::memcpy(bytes.data() + sizeof record, path.c_str(), path.size() + 1);
  return bytes;
}

std::vector<char> exec_record(std::uint32_t pid, std::uint64_t time, std::uint32_t parent, const std::string& image,
                              const std::string& args) {
  etwaudit_process_record record{};
  record.header = {ETWAUDIT_RECORD_EXEC, pid, pid, ETWAUDIT_EXEC_SIZE, time};
  record.start_time = time - 5;
  record.parent_tgid = parent;
  record.uid = 1000;
  record.path_size = static_cast<std::uint32_t>(image.size() + 1);
  record.args_size = static_cast<std::uint32_t>(args.size());
  std::vector<char> bytes(ETWAUDIT_EXEC_SIZE);
  std::memcpy(bytes.data(), &record, sizeof record);
  std::memcpy(bytes.data() + ETWAUDIT_EXEC_PATH, image.c_str(), image.size() + 1);
  std::memcpy(bytes.data() + ETWAUDIT_EXEC_ARGS, args.data(), args.size());
  return bytes;
}

std::vector<char> fork_record(std::uint32_t child, std::uint64_t time, std::uint32_t parent) {
  etwaudit_process_record record{};
  record.header = {ETWAUDIT_RECORD_FORK, child, child, sizeof record, time};
  record.start_time = time;
  record.parent_tgid = parent;
  record.uid = 1000;
  std::vector<char> bytes(sizeof record);
  std::memcpy(bytes.data(), &record, sizeof record);
  return bytes;
}

struct Decoding {
  Catalog catalog;
  std::vector<std::uint32_t> asked_processes;
  std::vector<std::string> named;  // "ino open_seq path", as the path filters' verdicts are told
  EbpfDecoder decoder{catalog, boot_epoch, host()};
  std::vector<FileEvent> events;

  EbpfHost host() {
    EbpfHost host;
    host.process = [this](std::uint32_t pid) {
      asked_processes.push_back(pid);
      ProcessInfo info;
      info.pid = pid;
      info.image = "/usr/bin/bash";
      info.command_line = "bash";
      return info;
    };
    host.descriptor_path = [](std::uint32_t pid, std::int64_t fd) {
      return (pid == 300 || pid == 301) && fd == 1 ? std::string("/var/log/old.log") : std::string();
    };
    host.user_name = [](std::uint32_t uid) { return uid == 1000 ? std::string("ada") : std::to_string(uid); };
    host.file_named = [this](std::uint64_t, std::uint64_t ino, std::uint64_t open_seq, std::uint32_t path) {
      named.push_back(std::to_string(ino) + " " + std::to_string(open_seq) + " " + catalog.path(path));
    };
    return host;
  }
  bool decode(const std::vector<char>& bytes) { return decoder.decode(bytes.data(), bytes.size(), events); }
  ProcessInfo process_of(const FileEvent& event) { return catalog.process(event.process); }
  std::string path_of(const FileEvent& event) { return catalog.path(event.path); }
};

}  // namespace

TEST_CASE("eBPF records: an exec names the process before its I/O, with bytes and offsets exact", "[ebpf][decoder]") {
  Decoding d;
  REQUIRE(d.decode(exec_record(200, 1000, 100, "/usr/bin/dd", std::string("dd\0if=/dev/zero\0of=/tmp/x\0", 27))));
  REQUIRE(d.decode(file_record(ETWAUDIT_RECORD_OPEN, 200, 1100, 3, -1, 0, 77, "/tmp/x")));
  REQUIRE(d.decode(file_record(ETWAUDIT_RECORD_WRITE, 200, 1200, 1, 0, 65536, 77)));
  REQUIRE(d.decode(file_record(ETWAUDIT_RECORD_WRITE, 200, 1300, 1, 65536, 65536, 77)));
  REQUIRE(d.decode(file_record(ETWAUDIT_RECORD_WRITE, 200, 1350, 1, -1, -28, 77)));  // ENOSPC: nothing moved
  REQUIRE(d.decode(file_record(ETWAUDIT_RECORD_CLOSE, 200, 1400, 1, -1, 0, 77)));
  REQUIRE(d.decode(header_only(ETWAUDIT_RECORD_EXIT, 200, 1500)));
  REQUIRE(d.events.size() == 4);
  CHECK(d.asked_processes.empty());  // the exec said it all
  const ProcessInfo dd = d.process_of(d.events[0]);
  CHECK(dd.image == "/usr/bin/dd");
  CHECK(dd.command_line == "dd if=/dev/zero of=/tmp/x");
  CHECK(dd.parent_pid == 100);
  CHECK(dd.user == "ada");
  CHECK(dd.start_time == boot_epoch + 995);
  CHECK(d.events[0].op == Op::open);
  CHECK(d.path_of(d.events[0]) == "/tmp/x");
  CHECK(d.events[0].time == boot_epoch + 1100);
  CHECK(d.events[0].tid == 201);
  for (int i : {1, 2}) {
    CHECK(d.events[i].op == Op::write);
    CHECK(d.path_of(d.events[i]) == "/tmp/x");  // by device and inode, whatever the descriptor
    CHECK(d.events[i].size == 65536);
    CHECK(d.events[i].offset == 65536 * (i - 1));
  }
  CHECK(d.events[3].op == Op::close);

  // The pid is used again after the exit: a new process, asked of /proc.
  REQUIRE(d.decode(file_record(ETWAUDIT_RECORD_READ, 200, 2000, 1, 0, 10, 77)));
  CHECK(d.asked_processes == std::vector<std::uint32_t>{200});
  CHECK(d.process_of(d.events.back()).image == "/usr/bin/bash");
}

TEST_CASE("eBPF records: a fork runs its parent's program; what predates the collector is asked of the system",
          "[ebpf][decoder]") {
  Decoding d;
  REQUIRE(d.decode(fork_record(301, 500, 300)));  // 300 started before the collector
  CHECK(d.asked_processes == std::vector<std::uint32_t>{300});
  REQUIRE(d.decode(file_record(ETWAUDIT_RECORD_WRITE, 301, 600, 1, 4096, 100, 55)));
  REQUIRE(d.decode(file_record(ETWAUDIT_RECORD_WRITE, 300, 700, 1, 4196, 100, 55)));
  REQUIRE(d.decode(file_record(ETWAUDIT_RECORD_READ, 300, 800, 9, 0, 1, 56)));
  REQUIRE(d.events.size() == 3);
  const ProcessInfo child = d.process_of(d.events[0]);
  CHECK(child.pid == 301);
  CHECK(child.image == "/usr/bin/bash");
  CHECK(child.parent_pid == 300);
  CHECK(child.start_time == boot_epoch + 500);
  // A file opened before the collector: its name from /proc while the
  // process lives, for every descriptor of it; else its device and inode.
  CHECK(d.path_of(d.events[0]) == "/var/log/old.log");
  CHECK(d.path_of(d.events[1]) == "/var/log/old.log");
  CHECK(d.path_of(d.events[2]) == "<device 8:1 inode 56>");
  CHECK(d.named == std::vector<std::string>{"55 0 /var/log/old.log"});  // from /proc: "open 0"
}

TEST_CASE("eBPF records: bytes that are not a whole record are bad input", "[ebpf][decoder]") {
  Decoding d;
  auto open = file_record(ETWAUDIT_RECORD_OPEN, 200, 1100, 3, -1, 0, 77, "/tmp/x");
  CHECK_FALSE(d.decoder.decode(open.data(), 10, d.events));               // shorter than a header
  CHECK_FALSE(d.decoder.decode(open.data(), open.size() - 3, d.events));  // its path cut
  auto exec = exec_record(200, 1000, 100, "/usr/bin/dd", "dd");
  CHECK_FALSE(d.decoder.decode(exec.data(), ETWAUDIT_EXEC_PATH, d.events));
  auto unknown = header_only(99, 200, 1);
  CHECK_FALSE(d.decode(unknown));
  CHECK(d.events.empty());
}

namespace {

std::vector<char> names_record(std::uint32_t type, std::uint32_t pid, std::uint64_t time, const std::string& path,
                               const std::string& path2 = {}) {
  etwaudit_file_record record{};
  const bool rename = type == ETWAUDIT_RECORD_RENAME;
  record.header = {type, pid, pid, 0, time};
  record.fd = -1;
  record.path_size = static_cast<std::uint32_t>(path.size() + 1);
  record.path2_size = rename ? static_cast<std::uint32_t>(path2.size() + 1) : 0;
  record.header.size = rename ? ETWAUDIT_RENAME_SIZE : sizeof record + record.path_size;
  std::vector<char> bytes(record.header.size);
  std::memcpy(bytes.data(), &record, sizeof record);
  std::memcpy(bytes.data() + ETWAUDIT_RECORD_PATH, path.c_str(), path.size() + 1);
  if (rename) std::memcpy(bytes.data() + ETWAUDIT_RECORD_SECOND, path2.c_str(), path2.size() + 1);
  return bytes;
}

}  // namespace

TEST_CASE("eBPF records: a create, a rename under both names, a delete; the file keeps its new name",
          "[ebpf][decoder]") {
  Decoding d;
  REQUIRE(d.decode(exec_record(400, 100, 1, "/usr/bin/editor", std::string("editor\0notes\0", 13))));
  auto open = file_record(ETWAUDIT_RECORD_OPEN, 400, 200, 3, -1, 0, 88, "/home/ada/.notes.swp");
  reinterpret_cast<etwaudit_file_record*>(open.data())->created = 1;
  reinterpret_cast<etwaudit_file_record*>(open.data())->open_seq = 12;
  REQUIRE(d.decode(open));
  REQUIRE(d.decode(names_record(ETWAUDIT_RECORD_RENAME, 400, 300, "/home/ada/.notes.swp", "/home/ada/notes")));
  REQUIRE(d.decode(file_record(ETWAUDIT_RECORD_WRITE, 400, 400, 3, 0, 5, 88)));
  REQUIRE(d.decode(names_record(ETWAUDIT_RECORD_DELETE, 400, 500, "/home/ada/notes~")));
  REQUIRE(d.events.size() == 6);
  CHECK(d.events[0].op == Op::create);
  CHECK(d.events[1].op == Op::open);
  CHECK(d.path_of(d.events[1]) == "/home/ada/.notes.swp");
  for (int i : {2, 3}) {
    CHECK(d.events[i].op == Op::rename);
    CHECK(d.catalog.path(d.events[i].renamed_from) == "/home/ada/.notes.swp");
    CHECK(d.catalog.path(d.events[i].renamed_to) == "/home/ada/notes");
  }
  CHECK(d.path_of(d.events[2]) == "/home/ada/.notes.swp");
  CHECK(d.path_of(d.events[3]) == "/home/ada/notes");
  CHECK(d.path_of(d.events[4]) == "/home/ada/notes");  // written after the rename: its new name
  CHECK(d.events[5].op == Op::remove);
  CHECK(d.path_of(d.events[5]) == "/home/ada/notes~");
  // The path filters are told each name the file had, with its open.
  CHECK(d.named == std::vector<std::string>{"88 12 /home/ada/.notes.swp", "88 12 /home/ada/notes"});
  // A rename record without room for its second name is bad input.
  auto cut = names_record(ETWAUDIT_RECORD_RENAME, 400, 600, "/a", "/b");
  CHECK_FALSE(d.decoder.decode(cut.data(), ETWAUDIT_RECORD_SECOND, d.events));
}
