// etwaudit prune: drop old raw events from a database, keeping their totals.
//
// It runs beside a collector: it takes no writer lock, and each of its small
// transactions waits for the collector's batch in progress (SQLite's write
// lock), so the collector goes on recording throughout.

#include <cxxopts.hpp>
#include <iostream>

#include "cli/commands.h"
#include "core/error.h"
#include "core/human_format.h"
#include "core/time_format.h"
#include "store/database.h"
#include "store/retention.h"

namespace etwaudit {

int prune_command(int argc, const char* const* argv) {
  cxxopts::Options options("etwaudit prune",
                           "Delete the oldest raw events of a database, whole segments at a time, keeping their "
                           "hourly totals (top-files, top-processes, timeline and summary still count them). Runs "
                           "beside a collector: each small transaction waits for the collector's current batch.");
  // clang-format off
  options.add_options()
    ("d,db", "database to prune (default: $ETWAUDIT_DB, else audit.db)", cxxopts::value<std::string>(), "FILE")
    ("older-than", "delete events older than this: 30d, 12h", cxxopts::value<std::string>(), "AGE")
    ("max-size", "delete the oldest events until the database uses less than 90 % of this: 500MB, 2GB",
      cxxopts::value<std::string>(), "SIZE")
    ("upgrade", "only bring the database to this etwaudit's schema");
  // clang-format on
  const auto parsed = parse_options(options, argc, argv);
  if (!parsed) return 0;
  const cxxopts::ParseResult& args = *parsed;
  const RetentionPolicy policy = retention_arguments(args, "older-than");
  if (!policy.enabled() && !args.count("upgrade")) throw UsageError("give --older-than, --max-size or both");
  const std::string path = database_argument(args, DatabaseUse::existing);

  auto db = open_for_maintenance(path);
  if (!policy.enabled()) {
    std::cerr << "etwaudit prune: '" << path << "' is at schema version " << program_schema_version() << "\n";
    return 0;
  }
  const std::uint64_t used_before = used_bytes(*db);
  Pruner pruner(*db);
  const PruneResult result = pruner.prune(policy, now_ns());
  char longest[32];
  std::snprintf(longest, sizeof longest, "%.1f ms", result.longest_transaction.count() / 1000.0);
  auto counted = [](std::uint64_t n, const char* noun) { return with_thousands(n) + " " + noun + (n == 1 ? "" : "s"); };
  std::cerr << "etwaudit prune: deleted " << counted(result.events, "event") << " (" << counted(result.rows, "row")
            << ", " << counted(result.segments, "segment") << ") in " << counted(result.transactions, "transaction")
            << ", the longest " << longest << "; in use " << human_bytes(used_before) << " -> "
            << human_bytes(used_bytes(*db)) << " (freed pages are reused by new events)\n";
  if (result.unshipped_rows > 0)
    std::cerr << "etwaudit prune: " << counted(result.unshipped_rows, "event row")
              << " went before a destination had them (--max-size; etwaudit status: pruned_unshipped)\n";
  if (result.held_segments > 0)
    std::cerr << "etwaudit prune: " << counted(result.held_segments, "segment")
              << " past --older-than kept: a destination has not had their events yet (etwaudit status shows "
                 "which; etwaudit ship --forget NAME lets one go)\n";
  if (result.over_size)
    std::cerr << "etwaudit prune: warning: still over 90 % of --max-size: what is left is the newest segment, names, "
                 "runs and long-term totals\n";
  return 0;
}

}  // namespace etwaudit
