// etwaudit ship: the events a ClickHouse server does not have yet (see
// cli/shipping.h), with the central tables made or printed on request.

#include <cxxopts.hpp>
#include <iostream>

#include "cli/commands.h"
#include "cli/shipping.h"
#include "core/error.h"
#include "core/human_format.h"
#include "platform/platform.h"
#include "query/clickhouse_schema.h"

namespace etwaudit {

int ship_command(int argc, const char* const* argv) {
  cxxopts::Options options("etwaudit ship",
                           "Send the events a ClickHouse server does not have yet (INSERT over its HTTP interface); "
                           "a cursor in the database moves only after the server said yes, and a repeated batch "
                           "collapses on the event's key. Runs beside a collector. User and password from "
                           "ETWAUDIT_CLICKHOUSE_USER and ETWAUDIT_CLICKHOUSE_PASSWORD, or --credentials-file.");
  // clang-format off
  options.add_options()
    ("d,db", "database to ship from (default: $ETWAUDIT_DB, else audit.db)", cxxopts::value<std::string>(), "FILE")
    ("to", "the server: http://HOST:8123/?database=NAME (https:// too)", cxxopts::value<std::string>(), "URL")
    ("create-tables", "create the database and its events table first (if missing)")
    ("print-tables", "print the CREATE statements for a DBA, and ship nothing")
    ("credentials-file", "a file with the user on its first line and the password on its second",
      cxxopts::value<std::string>(), "FILE")
    ("ca-file", "https: trust the certificate authorities in this PEM file instead of the system's (Linux)",
      cxxopts::value<std::string>(), "FILE")
    ("name", "the cursor's name (default: clickhouse: and the URL)", cxxopts::value<std::string>(), "NAME")
    ("batch", "events per INSERT", cxxopts::value<std::size_t>()->default_value("50000"), "N")
    ("interval", "with --follow, send a smaller batch once its oldest event waited this long: 30s, 5s",
      cxxopts::value<std::string>()->default_value("30s"), "DURATION")
    ("max-rate", "send at most this many event rows a second (0: no bound)",
      cxxopts::value<std::uint64_t>()->default_value("100000"), "N")
    ("compression", "of each INSERT's body: gzip (about 15 times smaller) or none",
      cxxopts::value<std::string>()->default_value("gzip"), "gzip|none")
    ("follow", "keep shipping what the collector writes, retrying after errors, until Ctrl+C or SIGTERM")
    ("forget", "let the destination NAME (a server or an export, as etwaudit status names it) go for good: its "
               "cursor no longer holds --keep back; ships nothing", cxxopts::value<std::string>(), "NAME");
  // clang-format on
  const auto parsed = parse_options(options, argc, argv);
  if (!parsed) return 0;
  const cxxopts::ParseResult& args = *parsed;
  if (args.count("forget")) return forget_destination_command("etwaudit ship", args);
  if (!args.count("to")) throw UsageError("give --to http://HOST:8123/?database=NAME");
  ShipRequest request;
  request.target = parse_clickhouse_url(args["to"].as<std::string>());
  if (args.count("print-tables")) {
    std::cout << clickhouse_create_database(request.target.database) << ";\n\n"
              << clickhouse_create_events(request.target.database) << ";\n\n"
              << clickhouse_create_runs(request.target.database) << ";\n";
    return 0;
  }
  request.db_path = database_argument(args, DatabaseUse::existing);
  request.login =
      clickhouse_credentials(optional_argument(args, "credentials-file"), optional_argument(args, "ca-file"));
  request.batch = args["batch"].as<std::size_t>();
  if (request.batch == 0) throw UsageError("--batch must be at least 1");
  request.follow = args.count("follow") > 0;
  const std::string compression = args["compression"].as<std::string>();
  if (compression != "gzip" && compression != "none")
    throw UsageError("--compression '" + compression + "': expected gzip or none");
  request.gzip = compression == "gzip";
  request.interval = interval_argument(args, "interval");
  request.max_rate = args["max-rate"].as<std::uint64_t>();
  request.name = args.count("name") ? args["name"].as<std::string>() : clickhouse_destination_name(request.target);
  if (args.count("create-tables")) {
    create_clickhouse_tables(request.target, request.login);
    std::cerr << "etwaudit ship: tables ready in " << request.target.base << " database " << request.target.database
              << "\n";
  }
  install_stop_handlers();
  const ShipResult result = ship_events(
      request, [] { return !stop_requested().empty(); },
      [](const std::string& line) { std::cerr << "etwaudit ship: " << line << "\n"; });
  char rate[64];
  std::snprintf(rate, sizeof rate, "%.1f s (%.0f rows/s)", result.seconds,
                result.seconds > 0 ? result.rows / result.seconds : 0.0);
  std::cerr << "etwaudit ship: " << with_thousands(result.rows) << " event row" << (result.rows == 1 ? "" : "s")
            << " and " << with_thousands(result.run_rows) << " run record" << (result.run_rows == 1 ? "" : "s")
            << " to " << request.target.base << " database " << request.target.database << " in " << rate << "; '"
            << request.name << "' has every event up to id " << result.shipped_through << "\n";
  if (result.renamed_rows > 0)
    std::cerr << "etwaudit ship: " << with_thousands(result.renamed_rows)
              << " event rows sent again with a name learned after they went\n";
  return 0;
}

}  // namespace etwaudit
