// What the commands share in reading their options.

#include <cxxopts.hpp>
#include <iostream>

#include "cli/commands.h"
#include "core/error.h"
#include "core/human_format.h"
#include "core/time_format.h"
#include "query/filters.h"
#include "store/database.h"
#include "store/destinations.h"

namespace etwaudit {

std::optional<cxxopts::ParseResult> parse_options(cxxopts::Options& options, int argc, const char* const* argv,
                                                  const std::function<void(std::ostream&)>& more_help) {
  options.set_width(110);
  options.add_options()("h,help", "show this help");
  auto args = options.parse(argc, argv);
  if (args.count("help")) {
    std::cout << options.help();
    if (more_help) {
      std::cout << "\n";
      more_help(std::cout);
    }
    return std::nullopt;
  }
  if (!args.unmatched().empty()) throw UsageError("unexpected argument '" + args.unmatched().front() + "'");
  return args;
}

std::vector<std::string> values_as_given(const cxxopts::ParseResult& args, const std::string& option) {
  std::vector<std::string> values;
  for (const cxxopts::KeyValue& argument : args.arguments())
    if (argument.key() == option) values.push_back(argument.value());
  return values;
}

int forget_destination_command(const char* command, const cxxopts::ParseResult& args) {
  const std::string name = args["forget"].as<std::string>();
  auto db = open_for_maintenance(args["db"].as<std::string>());
  forget_destination(*db, name);
  std::cerr << command << ": forgot '" << name << "': its cursor no longer holds retention back\n";
  return 0;
}

std::optional<std::string> optional_argument(const cxxopts::ParseResult& args, const char* option) {
  return args.count(option) ? std::optional(args[option].as<std::string>()) : std::nullopt;
}

std::chrono::milliseconds interval_argument(const cxxopts::ParseResult& args, const char* option) {
  const std::string text = args[option].as<std::string>();
  const auto interval = parse_duration(text);
  if (!interval || *interval < 1000000)
    throw UsageError("--" + std::string(option) + " '" + text + "': expected a duration of at least 1ms, e.g. 30s");
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::nanoseconds(*interval));
}

RetentionPolicy retention_arguments(const cxxopts::ParseResult& args, const char* keep_option) {
  RetentionPolicy policy;
  if (args.count(keep_option)) {
    const std::string text = args[keep_option].as<std::string>();
    auto ns = parse_duration(text);
    if (!ns || *ns <= 0) throw UsageError(std::string("--") + keep_option + " '" + text + "': expected e.g. 30d, 12h");
    policy.keep_ns = *ns;
  }
  if (args.count("max-size")) {
    const std::string text = args["max-size"].as<std::string>();
    auto bytes = parse_byte_size(text);
    if (!bytes || *bytes < (1u << 20))
      throw UsageError("--max-size '" + text + "': expected a size of at least 1MB, e.g. 500MB, 2GB");
    policy.max_bytes = *bytes;
  }
  return policy;
}

void add_filter_options(cxxopts::Options& options) {
  // clang-format off
  options.add_options("filters")
    ("since", "from this time: ISO-8601 (2026-12-02T10:00:00Z, ...+01:00) or back from now (15m, 2h, 7d)",
      cxxopts::value<std::string>())
    ("until", "up to this time, same forms", cxxopts::value<std::string>())
    ("process", "only processes whose image matches this glob (notepad.exe, *\\Office16\\*), or this pid",
      cxxopts::value<std::string>())
    ("path", "only files matching this glob (*.docx, C:\\Users\\*\\notes.txt); Windows paths ignore case; a "
             "path ending in a separator (/srv/hr/) means everything below it",
      cxxopts::value<std::string>())
    ("user", "only processes of this account: DOMAIN\\user, or user alone; a glob (Windows: where the trace said)",
      cxxopts::value<std::string>())
    ("failed", "only operations that failed (Windows: an error status); the totals leave them out otherwise")
    ("op", "only this operation (read, write, open, delete, ...); repeat for several",
      cxxopts::value<std::vector<std::string>>())
    ("exclude-path", "leave out files matching this glob (/usr/lib/*, *.mui); repeatable",
      cxxopts::value<std::vector<std::string>>());
  // clang-format on
}

QueryFilters filter_arguments(const cxxopts::ParseResult& args) {
  QueryFilters filters;
  const std::int64_t now = now_ns();
  if (args.count("since")) filters.since = parse_time_argument("--since", args["since"].as<std::string>(), now);
  if (args.count("until")) filters.until = parse_time_argument("--until", args["until"].as<std::string>(), now);
  if (filters.since && filters.until && *filters.since > *filters.until)
    throw UsageError("--since is after --until: the window is empty");
  if (args.count("process")) filters.process = args["process"].as<std::string>();
  if (args.count("path")) filters.path = path_argument(args["path"].as<std::string>());
  for (const std::string& glob : values_as_given(args, "exclude-path")) {
    check_glob_argument("--exclude-path", glob);
    filters.exclude_paths.push_back(glob);
  }
  if (args.count("user")) filters.user = args["user"].as<std::string>();
  if (args.count("op"))
    for (const auto& name : args["op"].as<std::vector<std::string>>()) filters.ops.push_back(parse_op_argument(name));
  filters.failed_only = args.count("failed") > 0;
  return filters;
}

}  // namespace etwaudit
