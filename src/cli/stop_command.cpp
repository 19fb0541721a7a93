// etwaudit stop: ask the collector writing a database to stop, and wait until
// it has drained its queue, committed and closed its run.
//
// The collector is found through the database: its writer lock tells that one
// runs, and its open run record gives its pid and host. The request is what
// Ctrl+C would be (platform.h: request_stop), so the collector stops as it
// does at the end of its input.

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <chrono>
#include <cxxopts.hpp>
#include <iostream>
#include <thread>

#include "cli/commands.h"
#include "core/error.h"
#include "core/time_format.h"
#include "platform/platform.h"
#include "store/open_run.h"
#include "store/writer_lock.h"

namespace etwaudit {
namespace {

// The run's exit reason once it is closed; empty while it is open.
std::string exit_reason(SQLite::Database& db, std::int64_t run_id) {
  SQLite::Statement find(
      db, "SELECT coalesce(exit_reason, '') FROM collector_runs WHERE run_id = ? AND stopped_at IS NOT NULL");
  find.bind(1, run_id);
  return find.executeStep() ? find.getColumn(0).getString() : std::string();
}

}  // namespace

int stop_command(int argc, const char* const* argv) {
  cxxopts::Options options("etwaudit stop",
                           "Ask the collector writing a database to stop: it drains its queue, commits, closes its "
                           "run record (and on Windows its ETW session, with the names of the kernel's last "
                           "rundown) and exits. Waits until it has.");
  // clang-format off
  options.add_options()
    ("d,db", "the database the collector writes (default: $ETWAUDIT_DB, else audit.db)", cxxopts::value<std::string>(), "FILE")
    ("timeout", "how long to wait for it: 60s, 5m", cxxopts::value<std::string>()->default_value("60s"), "DURATION");
  // clang-format on
  const auto parsed = parse_options(options, argc, argv);
  if (!parsed) return 0;
  const cxxopts::ParseResult& args = *parsed;
  const std::string path = database_argument(args, DatabaseUse::existing);
  const std::string timeout_text = args["timeout"].as<std::string>();
  const std::int64_t timeout_ns = duration_argument("--timeout", timeout_text, "60s, 5m");

  std::unique_ptr<SQLite::Database> db;
  try {
    db = std::make_unique<SQLite::Database>(path, SQLite::OPEN_READONLY);
    db->exec("PRAGMA busy_timeout = 5000");
  } catch (const std::exception& e) {
    throw Error("cannot open database '" + path + "': " + e.what());
  }
  const OpenRun run = open_run(*db);
  if (!collector_running(path)) {
    std::cout << "etwaudit stop: no collector is writing to " << path;
    if (run.run_id) std::cout << " (run " << run.run_id << " was left open: its collector is gone)";
    std::cout << "\n";
    return 0;
  }
  if (!run.run_id) throw Error("a collector holds " + path + " but has no open run yet; try again in a moment");
  if (!run.host.empty() && run.host != host_name())
    throw Error("the collector of run " + std::to_string(run.run_id) + " runs on " + run.host + ", not here");
  if (run.pid == 0) throw Error("run " + std::to_string(run.run_id) + " has no pid recorded");
  if (std::string refused = request_stop(run.pid); !refused.empty())
    throw Error("cannot stop the collector of run " + std::to_string(run.run_id) + ": " + refused);

  std::cout << "etwaudit stop: asked the collector of run " << run.run_id << " (pid " << run.pid << ") to stop"
            << std::endl;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(timeout_ns);
  for (;;) {
    // Whether it lives first: one that closed its run and then exited is done.
    const bool alive = process_alive(run.pid);
    const std::string reason = exit_reason(*db, run.run_id);
    // Done: the run is closed and the collector has let go of the database.
    WriterLock done;
    if (!reason.empty() && (!alive || done.try_lock(path))) {
      std::cout << "etwaudit stop: run " << run.run_id << " ended: " << reason << "\n";
      return 0;
    }
    if (!alive) {
      std::cerr << "etwaudit stop: the collector exited without closing run " << run.run_id << "\n";
      return 1;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      std::cerr << "etwaudit stop: the collector of run " << run.run_id << " is still running after " << timeout_text
                << (reason.empty() ? "" : " (its run is closed)") << "\n";
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace etwaudit
