// etwaudit ship: the events a ClickHouse server does not have yet, sent over
// its HTTP interface (INSERT ... FORMAT JSONEachRow), with a cursor of their
// own in the database (store/destinations.h) that moves only after the
// server said yes. A repeated batch (the shipper killed between the reply
// and the cursor's commit) collapses in the ReplacingMergeTree on the
// event's key (query/clickhouse_schema.h); doc/fleet.md has the tables and
// the questions a fleet asks of them.
//
// Errors: the server's reply names its error (Code: N). One that retrying
// cannot cure (an unknown table or column, a value it cannot parse, a
// refused login) stops with that message and the cursor where it was; any
// other (no answer, too many parts, a timeout) is retried with --follow,
// after a wait that doubles up to a minute with some jitter.

#include <chrono>
#include <cstdlib>
#include <cxxopts.hpp>
#include <fstream>
#include <iostream>
#include <random>
#include <regex>
#include <thread>

#include "cli/commands.h"
#include "core/error.h"
#include "core/human_format.h"
#include "core/time_format.h"
#include "core/utf8_path.h"
#include "platform/http.h"
#include "platform/platform.h"
#include "query/clickhouse_schema.h"
#include "query/event_feed.h"
#include "query/event_lines.h"
#include "store/database.h"
#include "store/destinations.h"

namespace etwaudit {
namespace {

struct ClickHouseTarget {
  std::string base;      // scheme://host:port/ (no query, no credentials)
  std::string database;  // from ?database=, or etwaudit
};

ClickHouseTarget parse_target(const std::string& url) {
  const auto scheme_end = url.find("://");
  const std::string scheme = scheme_end == std::string::npos ? "" : url.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https")
    throw UsageError("--to '" + url + "': expected http://HOST:8123/?database=NAME (or https://)");
  const auto authority_end = url.find_first_of("/?", scheme_end + 3);
  const std::string authority = url.substr(scheme_end + 3, authority_end - scheme_end - 3);
  if (authority.find('@') != std::string::npos)
    throw UsageError(
        "--to: no user or password in the URL ('ps' shows it to everyone); give them in "
        "ETWAUDIT_CLICKHOUSE_USER and ETWAUDIT_CLICKHOUSE_PASSWORD or --credentials-file FILE");
  if (authority.empty()) throw UsageError("--to '" + url + "': no host");
  ClickHouseTarget target;
  target.base = scheme + "://" + authority + "/";
  target.database = "etwaudit";
  if (const auto query = url.find('?'); query != std::string::npos) {
    static const std::regex database_parameter("(^|&)database=([A-Za-z0-9_]+)(&|$)");
    std::smatch match;
    const std::string parameters = url.substr(query + 1);
    if (std::regex_search(parameters, match, database_parameter)) target.database = match[2];
  }
  return target;
}

HttpCredentials credentials(const cxxopts::ParseResult& args) {
  HttpCredentials credentials;
  if (args.count("credentials-file")) {
    const std::string file = args["credentials-file"].as<std::string>();
    std::ifstream in(utf8_path(file));
    if (!in) throw Error("cannot read --credentials-file '" + file + "'");
    std::getline(in, credentials.user);
    std::getline(in, credentials.password);
    for (std::string* text : {&credentials.user, &credentials.password})
      while (!text->empty() && (text->back() == '\r' || text->back() == '\n')) text->pop_back();
    return credentials;
  }
  if (const char* user = std::getenv("ETWAUDIT_CLICKHOUSE_USER")) credentials.user = user;
  if (const char* password = std::getenv("ETWAUDIT_CLICKHOUSE_PASSWORD")) credentials.password = password;
  return credentials;
}

// The server's error code in a reply ("Code: 60, e.displayText() = ..."), or -1.
int error_code(const std::string& body) {
  static const std::regex code("Code: ([0-9]+)");
  std::smatch match;
  return std::regex_search(body, match, code) ? std::stoi(match[1]) : -1;
}

// Errors that another try cannot cure: the table or a column is not there,
// the data or the statement is refused, the login is refused.
bool permanent(int code) {
  switch (code) {
    case 16:   // no such column in table
    case 26:   // cannot parse quoted string
    case 27:   // cannot parse input
    case 36:   // bad arguments
    case 47:   // unknown identifier
    case 53:   // type mismatch
    case 60:   // unknown table
    case 62:   // syntax error
    case 81:   // unknown database
    case 117:  // unknown field in the data
    case 192:  // unknown user
    case 193:  // wrong password
    case 497:  // not enough privileges
    case 516:  // authentication failed
      return true;
    default: return false;
  }
}

std::string first_line(const std::string& text) {
  const auto end = text.find('\n');
  return text.substr(0, std::min<std::size_t>(end, 400));
}

// One statement over HTTP; Error when the server does not say yes.
void run_statement(const ClickHouseTarget& target, const HttpCredentials& login, const std::string& statement) {
  const HttpResponse reply = http_post(target.base, statement, login, std::chrono::seconds(60));
  if (!reply.error.empty()) throw Error("cannot reach ClickHouse at " + target.base + ": " + reply.error);
  if (reply.status != 200)
    throw Error("ClickHouse at " + target.base + " refused '" + first_line(statement) + "' (HTTP " +
                std::to_string(reply.status) + "): " + first_line(reply.body));
}

int run_ship(const cxxopts::ParseResult& args) {
  if (!args.count("to")) throw UsageError("give --to http://HOST:8123/?database=NAME");
  const std::string url = args["to"].as<std::string>();
  const ClickHouseTarget target = parse_target(url);
  if (args.count("print-tables")) {
    std::cout << clickhouse_create_database(target.database) << ";\n\n"
              << clickhouse_create_events(target.database) << ";\n";
    return 0;
  }
  if (!http_available()) throw Error("this build of etwaudit has no HTTP (built without libcurl): it cannot ship");
  const HttpCredentials login = credentials(args);
  const std::size_t batch = args["batch"].as<std::size_t>();
  if (batch == 0) throw UsageError("--batch must be at least 1");
  const bool follow = args.count("follow") > 0;
  const std::string name = args.count("name") ? args["name"].as<std::string>()
                                              : "clickhouse:" + target.base + "?database=" + target.database;
  if (args.count("create-tables")) {
    run_statement(target, login, clickhouse_create_database(target.database));
    run_statement(target, login, clickhouse_create_events(target.database));
    std::cerr << "etwaudit ship: tables ready in " << target.base << " database " << target.database << "\n";
  }

  auto db = open_for_maintenance(args["db"].as<std::string>());
  const EventOrigin origin{machine_id(), host_name(), database_uuid(*db)};
  DestinationState destination = open_destination(*db, name);
  const std::string insert = target.base + "?database=" + url_encode(target.database) +
                             "&query=" + url_encode("INSERT INTO events FORMAT JSONEachRow");
  install_stop_handlers();

  EventFeed feed(*db);
  std::uint64_t rows = 0;
  std::string lines;
  std::chrono::seconds wait{1};
  std::mt19937 jitter(std::random_device{}());
  const auto started = std::chrono::steady_clock::now();
  while (stop_requested().empty()) {
    feed.forget_names();
    const std::vector<FeedEvent> events = feed.next(destination.shipped_through, batch);
    if (events.empty()) {
      if (!follow) break;
      std::this_thread::sleep_for(std::chrono::seconds(1));
      continue;
    }
    lines.clear();
    for (const FeedEvent& event : events) append_event_line(lines, event, feed.process(event.process_id), origin);
    const HttpResponse reply = http_post(insert, lines, login, std::chrono::seconds(300));
    if (reply.error.empty() && reply.status == 200) {
      destination.shipped_through = events.back().event_id;
      advance_destination(*db, name, destination.shipped_through, events.size());
      rows += events.size();
      wait = std::chrono::seconds(1);
      continue;
    }
    const int code = reply.error.empty() ? error_code(reply.body) : -1;
    const std::string why = !reply.error.empty()
                                ? "no answer: " + reply.error
                                : "HTTP " + std::to_string(reply.status) + ": " + first_line(reply.body);
    record_destination_error(*db, name, why);
    if (permanent(code))
      throw Error("ClickHouse refused the events and will again (" + why + "); the cursor stays at id " +
                  std::to_string(destination.shipped_through) + ": fix the table or the login, then ship again");
    if (!follow) throw Error("shipping failed (" + why + "); the cursor stays: ship again later, or use --follow");
    // Retry after a wait that doubles, with jitter, so a fleet does not come back all at once.
    const auto pause =
        std::chrono::milliseconds(wait.count() * 1000 * std::uniform_int_distribution<int>(80, 120)(jitter) / 100);
    std::cerr << "etwaudit ship: " << why << "; trying again in " << pause.count() / 1000.0 << " s\n";
    for (auto until = std::chrono::steady_clock::now() + pause;
         std::chrono::steady_clock::now() < until && stop_requested().empty();)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    wait = std::min<std::chrono::seconds>(wait * 2, std::chrono::seconds(60));
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  char rate[64];
  std::snprintf(rate, sizeof rate, "%.1f s (%.0f rows/s)", seconds, seconds > 0 ? rows / seconds : 0.0);
  std::cerr << "etwaudit ship: " << with_thousands(rows) << " event row" << (rows == 1 ? "" : "s") << " to "
            << target.base << " database " << target.database << " in " << rate << "; '" << name
            << "' has every event up to id " << destination.shipped_through << "\n";
  return 0;
}

}  // namespace

int ship_command(int argc, const char* const* argv) {
  cxxopts::Options options("etwaudit ship",
                           "Send the events a ClickHouse server does not have yet (INSERT over its HTTP interface); "
                           "a cursor in the database moves only after the server said yes, and a repeated batch "
                           "collapses on the event's key. Runs beside a collector. User and password from "
                           "ETWAUDIT_CLICKHOUSE_USER and ETWAUDIT_CLICKHOUSE_PASSWORD, or --credentials-file.");
  // clang-format off
  options.add_options()
    ("db", "database to ship from", cxxopts::value<std::string>()->default_value("audit.db"))
    ("to", "the server: http://HOST:8123/?database=NAME (https:// too)", cxxopts::value<std::string>())
    ("create-tables", "create the database and its events table first (if missing)")
    ("print-tables", "print the CREATE statements for a DBA, and ship nothing")
    ("credentials-file", "a file with the user on its first line and the password on its second",
      cxxopts::value<std::string>())
    ("name", "the cursor's name (default: clickhouse: and the URL)", cxxopts::value<std::string>())
    ("batch", "events per INSERT", cxxopts::value<std::size_t>()->default_value("50000"))
    ("follow", "keep shipping what the collector writes, retrying after errors, until Ctrl+C or SIGTERM");
  // clang-format on
  const auto parsed = parse_options(options, argc, argv);
  if (!parsed) return 0;
  return run_ship(*parsed);
}

}  // namespace etwaudit
