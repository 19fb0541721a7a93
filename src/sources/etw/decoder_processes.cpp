// The process and thread tables of the ETW decoder: kernel Process and
// Thread events, Microsoft-Windows-Kernel-Process, and the running system
// (ProcessLookup) for what a trace does not say (doc/etw-format.md §4.7,
// §4.8, §5.3). Payload layouts: see the top of decoder.cpp.

#include <cstdio>
#include <span>
#include <string>
#include <string_view>

#include "core/ascii.h"
#include "core/text.h"
#include "core/time_format.h"
#include "sources/etw/decoder.h"
#include "sources/etw/payload.h"

namespace etwaudit {

using decoder_detail::Payload;

namespace {
constexpr std::uint32_t system_pid = 4;
}  // namespace

namespace {
// A SID's text form (S-1-5-21-...) from its bytes: revision, count, a 48-bit
// big-endian authority, count little-endian u32 sub-authorities.
std::string sid_text(std::span<const std::uint8_t> sid) {
  if (sid.size() < 8 || sid.size() < 8 + 4 * std::size_t{sid[1]}) return {};
  std::uint64_t authority = 0;
  for (int i = 2; i < 8; ++i) authority = authority << 8 | sid[i];
  char number[32];
  std::snprintf(number, sizeof number, authority >> 32 ? "0x%012llX" : "%llu",
                static_cast<unsigned long long>(authority));
  std::string text = "S-" + std::to_string(sid[0]) + "-" + number;
  for (std::size_t i = 0; i < sid[1]; ++i) {
    const std::size_t at = 8 + 4 * i;
    text += "-" + std::to_string(std::uint32_t{sid[at]} | std::uint32_t{sid[at + 1]} << 8 |
                                 std::uint32_t{sid[at + 2]} << 16 | std::uint32_t{sid[at + 3]} << 24);
  }
  return text;
}

// The accounts every Windows has, named the same everywhere.
std::string_view well_known_account(std::string_view sid) {
  if (sid == "S-1-5-18") return "NT AUTHORITY\\SYSTEM";
  if (sid == "S-1-5-19") return "NT AUTHORITY\\LOCAL SERVICE";
  if (sid == "S-1-5-20") return "NT AUTHORITY\\NETWORK SERVICE";
  return {};
}
}  // namespace

void EtwDecoder::decode_process(const RawRecord& record) {
  constexpr std::uint8_t start = 1, end = 2, rundown_end = 4;  // 3 is the rundown start (DCStart)
  const std::uint8_t version = record.version;
  if (record.opcode < start || record.opcode > rundown_end || version < 3) {
    ++m_stats.unknown;
    return;
  }
  // Versions above 4 are read as 4, with what they add at the end left
  // unread (as TraceEvent does).
  const bool newer = version > 4;
  if (newer) ++m_stats.newer_versions;
  const Payload payload(record);
  const std::size_t pointer = payload.pointer_size();
  const std::size_t sid_at = 2 * pointer + 16 + (version >= 4 ? 4 : 0);
  std::uint32_t pid = 0, sid_low = 0;
  if (!payload.u32(pointer, pid) || !payload.u32(sid_at, sid_low)) {
    ++m_stats.malformed;
    return;
  }
  // Where the strings may start after the SID (see the top of the file): an
  // absent SID shows as 4 zero bytes, a present one as a non-zero pointer.
  std::size_t candidates[3] = {};
  std::size_t candidate_count = 0;
  std::uint64_t sid_pointer = 0;
  std::uint8_t sub_authorities = 0;
  bool sid_candidate = false;  // candidates[0] follows a SID
  // (A later version's end cannot tell the two apart: there a zero low half
  // is an absent SID, as no SID pointer has one.)
  if (payload.pointer(sid_at, sid_pointer) && sid_pointer != 0 && !(newer && sid_low == 0) &&
      payload.has(sid_at + 2 * pointer, 8) && payload.u8(sid_at + 2 * pointer + 1, sub_authorities)) {
    candidates[candidate_count++] = sid_at + 2 * pointer + 8 + 4 * std::size_t{sub_authorities};
    sid_candidate = true;
  }
  if (sid_low == 0) {
    candidates[candidate_count++] = sid_at + 4;
    if (pointer != 4) candidates[candidate_count++] = sid_at + pointer;
  }
  // ImageFileName, CommandLine, and in v4 PackageFullName and ApplicationId,
  // which end the payload.
  std::span<const std::uint8_t> image, command_line;
  bool found = false, with_sid = false;
  for (std::size_t i = 0; i < candidate_count && !found; ++i) {
    with_sid = sid_candidate && i == 0;
    std::span<const std::uint8_t> ignored;
    std::size_t at = 0;
    found = payload.ansi(candidates[i], image, at) && payload.utf16(at, command_line, at);
    if (version >= 4) found = found && payload.utf16(at, ignored, at) && payload.utf16(at, ignored, at);
    // Misreading an absent pointer-sized SID as 4 bytes starts the image at
    // a zero byte; a process always has an image name.
    found = found && (newer ? at <= payload.size() : at == payload.size()) && !image.empty();
  }
  if (!found) {
    ++m_stats.malformed;
    return;
  }
  ++m_stats.processes;
  ProcessInfo info;
  info.pid = pid;
  append_utf8_from_ansi(image.data(), image.size(), info.image);
  append_utf8_from_utf16le(command_line.data(), command_line.size(), info.command_line);
  payload.u32(pointer + 4, info.parent_pid);  // ParentId: within what was checked above
  if (with_sid) {
    std::vector<std::uint8_t> sid(8 + 4 * std::size_t{sub_authorities});
    for (std::size_t i = 0; i < sid.size(); ++i) payload.u8(sid_at + 2 * pointer + i, sid[i]);
    const std::string text = sid_text(sid);
    info.user = well_known_account(text);
    if (info.user.empty() && m_process_lookup && !text.empty()) info.user = m_process_lookup->account_name(text);
    if (info.user.empty()) info.user = text;
  }
  if (record.opcode == end || record.opcode == rundown_end) {
    // An end names a process only if nothing else has.
    if (m_process_ids.find(pid) != nullptr) return;
    m_process_ids.set(pid, m_catalog.intern_process(info));
    return;
  }
  // The classic events carry no creation time: a Start happens at its own
  // time, a rundown's start time is unknown unless the system says it.
  info.start_time = record.opcode == start ? record.time : 0;
  const std::int64_t created_by = record.opcode == start ? std::numeric_limits<std::int64_t>::max() : record.time;
  if (look_up_process(pid, created_by, info.image, m_looked_up)) {
    if (record.opcode != start) info.start_time = m_looked_up.start_time;
    info.image.swap(m_looked_up.image);
  }
  m_process_ids.set(pid, m_catalog.intern_process(info));
}

void EtwDecoder::decode_kernel_process(const RawRecord& record) {
  constexpr std::uint16_t process_start = 1, process_stop = 2, thread_start = 3, thread_stop = 4;
  const Payload payload(record);
  const std::uint8_t version = record.version;
  switch (record.event_id) {
    case process_start: {
      // v0-v2: ProcessID, CreateTime, ParentProcessID, SessionID, [Flags,]
      // ImageName. v3 on (Windows 10 and 11): ProcessSequenceNumber after the
      // ProcessID and ParentProcessSequenceNumber after the parent, then
      // SessionID, Flags, two elevation u32, the MandatoryLabel SID (8 + 4
      // bytes a sub-authority), ImageName; v4 adds SecurityMitigations at
      // the end, and later versions are read as v4 (doc/etw-format.md §4.7).
      const bool sequenced = version >= 3;
      if (version > 4) ++m_stats.newer_versions;
      std::uint32_t pid = 0, parent = 0;
      std::uint64_t create_time = 0;
      std::uint8_t sub_authorities = 0;
      std::span<const std::uint8_t> image;
      std::size_t end = 0;
      bool ok = payload.u32(0, pid) && payload.u64(sequenced ? 12 : 4, create_time) &&
                payload.u32(sequenced ? 20 : 12, parent);
      const std::size_t label_at = 48;
      const std::size_t image_at = !sequenced ? (version == 0 ? 20 : 24)
                                   : ok && payload.u8(label_at + 1, sub_authorities)
                                       ? label_at + 8 + 4 * std::size_t{sub_authorities}
                                       : 0;
      ok = ok && image_at != 0 && payload.has(label_at, sequenced ? image_at - label_at : 0) &&
           payload.utf16(image_at, image, end);
      if (version >= 2) {
        // ImageChecksum, TimeDateStamp, PackageFullName, PackageRelativeAppId.
        std::span<const std::uint8_t> ignored;
        ok = ok && payload.has(end, 8) && payload.utf16(end + 8, ignored, end) && payload.utf16(end, ignored, end);
      }
      if (version >= 4) ok = ok && payload.has(end, 4);  // SecurityMitigations
      if (!ok) {
        ++m_stats.malformed;
        return;
      }
      ++m_stats.processes;
      ProcessInfo info;
      info.pid = pid;
      info.parent_pid = parent;
      info.start_time = unix_ns_from_filetime(create_time);
      append_utf8_from_utf16le(image.data(), image.size(), info.image);
      m_process_ids.set(pid, m_catalog.intern_process(info));
      return;
    }
    case process_stop: {
      if (version > 1) break;
      std::uint32_t pid = 0;
      std::uint64_t create_time = 0;
      std::span<const std::uint8_t> image;
      std::size_t end = 0;
      if (!payload.u32(0, pid) || !payload.u64(4, create_time) || !payload.ansi(version == 0 ? 48 : 76, image, end)) {
        ++m_stats.malformed;
        return;
      }
      ++m_stats.processes;
      if (m_process_ids.find(pid) != nullptr) return;
      m_image.clear();
      append_utf8_from_ansi(image.data(), image.size(), m_image);
      m_process_ids.set(pid, m_catalog.intern_process(pid, unix_ns_from_filetime(create_time), m_image));
      return;
    }
    case thread_start:
    case thread_stop: {
      if (version > 1) break;
      // Seven pointers follow the ids; v1 adds SubProcessTag, and its stop CycleTime.
      const std::size_t fixed = 8 + 7 * payload.pointer_size() + (version == 1 ? 4 : 0) +
                                (version == 1 && record.event_id == thread_stop ? 8 : 0);
      std::uint32_t pid = 0, tid = 0;
      if (!payload.has(0, fixed) || !payload.u32(0, pid) || !payload.u32(4, tid)) {
        ++m_stats.malformed;
        return;
      }
      ++m_stats.threads;
      m_thread_processes.set(tid, pid);
      return;
    }
    default: break;
  }
  ++m_stats.unknown;
}

void EtwDecoder::decode_thread(const RawRecord& record) {
  constexpr std::uint8_t start = 1, end = 2, rundown_end = 4;
  const std::uint8_t version = record.version;
  if (record.opcode < start || record.opcode > rundown_end || version > 4) {
    ++m_stats.unknown;
    return;
  }
  const Payload payload(record);
  const std::size_t pointer = payload.pointer_size();
  // The fixed size of each version's layout.
  std::size_t fixed = 8;
  if (version == 1 && record.opcode != end) fixed = 8 + 6 * pointer + 1;
  if (version == 2) fixed = 8 + 7 * pointer + 4;
  if (version >= 3) fixed = 8 + 7 * pointer + 8;
  std::uint32_t first = 0, second = 0;
  std::span<const std::uint8_t> name;
  std::size_t name_end = 0;
  bool ok = payload.has(0, fixed) && payload.u32(0, first) && payload.u32(4, second);
  if (version == 4) ok = ok && payload.utf16(fixed, name, name_end);
  if (!ok) {
    ++m_stats.malformed;
    return;
  }
  ++m_stats.threads;
  // v0 has the thread first, later versions the process.
  const std::uint32_t pid = version == 0 ? second : first;
  const std::uint32_t tid = version == 0 ? first : second;
  m_thread_processes.set(tid, pid);
}

bool EtwDecoder::look_up_process(std::uint32_t pid, std::int64_t seen_at, std::string_view short_image,
                                 ProcessInfo& info) {
  if (m_process_lookup == nullptr || pid == 0 || pid == system_pid || pid == RawRecord::unknown_id) return false;
  info = ProcessInfo{};
  if (!m_process_lookup->lookup(pid, info) || info.start_time == 0 || info.start_time > seen_at || info.image.empty())
    return false;
  if (!short_image.empty()) {
    // ImageFileName is the start of the image's file name, cut at 15 bytes.
    const std::size_t slash = info.image.find_last_of("\\/");
    const std::string_view file_name = std::string_view(info.image).substr(slash == std::string::npos ? 0 : slash + 1);
    if (!starts_with_ignoring_ascii_case(file_name, short_image)) return false;
  }
  ++m_stats.looked_up;
  return true;
}

std::uint32_t EtwDecoder::process_for_pid(std::uint32_t pid, std::int64_t seen_at) {
  if (const std::uint32_t* process = m_process_ids.find(pid)) return *process;
  const std::uint32_t process =
      look_up_process(pid, seen_at, {}, m_looked_up)
          ? m_catalog.intern_process(pid, m_looked_up.start_time, m_looked_up.image, m_looked_up.command_line)
          : m_catalog.intern_process(pid, 0, {});
  m_process_ids.set(pid, process);
  return process;
}

std::uint32_t EtwDecoder::event_process(std::uint32_t pid, std::uint32_t thread, std::int64_t seen_at) {
  if (pid == RawRecord::unknown_id || pid == 0 || pid == system_pid) {
    if (thread != RawRecord::unknown_id && thread != 0) {
      if (const std::uint32_t* owner = m_thread_processes.find(thread)) {
        pid = *owner;
      } else if (pid == RawRecord::unknown_id && m_process_lookup) {
        // A thread that started before the session and no rundown named:
        // ask Windows, once.
        if (const std::uint32_t owner = m_process_lookup->process_of_thread(thread)) {
          m_thread_processes.set(thread, owner);
          pid = owner;
        }
      }
    }
    // Kernel work logged outside any process (the cache manager's and the
    // file systems' worker threads) belongs to System; pid 0xFFFFFFFF is no process.
    if (pid == RawRecord::unknown_id) {
      pid = system_pid;
      ++m_stats.system_assumed;
    }
  }
  return process_for_pid(pid, seen_at);
}

}  // namespace etwaudit
