#pragma once
// The subcommands. Each parses its own options and returns the exit code:
// 0 ok, 1 runtime error, 2 usage error. They throw Error / UsageError.

#include <chrono>
#include <cxxopts.hpp>
#include <functional>
#include <iosfwd>
#include <optional>

#include "query/filters.h"
#include "store/retention.h"

namespace etwaudit {

int collect_command(int argc, const char* const* argv);
int import_command(int argc, const char* const* argv);
int query_command(int argc, const char* const* argv);
int prune_command(int argc, const char* const* argv);
int export_command(int argc, const char* const* argv);
int ship_command(int argc, const char* const* argv);
int status_command(int argc, const char* const* argv);
int stop_command(int argc, const char* const* argv);
int report_command(int argc, const char* const* argv);

}  // namespace etwaudit

namespace etwaudit {
// Parses a command's options, adding -h/--help after them. None when --help was given: the help has been
// printed (then more_help's text), and the command ends with 0. Throws
// UsageError for an argument the command does not take.
std::optional<cxxopts::ParseResult> parse_options(cxxopts::Options& options, int argc, const char* const* argv,
                                                  const std::function<void(std::ostream&)>& more_help = {});
// --db: the database a command works on. Without it, $ETWAUDIT_DB, else
// audit.db in the working folder; for a database that must exist already,
// a missing audit.db is a UsageError naming the ways to give one.
enum class DatabaseUse { create, existing };
std::string database_argument(const cxxopts::ParseResult& args, DatabaseUse use);
// Each value of a repeatable option as the user gave it, in order (the
// parsed list would cut a value at its commas: a glob, a --param value).
std::vector<std::string> values_as_given(const cxxopts::ParseResult& args, const std::string& option);
// The retention options --KEEP_OPTION and --max-size; throws UsageError.
RetentionPolicy retention_arguments(const cxxopts::ParseResult& args, const char* keep_option);
// --forget NAME of ship and export: lets the destination go (store/destinations.h).
int forget_destination_command(const char* command, const cxxopts::ParseResult& args);
// The group of options kept for their old names, left out of the help.
inline constexpr const char* hidden_aliases = "aliases";
// The value of option or its old name alias (a UsageError when both are given).
std::optional<std::string> aliased_argument(const cxxopts::ParseResult& args, const char* option, const char* alias);
// A text option's value, or nullopt when it was not given.
std::optional<std::string> optional_argument(const cxxopts::ParseResult& args, const char* option);
// A duration as an option gives it (90s, 1m30s, 500ms), in ns, at least
// 1 ms; throws UsageError naming option, with examples.
std::int64_t duration_argument(const std::string& option, const std::string& text, const std::string& examples);
// A positive duration option (1s, 500ms, 2m) as milliseconds; throws UsageError.
std::chrono::milliseconds interval_argument(const cxxopts::ParseResult& args, const char* option);
// The filters of query and report (--since, --until, --process, --path,
// --user, --failed, --op), in their own group of the help.
void add_filter_options(cxxopts::Options& options);
// Their values; throws UsageError for a bad time, an empty window or an unknown operation.
QueryFilters filter_arguments(const cxxopts::ParseResult& args);
}  // namespace etwaudit
