#include <catch2/catch.hpp>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/catalog.h"
#include "sources/live/ebpf_decoder.h"

using namespace etwaudit;

// What the eBPF program wrote to its ring buffer while
// tests/fixtures/ebpf/workload.sh ran (a kernel's bytes, recorded by
// tests/support/ebpf_recorder.cpp), through the decoder.

namespace {

const std::string folder = "/tmp/etwaudit-ebpf-recording/";

struct Recording {
  Catalog catalog;
  std::vector<FileEvent> events;
  std::vector<std::uint32_t> asked_processes;  // processes not named by their exec
  std::size_t records = 0, bad = 0;

  Recording() {
    std::ifstream in(ETWAUDIT_TEST_FIXTURES "/ebpf/workload.rec", std::ios::binary);
    REQUIRE(in);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EbpfHost host;
    host.process = [this](std::uint32_t pid) {
      asked_processes.push_back(pid);
      ProcessInfo info;
      info.pid = pid;
      return info;
    };
    host.descriptor_path = [](std::uint32_t, std::int64_t) { return std::string(); };
    host.user_name = [](std::uint32_t uid) { return std::to_string(uid); };
    EbpfDecoder decoder(catalog, 0, host);
    std::size_t at = 0;
    while (at + 4 <= bytes.size()) {
      const auto* size_bytes = reinterpret_cast<const unsigned char*>(bytes.data() + at);
      const std::size_t size = size_bytes[0] | size_bytes[1] << 8 | size_bytes[2] << 16 | size_bytes[3] << 24;
      REQUIRE(at + 4 + size <= bytes.size());
      records += 1;
      if (!decoder.decode(bytes.data() + at + 4, size, events)) bad += 1;
      at += 4 + size;
    }
    REQUIRE(at == bytes.size());
  }

  // The events of path (in the recording's folder) of op by a process whose command line begins with program.
  std::vector<FileEvent> of(const std::string& name, Op op, const std::string& program) {
    std::vector<FileEvent> found;
    for (const FileEvent& event : events)
      if (catalog.path(event.path) == folder + name && event.op == op &&
          catalog.process(event.process).command_line.rfind(program, 0) == 0)
        found.push_back(event);
    return found;
  }
  static std::int64_t bytes(const std::vector<FileEvent>& events) {
    std::int64_t total = 0;
    for (const FileEvent& event : events) total += event.size;
    return total;
  }
};

}  // namespace

TEST_CASE("recorded eBPF records: every process named by its exec, before any of its I/O", "[ebpf][recorded]") {
  Recording r;
  CHECK(r.records > 20);
  CHECK(r.bad == 0);
  CHECK(r.asked_processes.empty());
  const auto writes = r.of("data.bin", Op::write, "dd ");
  REQUIRE_FALSE(writes.empty());
  const ProcessInfo dd = r.catalog.process(writes[0].process);
  CHECK(dd.image == "/usr/bin/dd");
  CHECK(dd.command_line == "dd if=/dev/zero of=data.bin bs=64k count=16 status=none");
  CHECK(dd.uid == 0u);
  const auto shell = r.events.empty() ? ProcessInfo() : r.catalog.process(r.events.front().process);
  CHECK(dd.parent_pid == shell.pid);
  CHECK(shell.command_line.find("workload.sh") != std::string::npos);
}

TEST_CASE("recorded eBPF records: bytes and offsets as dd, cat and cp moved them", "[ebpf][recorded]") {
  Recording r;
  const auto writes = r.of("data.bin", Op::write, "dd if=/dev/zero");
  REQUIRE(writes.size() == 16);
  for (std::size_t i = 0; i < writes.size(); ++i) {
    CHECK(writes[i].size == 65536);
    CHECK(writes[i].offset == static_cast<std::int64_t>(i) * 65536);
  }
  CHECK(r.of("data.bin", Op::create, "dd if=/dev/zero").size() == 1);
  const auto reads = r.of("data.bin", Op::read, "dd if=data.bin");
  CHECK(Recording::bytes(reads) == 1048576);
  CHECK(reads.size() >= 256);  // and the read that found the end
  CHECK(Recording::bytes(r.of("data.bin", Op::read, "cat ")) == 1048576);
  CHECK(Recording::bytes(r.of("data.bin", Op::read, "cp ")) == 1048576);
  CHECK(Recording::bytes(r.of("copy.bin", Op::write, "cp ")) == 1048576);
  CHECK(r.of("copy.bin", Op::create, "cp ").size() == 1);
}

TEST_CASE("recorded eBPF records: mv's rename under both names, rm's delete by its whole path", "[ebpf][recorded]") {
  Recording r;
  const auto renames = r.of("copy.bin", Op::rename, "mv ");
  REQUIRE(renames.size() == 1);
  CHECK(r.catalog.path(renames[0].renamed_to) == folder + "moved.bin");
  CHECK(r.of("moved.bin", Op::rename, "mv ").size() == 1);
  CHECK(r.of("moved.bin", Op::remove, "rm ").size() == 1);
}
