// What the commands share in reading their options.

#include <cxxopts.hpp>
#include <iostream>

#include "cli/commands.h"
#include "core/error.h"
#include "core/human_format.h"
#include "core/time_format.h"

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

}  // namespace etwaudit
