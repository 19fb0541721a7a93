#pragma once
// Canned reports (sql/reports/*.sql, embedded) and running SQL into a Table.
//
// A report file starts with header comments:
//   -- name: recent
//   -- description: The latest events.
//   -- param: limit  how many rows
// followed by one SELECT whose :named parameters are bound from the options.

#include <SQLiteCpp/Database.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace etwaudit {

struct Report {
  std::string name;
  std::string description;
  std::vector<std::pair<std::string, std::string>> params;  // name, what it means
  std::string sql;
};

// Every embedded report, sorted by name.
const std::vector<Report>& reports();
const Report* find_report(const std::string& name);
// Parses a report file's text; throws Error when the header lacks a name.
Report parse_report(const std::string& file_name, const std::string& text);

struct Table {
  std::vector<std::string> columns;
  // Cells as text; nullopt is SQL NULL. numeric[c] is true when every
  // non-NULL value of column c is a number.
  std::vector<std::vector<std::optional<std::string>>> rows;
  std::vector<bool> numeric;
};

// A value for a named parameter (":limit" is bound from params["limit"]).
using Params = std::map<std::string, std::string>;

// Runs one statement. Parameters the statement names but params lacks are
// bound to NULL. Integers in params are bound as integers.
Table run_sql(SQLite::Database& db, const std::string& sql, const Params& params);

}  // namespace etwaudit
