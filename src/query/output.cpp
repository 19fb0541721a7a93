#include "query/output.h"

#include <utf8proc.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <ostream>

#include "core/ascii.h"
#include "core/error.h"
#include "core/human_format.h"

namespace etwaudit {
namespace {

constexpr std::size_t max_path_width = 60;     // path columns
constexpr std::size_t max_process_width = 40;  // process images: the name matters most

// Display width of UTF-8 text: code points, not bytes.
// Each character of text: where its bytes begin and how many columns of a
// terminal it takes (utf8proc: 2 for East Asian wide characters and most
// emoji, 0 for combining marks; a byte that is not UTF-8, 1).
struct Glyph {
  std::size_t at;
  int width;
};
std::vector<Glyph> glyphs(const std::string& text) {
  std::vector<Glyph> found;
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  for (std::size_t i = 0; i < text.size();) {
    utf8proc_int32_t code = 0;
    const utf8proc_ssize_t length = utf8proc_iterate(bytes + i, static_cast<utf8proc_ssize_t>(text.size() - i), &code);
    if (length <= 0) {
      found.push_back({i, 1});
      i += 1;
      continue;
    }
    found.push_back({i, std::max(0, utf8proc_charwidth(code))});
    i += static_cast<std::size_t>(length);
  }
  return found;
}

std::size_t display_width(const std::string& text) {
  std::size_t width = 0;
  for (const Glyph& glyph : glyphs(text)) width += static_cast<std::size_t>(glyph.width);
  return width;
}

// The longest start of text at most columns wide, and the longest end.
std::string start_of_width(const std::string& text, std::size_t columns) {
  std::size_t used = 0;
  for (const Glyph& glyph : glyphs(text)) {
    if (used + static_cast<std::size_t>(glyph.width) > columns) return text.substr(0, glyph.at);
    used += static_cast<std::size_t>(glyph.width);
  }
  return text;
}
std::string end_of_width(const std::string& text, std::size_t columns) {
  const std::vector<Glyph> all = glyphs(text);
  std::size_t used = 0, at = text.size();
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    if (used + static_cast<std::size_t>(it->width) > columns) break;
    used += static_cast<std::size_t>(it->width);
    at = it->at;
  }
  return text.substr(at);
}

bool is_path_column(const std::string& name) {
  return name == "path" || name == "process" || name == "image" || name == "nt_path" || name == "source" ||
         name == "command_line";
}

// Control characters would break the table's lines.
std::string printable(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  return text;
}

void write_table(std::ostream& out, const Table& table, bool shorten) {
  const std::size_t columns = table.columns.size();
  std::vector<std::vector<std::string>> cells;
  std::vector<bool> right_aligned(columns, true);
  for (const auto& row : table.rows) {
    auto& texts = cells.emplace_back();
    for (std::size_t c = 0; c < columns; ++c) {
      const Cell& cell = row[c];
      if (cell.type == Cell::Type::text) right_aligned[c] = false;
      std::string text = printable(cell.text);
      if (cell.type == Cell::Type::integer && is_bytes_column(table.columns[c]))
        text = human_bytes(static_cast<std::uint64_t>(std::max<long long>(0, std::stoll(cell.text))));
      else if (shorten && cell.type == Cell::Type::text && is_path_column(table.columns[c]))
        text = shorten_path(
            text, table.columns[c] == "process" || table.columns[c] == "image" ? max_process_width : max_path_width);
      texts.push_back(std::move(text));
    }
  }
  std::vector<std::size_t> widths(columns);
  for (std::size_t c = 0; c < columns; ++c) widths[c] = display_width(table.columns[c]);
  for (const auto& row : cells)
    for (std::size_t c = 0; c < columns; ++c) widths[c] = std::max(widths[c], display_width(row[c]));

  auto write_row = [&](const std::vector<std::string>& row) {
    std::string line;
    for (std::size_t c = 0; c < columns; ++c) {
      const std::string padding(widths[c] - display_width(row[c]), ' ');
      line += right_aligned[c] ? padding + row[c] : row[c] + padding;
      if (c + 1 < columns) line += "  ";
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out << line << '\n';
  };
  write_row(table.columns);
  std::vector<std::string> rule;
  for (std::size_t c = 0; c < columns; ++c) rule.emplace_back(widths[c], '-');
  write_row(rule);
  for (const auto& row : cells) write_row(row);
  out << "(" << table.rows.size() << (table.rows.size() == 1 ? " row)\n" : " rows)\n");
}

std::string csv_field(const Cell& cell) {
  if (cell.type == Cell::Type::null) return "";
  if (cell.text.find_first_of(",\"\r\n") == std::string::npos) return cell.text;
  std::string quoted = "\"";
  for (char c : cell.text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

void write_csv(std::ostream& out, const Table& table) {
  for (std::size_t c = 0; c < table.columns.size(); ++c)
    out << (c ? "," : "") << csv_field(Cell{Cell::Type::text, table.columns[c]});
  out << "\r\n";
  for (const auto& row : table.rows) {
    for (std::size_t c = 0; c < row.size(); ++c) out << (c ? "," : "") << csv_field(row[c]);
    out << "\r\n";
  }
}

nlohmann::ordered_json json_value(const Cell& cell) {
  switch (cell.type) {
    case Cell::Type::null: return nullptr;
    case Cell::Type::integer: return std::stoll(cell.text);
    case Cell::Type::real: return std::stod(cell.text);
    case Cell::Type::text: return cell.text;
  }
  return nullptr;
}

nlohmann::ordered_json json_row(const Table& table, const std::vector<Cell>& row) {
  nlohmann::ordered_json object = nlohmann::ordered_json::object();
  for (std::size_t c = 0; c < table.columns.size(); ++c) object[table.columns[c]] = json_value(row[c]);
  return object;
}

std::string dump(const nlohmann::ordered_json& value, int indent = -1) {
  // Paths are not always valid UTF-8; such bytes become U+FFFD instead of an error.
  return value.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace

OutputFormat parse_output_format(const std::string& name) {
  if (equal_ignoring_ascii_case(name, "table")) return OutputFormat::table;
  if (equal_ignoring_ascii_case(name, "csv")) return OutputFormat::csv;
  if (equal_ignoring_ascii_case(name, "json")) return OutputFormat::json;
  if (equal_ignoring_ascii_case(name, "jsonl")) return OutputFormat::jsonl;
  throw UsageError("--format '" + name + "': expected table, csv, json or jsonl");
}

void show_local_times(std::vector<Table>& results, const UtcOffsetAt& offset_at) {
  for (Table& table : results)
    for (auto& row : table.rows)
      for (Cell& cell : row) {
        const std::string& text = cell.text;
        if (cell.type != Cell::Type::text || text.size() < 20 || text.size() > 30 || text[10] != 'T' ||
            text.back() != 'Z')
          continue;
        const auto ns = parse_iso8601(text);
        if (!ns) continue;
        const std::string local = format_iso8601_at_offset(*ns, offset_at(*ns));
        // The date and time of day, the fraction as it was given, the offset.
        cell.text = local.substr(0, 19) + text.substr(19, text.size() - 20) + local.substr(local.size() - 6);
      }
}

bool is_bytes_column(const std::string& name) {
  return name == "bytes" || name == "size" || (name.size() > 6 && name.compare(name.size() - 6, 6, "_bytes") == 0);
}

KnownBytes known_bytes(const std::vector<Table>& results) {
  bool column = false, empty = false, positive = false;
  for (const Table& table : results)
    for (std::size_t c = 0; c < table.columns.size(); ++c) {
      const std::string& name = table.columns[c];
      // (bytes and size are empty for operations that move none.)
      if (name.size() <= 6 || name.compare(name.size() - 6, 6, "_bytes") != 0) continue;
      column = true;
      for (const auto& row : table.rows) {
        empty = empty || row[c].type == Cell::Type::null;
        positive = positive || (row[c].type == Cell::Type::integer && row[c].text != "0");
      }
    }
  if (!column) return KnownBytes::no_column;
  return !empty ? KnownBytes::all : positive ? KnownBytes::some : KnownBytes::unknown;
}

void forget_bytes(std::vector<Table>& results) {
  for (Table& table : results)
    for (std::size_t c = 0; c < table.columns.size(); ++c)
      if (is_bytes_column(table.columns[c]))
        for (auto& row : table.rows) row[c] = Cell{};
}

std::optional<OutputFormat> output_format_of_file(const std::string& path) {
  const std::size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || path.find_first_of("/\\", dot) != std::string::npos) return std::nullopt;
  const std::string_view extension = std::string_view(path).substr(dot + 1);
  auto is = [&](const char* name) { return equal_ignoring_ascii_case(extension, name); };
  if (is("csv")) return OutputFormat::csv;
  if (is("json")) return OutputFormat::json;
  if (is("jsonl") || is("ndjson")) return OutputFormat::jsonl;
  if (is("txt")) return OutputFormat::table;
  return std::nullopt;
}

std::string shorten_path(const std::string& path, std::size_t max_width) {
  const std::size_t width = display_width(path);
  if (width <= max_width || max_width < 8) return path;
  const std::size_t budget = max_width - 1;  // room left beside the ellipsis
  // Whole components where possible: the last ones, then the first ones.
  std::vector<std::size_t> separators;
  for (std::size_t i = 0; i < path.size(); ++i)
    if (path[i] == '\\' || path[i] == '/') separators.push_back(i);
  std::string tail, head;
  for (auto it = separators.rbegin(); it != separators.rend(); ++it) {
    std::string candidate = path.substr(*it);
    if (!tail.empty() && display_width(candidate) > budget * 3 / 5) break;
    if (display_width(candidate) > budget - 3) break;
    tail = std::move(candidate);
  }
  if (!tail.empty()) {
    for (std::size_t separator : separators) {
      std::string candidate = path.substr(0, separator + 1);
      if (display_width(candidate) + display_width(tail) > budget || separator + 1 > path.size() - tail.size()) break;
      head = std::move(candidate);
    }
    if (!head.empty()) return head + "\u2026" + tail;
  }
  // A name too long for that: cut inside it, keeping its end.
  const std::size_t keep_end = budget / 2, keep_start = budget - keep_end;
  return start_of_width(path, keep_start) + "\u2026" + end_of_width(path, keep_end);
}

void write_results(std::ostream& out, const std::vector<Table>& results, OutputFormat format, bool shorten) {
  const bool sections = results.size() > 1;
  switch (format) {
    case OutputFormat::table:
      for (std::size_t i = 0; i < results.size(); ++i) {
        if (sections) out << (i ? "\n" : "") << "## " << results[i].name << "\n";
        write_table(out, results[i], shorten);
      }
      break;
    case OutputFormat::csv:
      for (std::size_t i = 0; i < results.size(); ++i) {
        if (i) out << "\r\n";
        write_csv(out, results[i]);
      }
      break;
    case OutputFormat::json: {
      auto as_array = [](const Table& table) {
        nlohmann::ordered_json array = nlohmann::ordered_json::array();
        for (const auto& row : table.rows) array.push_back(json_row(table, row));
        return array;
      };
      nlohmann::ordered_json document;
      if (sections) {
        document = nlohmann::ordered_json::object();
        for (const Table& table : results) document[table.name] = as_array(table);
      } else {
        document = results.empty() ? nlohmann::ordered_json::array() : as_array(results.front());
      }
      out << dump(document, 2) << "\n";
      break;
    }
    case OutputFormat::jsonl:
      for (const Table& table : results) {
        for (const auto& row : table.rows) {
          nlohmann::ordered_json object = json_row(table, row);
          if (sections) {
            nlohmann::ordered_json with_section = {{"section", table.name}};
            with_section.update(object);
            object = std::move(with_section);
          }
          out << dump(object) << "\n";
        }
      }
      break;
  }
}

}  // namespace etwaudit
