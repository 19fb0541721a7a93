#include "cli/shipping.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <random>
#include <regex>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/utf8_path.h"
#include "platform/platform.h"
#include "query/clickhouse_schema.h"
#include "query/event_feed.h"
#include "query/event_lines.h"
#include "query/late_names.h"
#include "query/run_lines.h"
#include "store/database.h"
#include "store/destinations.h"

namespace etwaudit {
namespace {

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

// Why a request got no answer, with what to do when the server's
// certificate was not trusted.
std::string no_answer(const std::string& error) {
  if (error.find("certificate") == std::string::npos) return error;
#ifdef _WIN32
  return error + " (a private CA: add it to the machine's certificate store)";
#else
  return error + " (a private CA: --ca-file FILE, or --ship-ca-file with collect)";
#endif
}

// One statement over HTTP; Error when the server does not say yes.
void run_statement(const ClickHouseTarget& target, const HttpCredentials& login, const std::string& statement) {
  const HttpResponse reply = http_post(target.base, statement, login, std::chrono::seconds(60));
  if (!reply.error.empty()) throw Error("cannot reach ClickHouse at " + target.base + ": " + no_answer(reply.error));
  if (reply.status != 200)
    throw Error("ClickHouse at " + target.base + " refused '" + first_line(statement) + "' (HTTP " +
                std::to_string(reply.status) + "): " + first_line(reply.body));
}

}  // namespace

ClickHouseTarget parse_clickhouse_url(const std::string& url) {
  const auto scheme_end = url.find("://");
  const std::string scheme = scheme_end == std::string::npos ? "" : url.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https")
    throw UsageError("'" + url + "': expected http://HOST:8123/?database=NAME (or https://)");
  const auto authority_end = url.find_first_of("/?", scheme_end + 3);
  const std::string authority = url.substr(scheme_end + 3, authority_end - scheme_end - 3);
  if (authority.find('@') != std::string::npos)
    throw UsageError(
        "no user or password in the URL ('ps' shows it to everyone); give them in "
        "ETWAUDIT_CLICKHOUSE_USER and ETWAUDIT_CLICKHOUSE_PASSWORD or --credentials-file FILE");
  if (authority.empty()) throw UsageError("'" + url + "': no host");
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

HttpCredentials clickhouse_credentials(const std::optional<std::string>& file,
                                       const std::optional<std::string>& ca_file) {
  HttpCredentials credentials;
  if (ca_file) {
#ifdef _WIN32
    throw UsageError(
        "a CA file: on Windows, etwaudit trusts the machine's certificate store; add the CA there "
        "(certutil -addstore Root '" +
        *ca_file + "')");
#else
    if (!std::ifstream(utf8_path(*ca_file))) throw Error("cannot read the CA file '" + *ca_file + "'");
    credentials.ca_file = *ca_file;
#endif
  }
  if (file) {
    std::ifstream in(utf8_path(*file));
    if (!in) throw Error("cannot read the credentials file '" + *file + "'");
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

void create_clickhouse_tables(const ClickHouseTarget& target, const HttpCredentials& login) {
  run_statement(target, login, clickhouse_create_database(target.database));
  run_statement(target, login, clickhouse_create_events(target.database));
  run_statement(target, login, clickhouse_create_runs(target.database));
}

std::string clickhouse_destination_name(const ClickHouseTarget& target) {
  return "clickhouse:" + target.base + "?database=" + target.database;
}

ShipResult ship_events(const ShipRequest& request, const std::function<bool()>& stop,
                       const std::function<void(const std::string&)>& note) {
  using Clock = std::chrono::steady_clock;
  if (!http_available())
    throw Error("this build of etwaudit has no HTTP (built without libcurl or zlib): it cannot ship");
  auto db = open_for_maintenance(request.db_path);
  const EventOrigin origin{machine_id(), host_name(), database_uuid(*db)};
  DestinationState destination = open_destination(*db, request.name);
  auto insert_into = [&](const char* table) {
    return request.target.base + "?database=" + url_encode(request.target.database) +
           "&query=" + url_encode(std::string("INSERT INTO ") + table + " FORMAT JSONEachRow");
  };
  const std::string insert_events = insert_into("events"), insert_runs = insert_into("runs");
  struct Table {
    const std::string& insert;
    const char* what;
  };
  const Table events_table{insert_events, "events"}, runs_table{insert_runs, "run records"};
  EventFeed feed(*db);
  RunLines runs(*db, request.name);
  ShipResult result;
  std::string lines;
  std::chrono::seconds wait{1};
  std::mt19937 jitter(std::random_device{}());
  auto sleep_unless_stopped = [&](Clock::duration pause) {
    for (const auto until = Clock::now() + pause; Clock::now() < until && !stop();)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  };
  // Following, once stop() said so, shipping gets request.grace more: a
  // collector that is stopping does not wait minutes for a silent server
  // (what is left waits in the database for the next ship).
  std::optional<Clock::time_point> stop_seen;
  const std::function<bool()> past_grace = [&] {
    if (!request.follow || !stop()) return false;
    if (!stop_seen) stop_seen = Clock::now();
    return Clock::now() - *stop_seen >= request.grace;
  };
  // One INSERT; true when the server took it. An error it will repeat
  // throws, as does any error when not following or at the end; any other
  // is noted and waited out (a wait that doubles, with jitter, so that a
  // fleet does not come back all at once).
  auto deliver = [&](const Table& table, const std::string& body, bool stopping) {
    const HttpResponse reply =
        http_post(table.insert, body, request.login, std::chrono::seconds(300), request.gzip, past_grace);
    if (reply.error.empty() && reply.status == 200) {
      wait = std::chrono::seconds(1);
      return true;
    }
    const int code = reply.error.empty() ? error_code(reply.body) : -1;
    const std::string why = !reply.error.empty()
                                ? "no answer: " + no_answer(reply.error)
                                : "HTTP " + std::to_string(reply.status) + ": " + first_line(reply.body);
    record_destination_error(*db, request.name, why);
    if (permanent(code))
      throw Error("ClickHouse refused the " + std::string(table.what) + " and will again (" + why +
                  "); the cursor stays at id " + std::to_string(destination.shipped_through) +
                  ": fix the table or the login (etwaudit ship --create-tables adds missing tables), then ship again");
    if (!request.follow || stopping || past_grace())
      throw Error("shipping failed (" + why + "); the cursor stays: " +
                  (request.follow ? "the next etwaudit ship sends the rest" : "ship again later, or use --follow"));
    const auto pause =
        std::chrono::milliseconds(wait.count() * 1000 * std::uniform_int_distribution<int>(80, 120)(jitter) / 100);
    note(why + "; trying again in " + std::to_string((pause.count() + 500) / 1000) + " s");
    sleep_unless_stopped(pause);
    wait = std::min<std::chrono::seconds>(wait * 2, std::chrono::seconds(60));
    return false;
  };
  constexpr auto none = Clock::time_point::max();
  Clock::time_point waiting_since = none;  // since when events wait to be sent
  Clock::time_point runs_checked{};        // when the runs were last looked at
  Clock::time_point next_insert{};         // not before, for --max-rate
  // --max-rate: waits until rows more may go.
  auto pace = [&](std::size_t rows, bool stopping) {
    const auto now = Clock::now();
    if (request.max_rate > 0 && !stopping && now < next_insert) sleep_unless_stopped(next_insert - now);
    if (request.max_rate > 0) next_insert = Clock::now() + std::chrono::microseconds(rows * 1000000 / request.max_rate);
  };
  // Events whose names came after they went: again, with the names.
  auto send_late_names = [&](bool stopping) {
    const auto rows = resend_late_names(*db, feed, destination, request.batch, [&](const auto& events) {
      pace(events.size(), stopping);
      event_lines(lines, feed, events, origin);
      return deliver(events_table, lines, stopping);
    });
    if (rows) result.renamed_rows += *rows;
    return rows.has_value();
  };
  const auto started = Clock::now();
  for (;;) {
    const bool stopping = stop();  // then ship what is left, and end
    if (!send_late_names(stopping)) continue;
    const std::vector<FeedEvent> events = feed.next(destination.shipped_through, request.batch);
    const auto now = Clock::now();
    if (!events.empty() && waiting_since == none) waiting_since = now;
    // Following, a batch goes when it is full or its oldest event waited --interval.
    const bool send_events = !events.empty() && (!request.follow || stopping || events.size() >= request.batch ||
                                                 now - waiting_since >= request.interval);
    if (send_events) {
      pace(events.size(), stopping);
      event_lines(lines, feed, events, origin);
      if (!deliver(events_table, lines, stopping)) continue;
      destination.shipped_through = events.back().event_id;
      advance_destination(*db, request.name, destination.shipped_through, events.size());
      result.rows += events.size();
      if (events.size() < request.batch) waiting_since = none;  // else a backlog: the next batch goes at once
    }
    // The run records that changed: with events, every --interval, and at the end.
    if (send_events || stopping || !request.follow || now - runs_checked >= request.interval) {
      if (runs.changed(lines, origin)) {
        if (!deliver(runs_table, lines, stopping)) continue;
        runs.sent();
        result.run_rows += static_cast<std::uint64_t>(std::count(lines.begin(), lines.end(), '\n'));
      }
      runs_checked = now;
    }
    if (send_events) continue;
    if (!request.follow || stopping) break;
    sleep_unless_stopped(std::chrono::seconds(1));
  }
  result.shipped_through = destination.shipped_through;
  result.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return result;
}

ShipperThread::ShipperThread(ShipRequest request, std::function<void(const std::string&)> note,
                             std::function<void(const std::string&)> failed)
    : m_thread([this, request = std::move(request), note = std::move(note), failed = std::move(failed)] {
        lower_this_thread_priority();
        try {
          m_result = ship_events(
              request, [this] { return !m_collecting.load(); }, note);
        } catch (const std::exception& e) {
          failed(e.what());
        }
      }) {}

ShipperThread::~ShipperThread() {
  finish();
}

const std::optional<ShipResult>& ShipperThread::finish() {
  m_collecting = false;
  if (m_thread.joinable()) m_thread.join();
  return m_result;
}

}  // namespace etwaudit
