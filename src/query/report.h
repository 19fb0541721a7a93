#pragma once
// Canned reports (sql/reports/*.sql, embedded) and running SQL into tables.
//
// A report file starts with header comments, then its SELECT statements:
//
//   -- name: file-history
//   -- description: Who touched a path or glob, in time order.
//   -- argument: path      the positional argument sets the --path filter
//   -- limit: 1000         (optional) rows a table shows by default; the SQL
//                          ends with LIMIT :limit, which is always bound
//   -- count: SELECT ...   (with limit) how many rows it has without a limit
//                          (and, as a second column, 0 when that is only a
//                          lower bound): run when a table was cut; or
//   -- count: column NAME  its column NAME holds that count (count(*) OVER ()
//                          before the LIMIT, at no extra cost where the rows
//                          are grouped and sorted anyway): taken off the table
//   -- param: name  what it means
//   -- reads: events      (optional) it lists events, which pruning removes;
//                         other reports add up totals, which survive it
//   -- section: events     (optional; starts a new statement in reports with several)
//   SELECT ...
//
// Every statement is preceded by the filter CTEs of query/filters.h, so it
// can read windowed_events and windowed_activity.

#include <SQLiteCpp/Database.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace etwaudit {

struct ReportSection {
  std::string name;  // shown above its table; the report's name when there is one section
  std::string sql;   // one SELECT (maybe WITH ...), without the filter CTEs
  // A column of the result that counts its rows before the LIMIT ("-- count:
  // column NAME"): moved into Table::total_rows, not shown.
  std::string total_column = {};
};

struct Report {
  std::string name;
  std::string description;
  std::string argument;                                     // "path", "process" or empty
  bool lists_events = false;                                // "-- reads: events": needs the raw events
  bool takes_limit = false;                                 // its SQL has :limit
  std::optional<std::int64_t> default_limit;                // "-- limit: N"
  std::string count_sql;                                    // "-- count: SELECT ..."
  std::vector<std::pair<std::string, std::string>> params;  // name, what it means
  std::vector<ReportSection> sections;
};

// Every embedded report, sorted by name.
const std::vector<Report>& reports();
const Report* find_report(const std::string& name);
// A report-shaped file of sql/ outside sql/reports (status.sql,
// html-report.sql: the SQL of one command), parsed once; throws Error when
// the build lacks it.
const Report& embedded_report(const std::string& file_name);
// The known report name closest to name (for "did you mean").
std::optional<std::string> closest_report_name(const std::string& name);
// Parses a report file's text; throws Error when the header lacks a name or
// the file has no statement.
Report parse_report(const std::string& file_name, const std::string& text);

struct Cell {
  enum class Type { null, integer, real, text };
  Type type = Type::null;  // SQLite's type of the value
  std::string text;        // the value as text (empty for NULL)
};

struct Table {
  std::string name;  // section name
  std::vector<std::string> columns;
  std::vector<std::vector<Cell>> rows;
  std::optional<std::int64_t> total_rows = {};  // from the section's total_column
};

// Values for :named parameters; integers are bound as integers.
using Params = std::map<std::string, std::string>;

// Runs one statement, binding the parameters it names (others stay NULL).
// Throws Error with SQLite's message, or with what the read-only guard refused.
Table run_sql(SQLite::Database& db, const std::string& sql, const Params& params, const std::string& name = {},
              std::size_t max_rows = SIZE_MAX);

struct QueryFilters;

// :limit when a caller binds none: every row.
inline constexpr std::int64_t no_limit = INT64_MAX;

// Runs statements (a report's sections or the user's SQL) with the filter
// CTEs in front of every SELECT/WITH statement and the filter values, plus
// params, bound (:limit, when params lack it, as no_limit; :now as the
// time now, in ns). One Table per
// statement; at most max_rows rows each (the statement is not stepped
// further). db needs prepare_read_connection.
std::vector<Table> run_statements(SQLite::Database& db, const std::vector<ReportSection>& statements,
                                  QueryFilters filters, Params params, std::size_t max_rows = SIZE_MAX);

// How many rows a report has without its limit: what its result's
// total_rows says, or its count statement run with the same filters and
// params. exact is false when rows is a lower bound (listings with --op or
// --failed: see windowed_rows).
struct RowCount {
  std::int64_t rows = 0;
  bool exact = true;
};
RowCount count_report_rows(SQLite::Database& db, const Report& report, const Table& result, QueryFilters filters,
                           Params params);

// Runs one SELECT with the filter CTEs in front, as run_statements does,
// calling row for each result row instead of collecting them (for results of
// many rows that the caller adds up itself).
void for_each_row(SQLite::Database& db, const ReportSection& statement, QueryFilters filters, Params params,
                  const std::function<void(SQLite::Statement&)>& row);

// Puts the filter CTEs (text after WITH) in front of a statement that may
// itself start with WITH.
std::string with_ctes(const std::string& ctes, const std::string& statement);

}  // namespace etwaudit
