// The etwaudit executable as a user runs it: exit codes, messages, and what
// a crash or a signal leaves in the database. POSIX only (fork, FIFOs, signals).
#ifndef _WIN32

#include <SQLiteCpp/Database.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "core/time_format.h"
#include "etl_fixtures.h"
#include "temp_dir.h"

using etwaudit::test::perfview_trace;
using etwaudit::test::TempDir;
using etwaudit::test::windows7_trace;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

struct Result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Starts etwaudit with args; stdout and stderr go to files in dir, stdin
// comes from input (/dev/null when none).
pid_t spawn(const TempDir& dir, const std::vector<std::string>& args, const std::string& input = "/dev/null") {
  const std::string out = dir.file("stdout.txt"), err = dir.file("stderr.txt");
  pid_t pid = fork();
  if (pid == 0) {
    int out_fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err_fd = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int null_fd = open(input.c_str(), O_RDONLY);
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    dup2(null_fd, 0);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(ETWAUDIT_EXE));
    for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    execv(ETWAUDIT_EXE, argv.data());
    _exit(127);
  }
  return pid;
}

int wait_for(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

Result run(const TempDir& dir, const std::vector<std::string>& args, const std::string& input = "/dev/null") {
  Result result;
  result.exit_code = wait_for(spawn(dir, args, input));
  result.out = read_file(dir.file("stdout.txt"));
  result.err = read_file(dir.file("stderr.txt"));
  return result;
}

// A run that must end by itself within a time limit: how long it took and
// the most memory it held (peak resident set). A run still going after the
// limit is killed and reported with exit code -1.
struct BoundedResult {
  Result result;
  std::chrono::milliseconds took{};
  long max_rss_kib = 0;
};

BoundedResult run_bounded(const TempDir& dir, const std::vector<std::string>& args,
                          std::chrono::seconds limit = std::chrono::seconds(30)) {
  BoundedResult bounded;
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = spawn(dir, args);
  int status = 0;
  rusage usage{};
  while (wait4(pid, &status, WNOHANG, &usage) == 0) {
    if (std::chrono::steady_clock::now() - start > limit) {
      kill(pid, SIGKILL);
      wait4(pid, &status, 0, &usage);
      status = -1;
      break;
    }
    std::this_thread::sleep_for(10ms);
  }
  bounded.took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  bounded.max_rss_kib = usage.ru_maxrss;
  bounded.result.exit_code = status == -1 ? -1 : WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  bounded.result.out = read_file(dir.file("stdout.txt"));
  bounded.result.err = read_file(dir.file("stderr.txt"));
  return bounded;
}

std::int64_t query_int(const std::string& db_path, const std::string& sql) {
  SQLite::Database db(db_path, SQLite::OPEN_READWRITE);
  return db.execAndGet(sql).getInt64();
}

std::string query_text(const std::string& db_path, const std::string& sql) {
  SQLite::Database db(db_path, SQLite::OPEN_READWRITE);
  return db.execAndGet(sql).getString();
}

// Polls until sql returns at least `at_least`; false after 20 s.
bool wait_until(const std::string& db_path, const std::string& sql, std::int64_t at_least) {
  for (auto deadline = std::chrono::steady_clock::now() + 20s; std::chrono::steady_clock::now() < deadline;) {
    try {
      if (fs::exists(db_path) && query_int(db_path, sql) >= at_least) return true;
    } catch (const std::exception&) {
      // not created or not migrated yet
    }
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

std::string replay_line(int n) {
  return "{\"time\":" + std::to_string(1796206530000000000LL + n * 1000LL) +
         ",\"pid\":77,\"process\":\"C:\\\\app.exe\",\"op\":\"read\",\"path\":\"C:\\\\data.bin\",\"offset\":" +
         std::to_string(n) + ",\"size\":4096}\n";
}

// A collector reading a FIFO that the test writes to, so the test decides
// when the collector is in the middle of its work.
struct LiveCollector {
  TempDir& dir;
  std::string fifo = dir.file("events.fifo");
  std::string db = dir.file("audit.db");
  pid_t pid = -1;
  FILE* feed = nullptr;

  explicit LiveCollector(TempDir& d, const std::vector<std::string>& extra = {}) : dir(d) {
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    // One row per event: these tests follow the rows as they are committed.
    std::vector<std::string> args = {"collect", "--source", "replay:" + fifo, "--db",
                                     db,        "--quiet",  "--coalesce-ms",  "0"};
    args.insert(args.end(), extra.begin(), extra.end());
    pid = spawn(dir, args);
    feed = fopen(fifo.c_str(), "w");  // returns once the collector opened its end
    REQUIRE(feed != nullptr);
  }
  ~LiveCollector() {
    if (feed) fclose(feed);
    if (pid > 0) {
      kill(pid, SIGKILL);
      wait_for(pid);
    }
  }
  void send(int from, int to) {
    for (int n = from; n < to; ++n) fputs(replay_line(n).c_str(), feed);
    fflush(feed);
  }
  int finish() {
    int code = wait_for(pid);
    pid = -1;
    return code;
  }
};

}  // namespace

TEST_CASE("every command answers --version and --help", "[cli]") {
  TempDir dir;
  auto version = run(dir, {"--version"});
  CHECK(version.exit_code == 0);
  CHECK_THAT(version.out, Catch::StartsWith("etwaudit ") && Catch::Contains("."));
  auto help = run(dir, {"--help"});
  CHECK(help.exit_code == 0);
  CHECK_THAT(help.out, Catch::Contains("collect") && Catch::Contains("query"));
  auto collect_help = run(dir, {"collect", "--help"});
  CHECK(collect_help.exit_code == 0);
  CHECK_THAT(collect_help.out, Catch::Contains("--source") && Catch::Contains("--batch-size"));
  auto query_help = run(dir, {"query", "--help"});
  CHECK(query_help.exit_code == 0);
  CHECK_THAT(query_help.out, Catch::Contains("--sql") && Catch::Contains("summary"));
}

TEST_CASE("usage mistakes exit with 2 and say what was wrong", "[cli]") {
  TempDir dir;
  auto none = run(dir, {});
  CHECK(none.exit_code == 2);
  auto unknown = run(dir, {"frobnicate"});
  CHECK(unknown.exit_code == 2);
  CHECK_THAT(unknown.err, Catch::Contains("unknown command 'frobnicate'"));
  auto bad_option = run(dir, {"collect", "--no-such-option"});
  CHECK(bad_option.exit_code == 2);
  CHECK_THAT(bad_option.err, Catch::Contains("no-such-option"));
  auto bad_duration = run(dir, {"collect", "--source", std::string("replay:") + ETWAUDIT_SAMPLE, "--duration", "soon"});
  CHECK(bad_duration.exit_code == 2);
  CHECK_THAT(bad_duration.err, Catch::Contains("--duration 'soon'"));
  auto bad_source = run(dir, {"collect", "--source", "carrier-pigeon"});
  CHECK(bad_source.exit_code == 2);
  CHECK_THAT(bad_source.err, Catch::Contains("unknown source 'carrier-pigeon'"));
  const std::string sample = std::string("replay:") + ETWAUDIT_SAMPLE;
  auto bad_op = run(dir, {"collect", "--source", sample, "--db", dir.file("audit.db"), "--ops", "read,chew"});
  CHECK(bad_op.exit_code == 2);
  CHECK_THAT(bad_op.err, Catch::Contains("--ops 'chew': unknown operation (expected one of: read, write,"));
  auto bad_glob = run(dir, {"collect", "--source", sample, "--db", dir.file("audit.db"), "--exclude-path", "C:\\[abc"});
  CHECK(bad_glob.exit_code == 2);
  CHECK_THAT(bad_glob.err, Catch::Contains("--exclude-path 'C:\\[abc': '[' at position 4 is never closed"));
  CHECK_FALSE(fs::exists(dir.file("audit.db")));
  auto bad_report = run(dir, {"query", "no-such-report", "--db", dir.file("x.db")});
  CHECK(bad_report.exit_code == 2);
  CHECK_THAT(bad_report.err, Catch::Contains("unknown report 'no-such-report'"));
}

TEST_CASE("the bundled sample collects and answers reports", "[cli]") {
  TempDir dir;
  const auto db = dir.file("audit.db");
  auto collect = run(dir, {"collect", "--source", std::string("replay:") + ETWAUDIT_SAMPLE, "--db", db});
  REQUIRE(collect.exit_code == 0);
  CHECK_THAT(collect.err, Catch::Contains("end of input") && Catch::Contains("written 164"));
  auto summary = run(dir, {"query", "summary", "--db", db});
  CHECK(summary.exit_code == 0);
  CHECK_THAT(summary.out, Catch::Contains("read") && Catch::Contains("write") && Catch::Contains("(10 rows)"));
  auto recent = run(dir, {"query", "recent", "--limit", "3", "--db", db});
  CHECK(recent.exit_code == 0);
  CHECK_THAT(recent.out,
             Catch::Contains("flush") && Catch::Contains("D:\\Data\\Sales_log.ldf") && Catch::Contains("(3 rows)"));
}

TEST_CASE("report --html writes one self-contained page, and never half a page", "[cli][report]") {
  TempDir dir;
  const auto db = dir.file("audit.db");
  REQUIRE(run(dir, {"collect", "--source", std::string("replay:") + ETWAUDIT_SAMPLE, "--db", db}).exit_code == 0);
  const auto html = dir.file("report.html");
  auto report = run(dir, {"report", "--db", db, "--html", html, "--process", "*WINWORD.EXE"});
  REQUIRE(report.exit_code == 0);
  CHECK_THAT(report.err, Catch::Contains("wrote " + html));
  const std::string page = read_file(html);
  CHECK_THAT(page, Catch::StartsWith("<!DOCTYPE html>") && Catch::Contains("data-chart=\"timeline-events\"") &&
                       Catch::Contains("Quarterly report.docx") && Catch::EndsWith("</html>\n"));
  // Nothing the page would fetch: no script, no link, no address.
  CHECK(page.find("<script") == std::string::npos);
  CHECK(page.find("<link") == std::string::npos);
  CHECK(page.find("http") == std::string::npos);
  CHECK_FALSE(fs::exists(html + ".partial"));

  auto missing_file = run(dir, {"report", "--db", db});
  CHECK(missing_file.exit_code == 2);
  CHECK_THAT(missing_file.err, Catch::Contains("--output FILE"));
  auto bad_bucket = run(dir, {"report", "--db", db, "--html", html, "--bucket", "2w"});
  CHECK(bad_bucket.exit_code == 2);
  CHECK_THAT(bad_bucket.err, Catch::Contains("--bucket '2w'"));
  auto nowhere = run(dir, {"report", "--db", db, "--html", dir.file("no/such/dir/report.html")});
  CHECK(nowhere.exit_code == 1);
  CHECK_THAT(nowhere.err, Catch::Contains("cannot write"));
  auto no_database = run(dir, {"report", "--db", dir.file("missing.db"), "--html", html});
  CHECK(no_database.exit_code == 1);
  CHECK(read_file(html) == page);  // the good page stays
}

TEST_CASE("a failed open is listed with its status and counted apart from the operations that happened",
          "[cli][query]") {
  TempDir dir;
  const auto db = dir.file("audit.db");
  REQUIRE(run(dir, {"collect", "--source", std::string("replay:") + ETWAUDIT_SAMPLE, "--db", db}).exit_code == 0);
  const std::string missing = "C:\\Users\\ada\\Documents\\~$arterly report.docx";
  // Word looked for its lock file, which did not exist: no file was opened.
  auto top = run(dir, {"query", "top-files", "--limit", "100", "--format", "csv", "--db", db});
  CHECK_THAT(top.out, Catch::StartsWith("path,read_bytes,write_bytes,disk_bytes,events,processes,failed\r\n") &&
                          !Catch::Contains("~$arterly"));
  auto failed = run(dir, {"query", "top-files", "--failed", "--format", "csv", "--db", db});
  CHECK(failed.exit_code == 0);
  CHECK_THAT(failed.out, Catch::EndsWith("\r\n" + missing + ",0,0,0,0,1,1\r\n"));
  auto processes = run(dir, {"query", "top-processes", "--failed", "--format", "csv", "--db", db});
  CHECK_THAT(processes.out, Catch::Contains("WINWORD.EXE,5120,WORKSTATION\\ada,,0,0,0,0,1,1\r\n"));
  auto history = run(dir, {"query", "file-history", "*~$*", "--format", "csv", "--db", db});
  CHECK_THAT(history.out, Catch::Contains(",open," + missing + ",,,1,0xC0000034,,1880,C:\\Windows\\explorer.exe,"));
  auto only_failed = run(dir, {"query", "recent", "--failed", "--limit", "5", "--format", "csv", "--db", db});
  CHECK(std::count(only_failed.out.begin(), only_failed.out.end(), '\n') == 2);  // the header and the one
  auto summary = run(dir, {"query", "summary", "--format", "jsonl", "--db", db});
  CHECK_THAT(summary.out, Catch::Contains("{\"section\":\"totals\",\"events\":163,"));
  auto timeline = run(dir, {"query", "timeline", "--failed", "--format", "csv", "--db", db});
  CHECK_THAT(timeline.out, Catch::EndsWith("\r\n2026-12-02T10:00:00.0000000Z,open,1,\r\n"));
  auto per_op = run(dir, {"query", "top-files", "--failed", "--op", "open", "--db", db});
  CHECK(per_op.exit_code == 2);
  CHECK_THAT(per_op.err, Catch::Contains("adds up failed operations of every kind together"));
  auto listed =
      run(dir, {"query", "file-history", "*.docx", "--failed", "--op", "open", "--format", "csv", "--db", db});
  CHECK(listed.exit_code == 0);
  CHECK_THAT(listed.out, Catch::Contains("0xC0000034") && !Catch::Contains("Quarterly report.docx,"));
}

TEST_CASE("a query on a missing database fails and creates nothing", "[cli]") {
  TempDir dir;
  const auto db = dir.file("missing.db");
  auto result = run(dir, {"query", "summary", "--db", db});
  CHECK(result.exit_code == 1);
  CHECK_THAT(result.err, Catch::Contains("database '" + db + "' does not exist"));
  CHECK_FALSE(fs::exists(db));
}

TEST_CASE("a database in a missing directory is an error, exit 1", "[cli]") {
  TempDir dir;
  auto result =
      run(dir, {"collect", "--source", std::string("replay:") + ETWAUDIT_SAMPLE, "--db", dir.file("nowhere/audit.db")});
  CHECK(result.exit_code == 1);
  CHECK_THAT(result.err, Catch::Contains("cannot open database") && Catch::Contains("does not exist"));
}

TEST_CASE("collect makes a database only its user can read, whatever the umask", "[cli][protection]") {
  TempDir dir;
  const auto db = dir.file("audit.db");
  const mode_t previous = umask(0);  // the child inherits it
  auto collect = run(dir, {"collect", "--source", std::string("replay:") + ETWAUDIT_SAMPLE, "--db", db});
  umask(previous);
  REQUIRE(collect.exit_code == 0);
  struct stat status {};
  REQUIRE(stat(db.c_str(), &status) == 0);
  CHECK((status.st_mode & 07777) == 0600);
}

TEST_CASE("collect refuses a database others can write, before writing anything", "[cli][protection]") {
  TempDir dir;
  const auto db = dir.file("audit.db");
  REQUIRE(run(dir, {"collect", "--source", std::string("replay:") + ETWAUDIT_SAMPLE, "--db", db}).exit_code == 0);
  REQUIRE(chmod(db.c_str(), 0660) == 0);
  const auto before = read_file(db);
  auto refused = run(dir, {"collect", "--source", std::string("replay:") + ETWAUDIT_SAMPLE, "--db", db});
  CHECK(refused.exit_code == 1);
  CHECK_THAT(refused.err,
             Catch::Contains("cannot open database '" + db + "': '" + db + "' is writable by its group (mode 0660)"));
  CHECK(read_file(db) == before);

  const auto link = dir.file("link.db");
  fs::create_symlink(db, link);
  REQUIRE(chmod(db.c_str(), 0600) == 0);
  refused = run(dir, {"collect", "--source", std::string("replay:") + ETWAUDIT_SAMPLE, "--db", link});
  CHECK(refused.exit_code == 1);
  CHECK_THAT(refused.err, Catch::Contains("'" + link + "' is a symbolic link"));
  CHECK(read_file(db) == before);
}

TEST_CASE("a bad replay line stops the run with exit 1 and keeps the events before it", "[cli]") {
  TempDir dir;
  const auto input = dir.file("events.jsonl"), db = dir.file("audit.db");
  { std::ofstream(input) << replay_line(0) << replay_line(1) << "{\"time\":0,\"pid\":1}\n" << replay_line(3); }
  auto stopped = run(dir, {"collect", "--source", "replay:" + input, "--db", db});
  CHECK(stopped.exit_code == 1);
  CHECK_THAT(stopped.err, Catch::Contains(input + ":3: missing field 'op'"));
  CHECK(query_int(db, "SELECT sum(coalesce(count, 1)) FROM events") == 2);
  CHECK(query_int(db, "SELECT bad_input FROM collector_runs") == 1);

  auto skipped = run(dir, {"collect", "--source", "replay:" + input, "--db", db, "--on-error", "skip"});
  CHECK(skipped.exit_code == 0);
  CHECK_THAT(skipped.err, Catch::Contains("warning: skipped " + input + ":3"));
  CHECK(query_int(db, "SELECT sum(coalesce(count, 1)) FROM events") == 5);
  CHECK(query_int(db, "SELECT bad_input FROM collector_runs WHERE run_id = 2") == 1);
}

TEST_CASE("a second collector on the same database is refused while the first runs", "[cli]") {
  TempDir dir;
  LiveCollector first(dir);
  first.send(0, 10);
  REQUIRE(wait_until(first.db, "SELECT count(*) FROM events", 10));
  // An open run has no end yet, only its last commit.
  CHECK(query_int(first.db, "SELECT ended IS NULL AND last_commit IS NOT NULL FROM v_runs") == 1);
  TempDir other;
  auto second = run(other, {"collect", "--source", std::string("replay:") + ETWAUDIT_SAMPLE, "--db", first.db});
  CHECK(second.exit_code == 1);
  CHECK_THAT(second.err, Catch::Contains("another etwaudit collector is writing to it"));
  // A live one too, before its source says what it would watch.
  auto live = run(other, {"collect", "--db", first.db});
  CHECK(live.exit_code == 1);
  CHECK_THAT(live.err, Catch::StartsWith("etwaudit collect: cannot open database '" + first.db +
                                         "': another etwaudit collector is writing to it") &&
                           !Catch::Contains("watching"));
  CHECK(query_int(first.db, "SELECT count(*) FROM collector_runs") == 1);
}

TEST_CASE("SIGTERM stops a collector cleanly: queue drained, run closed, exit 0", "[cli]") {
  TempDir dir;
  LiveCollector collector(dir, {"--flush-ms", "60000"});  // only the stop can commit
  collector.send(0, 500);
  REQUIRE(wait_until(collector.db, "SELECT count(*) FROM collector_runs", 1));
  std::this_thread::sleep_for(200ms);  // let the source hand the lines over
  kill(collector.pid, SIGTERM);
  CHECK(collector.finish() == 0);
  CHECK(query_int(collector.db, "SELECT count(*) FROM events") == 500);
  CHECK(query_int(collector.db, "SELECT exit_reason = 'stopped by SIGTERM' FROM collector_runs") == 1);
}

TEST_CASE("etwaudit stop makes the collector drain, commit and close its run, and waits for it", "[cli][stop]") {
  TempDir dir;
  LiveCollector collector(dir, {"--flush-ms", "60000"});  // only the stop can commit
  collector.send(0, 300);
  REQUIRE(wait_until(collector.db, "SELECT count(*) FROM collector_runs", 1));
  std::this_thread::sleep_for(200ms);  // let the source hand the lines over
  auto stop = run(dir, {"stop", "--db", collector.db});
  CHECK(stop.exit_code == 0);
  CHECK_THAT(stop.out, Catch::Contains("asked the collector of run 1 (pid " + std::to_string(collector.pid) + ")") &&
                           Catch::Contains("run 1 ended: stopped by SIGTERM"));
  CHECK(collector.finish() == 0);
  CHECK(query_int(collector.db, "SELECT count(*) FROM events") == 300);
  // Nothing runs now: saying so is no error.
  auto again = run(dir, {"stop", "--db", collector.db});
  CHECK(again.exit_code == 0);
  CHECK_THAT(again.out, Catch::Contains("no collector is writing to"));
}

TEST_CASE("etwaudit stop never signals a process that is not the collector", "[cli][stop]") {
  TempDir dir;
  // A run left open by a collector that died, its pid now another program's.
  const std::string db = dir.file("audit.db");
  REQUIRE(
      run(dir, {"collect", "--source", std::string("replay:") + ETWAUDIT_SAMPLE, "--db", db, "--quiet"}).exit_code ==
      0);
  {
    SQLite::Database write(db, SQLite::OPEN_READWRITE);
    write.exec("UPDATE collector_runs SET stopped_at = NULL, exit_reason = NULL, pid = " + std::to_string(getppid()));
  }
  auto stop = run(dir, {"stop", "--db", db});
  CHECK(stop.exit_code == 0);  // no writer lock: nothing is signalled
  CHECK_THAT(stop.out, Catch::Contains("run 1 was left open: its collector is gone"));
  CHECK(run(dir, {"stop", "--db", db, "--timeout", "soon"}).exit_code == 2);
  CHECK(run(dir, {"stop", "--db", dir.file("missing.db")}).exit_code == 1);
}

TEST_CASE("kill -9 mid-run loses at most the batch in flight and leaves a sound database", "[cli]") {
  TempDir dir;
  std::string db;
  {
    LiveCollector collector(dir, {"--batch-size", "100", "--flush-ms", "20"});
    db = collector.db;
    collector.send(0, 1000);
    REQUIRE(wait_until(db, "SELECT count(*) FROM events", 1000));
    collector.send(1000, 1250);
    kill(collector.pid, SIGKILL);
    CHECK(collector.finish() == 128 + SIGKILL);
  }
  CHECK(SQLite::Database(db, SQLite::OPEN_READWRITE).execAndGet("PRAGMA integrity_check").getString() == "ok");
  const auto stored = query_int(db, "SELECT count(*) FROM events");
  CHECK(stored >= 1000);
  CHECK(stored <= 1250);
  // What is stored is exactly the first lines, without a hole...
  CHECK(query_int(db, "SELECT min(offset) = 0 AND max(offset) = count(*) - 1 FROM events") == 1);
  // ...and the run record and the summaries agree with it.
  CHECK(query_int(db, "SELECT events_written FROM collector_runs") == stored);
  CHECK(query_int(db, "SELECT sum(events) FROM activity") == stored);
  CHECK(query_int(db, "SELECT sum(events) FROM segments") == stored);

  // The next run opens it, marks the dead run, and adds to it.
  auto next = run(dir, {"collect", "--source", std::string("replay:") + ETWAUDIT_SAMPLE, "--db", db});
  CHECK(next.exit_code == 0);
  CHECK(query_int(db, "SELECT sum(coalesce(count, 1)) FROM events") == stored + 164);
  CHECK(query_int(db, "SELECT exit_reason LIKE 'interrupted%' FROM collector_runs WHERE run_id = 1") == 1);
}

TEST_CASE("query errors say what was wrong, with the right exit code", "[cli][query]") {
  TempDir dir;
  const auto db = dir.file("audit.db");
  REQUIRE(run(dir, {"collect", "--source", std::string("replay:") + ETWAUDIT_SAMPLE, "--db", db}).exit_code == 0);
  auto typo = run(dir, {"query", "top-file", "--db", db});
  CHECK(typo.exit_code == 2);
  CHECK_THAT(typo.err, Catch::Contains("unknown report 'top-file'; did you mean 'top-files'?") &&
                           Catch::Contains("process-activity PROCESS"));
  auto bad_time = run(dir, {"query", "summary", "--since", "last tuesday", "--db", db});
  CHECK(bad_time.exit_code == 2);
  CHECK_THAT(bad_time.err, Catch::Contains("--since 'last tuesday': expected a date or a time"));
  auto bad_glob = run(dir, {"query", "file-history", "C:\\[x", "--db", db});
  CHECK(bad_glob.exit_code == 2);
  CHECK_THAT(bad_glob.err, Catch::Contains("is never closed"));
  auto no_argument = run(dir, {"query", "file-history", "--db", db});
  CHECK(no_argument.exit_code == 2);
  CHECK_THAT(no_argument.err, Catch::Contains("file-history needs a path"));
  auto write = run(dir, {"query", "--sql", "DELETE FROM events_00", "--db", db});
  CHECK(write.exit_code == 1);
  CHECK_THAT(write.err, Catch::Contains("queries may only read the database: DELETE from 'events_00' is refused"));
  CHECK(query_int(db, "SELECT sum(coalesce(count, 1)) FROM events") == 164);
  auto bad_sql = run(dir, {"query", "--sql", "SELECT nonsense FROM nowhere", "--db", db});
  CHECK(bad_sql.exit_code == 1);
  CHECK_THAT(bad_sql.err, Catch::Contains("query failed: no such table: nowhere"));
}

TEST_CASE("query writes csv, json and jsonl, to a file when asked", "[cli][query]") {
  TempDir dir;
  const auto db = dir.file("audit.db");
  REQUIRE(run(dir, {"collect", "--source", std::string("replay:") + ETWAUDIT_SAMPLE, "--db", db}).exit_code == 0);
  auto csv = run(dir, {"query", "file-history", "Steuer*", "--format", "csv", "--db", db});
  CHECK(csv.exit_code == 0);
  CHECK_THAT(
      csv.out,
      Catch::StartsWith(
          "time,process,pid,user,op,path,offset,size,count,status,renamed,ppid,parent,command_line\r\n") &&
          Catch::Contains(",open,\"C:\\Users\\ada\\Documents\\Steuer, Belege \"\"2025\"\".pdf\",,,1,,,,,cbackup.exe "
                          "--job nightly\r\n"));
  const auto output = dir.file("top.json");
  auto json = run(dir, {"query", "top-files", "--limit", "1", "--format", "json", "--output", output, "--db", db});
  CHECK(json.exit_code == 0);
  CHECK(json.out.empty());
  CHECK_THAT(read_file(output), Catch::StartsWith("[\n  {\n    \"path\": \"\\\\\\\\nas01\\\\backup") &&
                                    Catch::Contains("\"write_bytes\": 20971520"));
  auto jsonl = run(dir, {"query", "recent", "--limit", "2", "--format", "jsonl", "--db", db});
  CHECK(std::count(jsonl.out.begin(), jsonl.out.end(), '\n') == 2);
  auto filtered = run(dir, {"query", "summary", "--process", "notepad.exe", "--op", "write", "--db", db});
  CHECK_THAT(filtered.out, Catch::Contains("write       3  5.7 KiB") && !Catch::Contains("read "));
}

TEST_CASE("queries run while a collector writes, without 'database is locked'", "[cli][query]") {
  TempDir dir;
  LiveCollector collector(dir, {"--batch-size", "50", "--flush-ms", "10"});
  collector.send(0, 200);
  REQUIRE(wait_until(collector.db, "SELECT count(*) FROM events", 200));
  TempDir other;
  for (int round = 0; round < 10; ++round) {
    collector.send(200 + round * 300, 500 + round * 300);
    auto summary = run(other, {"query", "summary", "--db", collector.db});
    INFO(summary.err);
    CHECK(summary.exit_code == 0);
    CHECK(summary.err.empty());
  }
}

TEST_CASE("import reads a trace once, skips it the second time unless forced, and fails clearly on junk",
          "[cli][import]") {
  TempDir dir;
  const auto db = dir.file("audit.db");
  const std::string trace = perfview_trace();
  auto first = run(dir, {"import", trace, "--db", db});
  CHECK(first.exit_code == 0);
  CHECK_THAT(first.err, Catch::Contains("written 1,791 events; named 1,791 (100.0%)"));
  auto again = run(dir, {"import", trace, "--db", db});
  CHECK(again.exit_code == 0);  // nothing to do is no failure
  CHECK_THAT(again.err, Catch::Contains("already imported as run 1") && Catch::Contains(", skipped (--force"));
  CHECK(query_int(db, "SELECT count(*) FROM events") == 1791);
  auto forced = run(dir, {"import", trace, "--db", db, "--force"});
  CHECK(forced.exit_code == 0);
  CHECK(query_int(db, "SELECT count(*) FROM collector_runs") == 2);

  const auto junk = dir.file("junk.etl");
  { std::ofstream(junk) << std::string(70000, 'j'); }
  auto broken = run(dir, {"import", junk, "--db", db});
  CHECK(broken.exit_code == 1);
  CHECK_THAT(broken.err, Catch::Contains("cannot read ETL file '" + junk + "'"));
  auto missing = run(dir, {"import", dir.file("missing.etl"), "--db", db});
  CHECK(missing.exit_code == 1);
  CHECK_THAT(missing.err, Catch::Contains("does not exist"));
  auto nothing = run(dir, {"import", "--db", db});
  CHECK(nothing.exit_code == 2);
}

TEST_CASE("import refuses a directory, a FIFO and a device at once, before touching the database", "[cli][import]") {
  TempDir dir;
  const auto db = dir.file("audit.db");
  const auto fifo = dir.file("trace.etl");
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {dir.path(), "' holds no .etl files"},  // (its trace.etl is the FIFO)
      {fifo, "' is not a regular file (a FIFO, device or socket)"},
      {"/dev/zero", "trace file '/dev/zero' is not a regular file"}};
  for (const auto& [path, message] : cases) {
    CAPTURE(path);
    const auto refused = run_bounded(dir, {"import", path, "--db", db}, 20s);
    CHECK(refused.result.exit_code == 1);
    CHECK_THAT(refused.result.err, Catch::Contains(message));
    CHECK(refused.took < 10s);
  }
  CHECK_FALSE(fs::exists(db));
}

TEST_CASE("import of a truncated or bit-flipped trace fails with exit 1, in bounded time and memory", "[cli][import]") {
  TempDir dir;
  const std::string trace = perfview_trace();
  const std::string original = read_file(trace);
  auto import = [&](const std::string& name, const std::string& bytes) {
    const auto path = dir.file(name);
    std::ofstream(path, std::ios::binary) << bytes;
    return run_bounded(dir, {"import", path, "--db", dir.file(name + ".db")});
  };
  const auto whole = import("whole.etl", original);
  REQUIRE(whole.result.exit_code == 0);

  const auto truncated = import("truncated.etl", original.substr(0, 100'000));
  CHECK(truncated.result.exit_code == 1);
  CHECK_THAT(truncated.result.err, Catch::Contains("cannot read ETL file") && Catch::Contains("truncated.etl") &&
                                       Catch::Contains("runs past the end of the file"));

  // One bit of buffer 1's SavedOffset (0xffb0): it now claims 64 MiB.
  std::string claims_64_mib = original;
  claims_64_mib[0x200 + 4 + 3] = static_cast<char>(claims_64_mib[0x200 + 4 + 3] ^ 0x04);
  const auto flipped = import("flipped.etl", claims_64_mib);
  CHECK(flipped.result.exit_code == 1);
  CHECK_THAT(flipped.result.err,
             Catch::Contains("buffer 1 at offset 0x200: compressed buffer has an uncompressed size (SavedOffset) of "
                             "0x400ffb0, more than the trace's buffer size 0x10000"));
  CAPTURE(whole.max_rss_kib, flipped.max_rss_kib);
  CHECK(flipped.max_rss_kib < whole.max_rss_kib + 32 * 1024);

  // A flipped bit in the compressed data (the first item of buffer 1 becomes a
  // match with nothing before it to copy), and in the header of the first buffer.
  std::string corrupt = original;
  corrupt[0x248 + 3] = static_cast<char>(corrupt[0x248 + 3] ^ 0x80);
  const auto in_body = import("body.etl", corrupt);
  CHECK(in_body.result.exit_code == 1);
  CHECK_THAT(in_body.result.err, Catch::Contains("buffer 1 at offset 0x200: XPRESS data is corrupt"));
  std::string first = original;
  first[0] = static_cast<char>(first[0] ^ 0x01);
  const auto in_header = import("first.etl", first);
  CHECK(in_header.result.exit_code == 1);
  CHECK_THAT(in_header.result.err, Catch::Contains("cannot read ETL file"));
  for (const auto* run : {&truncated, &flipped, &in_body, &in_header}) CHECK(run->took < 20s);
}

TEST_CASE("query --sql runs one statement that only reads, and binds --param values as data", "[cli][query]") {
  TempDir dir;
  const auto db = dir.file("audit.db");
  REQUIRE(run(dir, {"collect", "--source", std::string("replay:") + ETWAUDIT_SAMPLE, "--db", db}).exit_code == 0);
  auto two = run(dir, {"query", "--sql", "select 1; select 2", "--db", db});
  CHECK(two.exit_code == 1);
  CHECK_THAT(two.err, Catch::Contains("one statement at a time, please: found 'select 2' after the first one"));
  auto sneaky = run(dir, {"query", "--sql", "SELECT count(*) FROM events; DELETE FROM events", "--db", db});
  CHECK(sneaky.exit_code == 1);
  const auto copy = dir.file("copy.db");
  auto vacuum = run(dir, {"query", "--sql", "VACUUM INTO '" + copy + "'", "--db", db});
  CHECK(vacuum.exit_code == 1);
  CHECK_THAT(vacuum.err, Catch::Contains("queries may only read the database: ATTACH and VACUUM are refused"));
  CHECK_FALSE(fs::exists(copy));
  for (const char* sql : {"ATTACH DATABASE 'other.db' AS other", "SELECT load_extension('libevil')",
                          "PRAGMA journal_mode = DELETE", "CREATE TEMP TABLE t AS SELECT 1", "BEGIN IMMEDIATE"}) {
    CAPTURE(sql);
    auto refused = run(dir, {"query", "--sql", sql, "--db", db});
    CHECK(refused.exit_code == 1);
    CHECK_THAT(refused.err, Catch::Contains("queries may only read the database"));
  }
  CHECK_FALSE(fs::exists(dir.file("other.db")));
  CHECK(query_int(db, "SELECT sum(coalesce(count, 1)) FROM events") == 164);

  auto hex = [](const std::string& bytes) {
    std::string text;
    char digits[3];
    for (unsigned char c : bytes) {
      std::snprintf(digits, sizeof digits, "%02X", c);
      text += digits;
    }
    return text;
  };
  // No NUL: a command line cannot carry one (test_query_filters.cpp binds it).
  const std::vector<std::string> values = {"it's \"quoted\"",
                                           "100%",
                                           "a_b",
                                           "*",
                                           "[abc]",
                                           "C:\\Users\\ada\\",
                                           "one, two",
                                           "line one\nline two",
                                           std::string(100 * 1024, 'x'),
                                           "\xFF\xFE not UTF-8 \xC3(",
                                           "x'; DELETE FROM events; --",
                                           "-v",
                                           "=",
                                           ""};
  for (const std::string& value : values) {
    CAPTURE(value.substr(0, 40));
    auto bound = run(dir, {"query", "--sql", "SELECT hex(:v) AS h, length(CAST(:v AS BLOB)) AS n, typeof(:v) AS t",
                           "--param", "v=" + value, "--format", "csv", "--db", db});
    CHECK(bound.exit_code == 0);
    CHECK(bound.out == "h,n,t\r\n" + hex(value) + "," + std::to_string(value.size()) + ",text\r\n");
  }
  CHECK(query_int(db, "SELECT sum(coalesce(count, 1)) FROM events") == 164);
}

TEST_CASE("live collection on Linux records other processes and never itself or its database", "[cli][fanotify]") {
  TempDir dir;
  if (geteuid() != 0) {
    auto refused = run(dir, {"collect", "--db", dir.file("audit.db"), "--duration", "1s"});
    CHECK(refused.exit_code == 1);
    CHECK(refused.err == "etwaudit collect needs root on Linux (fanotify)\n");
    CHECK_FALSE(fs::exists(dir.file("audit.db")));
    return;
  }
  // The database lies inside the watched folder: its own writes must not feed back.
  const std::string db = dir.file("audit.db");
  pid_t collector = spawn(dir, {"collect", "--source", "fanotify", "--db", db, "--mount", dir.path().string(),
                                "--duration", "3s", "--exclude-path", "*.skip"});
  REQUIRE(wait_until(db, "SELECT count(*) FROM collector_runs", 1));
  std::this_thread::sleep_for(300ms);
  const std::string work = dir.file("work");
  CHECK(std::system(("mkdir '" + work + "' && echo hello > '" + work + "/kept.txt' && echo no > '" + work +
                     "/left.skip' && cat '" + work + "/kept.txt' > /dev/null")
                        .c_str()) == 0);
  CHECK(wait_for(collector) == 0);
  CHECK(query_int(db, "SELECT count(*) FROM v_events WHERE path = '" + work + "/kept.txt' AND op = 'write'") >= 1);
  CHECK(query_int(db, "SELECT count(*) FROM v_events WHERE path = '" + work + "/kept.txt' AND op = 'read'") >= 1);
  CHECK(query_int(db, "SELECT count(*) FROM files WHERE path LIKE '%.skip'") == 0);
  CHECK(query_int(db, "SELECT count(*) FROM files WHERE path LIKE '" + db + "%'") == 0);
  CHECK(query_int(db, "SELECT count(*) FROM processes WHERE pid = " + std::to_string(collector)) == 0);
  CHECK(query_int(db, "SELECT live FROM collector_runs") == 1);
  CHECK_THAT(read_file(dir.file("stderr.txt")), Catch::Contains("with fanotify"));
}

#endif  // _WIN32

TEST_CASE("status shows the database, its retention and the last run, and warns of a dead collector", "[cli][status]") {
  TempDir dir;
  const auto db = dir.file("audit.db");
  REQUIRE(run(dir, {"collect", "--source", std::string("replay:") + ETWAUDIT_SAMPLE, "--db", db, "--keep", "30d",
                    "--max-size", "2GB"})
              .exit_code == 0);
  auto status = run(dir, {"status", "--db", db});
  CHECK(status.exit_code == 0);
  CHECK_THAT(status.out, Catch::StartsWith("collector: not running\n"));
  CHECK_THAT(status.out, Catch::Contains("## last_run") && Catch::Contains("end of input") &&
                             Catch::Matches("[\\s\\S]*keep +30d[\\s\\S]*") &&
                             Catch::Matches("[\\s\\S]*max_bytes +2\\.0 GiB[\\s\\S]*") &&
                             Catch::Matches("[\\s\\S]*events +164[\\s\\S]*") &&
                             Catch::Matches("[\\s\\S]*failed +1[\\s\\S]*"));
  CHECK(status.err.empty());
  // A run left open an hour ago: its collector died.
  {
    using etwaudit::now_ns, etwaudit::ns_per_second;
    SQLite::Database write(db, SQLite::OPEN_READWRITE);
    write.exec("INSERT INTO collector_runs (source, live, started_at, last_commit_at) VALUES ('etw', 1, " +
               std::to_string(now_ns() - 3600 * ns_per_second) + ", " +
               std::to_string(now_ns() - 3600 * ns_per_second) + ")");
  }
  auto json = run(dir, {"status", "--db", db, "--format", "json"});
  CHECK(json.exit_code == 0);
  CHECK_THAT(json.out, Catch::Contains("\"last_run\"") && Catch::Contains("its collector is gone") &&
                           Catch::Contains("\"running\": 0"));
  CHECK_THAT(json.err, Catch::Contains("warning: run 2 was left open: its collector is gone"));
}

TEST_CASE("status tells a running collector from one that was killed, through its writer lock", "[cli][status]") {
  TempDir dir;
  TempDir other;
  LiveCollector collector(dir);
  collector.send(0, 10);
  REQUIRE(wait_until(collector.db, "SELECT count(*) FROM events", 10));
  const std::string pid = std::to_string(collector.pid);
  auto running = run(other, {"status", "--db", collector.db});
  CHECK(running.exit_code == 0);
  CHECK_THAT(running.out, Catch::StartsWith("collector: running (pid " + pid + ", run 1)\n"));
  CHECK(running.err.empty());
  auto json = run(other, {"status", "--db", collector.db, "--format", "json"});
  CHECK_THAT(json.out, Catch::Contains("\"collector\": \"running (pid " + pid +
                                       ", run 1)\",\n      \"running\": 1,\n"
                                       "      \"pid\": " +
                                       pid + ",\n      \"run_id\": 1"));

  kill(collector.pid, SIGKILL);
  collector.finish();
  auto killed = run(other, {"status", "--db", collector.db});
  CHECK(killed.exit_code == 0);
  CHECK_THAT(killed.out, Catch::StartsWith("collector: not running (run 1 was left open: its collector is gone)\n"));
  CHECK_THAT(killed.err, Catch::Contains("warning: run 1 was left open: its collector is gone"));
}

TEST_CASE("prune drops old segments beside the data it keeps, and says what it did", "[cli][prune]") {
  TempDir dir;
  const auto db = dir.file("audit.db");
  // Two hours of events: the first hour's segment is old enough to go.
  const std::string input = dir.file("two-hours.jsonl");
  {
    std::ofstream out(input);
    for (int n = 0; n < 20; ++n)
      out << "{\"time\":" << (1796206530000000000LL + n * 600 * 1000000000LL)
          << ",\"pid\":7,\"process\":\"/bin/cp\",\"op\":\"write\",\"path\":\"/f" << n % 3 << "\",\"size\":10}\n";
  }
  REQUIRE(run(dir, {"collect", "--source", "replay:" + input, "--db", db}).exit_code == 0);
  CHECK(run(dir, {"prune", "--db", db}).exit_code == 2);
  CHECK(run(dir, {"prune", "--db", db, "--max-size", "lots"}).exit_code == 2);
  CHECK(run(dir, {"prune", "--db", dir.file("none.db"), "--older-than", "1d"}).exit_code == 1);
  auto pruned = run(dir, {"prune", "--db", db, "--older-than", "1s"});
  CHECK(pruned.exit_code == 0);
  CHECK_THAT(pruned.err, Catch::Contains("etwaudit prune: deleted ") && Catch::Contains("the longest"));
  CHECK(query_int(db, "SELECT pruned_segments FROM retention") >= 1);
  CHECK(query_int(db, "SELECT count(*) FROM segments WHERE pruned IS NULL") == 1);
  // The totals still count every event; the listing says what is gone.
  auto top = run(dir, {"query", "top-processes", "--db", db, "--format", "csv"});
  CHECK_THAT(top.out, Catch::Contains(",0,200,0,20,3"));  // 200 bytes written, 20 events, 3 files
  CHECK_THAT(top.err, Catch::Contains("were pruned (retention)"));
  auto history = run(dir, {"query", "file-history", "/f*", "--db", db});
  CHECK_THAT(history.err, Catch::Contains("this listing has none older"));
}

namespace {
// n events of pid 77 reading n different files, one every 10 s from 09:00:
// 1,200 of them span more than three hours, so several segments and hours.
std::string spread_replay_line(int n) {
  return "{\"time\":" + std::to_string(1796202000000000000LL + n * 10'000'000'000LL) +
         ",\"pid\":77,\"process\":\"C:\\\\app.exe\",\"op\":\"read\",\"path\":\"C:\\\\data\\\\f" +
         std::to_string(n % 30) + ".bin\",\"offset\":" + std::to_string(n) + ",\"size\":4096}\n";
}
std::string thousands(std::int64_t n) {
  const std::string digits = std::to_string(n);
  std::string text;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) text += ',';
    text += digits[i];
  }
  return text;
}
std::size_t lines(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}
}  // namespace

TEST_CASE("a rename shows both names, in the history of either", "[cli][query]") {
  TempDir dir;
  const auto input = dir.file("events.jsonl"), db = dir.file("audit.db");
  {
    std::ofstream out(input);
    const std::string process = R"("pid":300,"process":"/usr/bin/mv",)";
    out << R"({"time":"2026-12-02T10:00:00Z",)" << process << R"("op":"write","path":"/srv/a.txt","size":5})"
        << "\n";
    for (const char* path : {"/srv/a.txt", "/srv/b.txt"})
      out << R"({"time":"2026-12-02T10:00:01Z",)" << process << R"("op":"rename","path":")" << path
          << R"(","renamed_from":"/srv/a.txt","renamed_to":"/srv/b.txt"})"
          << "\n";
    out << R"({"time":"2026-12-02T10:00:02Z",)" << process << R"("op":"read","path":"/srv/b.txt","size":5})"
        << "\n";
  }
  REQUIRE(run(dir, {"collect", "--source", "replay:" + input, "--db", db, "--quiet"}).exit_code == 0);
  auto renamed = [&](const std::string& path) {
    auto history = run(dir, {"query", "file-history", path, "--format", "jsonl", "--db", db});
    REQUIRE(history.exit_code == 0);
    std::vector<std::string> rows;
    std::istringstream lines(history.out);
    for (std::string row; std::getline(lines, row);) {
      const auto line = nlohmann::json::parse(row);
      rows.push_back(line["op"].get<std::string>() + " " + line["path"].get<std::string>() +
                     (line["renamed"].is_null() ? "" : " " + line["renamed"].get<std::string>()));
    }
    return rows;
  };
  CHECK(renamed("/srv/a.txt") == std::vector<std::string>{"write /srv/a.txt", "rename /srv/a.txt to /srv/b.txt"});
  CHECK(renamed("/srv/b.txt") == std::vector<std::string>{"rename /srv/b.txt from /srv/a.txt", "read /srv/b.txt"});
  // v_events, whole and through a filter, names both on both rows.
  for (const std::vector<std::string>& filter : {std::vector<std::string>{}, {"--path", "/srv/*"}}) {
    std::vector<std::string> args{"query",
                                  "--sql",
                                  "SELECT path, renamed_from, renamed_to FROM v_events WHERE op = 'rename' "
                                  "ORDER BY event_id",
                                  "--format",
                                  "csv",
                                  "--db",
                                  db};
    args.insert(args.end(), filter.begin(), filter.end());
    auto sql = run(dir, args);
    CHECK(sql.out ==
          "path,renamed_from,renamed_to\r\n/srv/a.txt,/srv/a.txt,/srv/b.txt\r\n/srv/b.txt,/srv/a.txt,/srv/b.txt\r\n");
  }
}

TEST_CASE("a table cut by its default limit says how many rows there are; exports hold every row", "[cli][query]") {
  TempDir dir;
  const auto input = dir.file("events.jsonl"), db = dir.file("audit.db");
  {
    std::ofstream out(input);
    for (int n = 0; n < 1200; ++n) out << spread_replay_line(n);
  }
  REQUIRE(run(dir, {"collect", "--source", "replay:" + input, "--db", db, "--quiet"}).exit_code == 0);
  const auto rows = query_int(db, "SELECT count(*) FROM events");  // after coalescing
  REQUIRE(rows > 1000);
  const std::string total = thousands(rows);

  auto table = run(dir, {"query", "file-history", "C:\\data\\*", "--db", db});
  CHECK(table.exit_code == 0);
  CHECK_THAT(table.out, Catch::EndsWith("(1000 rows)\n"));
  CHECK(table.err == "showing 1,000 of " + total + " rows (--limit N or --limit all for more)\n");
  for (const char* all : {"all", "0"}) {
    auto every = run(dir, {"query", "file-history", "C:\\data\\*", "--limit", all, "--db", db});
    CHECK(every.exit_code == 0);
    CHECK_THAT(every.out, Catch::EndsWith("(" + std::to_string(rows) + " rows)\n"));
    CHECK(every.err.empty());
  }
  auto csv = run(dir, {"query", "file-history", "C:\\data\\*", "--format", "csv", "--db", db});
  CHECK(lines(csv.out) == static_cast<std::size_t>(rows) + 1);
  CHECK(csv.err.empty());
  const auto file = dir.file("history.txt");
  auto to_file = run(dir, {"query", "file-history", "C:\\data\\*", "--output", file, "--db", db});
  CHECK(lines(read_file(file)) == static_cast<std::size_t>(rows) + 3);  // header, rule, footer
  auto asked = run(dir, {"query", "file-history", "C:\\data\\*", "--limit", "7", "--format", "jsonl", "--db", db});
  CHECK(lines(asked.out) == 7);
  CHECK(asked.err.empty());

  // The window's edges cut segments: the count still matches the listing.
  auto since = run(dir, {"query", "recent", "--since", "2026-12-02T09:40:05Z", "--db", db});
  const auto since_rows = query_int(db, "SELECT count(*) FROM v_events WHERE time >= '2026-12-02T09:40:05'");
  CHECK(since.err == "showing 50 of " + thousands(since_rows) + " rows (--limit N or --limit all for more)\n");
  auto top = run(dir, {"query", "top-files", "--db", db});
  CHECK(top.err == "showing 20 of 30 rows (--limit N or --limit all for more)\n");
  auto op = run(dir, {"query", "recent", "--op", "read", "--db", db});
  CHECK_THAT(op.err, Catch::StartsWith("showing 50 of at least "));
  auto small = run(dir, {"query", "top-files", "--path", "*f1.bin", "--db", db});
  CHECK(small.err.empty());

  for (const char* bad : {"x", "-1", "1.5", "10k"}) {
    auto refused = run(dir, {"query", "recent", "--limit", bad, "--db", db});
    CHECK(refused.exit_code == 2);
    CHECK_THAT(refused.err, Catch::Contains(std::string("--limit expects a number or 'all', got '") + bad + "'"));
  }
  auto no_limit = run(dir, {"query", "summary", "--limit", "5", "--db", db});
  CHECK(no_limit.exit_code == 2);
  CHECK_THAT(no_limit.err, Catch::Contains("--limit does not apply to summary"));
}

TEST_CASE("every option given with --sql takes effect or is refused, saying what to write", "[cli][query]") {
  TempDir dir;
  const auto db = dir.file("audit.db");
  REQUIRE(run(dir, {"collect", "--source", std::string("replay:") + ETWAUDIT_SAMPLE, "--db", db}).exit_code == 0);
  auto count = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"query", "--format", "csv", "--db", db, "--sql"});
    const Result result = run(dir, args);
    INFO(result.err);
    REQUIRE(result.exit_code == 0);
    return result.out.substr(result.out.find('\n') + 1);
  };
  const std::string since = "2026-12-02T10:16:00Z";
  const auto later = query_int(db, "SELECT count(*) FROM v_events WHERE time >= '2026-12-02T10:16:00'");
  REQUIRE(later > 0);
  REQUIRE(later < query_int(db, "SELECT count(*) FROM v_events"));
  CHECK(count({"select count(*) from v_events", "--since", since}) == std::to_string(later) + "\r\n");
  CHECK(count({"select count(*) from windowed_events", "--since", since}) == std::to_string(later) + "\r\n");
  CHECK(count({"select count(*) from v_events where time_ns >= :since", "--since", since}) ==
        std::to_string(later) + "\r\n");
  CHECK(count({"select count(*) from events_00 where id >= :since", "--since", since}) ==
        std::to_string(later) + "\r\n");
  CHECK(count({"select count(distinct process) from v_events", "--process", "notepad.exe"}) == "1\r\n");
  CHECK(count({"select :bucket", "--param", "bucket=5"}) == "5\r\n");  // --param wins over --bucket's default
  CHECK(count({"select * from v_events", "--limit", "2"}).size() > 0);
  CHECK(lines(count({"select * from v_events", "--limit", "2"})) == 2);
  CHECK(count({"/* a comment first */ select count(*) from v_events", "--since", since}) ==
        std::to_string(later) + "\r\n");
  CHECK(count({"-- a comment first\nwith recursive n(i) as (select 1 union all select i + 1 from n where i < 2) "
               "select count(*) from n, v_events",
               "--since", since}) == std::to_string(2 * later) + "\r\n");

  auto refused = [&](const std::vector<std::string>& extra, const std::string& message) {
    std::vector<std::string> args = {"query", "--db", db};
    args.insert(args.end(), extra.begin(), extra.end());
    const Result result = run(dir, args);
    CAPTURE(extra);
    CHECK(result.exit_code == 2);
    CHECK_THAT(result.err, Catch::Contains(message));
    CHECK(result.out.empty());
  };
  refused({"--sql", "select count(*) from events_00", "--since", "1h"},
          "--since with --sql narrow v_events and the windowed_* tables");
  refused({"--sql", "select count(*) from files", "--path", "*.txt", "--op", "read"}, "--path, --op with --sql narrow");
  refused({"--sql", "select 'v_events' -- v_events", "--process", "x"}, "this SQL reads none of them");
  refused({"--sql", "select count(*) from events_00 where id > :since", "--process", "x"}, "reads none of them");
  refused({"--sql", "select 1", "--param", "x=1"}, "--param x=...: the SQL has no :x");
  refused({"--sql", "select 1", "--bucket", "1m"}, "--bucket with --sql sets :bucket");
  refused({"recent", "--param", "x=1"}, "--param sets :name values of --sql");
  refused({"recent", "--bucket", "1m"}, "--bucket applies to the timeline report, not to recent");
}

TEST_CASE("tables keep long paths whole unless they go to a terminal, where --wide keeps them whole too",
          "[cli][query]") {
  TempDir dir;
  const auto db = dir.file("audit.db");
  REQUIRE(run(dir, {"collect", "--source", std::string("replay:") + ETWAUDIT_SAMPLE, "--db", db}).exit_code == 0);
  const std::string whole = "C:\\Program Files\\Microsoft SQL Server\\MSSQL16.MSSQLSERVER\\MSSQL\\Binn\\sqlservr.exe";
  const std::string shortened = "C:\\Program Files\\\u2026\\Binn\\sqlservr.exe";
  auto piped = run(dir, {"query", "recent", "--limit", "1", "--db", db});
  CHECK_THAT(piped.out, Catch::Contains(whole));
  // On a terminal: script(1) gives the command a pseudo-terminal.
  const std::string command =
      "script -qec '" + std::string(ETWAUDIT_EXE) + " query recent --limit 1 --db " + db + "' /dev/null";
  const std::string wide_command =
      "script -qec '" + std::string(ETWAUDIT_EXE) + " query recent --limit 1 --wide --db " + db + "' /dev/null";
  auto read_command = [](const std::string& shell_command) {
    std::string text;
    FILE* pipe = popen(shell_command.c_str(), "r");
    REQUIRE(pipe != nullptr);
    char buffer[4096];
    while (std::size_t n = fread(buffer, 1, sizeof buffer, pipe)) text.append(buffer, n);
    pclose(pipe);
    return text;
  };
  const std::string terminal = read_command(command);
  CHECK_THAT(terminal, Catch::Contains(shortened) && !Catch::Contains(whole));
  CHECK_THAT(read_command(wide_command), Catch::Contains(whole));
}

TEST_CASE("a folder path lists what is below it when it ends in a separator, and hints when it does not",
          "[cli][query]") {
  TempDir dir;
  const auto db = dir.file("audit.db");
  REQUIRE(run(dir, {"collect", "--source", std::string("replay:") + ETWAUDIT_SAMPLE, "--db", db}).exit_code == 0);
  auto folder = run(dir, {"query", "file-history", "C:\\Users\\ada\\Documents", "--db", db});
  CHECK(folder.exit_code == 0);
  CHECK_THAT(folder.out, Catch::EndsWith("(0 rows)\n"));
  CHECK(folder.err ==
        "etwaudit query: note: 'C:\\Users\\ada\\Documents' is a folder with 4 recorded files below it: did you mean "
        "'C:\\Users\\ada\\Documents\\*'?\n");
  auto below = run(dir, {"query", "file-history", "C:\\Users\\ada\\Documents\\", "--db", db});
  CHECK_THAT(below.out, Catch::EndsWith("(25 rows)\n"));
  CHECK(below.err.empty());
  auto option = run(dir, {"query", "top-files", "--path", "c:/users/ada/documents/", "--db", db});
  CHECK_THAT(option.out, Catch::EndsWith("(3 rows)\n"));  // the fourth only had a failed open

  auto excluded = run(dir, {"query", "process-activity", "winword.exe", "--exclude-path", "*.docx", "--exclude-path",
                            "*.dotm", "--format", "csv", "--db", db});
  CHECK(excluded.exit_code == 0);
  CHECK_THAT(excluded.out, !Catch::Contains(".docx,") && Catch::Contains("~WRD0001.tmp"));
  auto bad = run(dir, {"query", "recent", "--exclude-path", "C:\\[x", "--db", db});
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("--exclude-path 'C:\\[x'"));
  const auto page = dir.file("page.html");
  auto html = run(dir, {"report", "--html", page, "--exclude-path", "*.docx", "--db", db});
  CHECK(html.exit_code == 0);
  CHECK_THAT(read_file(page), Catch::Contains("not *.docx"));
}

namespace {
// The lines of every export file in folder, oldest file first; each file must end with a whole line.
std::vector<std::string> exported_lines(const std::string& folder, std::size_t* files = nullptr) {
  std::vector<fs::path> paths;
  for (const auto& entry : fs::directory_iterator(folder)) paths.push_back(entry.path());
  std::sort(paths.begin(), paths.end());
  if (files) *files = paths.size();
  std::vector<std::string> lines;
  for (const auto& path : paths) {
    const std::string text = read_file(path.string());
    INFO(path);
    CHECK((text.empty() || text.back() == '\n'));
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
  }
  return lines;
}
}  // namespace

TEST_CASE("export writes each event once as a JSON line, and a second export only what came since", "[cli][export]") {
  TempDir dir;
  const auto db = dir.file("audit.db"), out = dir.file("out");
  REQUIRE(
      run(dir, {"collect", "--source", std::string("replay:") + ETWAUDIT_SAMPLE, "--db", db, "--quiet"}).exit_code ==
      0);
  const auto rows = query_int(db, "SELECT count(*) FROM events");
  auto first = run(dir, {"export", "--db", db, "--out", out});
  CHECK(first.exit_code == 0);
  CHECK_THAT(first.err, Catch::StartsWith("etwaudit export: " + std::to_string(rows) + " event rows to "));
  auto lines = exported_lines(out);
  REQUIRE(static_cast<std::int64_t>(lines.size()) == rows);
  // Each line: the event as v_events has it, with where it comes from.
  const auto uuid = query_text(db, "SELECT db_uuid FROM identity");
  std::set<std::string> uids;
  for (const auto& line : lines) {
    const auto event = nlohmann::json::parse(line);
    uids.insert(event["event_uid"].get<std::string>());
    CHECK(event["event_uid"] == uuid + ":" + std::to_string(event["event_id"].get<std::int64_t>()));
    CHECK(event["db_uuid"] == uuid);
  }
  CHECK(static_cast<std::int64_t>(uids.size()) == rows);
  const auto word = nlohmann::json::parse(lines[5]);
  const auto id = word["event_id"].get<std::int64_t>();
  CHECK(word["path"] == query_text(db, "SELECT path FROM v_events WHERE event_id = " + std::to_string(id)));
  CHECK(word["process"] == query_text(db, "SELECT process FROM v_events WHERE event_id = " + std::to_string(id)));
  CHECK(word["op"] == query_text(db, "SELECT op FROM v_events WHERE event_id = " + std::to_string(id)));

  // Nothing new: nothing written. New events: only they.
  CHECK_THAT(run(dir, {"export", "--db", db, "--out", out}).err, Catch::StartsWith("etwaudit export: 0 event rows"));
  CHECK(exported_lines(out).size() == lines.size());
  const auto more = dir.file("more.jsonl");
  {
    std::ofstream file(more);
    for (int n = 0; n < 5; ++n) file << spread_replay_line(100000 + n);
  }
  REQUIRE(run(dir, {"collect", "--source", "replay:" + more, "--db", db, "--quiet", "--coalesce-ms", "0"}).exit_code ==
          0);
  CHECK(run(dir, {"export", "--db", db, "--out", out}).exit_code == 0);
  lines = exported_lines(out);
  CHECK(static_cast<std::int64_t>(lines.size()) == rows + 5);
  CHECK(query_text(db, "SELECT rows_shipped FROM destinations") == std::to_string(rows + 5));
  // Another cursor starts from the beginning, to standard output.
  auto to_stdout = run(dir, {"export", "--db", db, "--out", "-"});
  CHECK(static_cast<std::int64_t>(std::count(to_stdout.out.begin(), to_stdout.out.end(), '\n')) == rows + 5);
  CHECK(query_int(db, "SELECT count(*) FROM destinations") == 2);
}

TEST_CASE("export files rotate by new names, whole lines only, and the oldest beyond --keep-files go",
          "[cli][export]") {
  TempDir dir;
  const auto db = dir.file("audit.db"), out = dir.file("out"), input = dir.file("events.jsonl");
  {
    std::ofstream file(input);
    for (int n = 0; n < 300; ++n) file << spread_replay_line(n);
  }
  REQUIRE(run(dir, {"collect", "--source", "replay:" + input, "--db", db, "--quiet"}).exit_code == 0);
  const auto rows = query_int(db, "SELECT count(*) FROM events");
  std::size_t files = 0;
  SECTION("every line, across files of at most about 8 KB") {
    REQUIRE(run(dir, {"export", "--db", db, "--out", out, "--max-file-size", "8KB", "--batch", "7"}).exit_code == 0);
    const auto lines = exported_lines(out, &files);
    CHECK(static_cast<std::int64_t>(lines.size()) == rows);
    CHECK(files > 3);
    std::set<std::string> uids;
    for (const auto& line : lines) uids.insert(nlohmann::json::parse(line)["event_uid"].get<std::string>());
    CHECK(uids.size() == lines.size());
  }
  SECTION("--keep-files keeps the newest") {
    REQUIRE(run(dir, {"export", "--db", db, "--out", out, "--max-file-size", "8KB", "--batch", "7", "--keep-files", "2",
                      "--min-age", "1ms"})
                .exit_code == 0);
    const auto lines = exported_lines(out, &files);
    CHECK(files == 2);
    CHECK(static_cast<std::int64_t>(lines.size()) < rows);
    // The last line exported is the newest event.
    CHECK(nlohmann::json::parse(lines.back())["event_id"].get<std::int64_t>() ==
          query_int(db, "SELECT max(id) FROM events"));
  }
  SECTION("a burst of files is not deleted before --min-age: a tailer has not read them yet") {
    REQUIRE(
        run(dir, {"export", "--db", db, "--out", out, "--max-file-size", "8KB", "--batch", "7", "--keep-files", "2"})
            .exit_code == 0);
    CHECK(static_cast<std::int64_t>(exported_lines(out, &files).size()) == rows);
    CHECK(files > 2);
  }
  SECTION("a file whose last line was cut is left as it is; the next lines go to a new file") {
    REQUIRE(run(dir, {"export", "--db", db, "--out", out, "--batch", "10", "--name", "first"}).exit_code == 0);
    auto names = exported_lines(out, &files);
    REQUIRE(files == 1);
    const auto only = fs::directory_iterator(out)->path();
    { std::ofstream(only, std::ios::app) << "{\"event_uid\":\"cut by a cr"; }
    REQUIRE(run(dir, {"export", "--db", db, "--out", out, "--name", "second"}).exit_code == 0);
    std::vector<fs::path> paths;
    for (const auto& entry : fs::directory_iterator(out)) paths.push_back(entry.path());
    std::sort(paths.begin(), paths.end());
    REQUIRE(paths.size() == 2);
    CHECK(paths[0] == only);
    const std::string second = read_file(paths[1].string());
    CHECK(static_cast<std::int64_t>(std::count(second.begin(), second.end(), '\n')) == rows);
  }
}

TEST_CASE("export refuses what it cannot do, with a message", "[cli][export]") {
  TempDir dir;
  const auto db = dir.file("audit.db");
  REQUIRE(
      run(dir, {"collect", "--source", std::string("replay:") + ETWAUDIT_SAMPLE, "--db", db, "--quiet"}).exit_code ==
      0);
  auto no_out = run(dir, {"export", "--db", db});
  CHECK(no_out.exit_code == 2);
  CHECK_THAT(no_out.err, Catch::Contains("give --output FOLDER, or --output - for standard output"));
  auto csv = run(dir, {"export", "--db", db, "--out", "-", "--format", "csv"});
  CHECK(csv.exit_code == 2);
  CHECK_THAT(csv.err, Catch::Contains("export writes jsonl, not 'csv'"));
  const auto file = dir.file("a-file");
  { std::ofstream(file) << "x"; }
  auto not_folder = run(dir, {"export", "--db", db, "--out", file});
  CHECK(not_folder.exit_code == 1);
  CHECK_THAT(not_folder.err, Catch::Contains("not a folder"));
  CHECK(query_int(db, "SELECT count(*) FROM destinations WHERE rows_shipped > 0") == 0);
}

TEST_CASE("a destination gone for good is let go with --forget; status shows what each one holds back",
          "[cli][export]") {
  TempDir dir;
  const auto db = dir.file("audit.db");
  REQUIRE(
      run(dir, {"collect", "--source", std::string("replay:") + ETWAUDIT_SAMPLE, "--db", db, "--quiet"}).exit_code ==
      0);
  REQUIRE(run(dir, {"export", "--db", db, "--out", "-", "--batch", "3"}).exit_code == 0);
  REQUIRE(run(dir, {"export", "--db", db, "--out", dir.file("out")}).exit_code == 0);
  auto status = run(dir, {"status", "--db", db, "--format", "json"});
  REQUIRE(status.exit_code == 0);
  const auto destinations = nlohmann::json::parse(status.out)["destinations"];
  REQUIRE(destinations.size() == 2);
  CHECK(destinations[0]["name"] == "jsonl:-");
  CHECK(destinations[0]["pruned_unshipped"] == 0);
  CHECK(destinations[0]["holds_segments"].is_null());  // no --keep to hold back

  // An outage longer than --keep: a collector that keeps an hour leaves the
  // events the destinations have not had, and status says for which.
  const auto old_events = dir.file("old.jsonl");
  {
    std::ofstream file(old_events);
    for (int n = 0; n < 70000; ++n)
      file << "{\"time\":" << 1796202000000000000LL + n * 1000000000LL  // 19 hours
           << ",\"pid\":7,\"process\":\"C:\\\\a.exe\",\"op\":\"write\",\"path\":\"C:\\\\f.bin\",\"size\":1}\n";
  }
  auto kept =
      run(dir, {"collect", "--source", "replay:" + old_events, "--db", db, "--keep", "1h", "--coalesce-ms", "0"});
  REQUIRE(kept.exit_code == 0);
  CHECK_THAT(kept.err, Catch::Contains("segments past their age are kept until every destination has their events"));
  CHECK(query_int(db,
                  "SELECT count(*) FROM events WHERE process_id = (SELECT process_id FROM processes WHERE "
                  "image = 'C:\\a.exe')") == 70000);
  const auto held = nlohmann::json::parse(run(dir, {"status", "--db", db, "--format", "json"}).out)["destinations"];
  CHECK(held[0]["holds_segments"].get<int>() >= 18);  // a segment an hour, all but the last past --keep
  CHECK(held[1]["holds_segments"] == held[0]["holds_segments"]);

  auto forgot = run(dir, {"export", "--db", db, "--forget", "jsonl:-"});
  CHECK(forgot.exit_code == 0);
  CHECK_THAT(forgot.err, Catch::Contains("forgot 'jsonl:-'"));
  auto unknown = run(dir, {"ship", "--db", db, "--forget", "jsonl:-"});
  CHECK(unknown.exit_code == 1);
  CHECK_THAT(unknown.err, Catch::Contains("no destination 'jsonl:-'") && Catch::Contains("it has 'jsonl:/"));
  CHECK(run(dir, {"ship", "--db", db, "--forget", query_text(db, "SELECT name FROM destinations")}).exit_code == 0);
  CHECK(query_int(db, "SELECT count(*) FROM destinations") == 0);
  // Nothing holds it back now.
  CHECK(run(dir, {"prune", "--db", db, "--older-than", "1h"}).exit_code == 0);
  CHECK(query_int(db, "SELECT count(*) FROM events") <= 3600);
}

TEST_CASE("replay:- reads standard input, and a named pipe waits for a writer that starts later", "[cli][collect]") {
  TempDir dir;
  const auto input = dir.file("events.jsonl");
  {
    std::ofstream file(input);
    for (int n = 0; n < 25; ++n) file << spread_replay_line(n);
  }
  SECTION("standard input") {
    const auto db = dir.file("stdin.db");
    auto from_stdin = run(dir, {"collect", "--source", "replay:-", "--db", db, "--coalesce-ms", "0"}, input);
    CHECK(from_stdin.exit_code == 0);
    CHECK_THAT(from_stdin.err, Catch::Contains("received 25, written 25"));
    CHECK(query_int(db, "SELECT count(*) FROM events") == 25);
  }
  SECTION("a FIFO whose writer comes a second later") {
    const auto db = dir.file("fifo.db"), fifo = dir.file("late.fifo");
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    const pid_t collector = spawn(dir, {"collect", "--source", "replay:" + fifo, "--db", db, "--coalesce-ms", "0"});
    std::this_thread::sleep_for(1s);
    int status = 0;
    CHECK(waitpid(collector, &status, WNOHANG) == 0);  // still waiting, not ended with 0 events
    {
      std::ofstream writer(fifo);
      writer << read_file(input);
    }
    CHECK(wait_for(collector) == 0);
    CHECK(query_int(db, "SELECT count(*) FROM events") == 25);
  }
}

TEST_CASE("collect takes a path glob with a comma whole, not as a list", "[cli][collect]") {
  TempDir dir;
  const auto db = dir.file("audit.db");
  auto result = run(dir, {"collect", "--source", std::string("replay:") + ETWAUDIT_SAMPLE, "--db", db, "--quiet",
                          "--exclude-path", "C:\\Users\\ada\\Documents\\Steuer, Belege*"});
  REQUIRE(result.exit_code == 0);
  CHECK(query_int(db, "SELECT count(*) FROM v_events WHERE path LIKE '%Steuer, Belege%'") == 0);
  CHECK(query_int(db, "SELECT count(*) FROM v_events") > 0);
  // --ops still takes a list.
  const auto only = dir.file("only.db");
  REQUIRE(run(dir, {"collect", "--source", std::string("replay:") + ETWAUDIT_SAMPLE, "--db", only, "--quiet", "--ops",
                    "read,write"})
              .exit_code == 0);
  CHECK(query_int(only, "SELECT count(*) FROM v_events WHERE op NOT IN ('read', 'write')") == 0);
  CHECK(query_int(only, "SELECT count(DISTINCT op) FROM v_events") == 2);
}

TEST_CASE("mistyped commands and options get a suggestion; option errors speak etwaudit's words", "[cli][habits]") {
  TempDir dir;
  auto command = run(dir, {"qeury"});
  CHECK(command.exit_code == 2);
  CHECK_THAT(command.err, Catch::Contains("unknown command 'qeury'; did you mean 'query'?"));
  auto option = run(dir, {"query", "--limt", "5"});
  CHECK(option.exit_code == 2);
  CHECK_THAT(option.err, Catch::Contains("unknown option --limt; did you mean --limit?"));
  auto missing = run(dir, {"query", "summary", "--db"});
  CHECK(missing.exit_code == 2);
  CHECK_THAT(missing.err, Catch::Contains("--db needs a value (FILE)") && !Catch::Contains("Option"));
  auto number = run(dir, {"collect", "--batch-size", "many"});
  CHECK_THAT(number.err, Catch::Contains("--batch-size expects a whole number, got 'many'"));
  auto flag = run(dir, {"query", "summary", "--failed=yes"});
  CHECK_THAT(flag.err, Catch::Contains("--failed takes no value, got 'yes'"));
  // The help names what each option takes, and the command list lines up without tabs.
  auto help = run(dir, {"query", "--help"});
  CHECK_THAT(help.out, Catch::Contains("-d, --db FILE") && Catch::Contains("-n, --limit N|all") &&
                           Catch::Contains("-s, --since TIME") && !Catch::Contains(" arg "));
  auto usage = run(dir, {"--help"});
  CHECK(usage.out.find('\t') == std::string::npos);
  CHECK_THAT(usage.out, Catch::Contains("  query    answer questions"));
}

TEST_CASE("query: short options, --format in any case or from --output's extension, files only the owner reads",
          "[cli][habits]") {
  TempDir dir;
  const auto db = dir.file("audit.db");
  REQUIRE(run(dir, {"collect", "--source", std::string("replay:") + ETWAUDIT_SAMPLE, "--db", db}).exit_code == 0);
  auto upper = run(dir, {"query", "top-files", "-d", db, "-f", "CSV", "-n", "2"});
  CHECK(upper.exit_code == 0);
  CHECK_THAT(upper.out, Catch::StartsWith("path,read_bytes,"));
  CHECK(std::count(upper.out.begin(), upper.out.end(), '\n') == 3);
  const auto csv = dir.file("top.csv");
  REQUIRE(run(dir, {"query", "top-files", "-d", db, "-o", csv}).exit_code == 0);
  CHECK_THAT(read_file(csv), Catch::StartsWith("path,read_bytes,"));
  CHECK((fs::status(csv).permissions() & fs::perms::all) == (fs::perms::owner_read | fs::perms::owner_write));
  const auto json = dir.file("top.json");
  REQUIRE(run(dir, {"query", "top-files", "-d", db, "-o", json}).exit_code == 0);
  CHECK_THAT(read_file(json), Catch::StartsWith("[\n  {\n    \"path\""));
  const auto forced = dir.file("top.txt");
  REQUIRE(run(dir, {"query", "top-files", "-d", db, "-o", forced, "--format", "jsonl"}).exit_code == 0);
  CHECK_THAT(read_file(forced), Catch::StartsWith("{\"path\":"));
  // Several tables do not go into one CSV.
  auto summary = run(dir, {"query", "summary", "-d", db, "-f", "csv"});
  CHECK(summary.exit_code == 2);
  CHECK_THAT(summary.err, Catch::Contains("summary is 3 tables, and CSV holds one"));
  auto status = run(dir, {"status", "-d", db, "-f", "csv"});
  CHECK(status.exit_code == 2);
  CHECK_THAT(status.err, Catch::Contains("CSV holds one"));
  // status shows sizes as the other tables do; its JSON keeps the numbers.
  auto sizes = run(dir, {"status", "-d", db});
  CHECK_THAT(sizes.out, Catch::Matches("[\\s\\S]*\nfile_bytes +[0-9.]+ KiB\n[\\s\\S]*"));
  auto data = run(dir, {"status", "-d", db, "-f", "jsonl"});
  CHECK_THAT(data.out, Catch::Matches("[\\s\\S]*\"file_bytes\":[0-9]+,[\\s\\S]*"));
  // --op and --ops, a list or repeated.
  auto listed = run(dir, {"query", "recent", "-d", db, "--ops", "read,write", "-f", "csv", "-n", "all"});
  auto repeated = run(dir, {"query", "recent", "-d", db, "--op", "read", "--op", "write", "-f", "csv", "-n", "all"});
  CHECK(listed.exit_code == 0);
  CHECK(listed.out == repeated.out);
  CHECK(std::count(listed.out.begin(), listed.out.end(), '\n') > 10);
}

TEST_CASE("query: the schema at hand, SQL from standard input, and a hint for SQL given as a report", "[cli][habits]") {
  TempDir dir;
  const auto db = dir.file("audit.db");
  REQUIRE(run(dir, {"collect", "--source", std::string("replay:") + ETWAUDIT_SAMPLE, "--db", db}).exit_code == 0);
  auto tables = run(dir, {"query", "--tables", "-d", db});
  CHECK(tables.exit_code == 0);
  CHECK_THAT(tables.out, Catch::Matches("(.|\n)*\ncollector_runs +table\n(.|\n)*") && Catch::Contains("v_events") &&
                             !Catch::Contains("sqlite_"));
  auto schema = run(dir, {"query", "--schema", "v_runs", "-d", db});
  CHECK(schema.exit_code == 0);
  CHECK_THAT(schema.out, Catch::StartsWith("CREATE VIEW v_runs AS") && Catch::EndsWith(";\n"));
  auto everything = run(dir, {"query", "--schema", "-d", db});
  CHECK_THAT(everything.out, Catch::Contains("CREATE TABLE collector_runs") && Catch::Contains("CREATE INDEX"));
  auto typo = run(dir, {"query", "--schema", "v_run", "-d", db});
  CHECK(typo.exit_code == 2);
  CHECK_THAT(typo.err, Catch::Contains("no table or view 'v_run'; did you mean 'v_runs'?"));
  const auto sql = dir.file("count.sql");
  std::ofstream(sql) << "SELECT count(*) AS n FROM v_events";
  auto from_stdin = run(dir, {"query", "--sql-file", "-", "-d", db, "-f", "csv"}, sql);
  CHECK(from_stdin.exit_code == 0);
  CHECK(from_stdin.out == "n\r\n41\r\n");
  auto as_report = run(dir, {"query", "select 1", "-d", db});
  CHECK(as_report.exit_code == 2);
  CHECK_THAT(as_report.err, Catch::Contains("to run SQL, give it with --sql: etwaudit query --sql \"select 1\""));
}

TEST_CASE("the database: --db, else ETWAUDIT_DB, else ./audit.db; none found says where to look", "[cli][habits]") {
  TempDir dir;
  const auto db = dir.file("elsewhere.db");
  REQUIRE(run(dir, {"collect", "--source", std::string("replay:") + ETWAUDIT_SAMPLE, "--db", db}).exit_code == 0);
  const auto here = fs::current_path();
  fs::current_path(dir.path());  // a folder without audit.db
  auto none = run(dir, {"query", "summary"});
  ::setenv("ETWAUDIT_DB", db.c_str(), 1);
  auto from_environment = run(dir, {"query", "summary"});
  ::unsetenv("ETWAUDIT_DB");
  fs::current_path(here);
  CHECK(none.exit_code == 2);
  CHECK_THAT(none.err, Catch::Contains("no database audit.db here: name one with --db FILE (-d FILE) or the "
                                       "environment variable ETWAUDIT_DB (the service writes "
                                       "/var/lib/etwaudit/audit.db)"));
  CHECK(from_environment.exit_code == 0);
  CHECK_THAT(from_environment.out, Catch::Contains("## operations"));
}

TEST_CASE("times in: local dates and words; times out: UTC, or the local clock with --local", "[cli][habits]") {
  TempDir dir;
  const auto db = dir.file("audit.db");
  REQUIRE(run(dir, {"collect", "--source", std::string("replay:") + ETWAUDIT_SAMPLE, "--db", db}).exit_code == 0);
  // Berlin's rules, written out (no time zone database needed): the sample's
  // events are 10:15-10:17 UTC, 11:15-11:17 there.
  ::setenv("TZ", "CET-1CEST,M3.5.0,M10.5.0/3", 1);
  auto local_in = run(dir, {"query", "recent", "-d", db, "--since", "2026-12-02 11:17", "-f", "csv", "-n", "all"});
  auto utc_in = run(dir, {"query", "recent", "-d", db, "--since", "2026-12-02T10:17:00Z", "-f", "csv", "-n", "all"});
  auto local_out = run(dir, {"query", "recent", "-d", db, "-n", "1", "--local"});
  auto utc_out = run(dir, {"query", "recent", "-d", db, "-n", "1"});
  ::unsetenv("TZ");
  CHECK(local_in.exit_code == 0);
  CHECK(local_in.out == utc_in.out);
  CHECK(std::count(local_in.out.begin(), local_in.out.end(), '\n') > 1);
  CHECK_THAT(local_out.out, Catch::Contains("2026-12-02T11:17:16.4984424+01:00"));
  CHECK_THAT(utc_out.out, Catch::Contains("2026-12-02T10:17:16.4984424Z"));
  auto bare = run(dir, {"collect", "--source", std::string("replay:") + ETWAUDIT_SAMPLE, "--duration", "90"});
  CHECK(bare.exit_code == 2);
  CHECK_THAT(bare.err, Catch::Contains("--duration '90': a number needs its unit: 90s, 90m, 90h?"));
  auto summed = run(dir, {"collect", "--source", std::string("replay:") + ETWAUDIT_SAMPLE, "--duration", "1m30s", "-d",
                          dir.file("summed.db")});
  CHECK(summed.exit_code == 0);
  // The report's time axis says its zone.
  const auto page = dir.file("page.html");
  REQUIRE(run(dir, {"report", "-d", db, "-o", page}).exit_code == 0);
  CHECK_THAT(read_file(page), Catch::Contains(" UTC</text>"));
  // --html is --output's old name: it still works, out of the help.
  CHECK(run(dir, {"report", "-d", db, "--html", dir.file("old.html")}).exit_code == 0);
  CHECK(fs::exists(dir.file("old.html")));
  auto both = run(dir, {"report", "-d", db, "--html", page, "-o", page});
  CHECK(both.exit_code == 2);
  CHECK_THAT(both.err, Catch::Contains("--html is --output: give one of them"));
  CHECK_THAT(run(dir, {"report", "--help"}).out, !Catch::Contains("--html"));
}

TEST_CASE("a database in a folder that cannot be written is read as it is; --db takes file: URIs", "[cli][habits]") {
  TempDir dir;
  const auto folder = dir.file("evidence"), mounted = dir.file("mounted");
  fs::create_directories(folder);
  fs::create_directories(mounted);
  const auto db = folder + "/audit.db";
  REQUIRE(run(dir, {"collect", "--source", std::string("replay:") + ETWAUDIT_SAMPLE, "--db", db}).exit_code == 0);
  for (const char* suffix : {"-wal", "-shm"}) fs::remove(db + suffix);  // as a copy of the file alone has it
  // Read-only: a read-only bind mount for root (whom permissions do not stop), the folder's mode otherwise.
  std::string readable = db;
  const bool root = ::geteuid() == 0;
  if (root) {
    const std::string mount =
        "mount --bind '" + folder + "' '" + mounted + "' && mount -o remount,ro,bind '" + mounted + "' 2>/dev/null";
    if (std::system(mount.c_str()) != 0) {
      WARN("this root may not mount: the read-only check is skipped");
      return;
    }
    readable = mounted + "/audit.db";
  } else {
    fs::permissions(folder, fs::perms::owner_read | fs::perms::owner_exec);
  }
  auto summary = run(dir, {"query", "summary", "-d", readable, "-f", "jsonl"});
  auto status = run(dir, {"status", "-d", readable});
  auto uri = run(dir, {"query", "-d", "file:" + readable + "?immutable=1", "--sql",
                       "SELECT count(*) AS n FROM v_events", "-f", "csv"});
  if (root)
    std::system(("umount '" + mounted + "'").c_str());
  else
    fs::permissions(folder, fs::perms::owner_all);
  CHECK(summary.exit_code == 0);
  CHECK_THAT(summary.out, Catch::Contains("\"events\":163"));
  CHECK_THAT(summary.err, Catch::Contains("is in a folder that cannot be written: read as it is on disk (immutable)"));
  CHECK(status.exit_code == 0);
  CHECK_THAT(status.out, Catch::Contains("collector: not running"));
  CHECK(uri.exit_code == 0);
  CHECK(uri.out == "n\r\n41\r\n");
}

TEST_CASE("import: a folder of traces, JSON lines pointed to collect, a trace without file events said so",
          "[cli][import]") {
  TempDir dir;
  const auto db = dir.file("audit.db");
  const auto folder = dir.file("traces");
  fs::create_directories(folder);
  fs::copy_file(perfview_trace(), folder + "/b.ETL");
  fs::copy_file(windows7_trace(), folder + "/a.etl");
  std::ofstream(folder + "/notes.txt") << "not a trace";
  auto all = run(dir, {"import", folder, "--db", db});
  CHECK(all.exit_code == 0);
  // Both, in the order of their names; the one without file events says what to record.
  CHECK_THAT(all.err, Catch::Contains("a.etl: end of input") && Catch::Contains("b.ETL: end of input"));
  CHECK(all.err.find("a.etl: end of input") < all.err.find("b.ETL: end of input"));
  CHECK_THAT(all.err, Catch::Contains("a.etl holds no file events: it was recorded without the kernel's file I/O "
                                      "events") &&
                          Catch::Contains("wpr -start FileIO"));
  CHECK(query_int(db, "SELECT count(*) FROM collector_runs") == 2);
  // Again: each skipped, exit 0.
  auto again = run(dir, {"import", folder, "--db", db});
  CHECK(again.exit_code == 0);
  CHECK(query_int(db, "SELECT count(*) FROM collector_runs") == 2);
  // JSON lines are collect's.
  const auto jsonl = dir.file("events.jsonl");
  std::ofstream(jsonl) << "{\"time\":\"2026-12-02T10:00:00Z\",\"pid\":1,\"op\":\"read\",\"path\":\"/x\"}\n";
  auto replay = run(dir, {"import", jsonl, "--db", dir.file("other.db")});
  CHECK(replay.exit_code == 2);
  CHECK_THAT(replay.err, Catch::Contains("holds JSON lines, not an ETW trace: replay it with 'etwaudit collect "
                                         "--source replay:" +
                                         jsonl + "'"));
  CHECK_FALSE(fs::exists(dir.file("other.db")));
}

TEST_CASE("bytes fanotify never recorded are empty, not 0 B, and the ranking says it is by events", "[cli][habits]") {
  TempDir dir;
  // The sample as fanotify would record it: the same events without sizes
  // and without disk I/O (which it does not see), in another folder so that
  // they are files of their own.
  const auto unsized = dir.file("unsized.jsonl");
  {
    std::ifstream in(ETWAUDIT_SAMPLE);
    std::ofstream out(unsized);
    const std::regex size(R"(, "size": \d+)"), folder(R"(\\\\ada\\\\)");
    for (std::string line; std::getline(in, line);)
      if (line.find(R"("op": "disk_)") == std::string::npos)
        out << std::regex_replace(std::regex_replace(line, size, ""), folder, R"(\\ada\\unsized\\)") << "\n";
  }
  const auto db = dir.file("audit.db");
  REQUIRE(run(dir, {"collect", "--source", "replay:" + unsized, "--db", db}).exit_code == 0);
  auto top = run(dir, {"query", "top-files", "-d", db, "-f", "csv", "-n", "1"});
  CHECK(top.exit_code == 0);
  CHECK_THAT(top.out, Catch::StartsWith("path,read_bytes,write_bytes,disk_bytes,events,processes,failed\r\n") &&
                          Catch::Contains(",,,,"));
  CHECK_THAT(top.err, Catch::Contains("these events have no sizes (fanotify records none") &&
                          Catch::Contains("ranked by events"));
  auto json = run(dir, {"query", "summary", "-d", db, "-f", "jsonl"});
  CHECK_THAT(json.out, Catch::Contains("\"read_bytes\":null"));
  auto table = run(dir, {"query", "top-files", "-d", db, "-n", "3"});
  CHECK(table.out.find(" 0 B") == std::string::npos);

  // Beside runs with sizes: theirs count, the others' cells are empty.
  REQUIRE(run(dir, {"collect", "--source", std::string("replay:") + ETWAUDIT_SAMPLE, "--db", db}).exit_code == 0);
  auto mixed = run(dir, {"query", "top-files", "-d", db, "-f", "csv", "-n", "all"});
  CHECK_THAT(mixed.out, Catch::Contains(",20971520,"));  // the sample's backup file: 20 MiB written
  CHECK_THAT(mixed.out, Catch::Contains("unsized\\Documents\\Quarterly report.docx,,,0,32,"));
  CHECK(mixed.out.find(",20971520,") < mixed.out.find("unsized"));  // known bytes first
  CHECK_THAT(mixed.err, Catch::Contains("some events have no sizes") && Catch::Contains("rank by events, after"));
  auto summary = run(dir, {"query", "summary", "-d", db, "-f", "jsonl"});
  CHECK_THAT(summary.out, Catch::Contains("\"write_bytes\":") && !Catch::Contains("\"write_bytes\":null"));
}
