#pragma once
// The subcommands. Each parses its own options and returns the exit code:
// 0 ok, 1 runtime error, 2 usage error. They throw Error / UsageError.

#include "store/retention.h"

namespace cxxopts {
class ParseResult;
}

namespace etwaudit {

int collect_command(int argc, const char* const* argv);
int import_command(int argc, const char* const* argv);
int query_command(int argc, const char* const* argv);
int prune_command(int argc, const char* const* argv);
int status_command(int argc, const char* const* argv);
int stop_command(int argc, const char* const* argv);

}  // namespace etwaudit

namespace etwaudit {
// The retention options --KEEP_OPTION and --max-size; throws UsageError.
RetentionPolicy retention_arguments(const cxxopts::ParseResult& args, const char* keep_option);
}  // namespace etwaudit
