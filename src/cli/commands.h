#pragma once
// The subcommands. Each parses its own options and returns the exit code:
// 0 ok, 1 runtime error, 2 usage error. They throw Error / UsageError.

namespace etwaudit {

int collect_command(int argc, const char* const* argv);
int import_command(int argc, const char* const* argv);
int query_command(int argc, const char* const* argv);

}  // namespace etwaudit
