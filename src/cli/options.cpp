// What the commands share in reading their options.

#include <algorithm>
#include <cxxopts.hpp>
#include <filesystem>
#include <iostream>
#include <string_view>
#include <utility>

#include "cli/commands.h"
#include "core/closest_name.h"
#include "core/error.h"
#include "core/human_format.h"
#include "core/time_format.h"
#include "core/utf8_path.h"
#include "platform/platform.h"
#include "query/filters.h"
#include "store/database.h"
#include "store/destinations.h"

namespace etwaudit {

namespace {

// The text between the quotes of one of cxxopts' messages: the option or
// the argument it is about.
std::string quoted_in(const std::string& message) {
  for (const auto& [open, close] : {std::pair<std::string, std::string>{"\u2018", "\u2019"}, {"'", "'"}}) {
    const std::size_t start = message.find(open);
    if (start == std::string::npos) continue;
    const std::size_t end = message.find(close, start + open.size());
    if (end != std::string::npos) return message.substr(start + open.size(), end - start - open.size());
  }
  return {};
}

struct OptionHelp {
  std::string spelling;  // "--db"; "-x" for an option with a short name only
  std::vector<std::string> names;
  bool takes_value = false;
  std::string arg_help;  // what its value is ("FILE")
};

std::vector<OptionHelp> every_option(const cxxopts::Options& options) {
  std::vector<OptionHelp> found;
  for (const std::string& group : options.groups())
    for (const cxxopts::HelpOptionDetails& option : options.group_help(group).options) {
      OptionHelp help;
      if (!option.s.empty()) help.names.push_back(option.s);
      for (const std::string& name : option.l) help.names.push_back(name);
      help.spelling = option.l.empty() ? "-" + option.s : "--" + option.l.front();
      help.takes_value = !option.is_boolean;
      help.arg_help = option.arg_help;
      found.push_back(std::move(help));
    }
  return found;
}

const OptionHelp* option_named(const std::vector<OptionHelp>& options, const std::string& name) {
  for (const OptionHelp& option : options)
    if (std::find(option.names.begin(), option.names.end(), name) != option.names.end()) return &option;
  return nullptr;
}

// The option the command line gave value to, as it spelled it ("--limit").
std::string option_given(const std::string& value, int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view argument = argv[i];
    if (argument == value && argv[i - 1][0] == '-') return argv[i - 1];
    const std::size_t equals = argument.find('=');
    if (argument.rfind("--", 0) == 0 && equals != std::string_view::npos && argument.substr(equals + 1) == value)
      return std::string(argument.substr(0, equals));
  }
  return "an option";
}

// cxxopts' parse errors ("Option 'db' is missing an argument") in etwaudit's words.
UsageError parse_error(const cxxopts::Options& options, const cxxopts::exceptions::parsing& error, int argc,
                       const char* const* argv) {
  const std::vector<OptionHelp> known = every_option(options);
  const std::string quoted = quoted_in(error.what());
  const std::string dashes = quoted.size() == 1 ? "-" : "--";
  if (dynamic_cast<const cxxopts::exceptions::no_such_option*>(&error)) {
    std::vector<std::string> names;
    for (const OptionHelp& option : known)
      for (const std::string& name : option.names)
        if (name.size() > 1) names.push_back(name);
    const auto meant = closest_name(quoted, names);
    return UsageError("unknown option " + dashes + quoted + (meant ? "; did you mean --" + *meant + "?" : ""));
  }
  if (dynamic_cast<const cxxopts::exceptions::missing_argument*>(&error)) {
    const OptionHelp* option = option_named(known, quoted);
    return UsageError((option ? option->spelling : dashes + quoted) + " needs a value" +
                      (option && !option->arg_help.empty() ? " (" + option->arg_help + ")" : std::string()));
  }
  if (dynamic_cast<const cxxopts::exceptions::incorrect_argument_type*>(&error)) {
    const std::string given = option_given(quoted, argc, argv);
    const OptionHelp* option = option_named(known, given.substr(std::min(given.find_first_not_of('-'), given.size())));
    if (option && !option->takes_value) return UsageError(given + " takes no value, got '" + quoted + "'");
    return UsageError(given + " expects a whole number, got '" + quoted + "'");
  }
  return UsageError(std::string(error.what()));
}

}  // namespace

std::optional<cxxopts::ParseResult> parse_options(cxxopts::Options& options, int argc, const char* const* argv,
                                                  const std::function<void(std::ostream&)>& more_help) {
  options.set_width(110);
  options.add_options()("h,help", "show this help");
  cxxopts::ParseResult args;
  try {
    args = options.parse(argc, argv);
  } catch (const cxxopts::exceptions::parsing& error) {
    throw parse_error(options, error, argc, argv);
  }
  if (args.count("help")) {
    std::vector<std::string> shown;
    for (const std::string& group : options.groups())
      if (group != hidden_aliases) shown.push_back(group);
    std::cout << options.help(shown);
    if (more_help) {
      std::cout << "\n";
      more_help(std::cout);
    }
    return std::nullopt;
  }
  if (!args.unmatched().empty()) throw UsageError("unexpected argument '" + args.unmatched().front() + "'");
  return args;
}

std::string database_argument(const cxxopts::ParseResult& args, DatabaseUse use) {
  if (args.count("db")) return args["db"].as<std::string>();
  if (const auto variable = environment_variable("ETWAUDIT_DB"); variable && !variable->empty()) return *variable;
  const std::string here = "audit.db";
  std::error_code error;
  if (use == DatabaseUse::existing && !std::filesystem::exists(utf8_path(here), error))
    throw UsageError("no database " + here +
                     " here: name one with --db FILE (-d FILE) or the environment variable ETWAUDIT_DB (the "
                     "service writes " +
                     service_database_path() + ")");
  return here;
}

std::vector<std::string> values_as_given(const cxxopts::ParseResult& args, const std::string& option) {
  std::vector<std::string> values;
  for (const cxxopts::KeyValue& argument : args.arguments())
    if (argument.key() == option) values.push_back(argument.value());
  return values;
}

int forget_destination_command(const char* command, const cxxopts::ParseResult& args) {
  const std::string name = args["forget"].as<std::string>();
  auto db = open_for_maintenance(database_argument(args, DatabaseUse::existing));
  forget_destination(*db, name);
  std::cerr << command << ": forgot '" << name << "': its cursor no longer holds retention back\n";
  return 0;
}

std::optional<std::string> aliased_argument(const cxxopts::ParseResult& args, const char* option, const char* alias) {
  if (args.count(option) && args.count(alias))
    throw UsageError("--" + std::string(alias) + " is --" + option + ": give one of them");
  if (args.count(alias)) return args[alias].as<std::string>();
  return optional_argument(args, option);
}

std::optional<std::string> optional_argument(const cxxopts::ParseResult& args, const char* option) {
  return args.count(option) ? std::optional(args[option].as<std::string>()) : std::nullopt;
}

std::int64_t duration_argument(const std::string& option, const std::string& text, const std::string& examples) {
  if (const auto ns = parse_duration(text); ns && *ns >= 1'000'000) return *ns;
  if (is_bare_number(text))
    throw UsageError(option + " '" + text + "': a number needs its unit: " + text + "s, " + text + "m, " + text + "h?");
  throw UsageError(option + " '" + text + "': expected a duration of at least 1ms: " + examples);
}

std::chrono::milliseconds interval_argument(const cxxopts::ParseResult& args, const char* option) {
  const std::int64_t interval =
      duration_argument("--" + std::string(option), args[option].as<std::string>(), "30s, 1m30s");
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::nanoseconds(interval));
}

RetentionPolicy retention_arguments(const cxxopts::ParseResult& args, const char* keep_option) {
  RetentionPolicy policy;
  if (args.count(keep_option)) {
    policy.keep_ns =
        duration_argument(std::string("--") + keep_option, args[keep_option].as<std::string>(), "30d, 12h");
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
    ("s,since", "from this time: a date or a time on this machine's clock (2026-12-02, '2026-12-02 10:16', "
                "10:16), today, yesterday, now; ISO-8601 with Z or an offset (2026-12-02T10:16:00Z, ...+01:00); "
                "or back from now (15m, 1h30m, -2h)",
      cxxopts::value<std::string>(), "TIME")
    ("u,until", "up to this time, same forms", cxxopts::value<std::string>(), "TIME")
    ("process", "only processes whose image matches this glob (notepad.exe, *\\Office16\\*), or this pid",
      cxxopts::value<std::string>(), "PROCESS")
    ("path", "only files matching this glob (*.docx, C:\\Users\\*\\notes.txt); Windows paths ignore case; a "
             "path ending in a separator (/srv/hr/) means everything below it",
      cxxopts::value<std::string>(), "GLOB")
    ("user", "only processes of this account: DOMAIN\\user, or user alone; a glob (Windows: where the trace said)",
      cxxopts::value<std::string>(), "USER")
    ("failed", "only operations that failed (Windows: an error status); the totals leave them out otherwise")
    ("op,ops", "only these operations (read, write, open, delete, ...): --op read,write or --op read --op write "
               "(--ops the same)",
      cxxopts::value<std::vector<std::string>>(), "OP[,OP...]")
    ("exclude-path", "leave out files matching this glob (/usr/lib/*, *.mui); repeatable",
      cxxopts::value<std::vector<std::string>>(), "GLOB");
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
