#include "query/table_output.h"

#include <algorithm>
#include <ostream>

namespace etwaudit {
namespace {

// Display width of UTF-8 text: counts code points, not bytes.
std::size_t display_width(const std::string& text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

void pad(std::ostream& out, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) out << ' ';
}

}  // namespace

void write_table(std::ostream& out, const Table& table) {
  const std::size_t columns = table.columns.size();
  std::vector<std::size_t> widths(columns);
  for (std::size_t c = 0; c < columns; ++c) widths[c] = display_width(table.columns[c]);
  for (const auto& row : table.rows) {
    for (std::size_t c = 0; c < columns; ++c) widths[c] = std::max(widths[c], display_width(row[c].value_or("")));
  }
  auto write_cell = [&](std::size_t c, const std::string& text) {
    const std::size_t gap = widths[c] - display_width(text);
    const bool last = c + 1 == columns;
    if (table.numeric[c]) {
      pad(out, gap);
      out << text;
    } else {
      out << text;
      if (!last) pad(out, gap);
    }
    if (!last) out << "  ";
  };
  for (std::size_t c = 0; c < columns; ++c) write_cell(c, table.columns[c]);
  out << '\n';
  for (std::size_t c = 0; c < columns; ++c) {
    out << std::string(widths[c], '-');
    if (c + 1 < columns) out << "  ";
  }
  out << '\n';
  for (const auto& row : table.rows) {
    for (std::size_t c = 0; c < columns; ++c) write_cell(c, row[c].value_or(""));
    out << '\n';
  }
  out << "(" << table.rows.size() << (table.rows.size() == 1 ? " row)\n" : " rows)\n");
}

}  // namespace etwaudit
