// etwaudit-ebpf-recorder: what etwaudit's eBPF program writes to its ring
// buffer while a workload runs, kept for the decoder's tests on the bytes a
// kernel wrote (tests/test_sources_ebpf_recorded.cpp).
//
//   sudo build/tests/etwaudit-ebpf-recorder tests/fixtures/ebpf/workload.sh tests/fixtures/ebpf/workload.rec
//
// The workload runs under sh in a new, empty folder,
// /tmp/etwaudit-ebpf-recording. Only the records of its processes (the
// shell and those it starts) are kept, each as its size (4 bytes, little-
// endian) and its bytes; the bytes after the end of each name, left over
// from earlier records in the program's scratch space, are zeroed.

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "core/bounded_queue.h"
#include "core/catalog.h"
#include "core/run_stats.h"
#include "sources/live/ebpf/records.h"
#include "sources/live/ebpf_source.h"

using namespace etwaudit;

namespace {

// Zeroes the bytes of area (size bytes at at) after its first NUL.
void zero_after_name(std::vector<char>& record, std::size_t at, std::size_t size) {
  if (at >= record.size()) return;
  size = std::min(size, record.size() - at);
  char* area = record.data() + at;
  const std::size_t length = ::strnlen(area, size);
  if (length < size) std::memset(area + length + 1, 0, size - length - 1);
}

void scrub(std::vector<char>& record) {
  etwaudit_record_header header;
  std::memcpy(&header, record.data(), sizeof header);
  switch (header.type) {
    case ETWAUDIT_RECORD_OPEN:
    case ETWAUDIT_RECORD_DELETE: zero_after_name(record, ETWAUDIT_RECORD_PATH, ETWAUDIT_PATH_AREA); break;
    case ETWAUDIT_RECORD_RENAME:
      zero_after_name(record, ETWAUDIT_RECORD_PATH, ETWAUDIT_PATH_AREA);
      zero_after_name(record, ETWAUDIT_RECORD_SECOND, ETWAUDIT_PATH_AREA);
      break;
    case ETWAUDIT_RECORD_EXEC: {
      etwaudit_process_record process;
      std::memcpy(&process, record.data(), sizeof process);
      zero_after_name(record, ETWAUDIT_EXEC_PATH, ETWAUDIT_PATH_AREA);
      if (process.args_size < ETWAUDIT_ARGS_MAX)
        std::memset(record.data() + ETWAUDIT_EXEC_ARGS + process.args_size, 0, ETWAUDIT_ARGS_MAX - process.args_size);
      break;
    }
    default: break;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: etwaudit-ebpf-recorder WORKLOAD.sh OUTPUT.rec (as root)\n";
    return 2;
  }
  const std::filesystem::path script = std::filesystem::absolute(argv[1]);
  const std::filesystem::path folder = "/tmp/etwaudit-ebpf-recording";
  try {
    std::filesystem::remove_all(folder);
    std::filesystem::create_directories(folder);
    std::mutex mutex;
    std::vector<std::vector<char>> records;
    EbpfOptions options;
    options.own_pid = static_cast<std::uint32_t>(::getpid());
    options.raw_records = [&](const void* data, std::size_t size) {
      std::lock_guard lock(mutex);
      records.emplace_back(static_cast<const char*>(data), static_cast<const char*>(data) + size);
    };
    EbpfSource source(options);
    BoundedQueue<FileEvent> queue(1 << 16);
    Catalog catalog;
    RunStats stats;
    std::thread reader([&] { source.run(queue, catalog, stats); });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const pid_t workload = ::fork();
    if (workload == 0) {
      if (::chdir(folder.c_str()) == 0) ::execl("/bin/sh", "sh", script.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    int status = 0;
    ::waitpid(workload, &status, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    source.stop();
    reader.join();
    std::filesystem::remove_all(folder);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::cerr << "etwaudit-ebpf-recorder: the workload failed\n";
      return 1;
    }
    // The workload's processes: the shell, and what it forked.
    std::set<std::uint32_t> processes{static_cast<std::uint32_t>(workload)};
    std::ofstream out(argv[2], std::ios::binary | std::ios::trunc);
    std::size_t kept = 0;
    for (auto& record : records) {
      etwaudit_record_header header;
      if (record.size() < sizeof header) continue;
      std::memcpy(&header, record.data(), sizeof header);
      if (header.type == ETWAUDIT_RECORD_FORK) {
        etwaudit_process_record fork;
        std::memcpy(&fork, record.data(), sizeof fork);
        if (processes.count(fork.parent_tgid)) processes.insert(header.tgid);
      }
      if (!processes.count(header.tgid)) continue;
      scrub(record);
      const std::uint32_t size = static_cast<std::uint32_t>(record.size());
      const unsigned char prefix[4] = {static_cast<unsigned char>(size), static_cast<unsigned char>(size >> 8),
                                       static_cast<unsigned char>(size >> 16), static_cast<unsigned char>(size >> 24)};
      out.write(reinterpret_cast<const char*>(prefix), 4);
      out.write(record.data(), static_cast<std::streamsize>(record.size()));
      kept += 1;
    }
    if (!out.flush()) throw std::runtime_error(std::string("cannot write ") + argv[2]);
    std::cout << "etwaudit-ebpf-recorder: " << kept << " of " << records.size() << " records (" << stats.lost
              << " lost) into " << argv[2] << "\n";
    return stats.lost == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "etwaudit-ebpf-recorder: " << e.what() << "\n";
    return 1;
  }
}
