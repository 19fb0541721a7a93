// etwaudit: which process read or wrote this file, when, and how much?

#include <algorithm>
#include <cstring>
#include <cxxopts.hpp>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.h"
#include "core/closest_name.h"
#include "core/error.h"
#include "platform/platform.h"

namespace {

struct Command {
  std::string_view name;
  std::string_view summary;
  int (*run)(int argc, const char* const* argv);
};

constexpr Command commands[] = {
    {"collect", "record file activity into a database", etwaudit::collect_command},
    {"import", "read .etl trace files into a database", etwaudit::import_command},
    {"query", "answer questions from a database (reports and SQL)", etwaudit::query_command},
    {"report", "write a database as one HTML page with charts", etwaudit::report_command},
    {"status", "size, contents, retention and last run of a database", etwaudit::status_command},
    {"prune", "delete the oldest raw events, keeping their totals", etwaudit::prune_command},
    {"export", "write new events as JSON lines for a log forwarder", etwaudit::export_command},
    {"ship", "send new events to a ClickHouse server", etwaudit::ship_command},
    {"stop", "ask the collector writing a database to stop, and wait for it", etwaudit::stop_command},
};

void print_usage(std::ostream& out) {
  out << "etwaudit " ETWAUDIT_VERSION
         " - which process read or wrote this file, when, and how much?\n\n"
         "usage: etwaudit <command> [options]\n\ncommands:\n";
  std::size_t width = 0;
  for (const Command& command : commands) width = std::max(width, command.name.size());
  for (const Command& command : commands)
    out << "  " << command.name << std::string(width + 2 - command.name.size(), ' ') << command.summary << "\n";
  out << "\n'etwaudit <command> --help' shows a command's options.\n";
}

}  // namespace

int main(int raw_argc, char** raw_argv) {
  // UTF-8 arguments (Windows: from the UTF-16 command line), kept alive for
  // the commands' argv.
  const std::vector<std::string> arguments = etwaudit::utf8_arguments(raw_argc, raw_argv);
  std::vector<const char*> pointers;
  for (const std::string& argument : arguments) pointers.push_back(argument.c_str());
  pointers.push_back(nullptr);
  const int argc = static_cast<int>(arguments.size());
  const char* const* argv = pointers.data();
  etwaudit::use_utf8_console();
  if (argc < 2) {
    print_usage(std::cerr);
    return 2;
  }
  std::string_view name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    print_usage(std::cout);
    return 0;
  }
  if (name == "--version" || name == "-V") {
    std::cout << "etwaudit " ETWAUDIT_VERSION "\n";
    return 0;
  }
  for (const Command& command : commands) {
    if (command.name != name) continue;
    try {
      return command.run(argc - 1, argv + 1);
    } catch (const cxxopts::exceptions::exception& e) {
      std::cerr << "etwaudit " << name << ": " << e.what() << "\n(see 'etwaudit " << name << " --help')\n";
      return 2;
    } catch (const etwaudit::UsageError& e) {
      std::cerr << "etwaudit " << name << ": " << e.what() << "\n(see 'etwaudit " << name << " --help')\n";
      return 2;
    } catch (const std::exception& e) {
      // A message that names the command already ("etwaudit collect needs root ...") stands alone.
      const std::string message = e.what();
      const std::string prefix = "etwaudit " + std::string(name);
      std::cerr << (message.rfind(prefix, 0) == 0 ? "" : prefix + ": ") << message << "\n";
      return 1;
    }
  }
  std::vector<std::string> names;
  for (const Command& command : commands) names.emplace_back(command.name);
  if (const auto meant = etwaudit::closest_name(name, names)) {
    std::cerr << "etwaudit: unknown command '" << name << "'; did you mean '" << *meant << "'?\n"
              << "(see 'etwaudit --help')\n";
    return 2;
  }
  std::cerr << "etwaudit: unknown command '" << name << "'\n\n";
  print_usage(std::cerr);
  return 2;
}
