// etwaudit export: the events of a database as JSON lines, for a log
// forwarder (Vector, Fluent Bit, Filebeat) to take elsewhere, with a cursor
// of its own in the database (store/destinations.h).
//
// Into a folder, the files follow the rules that tailers need: only whole
// lines are appended (each batch in one write, flushed to disk before the
// cursor moves); a file is never renamed, truncated or compressed; a full
// file is followed by a new name (etwaudit-events-<UTC time>-<sequence>.jsonl,
// so names sort in the order written), and the oldest files beyond
// --keep-files are deleted once --min-age old. A file whose last line was cut by a crash is
// left as it is and the next batch goes to a new file. After any crash the
// next run writes again from the cursor: at least once, event_uid tells the
// repeats. Events whose file or process was named after they were written
// are written again with the name (query/late_names.h): the later line of an
// event_uid is the one to keep.
//
// Beside a collector: a read connection for the events, and one small
// transaction per batch for the cursor, which waits for the collector's
// batch in progress (no writer lock).

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cxxopts.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "cli/commands.h"
#include "core/error.h"
#include "core/human_format.h"
#include "core/time_format.h"
#include "core/utf8_path.h"
#include "platform/platform.h"
#include "query/event_feed.h"
#include "query/event_lines.h"
#include "query/late_names.h"
#include "store/database.h"
#include "store/destinations.h"

namespace etwaudit {
namespace {

constexpr const char* file_prefix = "etwaudit-events-";
constexpr const char* file_suffix = ".jsonl";

struct ExportRequest {
  std::string db_path;
  std::string out;  // a folder, or "-" for standard output
  std::string name;
  std::size_t batch = 10000;
  std::uint64_t max_file_bytes = 64ull << 20;
  std::size_t keep_files = 20;
  std::chrono::milliseconds min_age{300000};  // a file beyond keep_files goes once not written for this long
  bool follow = false;
  std::chrono::milliseconds interval{1000};
};

// The export files of folder, oldest first.
std::vector<std::filesystem::path> export_files(const std::filesystem::path& folder) {
  std::vector<std::filesystem::path> files;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(folder, error)) {
    const std::string name = utf8_name(entry.path().filename());
    if (name.rfind(file_prefix, 0) == 0 && name.size() > std::strlen(file_suffix) &&
        name.compare(name.size() - std::strlen(file_suffix), std::string::npos, file_suffix) == 0)
      files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Whether a file ends with a whole line (or is empty).
bool ends_with_newline(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary | std::ios::ate);
  if (!in) return false;
  if (in.tellg() <= 0) return true;
  in.seekg(-1, std::ios::end);
  return in.get() == '\n';
}

// The folder's files, as lines are appended to them.
class FolderSink {
 public:
  FolderSink(std::filesystem::path folder, std::uint64_t max_file_bytes, std::size_t keep_files,
             std::chrono::milliseconds min_age)
      : m_folder(std::move(folder)), m_max(max_file_bytes), m_keep(keep_files), m_min_age(min_age) {
    std::error_code error;
    std::filesystem::create_directories(m_folder, error);
    if (!std::filesystem::is_directory(m_folder))
      throw Error("cannot write into '" + utf8_name(m_folder) + "': not a folder" +
                  (error ? " (" + error.message() + ")" : ""));
    const auto files = export_files(m_folder);
    if (!files.empty()) {
      m_sequence = sequence_of(files.back());
      // Go on in the newest file if its last line is whole and it has room.
      std::error_code size_error;
      const auto size = std::filesystem::file_size(files.back(), size_error);
      if (!size_error && size < m_max && ends_with_newline(files.back())) open(files.back());
    }
  }
  ~FolderSink() {
    if (m_file) std::fclose(m_file);
  }

  // Appends whole lines, in one write, and puts them on disk.
  void write(const std::string& lines) {
    if (!m_file || m_bytes >= m_max) next_file();
    if (std::fwrite(lines.data(), 1, lines.size(), m_file) != lines.size() || !flush_to_disk(m_file))
      throw Error("cannot write '" + utf8_name(m_path) + "': " + std::strerror(errno));
    m_bytes += lines.size();
  }
  const std::filesystem::path& current() const { return m_path; }

 private:
  static std::uint64_t sequence_of(const std::filesystem::path& file) {
    const std::string name = utf8_name(file.stem());
    const auto dash = name.rfind('-');
    try {
      return dash == std::string::npos ? 0 : std::stoull(name.substr(dash + 1));
    } catch (const std::exception&) {
      return 0;
    }
  }
  void open(const std::filesystem::path& file) {
    if (m_file) std::fclose(m_file);
    m_file = open_for_append(utf8_name(file));
    if (!m_file) throw Error("cannot write '" + utf8_name(file) + "': " + std::strerror(errno));
    m_path = file;
    std::error_code error;
    m_bytes = std::filesystem::file_size(file, error);
    if (error) m_bytes = 0;
  }
  void next_file() {
    std::string stamp = format_iso8601(now_ns()).substr(0, 19);  // 2026-12-07T04:50:00
    stamp.erase(std::remove_if(stamp.begin(), stamp.end(), [](char c) { return c == '-' || c == ':'; }), stamp.end());
    char sequence[16];
    std::snprintf(sequence, sizeof sequence, "%06llu", static_cast<unsigned long long>(++m_sequence));
    open(m_folder / utf8_path(std::string(file_prefix) + stamp + "Z-" + sequence + file_suffix));
    remove_oldest();
  }

  // The oldest beyond --keep-files go once nothing was written to them for
  // --min-age: a burst of batches (a backlog) fills many files in
  // milliseconds, and a tailer must have had the time to open each one. A
  // tailer that still reads one keeps its open handle (POSIX), and the name
  // is never reused.
  void remove_oldest() {
    auto files = export_files(m_folder);
    const auto now = std::filesystem::file_time_type::clock::now();
    for (std::size_t i = 0; i + m_keep < files.size() && files[i] != m_path; ++i) {
      std::error_code error;
      const auto written = std::filesystem::last_write_time(files[i], error);
      if (error || now - written < m_min_age) break;  // the rest are newer
      std::filesystem::remove(files[i], error);
    }
  }

  std::filesystem::path m_folder;
  std::uint64_t m_max;
  std::size_t m_keep;
  std::chrono::milliseconds m_min_age;
  std::uint64_t m_sequence = 0;
  std::FILE* m_file = nullptr;
  std::filesystem::path m_path;
  std::uint64_t m_bytes = 0;
};

int run_export(const ExportRequest& request) {
  auto db = open_for_maintenance(request.db_path);
  const EventOrigin origin{machine_id(), host_name(), database_uuid(*db)};
  DestinationState destination = open_destination(*db, request.name);
  const bool to_stdout = request.out == "-";
  std::optional<FolderSink> folder;
  if (!to_stdout) folder.emplace(utf8_path(request.out), request.max_file_bytes, request.keep_files, request.min_age);
  if (to_stdout) stdout_bytes_as_written();
  install_stop_handlers();

  EventFeed feed(*db);
  std::uint64_t rows = 0, renamed = 0;
  std::string lines;
  // One batch of lines out, whole, before any cursor moves.
  auto write = [&](const std::vector<FeedEvent>& events) {
    event_lines(lines, feed, events, origin);
    try {
      if (to_stdout) {
        std::cout.write(lines.data(), static_cast<std::streamsize>(lines.size()));
        std::cout.flush();
        if (!std::cout) throw Error("writing to standard output failed");
      } else {
        folder->write(lines);
      }
    } catch (const std::exception& e) {
      record_destination_error(*db, request.name, e.what());
      throw;
    }
    return true;
  };
  for (;;) {
    // Events whose names came after they went: again, with the names (the
    // later line of an event_uid is the one to keep).
    renamed += resend_late_names(*db, feed, destination, request.batch, write).value_or(0);
    const std::vector<FeedEvent> events = feed.next(destination.shipped_through, request.batch);
    if (events.empty()) {
      if (!request.follow || !stop_requested().empty()) break;
      std::this_thread::sleep_for(request.interval);
      if (!stop_requested().empty()) break;
      continue;
    }
    write(events);
    // Delivered: now the cursor may move.
    destination.shipped_through = events.back().event_id;
    advance_destination(*db, request.name, destination.shipped_through, events.size());
    rows += events.size();
    if (!stop_requested().empty()) break;
  }
  std::cerr << "etwaudit export: " << with_thousands(rows) << " event row" << (rows == 1 ? "" : "s") << " to "
            << (to_stdout ? std::string("standard output")
                          : utf8_name(folder->current().empty() ? utf8_path(request.out) : folder->current()))
            << "; '" << request.name << "' now has every event up to id " << destination.shipped_through << "\n";
  if (renamed > 0)
    std::cerr << "etwaudit export: " << with_thousands(renamed)
              << " event rows written again with a name learned after they went\n";
  return 0;
}

}  // namespace

int export_command(int argc, const char* const* argv) {
  cxxopts::Options options("etwaudit export",
                           "Write the events not yet exported as JSON lines (one object per event, with its "
                           "event_uid), into a folder of rotating files a log forwarder tails, or to standard "
                           "output; a cursor in the database remembers how far each export got. Runs beside a "
                           "collector.");
  // clang-format off
  options.add_options()
    ("d,db", "database to export from (default: $ETWAUDIT_DB, else audit.db)", cxxopts::value<std::string>(), "FILE")
    ("format", "jsonl (one JSON object per line)", cxxopts::value<std::string>()->default_value("jsonl"), "FORMAT")
    ("o,output", "folder to write files into, or - for standard output", cxxopts::value<std::string>(), "FOLDER")
    ("name", "the cursor's name (default: jsonl: and the folder)", cxxopts::value<std::string>(), "NAME")
    ("batch", "events per write and cursor step", cxxopts::value<std::size_t>()->default_value("10000"), "N")
    ("max-file-size", "start a new file past this size: 64MB", cxxopts::value<std::string>()->default_value("64MB"), "SIZE")
    ("keep-files", "delete the oldest files beyond this many, once --min-age old",
      cxxopts::value<std::size_t>()->default_value("20"), "N")
    ("min-age", "never delete a file written to less than this long ago (a tailer's time to read it): 5m, 30s",
      cxxopts::value<std::string>()->default_value("5m"), "AGE")
    ("follow", "keep exporting what the collector writes, until Ctrl+C or SIGTERM")
    ("interval", "with --follow, look for new events this often: 1s, 500ms",
      cxxopts::value<std::string>()->default_value("1s"), "DURATION")
    ("forget", "let the export NAME go for good: its cursor no longer holds --keep back; exports nothing",
      cxxopts::value<std::string>(), "NAME");
  options.add_options(hidden_aliases)("out", "--output's old name", cxxopts::value<std::string>(), "FOLDER");
  // clang-format on
  const auto parsed = parse_options(options, argc, argv);
  if (!parsed) return 0;
  const cxxopts::ParseResult& args = *parsed;
  if (args.count("forget")) return forget_destination_command("etwaudit export", args);
  ExportRequest request;
  request.db_path = database_argument(args, DatabaseUse::existing);
  if (args["format"].as<std::string>() != "jsonl")
    throw UsageError("--format: export writes jsonl, not '" + args["format"].as<std::string>() + "'");
  const auto output = aliased_argument(args, "output", "out");
  if (!output) throw UsageError("give --output FOLDER, or --output - for standard output");
  request.out = *output;
  if (request.out.empty()) throw UsageError("--out needs a folder, or - for standard output");
  if (request.out == "-") {
    request.name = "jsonl:-";
  } else {
    std::error_code error;
    const auto absolute = std::filesystem::absolute(utf8_path(request.out), error);
    request.name = "jsonl:" + utf8_name(error ? utf8_path(request.out) : absolute.lexically_normal());
  }
  if (args.count("name")) request.name = args["name"].as<std::string>();
  if (request.name.empty()) throw UsageError("--name must not be empty");
  request.batch = args["batch"].as<std::size_t>();
  if (request.batch == 0) throw UsageError("--batch must be at least 1");
  const auto max_size = parse_byte_size(args["max-file-size"].as<std::string>());
  if (!max_size || *max_size < 4096)
    throw UsageError("--max-file-size '" + args["max-file-size"].as<std::string>() +
                     "': expected e.g. 64MB (at least 4KB)");
  request.max_file_bytes = *max_size;
  request.keep_files = args["keep-files"].as<std::size_t>();
  if (request.keep_files == 0) throw UsageError("--keep-files must be at least 1");
  request.follow = args.count("follow") > 0;
  request.interval = interval_argument(args, "interval");
  request.min_age = interval_argument(args, "min-age");
  return run_export(request);
}

}  // namespace etwaudit
