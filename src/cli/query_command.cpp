// etwaudit query: canned reports and ad-hoc SQL over a database, read-only.

#include <cerrno>
#include <cstring>
#include <cxxopts.hpp>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "core/closest_name.h"
#include "core/error.h"
#include "core/human_format.h"
#include "core/time_format.h"
#include "core/utf8_path.h"
#include "platform/platform.h"
#include "query/filters.h"
#include "query/output.h"
#include "query/report.h"
#include "query/sql_text.h"
#include "store/database.h"

namespace etwaudit {
namespace {

void list_reports(std::ostream& out) {
  std::size_t width = 0;
  for (const Report& report : reports()) width = std::max(width, report.name.size() + report.argument.size() + 1);
  out << "reports:\n";
  for (const Report& report : reports()) {
    std::string usage = report.name;
    if (!report.argument.empty()) {
      std::string upper = report.argument;
      for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      usage += " " + upper;
    }
    out << "  " << usage << std::string(width + 2 - usage.size(), ' ') << report.description << "\n";
  }
}

std::string read_sql_file(const std::string& path) {
  if (path == "-") {  // standard input
    std::ostringstream text;
    text << std::cin.rdbuf();
    return text.str();
  }
  std::ifstream in(utf8_path(path), std::ios::binary);
  if (!in) throw Error("cannot read SQL file '" + path + "': " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::int64_t bucket_ns(const std::string& bucket) {
  if (bucket == "1m") return 60 * ns_per_second;
  if (bucket == "1h") return ns_per_hour;
  if (bucket == "1d") return 24 * ns_per_hour;
  throw UsageError("--bucket '" + bucket + "': expected 1m, 1h or 1d");
}

// A report over time whose raw events were pruned answers from the hourly
// totals (or, if it lists events, cannot go back that far): say so.
void say_what_was_pruned(SQLite::Database& db, const Report& report, const QueryFilters& filters) {
  SQLite::Statement retention(
      db, "SELECT pruned_before, totals_pruned_before FROM retention WHERE pruned_before IS NOT NULL");
  if (!retention.executeStep()) return;
  const std::int64_t pruned_before = retention.getColumn(0).getInt64();
  if (!retention.getColumn(1).isNull() && !report.lists_events &&
      (!filters.since || *filters.since < retention.getColumn(1).getInt64()))
    std::cerr << "etwaudit query: note: the hourly totals per file and process before "
              << format_iso8601(retention.getColumn(1).getInt64())
              << " were dropped to stay under --max-size; timeline and summary without --process or --path still "
                 "count those events\n";
  if (filters.since && *filters.since >= pruned_before) return;
  const std::string when = format_iso8601(pruned_before);
  std::string note;
  if (!report.lists_events)
    note = "events before " + when +
           " were pruned (retention); before then these figures come from hourly totals, "
           "which count whole hours";
  else if (filters.until && *filters.until < pruned_before)
    note = "no events are kept for this range: events before " + when +
           " were pruned (retention); top-files, top-processes, process-activity, timeline and summary still answer "
           "from hourly totals";
  else
    note = "events before " + when + " were pruned (retention): this listing has none older";
  std::cerr << "etwaudit query: note: " << note << "\n";
}

}  // namespace

namespace {

// What query was asked to do.
struct QueryRequest {
  std::string db_path;
  QueryFilters filters;
  Params params;
  std::vector<ReportSection> statements;
  const Report* report = nullptr;  // null for --sql and --sql-file
  OutputFormat format = OutputFormat::table;
  std::optional<std::string> output;  // a file instead of standard output
  bool wide = false;                  // --wide: whole values on a terminal too
  bool local = false;                 // --local: times on the local clock
  // At most this many rows; none: every row. default_limit: the report's
  // own, for a table, which ends with a note when it cut the rows.
  std::optional<std::int64_t> limit;
  bool default_limit = false;
};

// --limit N, 0 or all (no limit: nullopt).
std::optional<std::int64_t> parse_limit(const std::string& text) {
  if (text == "all") return std::nullopt;
  std::int64_t value = 0;
  std::size_t used = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || value < 0 || text[0] == '+' || text[0] == ' ')
    throw UsageError("--limit expects a number or 'all', got '" + text + "'");
  if (value == 0) return std::nullopt;
  return value;
}

// The tables that the filters narrow (query/filters.h): SQL that reads none
// of them would ignore --since, --path and the rest.
constexpr const char* filtered_tables[] = {
    "windowed_events",    "newest_events",    "oldest_events", "windowed_activity", "windowed_ops",
    "windowed_op_totals", "windowed_minutes", "windowed_rows", "v_events",          "bounds",
    "window_segments"};

// The filter options given, as the user spelled them.
std::string given_filters(const cxxopts::ParseResult& args) {
  std::string given;
  for (const char* name : {"since", "until", "process", "path", "exclude-path", "user", "failed", "op"})
    if (args.count(name)) given += std::string(given.empty() ? "--" : ", --") + name;
  return given;
}

// Every option given with --sql takes effect, or is refused here: the
// filters through the tables they narrow (or :since/:until), --bucket
// through :bucket, each --param through its :name.
void check_sql_options(const cxxopts::ParseResult& args, const std::string& sql, const Params& params) {
  const SqlNames names = sql_names(sql);
  if (const std::string given = given_filters(args); !given.empty()) {
    bool filtered = false;
    for (const char* table : filtered_tables) filtered = filtered || names.words.count(table);
    const bool times_only = !args.count("process") && !args.count("path") && !args.count("exclude-path") &&
                            !args.count("user") && !args.count("failed") && !args.count("op");
    if (times_only && (names.parameters.count(":since") || names.parameters.count(":until"))) filtered = true;
    if (!filtered)
      throw UsageError(given +
                       " with --sql narrow v_events and the windowed_* tables (see 'etwaudit query "
                       "--help'), and this SQL reads none of them: read v_events or windowed_events instead "
                       "(e.g. SELECT count(*) FROM v_events), or leave the option out");
  }
  if (args.count("bucket") && !names.parameters.count(":bucket"))
    throw UsageError("--bucket with --sql sets :bucket (the bucket in ns), and this SQL has no :bucket");
  for (const auto& [name, value] : params) {
    std::string lowered = name;
    for (char& c : lowered) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!names.parameters.count(":" + lowered) && !names.parameters.count("@" + lowered) &&
        !names.parameters.count("$" + lowered))
      throw UsageError("--param " + name + "=...: the SQL has no :" + name);
  }
}

// A report takes the options its SQL reads; --param and --bucket elsewhere
// would change nothing.
void check_report_options(const cxxopts::ParseResult& args, const Report& report) {
  if (args.count("param"))
    throw UsageError("--param sets :name values of --sql; report " + report.name +
                     " takes its options (see 'etwaudit query --help')");
  bool has_bucket = false;
  for (const ReportSection& section : report.sections)
    has_bucket = has_bucket || sql_names(section.sql).parameters.count(":bucket");
  if (args.count("bucket") && !has_bucket)
    throw UsageError("--bucket applies to the timeline report, not to " + report.name);
  if (args.count("limit") && !report.takes_limit) {
    std::string limited;
    for (const Report& other : reports())
      if (other.takes_limit) limited += (limited.empty() ? "" : ", ") + other.name;
    throw UsageError("--limit does not apply to " + report.name + ", whose tables are short; it applies to " + limited);
  }
}

cxxopts::Options query_options() {
  cxxopts::Options options("etwaudit query",
                           "Answer questions from an etwaudit database: a canned REPORT (see --list) or your own "
                           "--sql. The database is opened read-only; it can be queried while a collector writes.");
  // clang-format off
  options.add_options()
    ("d,db", "database to read (default: $ETWAUDIT_DB, else audit.db)", cxxopts::value<std::string>(), "FILE")
    ("list", "list the reports")
    ("n,limit", "at most this many rows; 0 or all: every row. Tables of a report show its default (file-history "
              "1000, recent 50, top-* 20) and say what they left out; csv, json, jsonl and --output write every row",
     cxxopts::value<std::string>(), "N|all")
    ("bucket", "timeline bucket: 1m, 1h or 1d", cxxopts::value<std::string>()->default_value("1h"), "1m|1h|1d")
    ("sql", "run this SQL instead of a report", cxxopts::value<std::string>(), "SQL")
    ("sql-file", "run the SQL in this file (-: standard input)", cxxopts::value<std::string>(), "FILE")
    ("param", "bind :name in --sql to value (name=value); repeatable", cxxopts::value<std::vector<std::string>>(), "NAME=VALUE")
    ("f,format", "table, csv, json or jsonl", cxxopts::value<std::string>()->default_value("table"), "FORMAT")
    ("o,output", "write to this file instead of standard output", cxxopts::value<std::string>(), "FILE")
    ("wide", "on a terminal too, show long paths and command lines whole (a table shortens them in the middle "
             "only when it goes to a terminal)")
    ("local", "show times on this machine's clock, with its offset (2026-12-02T11:15:30+01:00); default: UTC")
    ("tables", "list the tables and views (as sqlite3's .tables)")
    ("schema", "print the CREATE statements of every table and view, or of the one named after it "
               "(query --schema v_events), with its indexes")
    ("report", "report to run", cxxopts::value<std::string>())
    ("argument", "the report's argument", cxxopts::value<std::string>());
  // clang-format on
  add_filter_options(options);
  options.parse_positional({"report", "argument"});
  options.positional_help("[REPORT [ARGUMENT]]");
  return options;
}

// The report, or the SQL and its --param values.
void parse_statements(const cxxopts::ParseResult& args, QueryRequest& request) {
  QueryFilters& filters = request.filters;
  Params& params = request.params;
  std::vector<ReportSection>& statements = request.statements;
  const int sources = static_cast<int>(args.count("sql") + args.count("sql-file") + args.count("report"));
  if (sources > 1) throw UsageError("give one of a report, --sql or --sql-file");
  if (sources == 0) throw UsageError("name a report (see --list) or give --sql");

  if (args.count("report")) {
    const std::string name = args["report"].as<std::string>();
    const Report* report = find_report(name);
    if (!report && (name.find(' ') != std::string::npos || name.find(';') != std::string::npos))
      throw UsageError("'" + name + "' is no report; to run SQL, give it with --sql: etwaudit query --sql \"" + name +
                       "\"");
    if (!report) {
      list_reports(std::cerr);
      const auto meant = closest_report_name(name);
      throw UsageError("unknown report '" + name + "'" +
                       (meant ? "; did you mean '" + *meant + "'?" : " (see the list above)"));
    }
    if (!report->argument.empty()) {
      if (!args.count("argument"))
        throw UsageError(report->name + " needs a " + report->argument + " (e.g. 'etwaudit query " + report->name +
                         (report->argument == "path" ? " \"C:\\Users\\*\\notes.txt\"'" : " notepad.exe'") + ")");
      if (report->argument == "path")
        filters.path = path_argument(args["argument"].as<std::string>());
      else
        filters.process = args["argument"].as<std::string>();
    } else if (args.count("argument")) {
      throw UsageError("report " + report->name + " takes no argument ('" + args["argument"].as<std::string>() + "')");
    }
    if (filters.failed_only && !filters.ops.empty() && !report->lists_events)
      throw UsageError("--failed with --op works with the reports that list events (file-history, recent): " +
                       report->name + " adds up failed operations of every kind together");
    check_report_options(args, *report);
    statements = report->sections;
    request.report = report;
  } else {
    if (args.count("argument")) throw UsageError("unexpected argument '" + args["argument"].as<std::string>() + "'");
    const std::string sql =
        args.count("sql") ? args["sql"].as<std::string>() : read_sql_file(args["sql-file"].as<std::string>());
    statements.push_back({"result", sql});
    for (const std::string& assignment : values_as_given(args, "param")) {
      const auto equals = assignment.find('=');
      if (equals == std::string::npos || equals == 0)
        throw UsageError("--param '" + assignment + "': expected name=value");
      params[assignment.substr(0, equals)] = assignment.substr(equals + 1);
    }
    check_sql_options(args, sql, params);
  }
}

// The command line as a request; throws UsageError before the database is opened.
QueryRequest parse_query(const cxxopts::ParseResult& args) {
  QueryRequest request;
  request.filters = filter_arguments(args);
  if (args.count("output")) request.output = args["output"].as<std::string>();
  request.format = parse_output_format(args["format"].as<std::string>());
  if (request.output && !args.count("format"))
    if (const auto implied = output_format_of_file(*request.output)) request.format = *implied;
  request.wide = args.count("wide") > 0;
  request.local = args.count("local") > 0;
  std::optional<std::int64_t> limit;
  if (args.count("limit")) limit = parse_limit(args["limit"].as<std::string>());
  const std::int64_t bucket = bucket_ns(args["bucket"].as<std::string>());

  parse_statements(args, request);
  if (request.format == OutputFormat::csv && request.statements.size() > 1) {
    std::string single;
    for (const Report& report : reports())
      if (report.sections.size() == 1) single += (single.empty() ? "" : ", ") + report.name;
    throw UsageError(request.report->name + " is " + std::to_string(request.statements.size()) +
                     " tables, and CSV holds one: use --format json (an array per table) or jsonl (each row names its "
                     "table), or a report "
                     "of one table (" +
                     single + ")");
  }
  request.db_path = database_argument(args, DatabaseUse::existing);  // once the rest is known good
  if (!request.params.count("bucket")) request.params["bucket"] = std::to_string(bucket);  // --param bucket= wins
  const QueryFilters& filters = request.filters;
  if (filters.path) check_glob_argument(request.report ? "path" : "--path", *filters.path);
  if (filters.process) check_glob_argument("--process", *filters.process);
  if (filters.user) check_glob_argument("--user", *filters.user);
  // Exports and files get every row unless --limit says otherwise; a table
  // on the screen the report's default, with a note when it cut some.
  const bool exported = request.format != OutputFormat::table || request.output;
  if (args.count("limit")) {
    request.limit = limit;
  } else if (request.report && request.report->default_limit && !exported) {
    request.limit = request.report->default_limit;
    request.default_limit = true;
  }
  return request;
}

// "file-history /srv/hr" finds the folder's own row at most: say that the
// files are below it.
void say_if_a_folder(SQLite::Database& db, const std::string& glob) {
  constexpr std::int64_t most = 100'000;
  const std::int64_t below = files_below_folder(db, glob, most + 1);
  if (below == 0) return;
  std::cerr << "etwaudit query: note: '" << glob << "' is a folder with "
            << (below > most ? "more than " + with_thousands(most) : with_thousands(static_cast<std::uint64_t>(below)))
            << (below == 1 ? " recorded file" : " recorded files") << " below it: did you mean '" << below_folder(glob)
            << "'?\n";
}

// "showing 1,000 of 34,289 rows (...)" after a table the report's default
// limit cut: the total from the report's count statement (query/report.h).
void say_what_was_cut(SQLite::Database& db, const QueryRequest& request, const Table& result) {
  const std::size_t shown = result.rows.size();
  RowCount count = count_report_rows(db, *request.report, result, request.filters, request.params);
  if (count.rows <= static_cast<std::int64_t>(shown)) {  // events came in between, or a lower bound
    count.rows = static_cast<std::int64_t>(shown) + 1;
    count.exact = false;
  }
  std::cerr << "showing " << with_thousands(shown) << " of " << (count.exact ? "" : "at least ")
            << with_thousands(static_cast<std::uint64_t>(count.rows)) << " rows (--limit N or --limit all for more)\n";
}

// --tables and --schema [NAME]: what the database holds, as sqlite3's
// .tables and .schema show it.
int describe_database(const cxxopts::ParseResult& args) {
  if (args.count("tables") && args.count("schema")) throw UsageError("give --tables or --schema, not both");
  if (args.count("sql") || args.count("sql-file") || args.count("argument") ||
      (args.count("tables") && args.count("report")))
    throw UsageError(std::string(args.count("tables") ? "--tables" : "--schema") +
                     " lists the database's tables; it runs no report or SQL");
  const std::string path = database_argument(args, DatabaseUse::existing);
  std::string note;
  auto db = open_read_only(path, &note);
  if (!note.empty()) std::cerr << "etwaudit query: note: " << note << "\n";
  const std::string objects =
      "SELECT name, type, tbl_name, sql FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE "
      "'sqlite_%' ORDER BY type = 'view', name";
  if (args.count("tables")) {
    Table tables = run_sql(*db, "SELECT name, type FROM (" + objects + ")", {}, "tables");
    write_results(std::cout, {tables}, parse_output_format(args["format"].as<std::string>()), false);
    return 0;
  }
  std::string name;
  if (args.count("report")) {
    name = args["report"].as<std::string>();
    const Table known = run_sql(*db, "SELECT name FROM (" + objects + ")", {});
    std::vector<std::string> names;
    for (const auto& row : known.rows) names.push_back(row[0].text);
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      const auto meant = closest_name(name, names);
      throw UsageError("no table or view '" + name + "'" + (meant ? "; did you mean '" + *meant + "'?" : "") +
                       " (query --tables lists them)");
    }
  }
  const Table statements =
      run_sql(*db,
              "SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' AND "
              "(:name IS NULL OR tbl_name = :name) ORDER BY type IN ('index', 'trigger'), type = 'view', name",
              name.empty() ? Params{} : Params{{"name", name}});
  for (const auto& row : statements.rows) std::cout << row[0].text << ";\n";
  return 0;
}

int run_query(const QueryRequest& request) {
  std::string note;
  auto db = open_read_only(request.db_path, &note);
  if (!note.empty()) std::cerr << "etwaudit query: note: " << note << "\n";
  prepare_read_connection(*db);
  // A report's LIMIT :limit asks for one row more than it shows, which
  // tells whether the limit cut anything; ad-hoc SQL is stepped no further.
  Params params = request.params;
  std::size_t max_rows = SIZE_MAX;
  if (request.limit && request.report) params["limit"] = std::to_string(*request.limit + 1);
  if (request.limit && !request.report) max_rows = static_cast<std::size_t>(*request.limit);
  std::vector<Table> results = run_statements(*db, request.statements, request.filters, params, max_rows);
  bool cut = false;
  for (Table& table : results) {
    if (!request.limit || table.rows.size() <= static_cast<std::size_t>(*request.limit)) continue;
    table.rows.resize(static_cast<std::size_t>(*request.limit));
    cut = true;
  }
  if (request.local) show_local_times(results, utc_offset_seconds);
  if (const KnownBytes known = request.report ? known_bytes(results) : KnownBytes::no_column;
      known == KnownBytes::some || known == KnownBytes::unknown) {
    const bool all = known == KnownBytes::unknown;
    if (all) forget_bytes(results);
    const bool ranked = request.report->name.rfind("top-", 0) == 0 || request.report->name == "process-activity";
    std::cerr << "etwaudit query: note: " << (all ? "these events have" : "some events have")
              << " no sizes (fanotify records none: collect with eBPF for them): "
              << (all ? "the bytes are left empty" : "their bytes are left empty")
              << (!ranked ? ""
                  : all   ? ", and the rows are ranked by events"
                          : ", and rows with only those rank by events, after the others")
              << "\n";
  }
  if (request.report) say_what_was_pruned(*db, *request.report, request.filters);
  if (request.report && request.filters.path) say_if_a_folder(*db, *request.filters.path);

  std::ofstream file;
  if (request.output) {
    create_owner_only(*request.output);  // it holds what the database holds
    file.open(utf8_path(*request.output), std::ios::binary | std::ios::trunc);
    if (!file) throw Error("cannot write '" + *request.output + "': " + std::strerror(errno));
  }
  std::ostream& out = request.output ? file : std::cout;
  if (!request.output && request.format == OutputFormat::csv) stdout_bytes_as_written();  // CSV ends lines in \r\n
  write_results(out, results, request.format, !request.output && !request.wide && stdout_is_terminal());
  out.flush();
  if (!out) throw Error("writing the results failed");
  if (cut && request.default_limit) say_what_was_cut(*db, request, results.front());
  return 0;
}

}  // namespace

int query_command(int argc, const char* const* argv) {
  cxxopts::Options options = query_options();
  const auto parsed = parse_options(options, argc, argv, [](std::ostream& out) { list_reports(out); });
  if (!parsed) return 0;
  if (parsed->count("list")) {
    list_reports(std::cout);
    return 0;
  }
  if (parsed->count("tables") || parsed->count("schema")) return describe_database(*parsed);
  return run_query(parse_query(*parsed));
}

}  // namespace etwaudit
