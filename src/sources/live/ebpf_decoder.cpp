#include "sources/live/ebpf_decoder.h"

#include <cstring>

#include "sources/live/ebpf/records.h"
#include "sources/live/linux_proc.h"

namespace etwaudit {
namespace {

// A record of type T at data, when size holds one.
template <typename T>
bool read_record(const void* data, std::size_t size, T& record) {
  if (size < sizeof record) return false;
  std::memcpy(&record, data, sizeof record);
  return true;
}

// text of at most size bytes at data, up to its first NUL.
std::string text_at(const void* data, std::size_t size) {
  const char* begin = static_cast<const char*>(data);
  return std::string(begin, ::strnlen(begin, size));
}

// "8:1" for a kernel dev_t (MKDEV: major << 20 | minor).
std::string device_name(std::uint64_t dev) {
  return std::to_string(dev >> 20) + ":" + std::to_string(dev & 0xfffff);
}

}  // namespace

EbpfDecoder::EbpfDecoder(Catalog& catalog, std::int64_t boot_to_epoch_ns, EbpfHost host)
    : m_catalog(catalog), m_boot_to_epoch(boot_to_epoch_ns), m_host(std::move(host)) {}

EbpfDecoder::Process& EbpfDecoder::describe(ProcessInfo info) {
  Process& process = m_processes[info.pid];
  if (info.uid && info.user.empty()) info.user = m_host.user_name(*info.uid);
  process.id = m_catalog.intern_process(info);
  process.image = info.image;
  process.command_line = info.command_line;
  return process;
}

const EbpfDecoder::Process& EbpfDecoder::process(std::uint32_t pid) {
  if (auto found = m_processes.find(pid); found != m_processes.end()) return found->second;
  return describe(m_host.process(pid));
}

void EbpfDecoder::name_file(std::uint64_t dev, std::uint64_t ino, std::uint32_t path, std::uint64_t open_seq) {
  m_files[{dev, ino}] = {path, open_seq};
  m_file_keys[path] = {dev, ino};
  if (m_host.file_named) m_host.file_named(dev, ino, open_seq, path);
}

std::uint32_t EbpfDecoder::file(std::uint32_t pid, std::int64_t fd, std::uint64_t dev, std::uint64_t ino) {
  const auto key = std::make_pair(dev, ino);
  if (auto found = m_files.find(key); found != m_files.end()) return found->second.path;
  std::string path = m_host.descriptor_path(pid, fd);
  const bool named = !path.empty();
  if (!named) path = "<device " + device_name(dev) + " inode " + std::to_string(ino) + ">";
  const std::uint32_t id = m_catalog.intern_path(path);
  if (named) name_file(dev, ino, id, 0);  // a name from /proc holds for the file until it is opened again
  return id;
}

bool EbpfDecoder::decode(const void* data, std::size_t size, std::vector<FileEvent>& out) {
  etwaudit_record_header header;
  if (!read_record(data, size, header) || header.size > size) return false;
  const std::int64_t time = static_cast<std::int64_t>(header.time) + m_boot_to_epoch;
  switch (header.type) {
    case ETWAUDIT_RECORD_OPEN:
    case ETWAUDIT_RECORD_READ:
    case ETWAUDIT_RECORD_WRITE:
    case ETWAUDIT_RECORD_CLOSE: {
      etwaudit_file_record record;
      if (!read_record(data, size, record)) return false;
      FileEvent event;
      event.time = time;
      event.tid = header.tid;
      event.process = process(header.tgid).id;
      if (header.type == ETWAUDIT_RECORD_OPEN) {
        if (record.path_size == 0 || sizeof record + record.path_size > size) return false;
        const std::string path = text_at(static_cast<const char*>(data) + ETWAUDIT_RECORD_PATH, record.path_size);
        event.path = m_catalog.intern_path(path);
        name_file(record.dev, record.ino, event.path, record.open_seq);
        if (record.created) {  // as fanotify reports it: the create, then the open
          event.op = Op::create;
          out.push_back(event);
        }
        event.op = Op::open;
      } else {
        event.path = file(header.tgid, record.fd, record.dev, record.ino);
        if (header.type == ETWAUDIT_RECORD_CLOSE) {
          event.op = Op::close;
        } else {
          event.op = header.type == ETWAUDIT_RECORD_READ ? Op::read : Op::write;
          if (record.result < 0) return true;  // a failed transfer: nothing moved (left out for now)
          event.size = record.result;
          event.offset = record.offset;
        }
      }
      out.push_back(event);
      return true;
    }
    case ETWAUDIT_RECORD_EXEC:
    case ETWAUDIT_RECORD_FORK: {
      etwaudit_process_record record;
      if (!read_record(data, size, record)) return false;
      ProcessInfo info;
      info.pid = header.tgid;
      info.start_time = static_cast<std::int64_t>(record.start_time) + m_boot_to_epoch;
      info.parent_pid = record.parent_tgid;
      info.uid = record.uid;
      if (header.type == ETWAUDIT_RECORD_EXEC) {
        if (size < ETWAUDIT_EXEC_SIZE || record.path_size > ETWAUDIT_PATH_AREA || record.args_size > ETWAUDIT_ARGS_MAX)
          return false;
        const char* bytes = static_cast<const char*>(data);
        info.image = text_at(bytes + ETWAUDIT_EXEC_PATH, record.path_size);
        info.command_line = linux_proc::command_line(std::string_view(bytes + ETWAUDIT_EXEC_ARGS, record.args_size));
      } else {
        const Process& parent = process(record.parent_tgid);
        info.image = parent.image;
        info.command_line = parent.command_line;
      }
      describe(std::move(info));
      return true;
    }
    case ETWAUDIT_RECORD_DELETE:
    case ETWAUDIT_RECORD_RENAME: {
      etwaudit_file_record record;
      if (!read_record(data, size, record)) return false;
      const bool rename = header.type == ETWAUDIT_RECORD_RENAME;
      if (record.path_size == 0 || record.path_size > ETWAUDIT_PATH_AREA ||
          ETWAUDIT_RECORD_PATH + record.path_size > size ||
          (rename && (record.path2_size == 0 || record.path2_size > ETWAUDIT_PATH_AREA || size < ETWAUDIT_RENAME_SIZE)))
        return false;
      const char* bytes = static_cast<const char*>(data);
      FileEvent event;
      event.time = time;
      event.tid = header.tid;
      event.process = process(header.tgid).id;
      event.path = m_catalog.intern_path(text_at(bytes + ETWAUDIT_RECORD_PATH, record.path_size));
      if (!rename) {
        event.op = Op::remove;
        out.push_back(event);
        return true;
      }
      // Two events, under the old name and then the new, each naming both.
      event.op = Op::rename;
      event.renamed_from = event.path;
      event.renamed_to = m_catalog.intern_path(text_at(bytes + ETWAUDIT_RECORD_SECOND, record.path2_size));
      out.push_back(event);
      event.path = event.renamed_to;
      out.push_back(event);
      // The file opened under the old name has the new one from now on.
      if (auto found = m_file_keys.find(event.renamed_from); found != m_file_keys.end()) {
        const auto key = found->second;
        m_file_keys.erase(found);
        name_file(key.first, key.second, event.renamed_to, m_files[key].open_seq);
      }
      return true;
    }
    case ETWAUDIT_RECORD_EXIT: m_processes.erase(header.tgid); return true;
    default: return false;
  }
}

}  // namespace etwaudit
