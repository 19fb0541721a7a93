#include "sources/live/ebpf_source.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <ctime>
#include <mutex>
#include <vector>

#include "core/error.h"
#include "file_io.skel.h"  // made by bpftool from ebpf/file_io.bpf.c (CMakeLists.txt)
#include "sources/live/ebpf/records.h"
#include "sources/live/ebpf_decoder.h"
#include "sources/live/linux_proc.h"
#include "sources/live/linux_system.h"

namespace etwaudit {
namespace {

// libbpf's messages: the verifier's log goes into the error when loading
// fails, nothing is printed.
std::mutex log_mutex;
std::string load_log;

int keep_log(enum libbpf_print_level level, const char* format, va_list args) {
  if (level == LIBBPF_DEBUG) return 0;
  char line[1024];
  std::vsnprintf(line, sizeof line, format, args);
  std::lock_guard lock(log_mutex);
  load_log += line;
  if (load_log.size() > 8192) load_log.erase(0, load_log.size() - 8192);
  return 0;
}

std::string last_lines(const std::string& text, int count) {
  std::size_t at = text.size();
  while (count-- > 0 && at > 0) at = text.rfind('\n', at - 1);
  return text.substr(at == std::string::npos ? 0 : at + 1);
}

std::int64_t clock_ns(clockid_t clock) {
  timespec now{};
  ::clock_gettime(clock, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

// A process that started before the collector, as /proc shows it now.
ProcessInfo process_from_proc(std::uint32_t pid, std::int64_t boot_epoch_ns, long ticks_per_second) {
  ProcessInfo info;
  info.pid = pid;
  const std::string proc = "/proc/" + std::to_string(pid);
  const std::string stat = linux_system::read_file(proc + "/stat");
  if (const auto ticks = linux_proc::stat_start_ticks(stat))
    info.start_time = boot_epoch_ns + static_cast<std::int64_t>(*ticks) * 1'000'000'000 / ticks_per_second;
  if (const auto parent = linux_proc::stat_parent_pid(stat)) info.parent_pid = *parent;
  info.uid = linux_proc::status_real_uid(linux_system::read_file(proc + "/status"));
  info.image = std::string(linux_proc::without_deleted_suffix(linux_system::read_link(proc + "/exe"), true));
  info.command_line = linux_proc::command_line(linux_system::read_file(proc + "/cmdline"));
  return info;
}

}  // namespace

bool ebpf_built() {
  return true;
}

struct EbpfSource::Program {
  file_io* skeleton = nullptr;
  ring_buffer* ring = nullptr;
  // During run(): where the ring buffer's callback puts what it decodes.
  EbpfDecoder* decoder = nullptr;
  std::vector<FileEvent> events;
  RunStats* stats = nullptr;
  std::function<void(const void*, std::size_t)> raw_records;

  ~Program() {
    ring_buffer__free(ring);
    file_io::destroy(skeleton);
  }
};

EbpfSource::EbpfSource(EbpfOptions options)
    : m_program(std::make_unique<Program>()), m_options(options), m_verdicts(options.paths) {
  if (::geteuid() != 0) throw Error("etwaudit collect --source ebpf needs root (CAP_BPF and CAP_PERFMON)");
  {
    std::lock_guard lock(log_mutex);
    load_log.clear();
  }
  libbpf_set_print(keep_log);
  auto failed = [&](const char* what, int error) {
    std::lock_guard lock(log_mutex);
    return Error(std::string(what) + ": " + std::strerror(error < 0 ? -error : error) +
                 (load_log.empty() ? std::string() : "\n" + last_lines(load_log, 6)));
  };
  m_program->raw_records = options.raw_records;
  m_program->skeleton = file_io::open();
  if (!m_program->skeleton) throw failed("cannot open etwaudit's eBPF program", errno);
  m_program->skeleton->rodata->own_tgid = options.own_pid;
  // --mount: the filesystems by their device, as the kernel's superblocks
  // have it (MKDEV: major << 20 | minor).
  std::vector<std::uint32_t> devices;
  const auto mounts = options.mounts.empty()
                          ? std::vector<linux_proc::Mount>()
                          : linux_proc::parse_mountinfo(linux_system::read_file("/proc/self/mountinfo"));
  for (const std::string& path : options.mounts) {
    struct stat status {};
    if (::stat(path.c_str(), &status) != 0) throw Error("--mount '" + path + "': " + std::string(std::strerror(errno)));
    devices.push_back((::major(status.st_dev) << 20) | ::minor(status.st_dev));
    const std::string device = std::to_string(::major(status.st_dev)) + ":" + std::to_string(::minor(status.st_dev));
    for (const auto& mount : mounts)
      if (mount.device == device) m_mount_points.push_back(mount.mount_point);
    m_watched = (devices.size() == 1 ? "the filesystem of " : m_watched + ", of ") + path + " (" + device + ")";
  }
  m_program->skeleton->rodata->filter_devices = !devices.empty();
  auto* rodata = m_program->skeleton->rodata;
  rodata->filter_files = m_verdicts.active();
  const auto& prefixes = m_verdicts.kernel_prefixes();
  rodata->include_prefixes = static_cast<std::uint32_t>(m_verdicts.includes());
  rodata->exclude_prefixes = static_cast<std::uint32_t>(prefixes.size() - m_verdicts.includes());
  for (std::size_t i = 0; i < prefixes.size(); ++i) {
    const std::size_t slot = i < m_verdicts.includes() ? i : ETWAUDIT_PREFIXES + i - m_verdicts.includes();
    rodata->prefix_lengths[slot] = static_cast<std::uint32_t>(prefixes[i].size());
    std::memcpy(rodata->prefix_words[slot], prefixes[i].data(), prefixes[i].size());
  }
  auto picked = [&](Op op) {
    return options.ops.empty() || std::find(options.ops.begin(), options.ops.end(), op) != options.ops.end();
  };
  std::uint32_t skip = 0;
  if (!picked(Op::read)) skip |= 1u << ETWAUDIT_RECORD_READ;
  if (!picked(Op::write)) skip |= 1u << ETWAUDIT_RECORD_WRITE;
  if (!picked(Op::close)) skip |= 1u << ETWAUDIT_RECORD_CLOSE;
  if (!picked(Op::remove)) skip |= 1u << ETWAUDIT_RECORD_DELETE;
  m_program->skeleton->rodata->skip_records = skip;
  if (const int error = file_io::load(m_program->skeleton))
    throw failed(
        "the kernel refused etwaudit's eBPF program (it needs BTF, BPF ring buffers and BTF raw "
        "tracepoints: Linux 5.8 or later)",
        error);
  const std::uint8_t yes = 1;
  for (const std::uint32_t device : devices)
    if (const int error =
            bpf_map__update_elem(m_program->skeleton->maps.devices, &device, sizeof device, &yes, sizeof yes, BPF_ANY))
      throw failed("cannot tell etwaudit's eBPF program which filesystems to record", error);
  if (const int error = file_io::attach(m_program->skeleton))
    throw failed("cannot attach etwaudit's eBPF program", error);
  m_program->ring = ring_buffer__new(
      bpf_map__fd(m_program->skeleton->maps.records),
      [](void* context, void* data, std::size_t size) {
        auto* program = static_cast<Program*>(context);
        if (program->raw_records) program->raw_records(data, size);
        if (!program->decoder->decode(data, size, program->events)) program->stats->bad_input += 1;
        return 0;
      },
      m_program.get(), nullptr);
  if (!m_program->ring) throw failed("cannot read etwaudit's eBPF ring buffer", errno);
}

EbpfSource::~EbpfSource() = default;

bool EbpfSource::on_watched_mount(const FileEvent& event, const Catalog& catalog) const {
  // The program checks the filesystem of every file and directory it sees;
  // a name given whole to unlink or rename has none it could look at.
  if (m_options.mounts.empty() || (event.op != Op::remove && event.op != Op::rename)) return true;
  const std::string path = catalog.path(event.path);
  for (const std::string& point : m_mount_points)
    if (point == "/" || (path.rfind(point, 0) == 0 && (path.size() == point.size() || path[point.size()] == '/')))
      return true;
  return false;
}

void EbpfSource::stop() noexcept {
  m_stop = true;
}

void EbpfSource::run(BoundedQueue<FileEvent>& queue, Catalog& catalog, RunStats& stats) {
  const std::int64_t boot_epoch = clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_BOOTTIME);
  const long ticks_per_second = std::max(1L, ::sysconf(_SC_CLK_TCK));
  EbpfHost host;
  host.process = [&](std::uint32_t pid) { return process_from_proc(pid, boot_epoch, ticks_per_second); };
  host.descriptor_path = [](std::uint32_t pid, std::int64_t fd) {
    return std::string(linux_proc::without_deleted_suffix(
        linux_system::read_link("/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd)), true));
  };
  linux_system::UserNames user_names;
  host.user_name = [&](std::uint32_t uid) { return user_names(uid); };
  // The path filters: the program's verdicts where the whole filter says
  // otherwise (when a write fails, the collector filters the file itself).
  const int verdicts = bpf_map__fd(m_program->skeleton->maps.verdicts);
  if (m_verdicts.active())
    host.file_named = [&](std::uint64_t dev, std::uint64_t ino, std::uint64_t open_seq, std::uint32_t path) {
      if (const auto verdict = m_verdicts.named(dev, ino, open_seq, path, catalog.path(path))) {
        const etwaudit_file_key key{dev, ino};
        const etwaudit_verdict value{verdict->open_seq, verdict->left_out ? 1u : 0u, 0};
        bpf_map_update_elem(verdicts, &key, &value, BPF_ANY);
      }
    };
  EbpfDecoder decoder(catalog, boot_epoch, host);
  m_program->decoder = &decoder;
  m_program->stats = &stats;
  const int lost_map = bpf_map__fd(m_program->skeleton->maps.lost);
  const int cpus = libbpf_num_possible_cpus();
  std::vector<std::uint64_t> lost(static_cast<std::size_t>(std::max(cpus, 1)));
  while (!queue.closed()) {
    const bool stopping = m_stop.load();
    // The program wakes us once a batch waits; what is there is read every 50 ms.
    int polled = ring_buffer__poll(m_program->ring, stopping ? 0 : 50);
    if (polled >= 0) {
      const int more = ring_buffer__consume(m_program->ring);
      polled = more < 0 ? more : polled + more;
    }
    if (polled < 0 && polled != -EINTR) {
      m_error = "reading etwaudit's eBPF ring buffer failed: " + std::string(std::strerror(-polled));
      break;
    }
    for (const FileEvent& event : m_program->events) {
      if (!on_watched_mount(event, catalog)) continue;
      stats.received += 1;
      queue.try_push(event);
    }
    m_program->events.clear();
    // The records the ring buffer had no room for, per CPU, since the start.
    const std::uint32_t zero = 0;
    if (bpf_map_lookup_elem(lost_map, &zero, lost.data()) == 0) {
      std::uint64_t total = 0;
      for (std::uint64_t count : lost) total += count;
      stats.lost = total;
    }
    if (stopping && polled <= 0) break;  // what was there at the stop is read
  }
  m_program->decoder = nullptr;
}

}  // namespace etwaudit
