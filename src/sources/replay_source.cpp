#include "sources/replay_source.h"

#include <cstring>
#include <nlohmann/json.hpp>
#include <ostream>

#include "core/time_format.h"
#include "platform/line_reader.h"

namespace etwaudit {
namespace {

using nlohmann::json;

// Bad lines printed before the rest are only counted.
constexpr std::uint64_t bad_lines_shown = 20;

std::string describe(const json& value) {
  std::string text = value.dump();
  return text.size() > 60 ? text.substr(0, 57) + "..." : text;
}

// Reads an unsigned integer field no larger than max; "" or an error message.
std::string read_unsigned(const json& object, const char* field, std::uint64_t max, std::uint64_t& out) {
  const json& value = object.at(field);
  if (!value.is_number_unsigned())
    return std::string("'") + field + "' must be a non-negative integer, not " + describe(value);
  out = value.get<std::uint64_t>();
  if (out > max) return std::string("'") + field + "' is too large: " + describe(value);
  return {};
}

std::string read_string(const json& object, const char* field, std::string& out) {
  const json& value = object.at(field);
  if (!value.is_string()) return std::string("'") + field + "' must be a string, not " + describe(value);
  out = value.get<std::string>();
  return {};
}

// An NTSTATUS error: a number, or its usual hex form "0xC0000034".
std::string read_status(const json& object, std::uint32_t& out) {
  const json& value = object.at("status");
  std::uint64_t number = 0;
  if (value.is_string()) {
    const std::string text = value.get<std::string>();
    const bool hex = text.size() > 2 && text.size() <= 10 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X') &&
                     text.find_first_not_of("0123456789abcdefABCDEF", 2) == std::string::npos;
    if (!hex) return "'status' must be an NTSTATUS (3221225524 or \"0xC0000034\"), not " + describe(value);
    number = std::stoull(text.substr(2), nullptr, 16);
  } else if (auto problem = read_unsigned(object, "status", UINT32_MAX, number); !problem.empty()) {
    return problem;
  }
  if (number != 0 && !is_ntstatus_error(static_cast<std::uint32_t>(number)))
    return "'status' " + describe(value) + " is not an error (an NTSTATUS error is 0xC0000000 or above)";
  out = static_cast<std::uint32_t>(number);
  return {};
}

std::string read_time(const json& object, const char* field, std::int64_t& out) {
  const json& value = object.at(field);
  if (value.is_number_integer()) {
    out = value.get<std::int64_t>();
    return {};
  }
  if (value.is_string()) {
    if (auto parsed = parse_iso8601(value.get<std::string>())) {
      out = *parsed;
      return {};
    }
  }
  return std::string("'") + field +
         "' must be ISO-8601 with Z or an offset (2026-12-02T10:15:30.5Z) or ns since 1970, not " + describe(value);
}

}  // namespace

std::string parse_replay_line(std::string_view line, ReplayRecord& record) {
  json object;
  try {
    object = json::parse(line);
  } catch (const json::exception& e) {
    // parse_error, and out_of_range for a number beyond a double (1e999).
    std::string message = e.what();
    if (auto colon = message.find("parse error"); colon != std::string::npos)
      message = message.substr(colon);
    else if (auto id = message.find("] "); id != std::string::npos)
      message = message.substr(id + 2);
    return "not valid JSON: " + message;
  }
  if (!object.is_object()) return "expected a JSON object, got " + describe(object);

  record = ReplayRecord{};
  for (const char* required : {"time", "pid", "op", "path"}) {
    if (!object.contains(required)) return std::string("missing field '") + required + "'";
  }
  std::string problem;
  std::uint64_t number = 0;
  for (const auto& [key, value] : object.items()) {
    if (key == "time") {
      problem = read_time(object, "time", record.event.time);
    } else if (key == "pid") {
      problem = read_unsigned(object, "pid", UINT32_MAX, number);
      record.pid = static_cast<std::uint32_t>(number);
    } else if (key == "tid") {
      problem = read_unsigned(object, "tid", UINT32_MAX, number);
      record.event.tid = static_cast<std::uint32_t>(number);
    } else if (key == "op") {
      std::string name;
      problem = read_string(object, "op", name);
      if (problem.empty()) {
        if (auto op = op_from_name(name))
          record.event.op = *op;
        else
          problem = "unknown op '" + name + "' (expected one of: " + op_names_list() + ")";
      }
    } else if (key == "path") {
      problem = read_string(object, "path", record.path);
      if (problem.empty() && record.path.empty()) problem = "'path' is empty";
    } else if (key == "process") {
      problem = read_string(object, "process", record.image);
    } else if (key == "process_start") {
      problem = read_time(object, "process_start", record.process_start);
    } else if (key == "command_line") {
      problem = read_string(object, "command_line", record.command_line);
    } else if (key == "user") {
      problem = read_string(object, "user", record.user);
    } else if (key == "parent_pid") {
      problem = read_unsigned(object, "parent_pid", UINT32_MAX, number);
      record.parent_pid = static_cast<std::uint32_t>(number);
    } else if (key == "status") {
      if (value.is_null()) continue;
      problem = read_status(object, record.event.status);
    } else if (key == "renamed_from" || key == "renamed_to") {
      if (value.is_null()) continue;
      problem = read_string(object, key.c_str(), key == "renamed_from" ? record.renamed_from : record.renamed_to);
    } else if (key == "offset" || key == "size") {
      if (value.is_null()) continue;
      problem = read_unsigned(object, key.c_str(), INT64_MAX, number);
      (key == "offset" ? record.event.offset : record.event.size) = static_cast<std::int64_t>(number);
    } else {
      problem = "unknown field '" + key + "'";
    }
    if (!problem.empty()) return problem;
  }
  if (record.renamed_from.empty() != record.renamed_to.empty())
    return std::string("'") + (record.renamed_from.empty() ? "renamed_to" : "renamed_from") + "' without '" +
           (record.renamed_from.empty() ? "renamed_from" : "renamed_to") + "': a rename names both";
  if (!record.renamed_from.empty() && record.event.op != Op::rename)
    return "'renamed_from' and 'renamed_to' belong to a rename, not a " + std::string(op_name(record.event.op));
  return {};
}

ReplaySource::ReplaySource(std::string path, OnBadInput on_bad_input, std::ostream& diagnostics)
    : m_path(std::move(path)), m_on_bad_input(on_bad_input), m_diagnostics(diagnostics) {}

void ReplaySource::run(BoundedQueue<FileEvent>& queue, Catalog& catalog, RunStats& stats) {
  LineReader in(m_path);
  if (!in.is_open()) {
    m_error = "cannot open replay file '" + m_path + "': " + in.error();
    return;
  }
  std::string line;
  ReplayRecord record;
  std::uint64_t line_number = 0;
  std::uint64_t bad = 0;
  while (in.next(line, m_stop)) {
    ++line_number;
    if (line_number == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;

    std::string problem = parse_replay_line(line, record);
    if (!problem.empty()) {
      ++bad;
      stats.bad_input += 1;
      std::string message = m_path + ":" + std::to_string(line_number) + ": " + problem;
      if (m_on_bad_input == OnBadInput::stop) {
        m_error = message;
        return;
      }
      if (bad <= bad_lines_shown) m_diagnostics << "warning: skipped " << message << "\n";
      continue;
    }
    FileEvent event = record.event;
    event.path = catalog.intern_path(record.path);
    if (!record.renamed_from.empty()) {
      event.renamed_from = catalog.intern_path(record.renamed_from);
      event.renamed_to = catalog.intern_path(record.renamed_to);
    }
    ProcessInfo process;
    process.pid = record.pid;
    process.start_time = record.process_start;
    process.image = record.image;
    process.command_line = record.command_line;
    process.parent_pid = record.parent_pid;
    process.user = record.user;
    event.process = catalog.intern_process(process);
    // A process first seen without its command line takes it from a later line.
    if (!record.command_line.empty()) catalog.learn_command_line(event.process, record.command_line);
    stats.received += 1;
    if (!queue.push_waiting(event)) break;
  }
  if (bad > bad_lines_shown) m_diagnostics << "warning: skipped " << bad << " bad lines in " << m_path << " in all\n";
  if (!in.error().empty()) m_error = "error reading replay file '" + m_path + "': " + in.error();
}

}  // namespace etwaudit
