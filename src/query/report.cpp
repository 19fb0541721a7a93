#include "query/report.h"

#include <SQLiteCpp/Statement.h>
#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>

#include "core/closest_name.h"
#include "core/error.h"
#include "core/time_format.h"
#include "query/filters.h"
#include "query/sql_text.h"
#include "store/embedded_sql.h"

namespace etwaudit {
namespace {

std::string trim(const std::string& text) {
  const auto begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return {};
  const auto end = text.find_last_not_of(" \t\r\n;");
  return text.substr(begin, end - begin + 1);
}

// The value of text when all of it is a 64-bit integer.
std::optional<std::int64_t> as_integer(const std::string& text) {
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [stop, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || stop != end || text.empty() || text[0] == '+') return std::nullopt;
  return value;
}

// The SQL after the first statement, from tail on, when it holds more than
// spaces, semicolons and comments (up to 60 bytes of it); empty otherwise.
std::string another_statement(const char* tail) {
  const char* p = tail;
  while (*p) {
    if (std::isspace(static_cast<unsigned char>(*p)) || *p == ';') {
      ++p;
    } else if (p[0] == '-' && p[1] == '-') {
      while (*p && *p != '\n') ++p;
    } else if (p[0] == '/' && p[1] == '*') {
      const char* end = std::strstr(p + 2, "*/");
      if (!end) break;  // SQLite takes an unclosed comment to run to the end
      p = end + 2;
    } else {
      const std::string rest(p);
      return rest.size() > 60 ? rest.substr(0, 57) + "..." : rest;
    }
  }
  return {};
}

}  // namespace

Report parse_report(const std::string& file_name, const std::string& text) {
  Report report;
  std::istringstream lines(text);
  std::string line;
  bool in_header = true;
  std::string total_column;
  ReportSection current;
  auto finish_section = [&] {
    current.sql = trim(current.sql);
    if (!current.sql.empty()) report.sections.push_back(current);
    current = ReportSection{};
  };
  while (std::getline(lines, line)) {
    if (line.rfind("--", 0) == 0) {
      std::string body = trim(line.substr(2));
      auto colon = body.find(':');
      std::string key = colon == std::string::npos ? "" : trim(body.substr(0, colon));
      std::string value = colon == std::string::npos ? "" : trim(body.substr(colon + 1));
      if (key == "section") {
        finish_section();
        current.name = value;
        in_header = false;
        continue;
      }
      if (in_header) {
        if (key == "name") report.name = value;
        if (key == "description") report.description = value;
        if (key == "argument") report.argument = value.substr(0, value.find_first_of(" \t"));
        if (key == "reads") report.lists_events = value == "events";
        if (key == "limit") {
          const std::string number = value.substr(0, value.find_first_of(" \t"));
          report.default_limit = as_integer(number);
          if (!report.default_limit || *report.default_limit <= 0)
            throw Error("report " + file_name + ": '-- limit:' needs a positive number, not '" + number + "'");
        }
        if (key == "count") {
          if (value.rfind("column ", 0) == 0)
            total_column = trim(value.substr(7));
          else
            report.count_sql = value;
        }
        if (key == "param") {
          auto space = value.find_first_of(" \t");
          report.params.emplace_back(value.substr(0, space),
                                     space == std::string::npos ? "" : trim(value.substr(space)));
        }
        continue;
      }
    }
    in_header = false;
    current.sql += line + "\n";
  }
  finish_section();
  if (report.name.empty()) throw Error("report " + file_name + " has no '-- name:' header");
  if (report.sections.empty()) throw Error("report " + file_name + " has no statement");
  if (report.sections.size() == 1 && report.sections[0].name.empty()) report.sections[0].name = report.name;
  for (ReportSection& section : report.sections) {
    if (section.sql.find(":limit") != std::string::npos) report.takes_limit = true;
    section.total_column = total_column;
  }
  if (report.default_limit && (!report.takes_limit || (report.count_sql.empty() && total_column.empty())))
    throw Error("report " + file_name + ": '-- limit:' needs LIMIT :limit in the SQL and a '-- count:' header");
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

const Report& embedded_report(const std::string& file_name) {
  static std::mutex guard;
  static std::map<std::string, Report> parsed;
  const std::lock_guard<std::mutex> lock(guard);
  if (const auto found = parsed.find(file_name); found != parsed.end()) return found->second;
  for (const auto& file : embedded_sql_files())
    if (file.name == file_name)
      return parsed.emplace(file_name, parse_report(file_name, std::string(file.text))).first->second;
  throw Error(file_name + " is missing from this build");
}

std::optional<std::string> closest_report_name(const std::string& name) {
  std::vector<std::string> names;
  for (const Report& report : reports()) names.push_back(report.name);
  return closest_name(name, names);
}

namespace {

bool starts_a_query(const std::string& sql) {
  const std::string word = sql_word_at(sql, first_sql_word(sql));
  return word == "SELECT" || word == "WITH" || word == "VALUES";
}

}  // namespace

std::string with_ctes(const std::string& ctes, const std::string& statement) {
  // Comments before the statement stay where they are; the filter CTEs go
  // after WITH [RECURSIVE] (RECURSIVE is said of the whole clause).
  const std::size_t start = first_sql_word(statement);
  if (sql_word_at(statement, start) != "WITH") return "WITH " + ctes + "\n" + statement;
  const std::size_t after = start + 4;
  const std::size_t next = first_sql_word(statement, after);
  if (sql_word_at(statement, next) == "RECURSIVE") {
    return statement.substr(0, next + 9) + " " + ctes + ",\n" + statement.substr(next + 9);
  }
  return statement.substr(0, after) + " " + ctes + ",\n" + statement.substr(after);
}

namespace {
// Moves the column name (the rows before the LIMIT, in every row) into
// table.total_rows; throws Error when the result lacks it.
void take_total_column(Table& table, const std::string& name) {
  const auto column = std::find(table.columns.begin(), table.columns.end(), name);
  if (column == table.columns.end()) throw Error(table.name + " has no column " + name + " to count its rows");
  const auto index = static_cast<std::size_t>(column - table.columns.begin());
  table.columns.erase(column);
  table.total_rows = 0;
  for (auto& row : table.rows) {
    if (auto value = as_integer(row[index].text)) table.total_rows = *value;
    row.erase(row.begin() + static_cast<long>(index));
  }
}

// The filter CTEs for filters, their parameters added to params.
std::string prepare_filters(SQLite::Database& db, QueryFilters& filters, Params& params) {
  try {
    judge_path_breadth(db, filters);
    judge_sizes(db, filters);
  } catch (const SQLite::Exception& e) {
    throw Error(std::string("query failed: ") + e.what());
  }
  add_filter_params(filters, params);
  return filter_ctes(filters);
}
}  // namespace

std::vector<Table> run_statements(SQLite::Database& db, const std::vector<ReportSection>& statements,
                                  QueryFilters filters, Params params, std::size_t max_rows) {
  if (!params.count("limit")) params["limit"] = std::to_string(no_limit);
  if (!params.count("now")) params["now"] = std::to_string(now_ns());  // where a window without --until ends
  const std::string ctes = prepare_filters(db, filters, params);
  std::vector<Table> results;
  for (const ReportSection& statement : statements) {
    const std::string sql = starts_a_query(statement.sql) ? with_ctes(ctes, statement.sql) : statement.sql;
    Table& table = results.emplace_back(run_sql(db, sql, params, statement.name, max_rows));
    if (!statement.total_column.empty()) take_total_column(table, statement.total_column);
  }
  return results;
}

RowCount count_report_rows(SQLite::Database& db, const Report& report, const Table& result, QueryFilters filters,
                           Params params) {
  if (result.total_rows) return RowCount{*result.total_rows, true};
  if (report.count_sql.empty()) throw Error("report " + report.name + " cannot count its rows");
  const Table counted =
      run_statements(db, {{"count", report.count_sql}}, std::move(filters), std::move(params)).front();
  RowCount count;
  if (counted.rows.empty() || counted.rows[0].empty()) return count;
  count.rows = as_integer(counted.rows[0][0].text).value_or(0);
  if (counted.rows[0].size() > 1) count.exact = counted.rows[0][1].text != "0";
  return count;
}

namespace {
// Checks sql, prepares it, binds the parameters it names and calls row for
// each result row; SQLite's errors and the guard's refusals become Error.
void each_row(SQLite::Database& db, const std::string& sql, const Params& params,
              const std::function<void(SQLite::Statement&)>& row) {
  take_refusal();  // forget a refusal of an earlier statement
  // SQLite reads SQL up to a NUL byte and prepares only its first statement:
  // whatever follows would silently not run, so it is refused instead.
  if (const auto nul = sql.find('\0'); nul != std::string::npos)
    throw Error("the SQL holds a NUL byte (at byte " + std::to_string(nul) + "), which would end it there");
  {
    sqlite3_stmt* first = nullptr;
    const char* tail = nullptr;
    const int status = sqlite3_prepare_v2(db.getHandle(), sql.c_str(), static_cast<int>(sql.size()) + 1, &first, &tail);
    sqlite3_finalize(first);
    take_refusal();  // reported again below, when the statement is prepared for running
    // Nothing to run (SQLiteCpp would throw from a noexcept function on it).
    if (status == SQLITE_OK && !first) throw Error("the SQL holds no statement, only spaces or comments");
    if (status == SQLITE_OK && tail) {
      if (const std::string rest = another_statement(tail); !rest.empty())
        throw Error("one statement at a time, please: found '" + rest + "' after the first one");
    }
  }
  try {
    SQLite::Statement statement(db, sql);
    for (const auto& [param, value] : params) {
      const int index = statement.getIndex((":" + param).c_str());
      if (index == 0) continue;  // the statement does not use it
      if (auto number = as_integer(value))
        statement.bind(index, *number);
      else
        statement.bind(index, value);
    }
    row(statement);
  } catch (const SQLite::Exception& e) {
    if (std::string refusal = take_refusal(); !refusal.empty())
      throw Error("queries may only read the database: " + refusal);
    throw Error(std::string("query failed: ") + e.what());
  }
}
}  // namespace

Table run_sql(SQLite::Database& db, const std::string& sql, const Params& params, const std::string& name,
              std::size_t max_rows) {
  Table table;
  table.name = name;
  each_row(db, sql, params, [&](SQLite::Statement& statement) {
    for (int c = 0; c < statement.getColumnCount(); ++c) table.columns.push_back(statement.getColumnName(c));
    while (table.rows.size() < max_rows && statement.executeStep()) {
      auto& row = table.rows.emplace_back();
      row.reserve(table.columns.size());
      for (int c = 0; c < statement.getColumnCount(); ++c) {
        SQLite::Column column = statement.getColumn(c);
        Cell cell;
        if (column.isInteger())
          cell.type = Cell::Type::integer;
        else if (column.isFloat())
          cell.type = Cell::Type::real;
        else if (!column.isNull())
          cell.type = Cell::Type::text;
        if (!column.isNull()) cell.text = column.getString();
        row.push_back(std::move(cell));
      }
    }
  });
  return table;
}

void for_each_row(SQLite::Database& db, const ReportSection& statement, QueryFilters filters, Params params,
                  const std::function<void(SQLite::Statement&)>& row) {
  const std::string ctes = prepare_filters(db, filters, params);
  each_row(db, with_ctes(ctes, statement.sql), params, [&](SQLite::Statement& prepared) {
    while (prepared.executeStep()) row(prepared);
  });
}

}  // namespace etwaudit
