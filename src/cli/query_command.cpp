// etwaudit query: canned reports and ad-hoc SQL over a database, read-only.

#include <cxxopts.hpp>
#include <iostream>

#include "cli/commands.h"
#include "core/error.h"
#include "query/report.h"
#include "query/table_output.h"
#include "store/database.h"

namespace etwaudit {
namespace {

void list_reports(std::ostream& out) {
  out << "reports:\n";
  for (const Report& report : reports()) out << "  " << report.name << "\t" << report.description << "\n";
}

}  // namespace

int query_command(int argc, const char* const* argv) {
  cxxopts::Options options("etwaudit query",
                           "Answer questions from an etwaudit database: a canned REPORT "
                           "(see --list) or your own --sql. The database is opened read-only.");
  options.set_width(110);
  // clang-format off
  options.add_options()
    ("db", "database to read", cxxopts::value<std::string>()->default_value("audit.db"))
    ("list", "list the reports")
    ("sql", "run this SELECT instead of a report", cxxopts::value<std::string>())
    ("limit", "at most this many rows", cxxopts::value<long>())
    ("report", "report to run", cxxopts::value<std::string>())
    ("h,help", "show this help");
  // clang-format on
  options.parse_positional({"report"});
  options.positional_help("[REPORT]");
  auto args = options.parse(argc, argv);
  if (args.count("help")) {
    std::cout << options.help() << "\n";
    list_reports(std::cout);
    return 0;
  }
  if (args.count("list")) {
    list_reports(std::cout);
    return 0;
  }
  std::string sql;
  if (args.count("sql") && args.count("report")) throw UsageError("give a report or --sql, not both");
  if (args.count("sql")) {
    sql = args["sql"].as<std::string>();
  } else if (args.count("report")) {
    const std::string name = args["report"].as<std::string>();
    const Report* report = find_report(name);
    if (!report) {
      list_reports(std::cerr);
      throw UsageError("unknown report '" + name + "'");
    }
    sql = report->sql;
  } else {
    throw UsageError("name a report (see --list) or give --sql");
  }
  Params params;
  if (args.count("limit")) {
    long limit = args["limit"].as<long>();
    if (limit <= 0) throw UsageError("--limit must be positive");
    params["limit"] = std::to_string(limit);
  }
  auto db = open_read_only(args["db"].as<std::string>());
  try {
    write_table(std::cout, run_sql(*db, sql, params));
  } catch (const SQLite::Exception& e) {
    throw Error(std::string("query failed: ") + e.what());
  }
  return 0;
}

}  // namespace etwaudit
