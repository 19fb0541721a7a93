#pragma once
// Shipping events to ClickHouse (doc/fleet.md): what `etwaudit ship` and
// `etwaudit collect --ship` share. The events after the destination's cursor
// go as INSERT ... FORMAT JSONEachRow over HTTP (platform/http.h), a batch at
// a time; the cursor moves only after the server's 200. The run records
// that changed follow each batch (query/run_lines.h), and events whose file
// or process was named after they went are sent again (sql/0018). The server's reply
// is classified by its Code: an error it will repeat (the table, a column,
// the data, the login) ends shipping with the message and the cursor kept;
// any other is retried when following, after a wait that doubles up to a
// minute with some jitter.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include "platform/http.h"

namespace etwaudit {

struct ClickHouseTarget {
  std::string base;      // scheme://host:port/ (no query, no credentials)
  std::string database;  // from ?database=, or etwaudit
};

// The server of --to/--ship: http(s)://HOST:PORT/?database=NAME. UsageError
// for anything else, and for a user or password in the URL.
ClickHouseTarget parse_clickhouse_url(const std::string& url);
// The login: from file (user, then password, a line each) when given, else
// ETWAUDIT_CLICKHOUSE_USER and ETWAUDIT_CLICKHOUSE_PASSWORD; and ca_file,
// the certificate authorities to trust for https:// (UsageError on
// Windows, which trusts the machine's store).
HttpCredentials clickhouse_credentials(const std::optional<std::string>& file,
                                       const std::optional<std::string>& ca_file = std::nullopt);
// CREATE DATABASE and the events table, if missing (query/clickhouse_schema.h).
void create_clickhouse_tables(const ClickHouseTarget& target, const HttpCredentials& login);
// The cursor's name for a server: clickhouse:URL.
std::string clickhouse_destination_name(const ClickHouseTarget& target);

struct ShipRequest {
  std::string db_path;
  ClickHouseTarget target;
  HttpCredentials login;
  std::string name;  // the cursor's
  std::size_t batch = 50000;
  bool follow = false;  // keep going (and retry) until stop() says so and nothing is left
  bool gzip = true;     // compress each batch (Content-Encoding: gzip)
  // Following: a batch smaller than batch goes once its oldest event waited
  // this long (fewer, larger inserts are what ClickHouse wants).
  std::chrono::milliseconds interval{30000};
  // At most this many event rows a second (0: no bound), so that a fleet
  // catching up after an outage does not flood the server.
  std::uint64_t max_rate = 100000;
  // Following, how long after stop() said so shipping may go on: a request
  // still waiting then is given up.
  std::chrono::milliseconds grace{10000};
};

struct ShipResult {
  std::uint64_t rows = 0;          // event rows
  std::uint64_t run_rows = 0;      // run records (each sent again as it changed)
  std::uint64_t renamed_rows = 0;  // event rows sent again with a name learned late
  std::int64_t shipped_through = 0;
  double seconds = 0;
};

// Ships until nothing is left (following: until stop() returns true and
// then nothing is left). Throws Error on an error the server will repeat,
// and, not following, on any error; note gets each retry's reason.
ShipResult ship_events(const ShipRequest& request, const std::function<bool()>& stop,
                       const std::function<void(const std::string&)>& note);

// Shipping beside a collection, as collect --ship runs it: a thread of its
// own, on its own connection, at a lower priority than the collection (a
// source read too slowly loses events; unsent events only wait in the
// database), following until finish() and then sending what is left.
class ShipperThread {
 public:
  // note: each retry's reason; failed: the error that stopped shipping
  // (the events stay in the database). Both on the shipping thread.
  ShipperThread(ShipRequest request, std::function<void(const std::string&)> note,
                std::function<void(const std::string&)> failed);
  ~ShipperThread();
  ShipperThread(const ShipperThread&) = delete;
  ShipperThread& operator=(const ShipperThread&) = delete;

  // Collecting has ended: ships what is left and returns what was shipped,
  // or nullopt when an error stopped it.
  const std::optional<ShipResult>& finish();

 private:
  std::atomic<bool> m_collecting{true};
  std::optional<ShipResult> m_result;
  std::thread m_thread;
};

}  // namespace etwaudit
