#include "query/report.h"

#include <SQLiteCpp/Statement.h>

#include <algorithm>
#include <sstream>

#include "core/error.h"
#include "store/embedded_sql.h"

namespace etwaudit {
namespace {

std::string trim(std::string text) {
  const auto begin = text.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return {};
  const auto end = text.find_last_not_of(" \t\r");
  return text.substr(begin, end - begin + 1);
}

bool is_integer(const std::string& text) {
  std::size_t start = (!text.empty() && text[0] == '-') ? 1 : 0;
  return text.size() > start && text.size() < 19 &&
         std::all_of(text.begin() + start, text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

Report parse_report(const std::string& file_name, const std::string& text) {
  Report report;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("--", 0) != 0) break;
    std::string body = trim(line.substr(2));
    auto colon = body.find(':');
    if (colon == std::string::npos) continue;
    std::string key = trim(body.substr(0, colon));
    std::string value = trim(body.substr(colon + 1));
    if (key == "name") {
      report.name = value;
    } else if (key == "description") {
      report.description = value;
    } else if (key == "param") {
      auto space = value.find_first_of(" \t");
      report.params.emplace_back(value.substr(0, space), space == std::string::npos ? "" : trim(value.substr(space)));
    }
  }
  if (report.name.empty()) throw Error("report " + file_name + " has no '-- name:' header");
  report.sql = text;
  return report;
}

const std::vector<Report>& reports() {
  static const std::vector<Report> list = [] {
    std::vector<Report> result;
    for (const auto& file : embedded_sql_files()) {
      if (file.name.rfind("reports/", 0) == 0)
        result.push_back(parse_report(std::string(file.name), std::string(file.text)));
    }
    std::sort(result.begin(), result.end(), [](const Report& a, const Report& b) { return a.name < b.name; });
    return result;
  }();
  return list;
}

const Report* find_report(const std::string& name) {
  for (const Report& report : reports()) {
    if (report.name == name) return &report;
  }
  return nullptr;
}

Table run_sql(SQLite::Database& db, const std::string& sql, const Params& params) {
  SQLite::Statement statement(db, sql);
  for (const auto& [name, value] : params) {
    const int index = statement.getIndex((":" + name).c_str());
    if (index == 0) continue;  // the statement does not use it
    if (is_integer(value))
      statement.bind(index, static_cast<std::int64_t>(std::stoll(value)));
    else
      statement.bind(index, value);
  }
  Table table;
  for (int c = 0; c < statement.getColumnCount(); ++c) table.columns.push_back(statement.getColumnName(c));
  table.numeric.assign(table.columns.size(), true);
  while (statement.executeStep()) {
    auto& row = table.rows.emplace_back();
    for (int c = 0; c < statement.getColumnCount(); ++c) {
      SQLite::Column column = statement.getColumn(c);
      if (column.isNull()) {
        row.emplace_back();
        continue;
      }
      if (!column.isInteger() && !column.isFloat()) table.numeric[c] = false;
      row.emplace_back(column.getString());
    }
  }
  return table;
}

}  // namespace etwaudit
