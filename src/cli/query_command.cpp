// etwaudit query: canned reports and ad-hoc SQL over a database, read-only.

#include <cerrno>
#include <cstring>
#include <cxxopts.hpp>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "core/error.h"
#include "core/time_format.h"
#include "query/filters.h"
#include "query/output.h"
#include "query/report.h"
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
  std::ifstream in(path, std::ios::binary);
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
};

cxxopts::Options query_options() {
  cxxopts::Options options("etwaudit query",
                           "Answer questions from an etwaudit database: a canned REPORT (see --list) or your own "
                           "--sql. The database is opened read-only; it can be queried while a collector writes.");
  // clang-format off
  options.add_options()
    ("db", "database to read", cxxopts::value<std::string>()->default_value("audit.db"))
    ("list", "list the reports")
    ("limit", "at most this many rows", cxxopts::value<long>())
    ("bucket", "timeline bucket: 1m, 1h or 1d", cxxopts::value<std::string>()->default_value("1h"))
    ("sql", "run this SQL instead of a report", cxxopts::value<std::string>())
    ("sql-file", "run the SQL in this file", cxxopts::value<std::string>())
    ("param", "bind :name in --sql to value (name=value); repeatable", cxxopts::value<std::vector<std::string>>())
    ("format", "table, csv, json or jsonl", cxxopts::value<std::string>()->default_value("table"))
    ("output", "write to this file instead of standard output", cxxopts::value<std::string>())
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
    if (!report) {
      list_reports(std::cerr);
      throw UsageError("unknown report '" + name + "'; did you mean '" + closest_report_name(name) + "'?");
    }
    if (!report->argument.empty()) {
      if (!args.count("argument"))
        throw UsageError(report->name + " needs a " + report->argument + " (e.g. 'etwaudit query " + report->name +
                         (report->argument == "path" ? " \"C:\\Users\\*\\notes.txt\"'" : " notepad.exe'") + ")");
      (report->argument == "path" ? filters.path : filters.process) = args["argument"].as<std::string>();
    } else if (args.count("argument")) {
      throw UsageError("report " + report->name + " takes no argument ('" + args["argument"].as<std::string>() + "')");
    }
    if (filters.failed_only && !filters.ops.empty() && !report->lists_events)
      throw UsageError("--failed with --op works with the reports that list events (file-history, recent): " +
                       report->name + " adds up failed operations of every kind together");
    statements = report->sections;
    request.report = report;
  } else {
    if (args.count("argument")) throw UsageError("unexpected argument '" + args["argument"].as<std::string>() + "'");
    const std::string sql =
        args.count("sql") ? args["sql"].as<std::string>() : read_sql_file(args["sql-file"].as<std::string>());
    statements.push_back({"result", sql});
    // Each --param as given: the parsed list would be cut at commas.
    for (const cxxopts::KeyValue& argument : args.arguments()) {
      if (argument.key() != "param") continue;
      const std::string& assignment = argument.value();
      const auto equals = assignment.find('=');
      if (equals == std::string::npos || equals == 0)
        throw UsageError("--param '" + assignment + "': expected name=value");
      params[assignment.substr(0, equals)] = assignment.substr(equals + 1);
    }
  }
}

// The command line as a request; throws UsageError before the database is opened.
QueryRequest parse_query(const cxxopts::ParseResult& args) {
  QueryRequest request;
  request.db_path = args["db"].as<std::string>();
  request.filters = filter_arguments(args);
  request.format = parse_output_format(args["format"].as<std::string>());
  if (args.count("output")) request.output = args["output"].as<std::string>();
  Params& params = request.params;
  std::optional<long> limit;
  if (args.count("limit")) {
    limit = args["limit"].as<long>();
    if (*limit <= 0) throw UsageError("--limit must be positive");
  }
  params["bucket"] = std::to_string(bucket_ns(args["bucket"].as<std::string>()));

  parse_statements(args, request);
  const QueryFilters& filters = request.filters;
  if (filters.path) check_glob_argument(request.report ? "path" : "--path", *filters.path);
  if (filters.process) check_glob_argument("--process", *filters.process);
  if (filters.user) check_glob_argument("--user", *filters.user);
  if (limit) params["limit"] = std::to_string(*limit);
  return request;
}

int run_query(const QueryRequest& request) {
  auto db = open_read_only(request.db_path);
  prepare_read_connection(*db);
  const std::vector<Table> results = run_statements(*db, request.statements, request.filters, request.params);
  if (request.report) say_what_was_pruned(*db, *request.report, request.filters);

  std::ofstream file;
  if (request.output) {
    file.open(*request.output, std::ios::binary | std::ios::trunc);
    if (!file) throw Error("cannot write '" + *request.output + "': " + std::strerror(errno));
  }
  std::ostream& out = request.output ? file : std::cout;
  write_results(out, results, request.format);
  out.flush();
  if (!out) throw Error("writing the results failed");
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
  return run_query(parse_query(*parsed));
}

}  // namespace etwaudit
