// etwaudit report: the database as one self-contained HTML page with charts.

#include <cerrno>
#include <cstring>
#include <cxxopts.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/commands.h"
#include "core/error.h"
#include "core/human_format.h"
#include "core/time_format.h"
#include "core/utf8_path.h"
#include "platform/platform.h"
#include "query/html_report.h"
#include "store/database.h"

namespace etwaudit {
namespace {

struct ReportRequest {
  std::string db_path;
  std::string html_path;
  HtmlReportRequest page;
};

cxxopts::Options report_options() {
  cxxopts::Options options("etwaudit report",
                           "Write the database as one HTML page: activity over time with collector coverage, gaps "
                           "and losses, top files and processes with their drill-downs, unresolved names. The page "
                           "is self-contained (no network), and reads the database read-only, as query does.");
  // clang-format off
  options.add_options()
    ("d,db", "database to read (default: $ETWAUDIT_DB, else audit.db)", cxxopts::value<std::string>(), "FILE")
    ("o,output", "write the page to this file", cxxopts::value<std::string>(), "FILE")
    ("bucket", "timeline bucket: 1m, 1h or 1d (default: chosen by the time the data spans)",
      cxxopts::value<std::string>(), "1m|1h|1d")
    ("top", "files and processes in the bar charts", cxxopts::value<long>()->default_value("15"), "N")
    ("drill-downs", "files and processes with a section of their own", cxxopts::value<long>()->default_value("10"), "N");
  options.add_options(hidden_aliases)("html", "--output's old name", cxxopts::value<std::string>(), "FILE");
  // clang-format on
  add_filter_options(options);
  return options;
}

long positive(const cxxopts::ParseResult& args, const char* option, long most) {
  const long value = args[option].as<long>();
  if (value < 0 || value > most)
    throw UsageError(std::string("--") + option + " must be between 0 and " + std::to_string(most));
  return value;
}

ReportRequest parse_report_command(const cxxopts::ParseResult& args) {
  ReportRequest request;
  request.db_path = database_argument(args, DatabaseUse::existing);
  const auto output = aliased_argument(args, "output", "html");
  if (!output) throw UsageError("give the page's file: --output FILE");
  request.html_path = *output;
  HtmlReportRequest& page = request.page;
  page.database = request.db_path;
  page.filters = filter_arguments(args);
  if (page.filters.path) check_glob_argument("--path", *page.filters.path);
  if (page.filters.process) check_glob_argument("--process", *page.filters.process);
  if (page.filters.user) check_glob_argument("--user", *page.filters.user);
  if (args.count("bucket")) {
    const std::string bucket = args["bucket"].as<std::string>();
    if (bucket == "1m")
      page.bucket = ns_per_minute;
    else if (bucket == "1h")
      page.bucket = ns_per_hour;
    else if (bucket == "1d")
      page.bucket = 24 * ns_per_hour;
    else
      throw UsageError("--bucket '" + bucket + "': expected 1m, 1h or 1d");
  }
  page.top = static_cast<std::size_t>(positive(args, "top", 1000));
  page.drill_downs = static_cast<std::size_t>(positive(args, "drill-downs", 100));
  page.generated_at = now_ns();
  return request;
}

int run_report(const ReportRequest& request) {
  std::string note;
  auto db = open_read_only(request.db_path, &note);
  if (!note.empty()) std::cerr << "etwaudit report: note: " << note << "\n";
  prepare_read_connection(*db);
  const std::string html = build_html_report(*db, request.page);
  // Written to a temporary name and renamed, so that a page being
  // written never replaces a good one with half a page.
  const std::string partial = request.html_path + ".partial";
  {
    create_owner_only(partial);  // the page shows what the database holds
    std::ofstream file(utf8_path(partial), std::ios::binary | std::ios::trunc);
    if (!file) throw Error("cannot write '" + partial + "': " + std::strerror(errno));
    file << html;
    file.flush();
    if (!file) {
      std::error_code ignored;
      std::filesystem::remove(utf8_path(partial), ignored);
      throw Error("writing '" + partial + "' failed: " + std::strerror(errno));
    }
  }
  std::error_code error;
  std::filesystem::rename(utf8_path(partial), utf8_path(request.html_path), error);
  if (error) {  // Windows may refuse to replace a file: take the old one away first
    std::filesystem::remove(utf8_path(request.html_path), error);
    std::filesystem::rename(utf8_path(partial), utf8_path(request.html_path), error);
  }
  if (error) {
    std::filesystem::remove(utf8_path(partial), error);
    throw Error("cannot write '" + request.html_path + "': " + error.message());
  }
  std::cerr << "etwaudit report: wrote " << request.html_path << " (" << human_bytes(html.size()) << ")\n";
  return 0;
}

}  // namespace

int report_command(int argc, const char* const* argv) {
  cxxopts::Options options = report_options();
  const auto parsed = parse_options(options, argc, argv);
  if (!parsed) return 0;
  return run_report(parse_report_command(*parsed));
}

}  // namespace etwaudit
