#include "query/html_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

#include "core/error.h"
#include "core/human_format.h"
#include "core/time_format.h"
#include "query/output.h"
#include "query/report.h"

namespace etwaudit {
namespace {

// ---- The figures ---------------------------------------------------------

const Report& html_report_sql() {
  return embedded_report("html-report.sql");
}

const ReportSection& section(const Report& report, const std::string& name) {
  for (const ReportSection& s : report.sections)
    if (s.name == name) return s;
  throw Error("report " + report.name + " has no section " + name);
}

const Report& canned(const std::string& name) {
  const Report* report = find_report(name);
  if (!report) throw Error("report " + name + " is missing from this build");
  return *report;
}

std::int64_t integer(const Cell& cell) {
  return cell.type == Cell::Type::null ? 0 : std::stoll(cell.text);
}
std::optional<std::int64_t> optional_integer(const Cell& cell) {
  if (cell.type == Cell::Type::null) return std::nullopt;
  return std::stoll(cell.text);
}

// What one process did to one file in the window, or what a file or a
// process did in all (then partners counts the processes or files).
struct Sums {
  std::int64_t events = 0;
  std::optional<std::int64_t> failed;  // NULL with --op, as in the reports
  std::int64_t read_bytes = 0;
  std::int64_t write_bytes = 0;
  std::int64_t disk_bytes = 0;
  std::int64_t partners = 0;
  std::int64_t last_segment = 0;  // the newest segment with its activity (0: only hourly totals)
  bool sized = false;             // some of its bytes are known
  bool moving = false;            // it has events that move bytes

  std::int64_t bytes() const { return read_bytes + write_bytes + disk_bytes; }
  // Not when all its events that move bytes had no size (fanotify's).
  bool bytes_known() const { return sized || !moving; }
  void add(const Sums& other) {
    sized = sized || other.sized;
    moving = moving || other.moving;
    events += other.events;
    if (other.failed) failed = failed.value_or(0) + *other.failed;
    read_bytes += other.read_bytes;
    write_bytes += other.write_bytes;
    disk_bytes += other.disk_bytes;
    last_segment = std::max(last_segment, other.last_segment);
  }
};

struct Pair {
  std::int64_t process_id;
  std::int64_t file_id;
  Sums sums;
};

struct FileRow {
  std::string name;
  bool unresolved = false;
};
struct ProcessRow {
  std::string image;
  std::string pid;
  std::string user;
  std::string started;
};

// A row of a ranking: the file or process id and its sums.
struct Ranked {
  std::int64_t id;
  Sums sums;
};

// The reports' rule: a row counts when it has events, or failed ones under --failed.
bool counts(const Sums& sums, bool failed_only) {
  return sums.events > 0 || (failed_only && sums.failed.value_or(0) > 0);
}

// ORDER BY bytes DESC, events DESC, failed DESC, name (NULL failed last, as SQLite sorts it).
template <typename Name>
void rank(std::vector<Ranked>& rows, Name name, bool with_disk = true) {
  std::sort(rows.begin(), rows.end(), [&](const Ranked& a, const Ranked& b) {
    const std::int64_t a_bytes = with_disk ? a.sums.bytes() : a.sums.read_bytes + a.sums.write_bytes;
    const std::int64_t b_bytes = with_disk ? b.sums.bytes() : b.sums.read_bytes + b.sums.write_bytes;
    if (a_bytes != b_bytes) return a_bytes > b_bytes;
    if (a.sums.events != b.sums.events) return a.sums.events > b.sums.events;
    if (a.sums.failed != b.sums.failed) return a.sums.failed.value_or(-1) > b.sums.failed.value_or(-1);
    const auto& a_name = name(a.id);
    const auto& b_name = name(b.id);
    if (a_name != b_name) return a_name < b_name;
    return a.id < b.id;
  });
}

// A section's SQL with these ids in place of ID_LIST.
std::string with_ids(const ReportSection& section, const std::set<std::int64_t>& ids) {
  std::string list;
  for (std::int64_t id : ids) list += (list.empty() ? "" : ",") + std::to_string(id);
  std::string sql = section.sql;
  const auto at = sql.find("ID_LIST");
  if (at == std::string::npos) throw Error("section " + section.name + " has no ID_LIST");
  return sql.replace(at, 7, list.empty() ? "NULL" : list);
}

struct RunMark {
  std::int64_t from = 0, until = 0;
  std::string run_id, source, exit_reason;
  std::int64_t lost = 0, dropped = 0;
};
struct Gap {
  std::int64_t from = 0, until = 0;
  std::string from_text, until_text, seconds;
};
struct Bar {
  std::int64_t bucket = 0;  // index: start / bucket_ns
  std::string op;
  std::int64_t events = 0;
  std::optional<std::int64_t> bytes;
};

// Everything the page shows, read before any of it is written.
struct Figures {
  std::vector<Pair> pairs;
  std::unordered_map<std::int64_t, FileRow> files;
  std::unordered_map<std::int64_t, ProcessRow> processes;
  std::vector<Ranked> top_files, top_processes;
  Sums totals;
  std::int64_t total_files = 0, total_processes = 0;
  Table operations, coverage, runs;
  std::vector<RunMark> run_marks;
  std::vector<Gap> gaps;
  std::int64_t bucket_ns = ns_per_hour;  // the timeline's (an hour for a window without data)
  std::vector<Bar> bars;
  std::optional<std::int64_t> pruned_before, totals_pruned_before;
  struct Unresolved {
    std::int64_t process_id, events, file_keys;
  };
  std::vector<Unresolved> unresolved;
  std::int64_t unresolved_events = 0;
  bool some_unsized = false;  // a pair whose events that move bytes had no sizes (fanotify's)
};

std::int64_t parse_time_cell(const Cell& cell) {
  if (cell.type == Cell::Type::null) return 0;
  return parse_iso8601(cell.text).value_or(0);
}

Params bucket_params(std::int64_t bucket_ns) {
  return {{"bucket", std::to_string(bucket_ns)}};
}

void read_pairs(SQLite::Database& db, const QueryFilters& filters, Figures& figures) {
  const Report& sql = html_report_sql();
  std::map<std::pair<std::int64_t, std::int64_t>, std::size_t> index;  // (process, file) -> its pair
  std::set<std::int64_t> file_ids, process_ids;
  for_each_row(db, section(sql, "rows"), filters, {}, [&](SQLite::Statement& row) {
    Sums sums;
    sums.events = row.getColumn(2).getInt64();
    if (!row.getColumn(3).isNull()) sums.failed = row.getColumn(3).getInt64();
    sums.read_bytes = row.getColumn(4).getInt64();
    sums.write_bytes = row.getColumn(5).getInt64();
    sums.disk_bytes = row.getColumn(6).getInt64();
    sums.last_segment = row.getColumn(7).getInt64();
    sums.sized = row.getColumn(8).getInt64() != 0;
    sums.moving = row.getColumn(9).getInt64() != 0;
    const std::int64_t process_id = row.getColumn(0).getInt64(), file_id = row.getColumn(1).getInt64();
    const auto [found, added] = index.try_emplace({process_id, file_id}, figures.pairs.size());
    if (added) {
      figures.pairs.push_back({process_id, file_id, {}});
      file_ids.insert(file_id);
      process_ids.insert(process_id);
    }
    figures.pairs[found->second].sums.add(sums);
  });
  const Table files = run_sql(db, with_ids(section(sql, "files"), file_ids), {});
  for (const auto& row : files.rows) figures.files[integer(row[0])] = {row[1].text, integer(row[2]) != 0};
  const Table processes = run_sql(db, with_ids(section(sql, "processes"), process_ids), {});
  for (const auto& row : processes.rows)
    figures.processes[integer(row[0])] = {row[1].text, row[2].text, row[3].text, row[4].text};
}

// The rankings, totals and unresolved names, added up as the reports do.
void add_up(const QueryFilters& filters, Figures& figures) {
  std::map<std::int64_t, Sums> by_file, by_process, unresolved;
  std::map<std::int64_t, std::int64_t> unresolved_keys;
  for (const Pair& pair : figures.pairs) {
    const bool counted = counts(pair.sums, filters.failed_only);
    Sums& file = by_file[pair.file_id];
    file.add(pair.sums);
    file.partners += counted;
    Sums& process = by_process[pair.process_id];
    process.add(pair.sums);
    process.partners += counted;
    figures.totals.add(pair.sums);
    figures.some_unsized = figures.some_unsized || !pair.sums.bytes_known();
    if (figures.files[pair.file_id].unresolved) {
      unresolved[pair.process_id].add(pair.sums);
      unresolved_keys[pair.process_id] += pair.sums.events > 0;
    }
  }
  for (const auto& [id, sums] : by_file) {
    if (!counts(sums, filters.failed_only)) continue;
    figures.top_files.push_back({id, sums});
    ++figures.total_files;
  }
  for (const auto& [id, sums] : by_process) {
    if (!counts(sums, filters.failed_only)) continue;
    figures.top_processes.push_back({id, sums});
    ++figures.total_processes;
  }
  rank(figures.top_files, [&](std::int64_t id) -> const std::string& { return figures.files[id].name; });
  rank(figures.top_processes, [&](std::int64_t id) -> const std::string& { return figures.processes[id].image; });
  for (const auto& [id, sums] : unresolved) {
    if (sums.events <= 0) continue;
    figures.unresolved.push_back({id, sums.events, unresolved_keys[id]});
    figures.unresolved_events += sums.events;
  }
  std::sort(figures.unresolved.begin(), figures.unresolved.end(), [&](const auto& a, const auto& b) {
    if (a.events != b.events) return a.events > b.events;
    return figures.processes[a.process_id].image < figures.processes[b.process_id].image;
  });
}

void read_time(SQLite::Database& db, const HtmlReportRequest& request, Figures& figures) {
  const Report& sql = html_report_sql();
  if (request.bucket) {
    figures.bucket_ns = *request.bucket;
  } else {
    const Table span = run_statements(db, {section(sql, "span")}, request.filters, {}).front();
    if (!span.rows.empty() && span.rows[0][0].type != Cell::Type::null && span.rows[0][1].type != Cell::Type::null)
      figures.bucket_ns = timeline_bucket_for(integer(span.rows[0][1]) - integer(span.rows[0][0]));
  }
  const Report& timeline = canned("timeline");
  const auto buckets = run_statements(db, timeline.sections, request.filters, bucket_params(figures.bucket_ns));
  for (const auto& row : buckets.front().rows)
    figures.bars.push_back({floor_div(parse_time_cell(row[0]), figures.bucket_ns), row[1].text, integer(row[2]),
                            optional_integer(row[3])});

  const auto gaps = run_statements(db, canned("gaps").sections, request.filters, {});
  for (const auto& row : gaps[0].rows)
    figures.gaps.push_back({parse_time_cell(row[0]), parse_time_cell(row[1]), row[0].text, row[1].text, row[2].text});
  figures.runs = gaps[1];
  for (const auto& row : figures.runs.rows) {
    if (row[3].type == Cell::Type::null) continue;  // a run that covered nothing
    figures.run_marks.push_back({parse_time_cell(row[3]), parse_time_cell(row[4]), row[0].text, row[1].text,
                                 row[11].text, integer(row[6]), integer(row[7])});
  }

  const Report& summary = canned("summary");
  const auto summary_tables =
      run_statements(db, {section(summary, "operations"), section(summary, "coverage")}, request.filters, {});
  figures.operations = summary_tables[0];
  figures.coverage = summary_tables[1];
  const Table retention = run_sql(db, section(sql, "retention").sql, {});
  if (!retention.rows.empty()) {
    figures.pruned_before = optional_integer(retention.rows[0][0]);
    figures.totals_pruned_before = optional_integer(retention.rows[0][1]);
  }
}

// ---- Writing -------------------------------------------------------------

const char* const style = R"(
:root { --ink: #1d2430; --muted: #5b6575; --rule: #d9dee6; --panel: #f6f8fb; --warn: #b3261e; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink);
       margin: 0 auto; max-width: 1100px; padding: 24px 28px 48px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 32px 0 10px; padding-bottom: 4px; border-bottom: 1px solid var(--rule); }
h3 { font-size: 14px; margin: 22px 0 6px; word-break: break-all; }
p.meta, .note, figcaption { color: var(--muted); }
code, td.mono, .mono { font-family: ui-monospace, "Cascadia Mono", Consolas, monospace; font-size: 12.5px; }
.figures { display: flex; flex-wrap: wrap; gap: 10px; margin: 8px 0; }
.figure { background: var(--panel); border: 1px solid var(--rule); border-radius: 6px; padding: 8px 12px; min-width: 120px; }
.figure .value { display: block; font-size: 18px; font-weight: 600; font-variant-numeric: tabular-nums; }
.figure .label { color: var(--muted); font-size: 12px; }
.figure.bad .value { color: var(--warn); }
.note.warn { color: var(--warn); }
table { border-collapse: collapse; width: 100%; margin: 6px 0 12px; }
th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid var(--rule); vertical-align: top; }
th { font-weight: 600; color: var(--muted); font-size: 12px; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.path { word-break: break-all; }
.meter { display: inline-block; height: 9px; background: #4e79a7; border-radius: 2px; vertical-align: middle; }
svg { display: block; width: 100%; height: auto; }
svg text { font: 11px system-ui, sans-serif; fill: var(--ink); }
svg .axis text { fill: var(--muted); }
svg .grid line { stroke: var(--rule); }
svg a text { fill: #1f5fa8; }
svg a:hover text { text-decoration: underline; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 14px; font-size: 12px; color: var(--muted); margin: 4px 0; }
.legend i { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 4px; vertical-align: -1px; }
a { color: #1f5fa8; text-decoration: none; }
a:hover { text-decoration: underline; }
nav a { margin-right: 12px; }
article { break-inside: avoid; }
@media print {
  body { max-width: none; padding: 0; font-size: 11px; }
  nav { display: none; }
  h2 { break-after: avoid; }
  section, figure { break-inside: avoid; }
  .figure { border-color: #999; }
}
)";

// Colours of the operations, in the ops table's order.
std::string op_colour(const std::string& op) {
  static const std::map<std::string, std::string> colours = {
      {"read", "#4e79a7"},        {"write", "#e15759"},     {"open", "#76b7b2"},        {"close", "#bab0ac"},
      {"cleanup", "#9c755f"},     {"create", "#59a14f"},    {"delete", "#b07aa1"},      {"rename", "#edc948"},
      {"set_info", "#ff9da7"},    {"flush", "#8cd17d"},     {"disk_read", "#2b5d8a"},   {"disk_write", "#a8322f"},
      {"close_write", "#f28e2b"}, {"overwrite", "#d37295"}, {"paging_read", "#a0cbe8"}, {"paging_write", "#ff9d9a"}};
  const auto found = colours.find(op);
  return found == colours.end() ? "#888888" : found->second;
}

std::string number(std::int64_t value) {
  return value < 0 ? "-" + with_thousands(static_cast<std::uint64_t>(-value))
                   : with_thousands(static_cast<std::uint64_t>(value));
}
std::string bytes_text(std::int64_t value) {
  return human_bytes(static_cast<std::uint64_t>(std::max<std::int64_t>(0, value)));
}
std::string fixed(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", value);
  return text;
}

// A round number at or above value, for an axis: 1, 2 or 5 times a power of ten.
std::int64_t nice_ceiling(std::int64_t value) {
  if (value <= 1) return 1;
  std::int64_t power = 1;
  while (power <= value / 10) power *= 10;
  for (std::int64_t step : {1, 2, 5, 10})
    if (step * power >= value) return step * power;
  return 10 * power;
}

// The same in units of 1024 (bytes): 1, 2 or 5 times 1024^k... times a power of ten.
std::int64_t nice_byte_ceiling(std::int64_t value) {
  std::int64_t unit = 1;
  while (unit <= value / 1024) unit *= 1024;
  return nice_ceiling((value + unit - 1) / unit) * unit;
}

// "2026-12-02 10:15" style labels for a time axis with this bucket; the
// first says the zone, UTC, as every time of the page is.
std::string axis_label(std::int64_t ns, std::int64_t bucket_ns, bool first) {
  const std::string iso = format_iso8601(ns);
  const std::string zone = first ? " UTC" : "";
  if (bucket_ns >= 24 * ns_per_hour) return iso.substr(0, 10) + zone;
  if (bucket_ns >= ns_per_hour) return iso.substr(5, 5) + " " + iso.substr(11, 5) + zone;
  return first ? iso.substr(0, 10) + " " + iso.substr(11, 5) + zone : iso.substr(11, 5);
}

class Page {
 public:
  explicit Page(const Figures& figures, const HtmlReportRequest& request) : m_figures(figures), m_request(request) {}
  // The whole page; the drill-downs' latest events are read from db.
  std::string write(SQLite::Database& db);

 private:
  void heading();
  void completeness();
  void totals();
  void timeline();
  void stacked_chart(const std::string& name, bool bytes, std::int64_t first, std::int64_t last);
  void coverage_band(std::int64_t first, std::int64_t last);
  void ranking(const std::string& name, const std::vector<Ranked>& rows, bool files);
  void file_drill_downs(SQLite::Database& db);
  void process_drill_downs(SQLite::Database& db);
  std::vector<Ranked> partners(std::int64_t id, bool of_file) const;
  void partner_table(const std::vector<Ranked>& rows, bool files);
  void recent_events(SQLite::Database& db, QueryFilters filters, std::int64_t last_segment);
  void unresolved();
  void runs();
  void table(const Table& table, const std::string& data_name);
  void figure(const std::string& name, const std::string& label, const std::string& value, bool bad = false);

  std::string file_label(std::int64_t id) const;
  std::string process_label(std::int64_t id) const;
  double x_of(std::int64_t ns, std::int64_t first, std::int64_t last) const;

  const Figures& m_figures;
  const HtmlReportRequest& m_request;
  std::ostringstream m_out;
  static constexpr int width = 1000;
  static constexpr int left = 72;
  static constexpr int right = 12;
};

std::string Page::file_label(std::int64_t id) const {
  const auto found = m_figures.files.find(id);
  return found == m_figures.files.end() ? "file " + std::to_string(id) : found->second.name;
}
std::string Page::process_label(std::int64_t id) const {
  const auto found = m_figures.processes.find(id);
  if (found == m_figures.processes.end()) return "process " + std::to_string(id);
  return (found->second.image.empty() ? "(unknown image)" : found->second.image) + " (pid " + found->second.pid + ")";
}

void Page::figure(const std::string& name, const std::string& label, const std::string& value, bool bad) {
  m_out << "<div class=\"figure" << (bad ? " bad" : "") << "\" data-figure=\"" << name << "\"><span class=\"value\">"
        << html_escape(value) << "</span><span class=\"label\">" << html_escape(label) << "</span></div>\n";
}

void Page::heading() {
  const QueryFilters& f = m_request.filters;
  std::string window;
  window += f.since ? format_iso8601(*f.since) : "the first event";
  window += " to ";
  window += f.until ? format_iso8601(*f.until) : "the last";
  std::string picks;
  if (f.process) picks += " · process " + *f.process;
  if (f.user) picks += " · user " + *f.user;
  if (f.path) picks += " · path " + *f.path;
  for (const std::string& excluded : f.exclude_paths) picks += " · not " + excluded;
  for (Op op : f.ops) picks += " · op " + std::string(op_name(op));
  if (f.failed_only) picks += " · failed operations only";
  m_out
      << "<header>\n<h1>File activity: " << html_escape(m_request.database) << "</h1>\n<p class=\"meta\">"
      << "from " << html_escape(window) << html_escape(picks) << " · generated "
      << html_escape(format_iso8601(m_request.generated_at)) << " by etwaudit " ETWAUDIT_VERSION "</p>\n</header>\n"
      << "<nav><a href=\"#completeness\">completeness</a><a href=\"#totals\">totals</a>"
         "<a href=\"#timeline\">over time</a><a href=\"#top-files\">top files</a>"
         "<a href=\"#top-processes\">top processes</a><a href=\"#files\">files</a>"
         "<a href=\"#processes\">processes</a><a href=\"#unresolved\">unresolved</a><a href=\"#runs\">runs</a></nav>\n";
}

void Page::completeness() {
  m_out << "<section id=\"completeness\">\n<h2>How complete this is</h2>\n<div class=\"figures\">\n";
  const Table& c = m_figures.coverage;
  auto cell = [&](const char* column) -> std::string {
    for (std::size_t i = 0; i < c.columns.size(); ++i)
      if (c.columns[i] == column && !c.rows.empty()) return c.rows[0][i].text;
    return {};
  };
  auto value = [&](const char* column) { return std::stoll("0" + cell(column)); };
  figure("runs", "collector runs", number(value("runs")));
  figure("gaps", "gaps in coverage", number(value("gaps")), value("gaps") > 0);
  figure("gap_seconds", "seconds not covered", number(value("gap_seconds")), value("gap_seconds") > 0);
  figure("lost", "events lost by the source", number(value("lost")), value("lost") > 0);
  figure("dropped", "events dropped (queue full)", number(value("dropped")), value("dropped") > 0);
  figure("bad_input", "records not understood", number(value("bad_input")), value("bad_input") > 0);
  figure("unresolved", "events on files with no name", number(m_figures.unresolved_events),
         m_figures.unresolved_events > 0);
  m_out << "</div>\n";
  if (!cell("covered_from").empty())
    m_out << "<p class=\"note\">Collectors covered " << html_escape(cell("covered_from")) << " to "
          << html_escape(cell("covered_until")) << ".</p>\n";
  if (m_figures.pruned_before)
    m_out << "<p class=\"note warn\" data-pruned-before=\"" << *m_figures.pruned_before << "\">Detail before "
          << html_escape(format_iso8601(*m_figures.pruned_before))
          << " was pruned (retention): before then the figures come from hourly totals, which count whole hours, and "
             "the latest-events tables have nothing older.</p>\n";
  if (m_figures.totals_pruned_before)
    m_out << "<p class=\"note warn\">The hourly totals per file and process before "
          << html_escape(format_iso8601(*m_figures.totals_pruned_before))
          << " were dropped to stay under --max-size; the timeline still counts those events.</p>\n";
  m_out << "</section>\n";
}

void Page::totals() {
  const Sums& t = m_figures.totals;
  m_out << "<section id=\"totals\">\n<h2>Totals</h2>\n<div class=\"figures\">\n";
  figure("events", "events", number(t.events));
  const bool known = t.bytes_known();
  figure("read_bytes", "bytes read", known ? bytes_text(t.read_bytes) : "not recorded");
  figure("write_bytes", "bytes written", known ? bytes_text(t.write_bytes) : "not recorded");
  figure("processes", "processes", number(m_figures.total_processes));
  figure("files", "files", number(m_figures.total_files));
  if (m_request.filters.ops.empty())
    figure("failed", "failed operations", number(t.failed.value_or(0)), t.failed.value_or(0) > 0);
  else
    figure("failed", "failed operations", "not counted with --op");
  m_out << "</div>\n";
  if (!known)
    m_out << "<p class=\"note\">These events have no sizes (fanotify records none: collect with eBPF for them): "
             "the bytes are not known, and files and processes are ranked by events.</p>\n";
  else if (m_figures.some_unsized)
    m_out << "<p class=\"note\">Some events have no sizes (fanotify records none: collect with eBPF for them): "
             "their bytes are not counted, and files and processes with only those rank by events, after the "
             "others.</p>\n";
  table(m_figures.operations, "operation");
  m_out << "</section>\n";
}

double Page::x_of(std::int64_t ns, std::int64_t first, std::int64_t last) const {
  const double t0 = static_cast<double>(first) * m_figures.bucket_ns;
  const double t1 = static_cast<double>(last + 1) * m_figures.bucket_ns;
  const double x = left + (static_cast<double>(ns) - t0) / (t1 - t0) * (width - left - right);
  return std::clamp(x, static_cast<double>(left), static_cast<double>(width - right));
}

void Page::timeline() {
  m_out << "<section id=\"timeline\">\n<h2>Activity over time</h2>\n";
  if (m_figures.bars.empty()) {
    m_out << "<p class=\"note\">No events in this window.</p>\n</section>\n";
    return;
  }
  std::int64_t first = m_figures.bars.front().bucket, last = first;
  for (const Bar& bar : m_figures.bars) {
    first = std::min(first, bar.bucket);
    last = std::max(last, bar.bucket);
  }
  const char* bucket_name = m_figures.bucket_ns >= 24 * ns_per_hour ? "day"
                            : m_figures.bucket_ns >= ns_per_hour    ? "hour"
                                                                    : "minute";
  m_out << "<figure>\n<figcaption>Events per " << bucket_name << ", by operation</figcaption>\n";
  stacked_chart("events", false, first, last);
  coverage_band(first, last);
  std::set<std::string> seen;
  m_out << "<div class=\"legend\">";
  for (const Bar& bar : m_figures.bars)
    if (seen.insert(bar.op).second)
      m_out << "<span><i style=\"background:" << op_colour(bar.op) << "\"></i>" << html_escape(bar.op) << "</span>";
  m_out << "<span><i style=\"background:#9fd3a4\"></i>collector running</span>"
           "<span><i style=\"background:#e34a33\"></i>gap</span>"
           "<span><i style=\"background:#f0a202\"></i>run that lost or dropped events</span></div>\n</figure>\n";
  bool any_bytes = false;
  for (const Bar& bar : m_figures.bars) any_bytes = any_bytes || bar.bytes.value_or(0) > 0;
  if (any_bytes) {
    m_out << "<figure>\n<figcaption>Bytes per " << bucket_name << ", by operation</figcaption>\n";
    stacked_chart("bytes", true, first, last);
    m_out << "</figure>\n";
  }
  m_out << "</section>\n";
}

void Page::stacked_chart(const std::string& name, bool bytes, std::int64_t first, std::int64_t last) {
  constexpr int height = 190, top = 8, bottom = 22;
  std::map<std::int64_t, std::int64_t> stacks;
  for (const Bar& bar : m_figures.bars) stacks[bar.bucket] += bytes ? bar.bytes.value_or(0) : bar.events;
  std::int64_t highest = 0;
  for (const auto& [bucket, total] : stacks) highest = std::max(highest, total);
  const std::int64_t scale = bytes ? nice_byte_ceiling(highest) : nice_ceiling(highest);
  const double plot = height - top - bottom;
  m_out << "<svg class=\"chart\" data-chart=\"timeline-" << name << "\" data-bucket-ns=\"" << m_figures.bucket_ns
        << "\" viewBox=\"0 0 " << width << " " << height << "\" role=\"img\" aria-label=\"" << name
        << " over time\">\n<g class=\"grid axis\">";
  for (int i = 0; i <= 4; ++i) {
    const double y = top + plot - plot * i / 4;
    const std::int64_t tick = scale * i / 4;
    m_out << "<line x1=\"" << left << "\" x2=\"" << width - right << "\" y1=\"" << fixed(y) << "\" y2=\"" << fixed(y)
          << "\"/><text x=\"" << left - 6 << "\" y=\"" << fixed(y + 4) << "\" text-anchor=\"end\">"
          << html_escape(bytes ? bytes_text(tick) : number(tick)) << "</text>";
  }
  const std::int64_t buckets = last - first + 1;
  const int ticks = static_cast<int>(std::min<std::int64_t>(buckets, 5));
  for (int i = 0; i < ticks; ++i) {
    const std::int64_t bucket = first + (ticks == 1 ? 0 : (buckets - 1) * i / (ticks - 1));
    const double x = x_of(bucket * m_figures.bucket_ns, first, last);
    m_out << "<text x=\"" << fixed(x) << "\" y=\"" << height - 6 << "\" text-anchor=\""
          << (i == 0                        ? "start"
              : i == ticks - 1 && ticks > 1 ? "end"
                                            : "middle")
          << "\">" << html_escape(axis_label(bucket * m_figures.bucket_ns, m_figures.bucket_ns, i == 0)) << "</text>";
  }
  m_out << "</g>\n";
  const double bar_width = static_cast<double>(width - left - right) / static_cast<double>(buckets);
  const double gap = bar_width > 4 ? 1 : 0;
  std::map<std::int64_t, double> heights;  // how high each bucket's stack is drawn so far
  for (const Bar& bar : m_figures.bars) {
    const std::int64_t value = bytes ? bar.bytes.value_or(0) : bar.events;
    if (value <= 0) continue;
    const double h = plot * static_cast<double>(value) / static_cast<double>(scale);
    double& below = heights[bar.bucket];
    const double x = left + static_cast<double>(bar.bucket - first) * bar_width;
    const std::string when = format_iso8601(bar.bucket * m_figures.bucket_ns);
    m_out << "<rect class=\"segment\" data-bucket=\"" << when << "\" data-op=\"" << html_escape(bar.op)
          << "\" data-events=\"" << bar.events << "\"";
    if (bar.bytes) m_out << " data-bytes=\"" << *bar.bytes << "\"";
    m_out << " x=\"" << fixed(x) << "\" y=\"" << fixed(top + plot - below - h) << "\" width=\""
          << fixed(std::max(bar_width - gap, 0.5)) << "\" height=\"" << fixed(std::max(h, 0.5)) << "\" fill=\""
          << op_colour(bar.op) << "\"><title>" << html_escape(when) << " " << html_escape(bar.op) << ": "
          << number(bar.events) << " events" << (bar.bytes ? ", " + bytes_text(*bar.bytes) : "") << "</title></rect>\n";
    below += h;
  }
  m_out << "</svg>\n";
}

void Page::coverage_band(std::int64_t first, std::int64_t last) {
  constexpr int height = 26;
  m_out << "<svg class=\"chart\" data-chart=\"coverage\" viewBox=\"0 0 " << width << " " << height
        << "\" role=\"img\" aria-label=\"collector coverage\">\n<text x=\"" << left - 6
        << "\" y=\"12\" text-anchor=\"end\" class=\"axis\">coverage</text>\n";
  for (const RunMark& run : m_figures.run_marks) {
    const double x0 = x_of(run.from, first, last), x1 = x_of(run.until, first, last);
    m_out << "<rect class=\"covered\" data-run=\"" << html_escape(run.run_id) << "\" x=\"" << fixed(x0)
          << "\" y=\"3\" width=\"" << fixed(std::max(x1 - x0, 1.0)) << "\" height=\"12\" fill=\"#9fd3a4\"><title>run "
          << html_escape(run.run_id) << " (" << html_escape(run.source)
          << "): " << html_escape(format_iso8601(run.from)) << " to " << html_escape(format_iso8601(run.until)) << ", "
          << html_escape(run.exit_reason) << "</title></rect>\n";
  }
  for (const Gap& gap : m_figures.gaps) {
    const double x0 = x_of(gap.from, first, last), x1 = x_of(gap.until, first, last);
    m_out << "<rect class=\"gap\" data-from=\"" << html_escape(gap.from_text) << "\" data-until=\""
          << html_escape(gap.until_text) << "\" x=\"" << fixed(x0) << "\" y=\"3\" width=\""
          << fixed(std::max(x1 - x0, 2.0))
          << "\" height=\"12\" fill=\"#e34a33\"><title>no collector: " << html_escape(gap.from_text) << " to "
          << html_escape(gap.until_text) << " (" << html_escape(gap.seconds) << " s)</title></rect>\n";
  }
  for (const RunMark& run : m_figures.run_marks) {
    if (run.lost == 0 && run.dropped == 0) continue;
    const double x = (x_of(run.from, first, last) + x_of(run.until, first, last)) / 2;
    m_out << "<path class=\"loss\" data-run=\"" << html_escape(run.run_id) << "\" data-lost=\"" << run.lost
          << "\" data-dropped=\"" << run.dropped << "\" d=\"M" << fixed(x)
          << " 16 l-6 9 h12 z\" fill=\"#f0a202\"><title>run " << html_escape(run.run_id) << ": " << number(run.lost)
          << " lost by the source, " << number(run.dropped) << " dropped</title></path>\n";
  }
  m_out << "</svg>\n";
}

void Page::ranking(const std::string& name, const std::vector<Ranked>& rows, bool files) {
  const std::size_t shown = std::min(rows.size(), m_request.top);
  m_out << "<section id=\"" << name << "\">\n<h2>" << (files ? "Top files" : "Top processes") << "</h2>\n";
  if (shown == 0) {
    m_out << "<p class=\"note\">None in this window.</p>\n</section>\n";
    return;
  }
  bool by_bytes = false;
  for (std::size_t i = 0; i < shown; ++i) by_bytes = by_bytes || rows[i].sums.bytes() > 0;
  m_out << "<p class=\"note\">By " << (by_bytes ? "bytes read and written (disk I/O included)" : "events") << "; "
        << rows.size() << " in all. Each name leads to its drill-down.</p>\n";
  constexpr int row_height = 22, label_width = 420, value_width = 190;
  const int bar_space = width - label_width - value_width;
  const double scale = static_cast<double>(
      std::max<std::int64_t>(1, by_bytes ? rows.front().sums.bytes()
                                         : std::max_element(rows.begin(), rows.begin() + shown, [](auto& a, auto& b) {
                                             return a.sums.events < b.sums.events;
                                           })->sums.events));
  m_out << "<svg class=\"chart\" data-chart=\"" << name << "\" viewBox=\"0 0 " << width << " " << row_height * shown + 4
        << "\" role=\"img\" aria-label=\"" << name << "\">\n";
  for (std::size_t i = 0; i < shown; ++i) {
    const Ranked& row = rows[i];
    const double y = static_cast<double>(i) * row_height + 2;
    const std::string label = files ? file_label(row.id) : process_label(row.id);
    m_out << "<g class=\"row\"";
    if (files) {
      m_out << " data-path=\"" << html_escape(file_label(row.id)) << "\"";
    } else {
      const auto found = m_figures.processes.find(row.id);
      if (found != m_figures.processes.end())
        m_out << " data-process=\"" << html_escape(found->second.image) << "\" data-pid=\"" << found->second.pid
              << "\"";
    }
    m_out << " data-read-bytes=\"" << row.sums.read_bytes << "\" data-write-bytes=\"" << row.sums.write_bytes
          << "\" data-disk-bytes=\"" << row.sums.disk_bytes << "\" data-events=\"" << row.sums.events << "\" data-"
          << (files ? "processes" : "files") << "=\"" << row.sums.partners << "\"";
    if (row.sums.failed) m_out << " data-failed=\"" << *row.sums.failed << "\"";
    m_out << ">";
    const bool drilled = i < m_request.drill_downs;
    if (drilled) m_out << "<a href=\"#" << (files ? "file-" : "process-") << i + 1 << "\">";
    m_out << "<text x=\"0\" y=\"" << fixed(y + 14) << "\">" << html_escape(shorten_path(label, 64)) << "<title>"
          << html_escape(label) << "</title></text>";
    if (drilled) m_out << "</a>";
    double x = label_width;
    auto bar = [&](std::int64_t value, const char* colour, const char* what) {
      if (value <= 0) return;
      const double w = bar_space * static_cast<double>(value) / scale;
      m_out << "<rect class=\"" << what << "\" x=\"" << fixed(x) << "\" y=\"" << fixed(y + 3) << "\" width=\""
            << fixed(std::max(w, 0.5)) << "\" height=\"" << row_height - 7 << "\" fill=\"" << colour << "\"><title>"
            << what << ": " << bytes_text(value) << "</title></rect>";
      x += w;
    };
    if (by_bytes) {
      bar(row.sums.read_bytes, "#4e79a7", "read");
      bar(row.sums.write_bytes, "#e15759", "write");
      bar(row.sums.disk_bytes, "#76b7b2", "disk");
    } else {
      const double w = bar_space * static_cast<double>(row.sums.events) / scale;
      m_out << "<rect class=\"events\" x=\"" << fixed(x) << "\" y=\"" << fixed(y + 3) << "\" width=\""
            << fixed(std::max(w, 0.5)) << "\" height=\"" << row_height - 7 << "\" fill=\"#4e79a7\"/>";
    }
    m_out << "<text class=\"value\" x=\"" << width - value_width + 8 << "\" y=\"" << fixed(y + 14) << "\">"
          << (by_bytes && row.sums.bytes_known() ? html_escape(bytes_text(row.sums.bytes())) + " · " : "")
          << number(row.sums.events) << " events</text></g>\n";
  }
  m_out << "</svg>\n";
  if (by_bytes)
    m_out << "<div class=\"legend\"><span><i style=\"background:#4e79a7\"></i>read</span><span><i "
             "style=\"background:#e15759\"></i>written</span><span><i style=\"background:#76b7b2\"></i>disk "
             "I/O</span></div>\n";
  m_out << "</section>\n";
}

// The processes of a file (of_file), ranked as top-processes --path ranks
// them, or the files of a process, ranked as process-activity does: by bytes
// read and written.
std::vector<Ranked> Page::partners(std::int64_t id, bool of_file) const {
  std::vector<Ranked> rows;
  for (const Pair& pair : m_figures.pairs)
    if ((of_file ? pair.file_id : pair.process_id) == id && counts(pair.sums, m_request.filters.failed_only))
      rows.push_back({of_file ? pair.process_id : pair.file_id, pair.sums});
  if (of_file)
    rank(rows, [&](std::int64_t process) -> const std::string& { return m_figures.processes.at(process).image; });
  else
    rank(
        rows, [&](std::int64_t file) -> const std::string& { return m_figures.files.at(file).name; }, false);
  return rows;
}

// The processes of a file, or the files of a process, with a bar each.
void Page::partner_table(const std::vector<Ranked>& rows, bool files) {
  const std::size_t shown = std::min(rows.size(), m_request.drill_rows);
  std::int64_t most = 1;
  for (std::size_t i = 0; i < shown; ++i) most = std::max({most, rows[i].sums.bytes(), rows[i].sums.events});
  const bool by_bytes = shown > 0 && rows.front().sums.bytes() > 0;
  // (Where no size is known at all, a 0 beside an empty cell says nothing either.)
  auto known = [&](const Sums& s) { return s.bytes_known() && m_figures.totals.bytes_known(); };
  m_out << "<table class=\"partners\"><tr><th>" << (files ? "file" : "process")
        << "</th><th class=\"num\">read</th><th class=\"num\">written</th><th class=\"num\">events</th>"
           "<th class=\"num\">failed</th><th></th></tr>\n";
  for (std::size_t i = 0; i < shown; ++i) {
    const Sums& s = rows[i].sums;
    const double share = static_cast<double>(by_bytes ? s.bytes() : s.events) /
                         static_cast<double>(by_bytes ? rows.front().sums.bytes() : std::max<std::int64_t>(1, most));
    m_out << "<tr data-partner=\"" << html_escape(files ? file_label(rows[i].id) : process_label(rows[i].id))
          << "\" data-events=\"" << s.events << "\"><td class=\"" << (files ? "path mono" : "path") << "\">"
          << html_escape(files ? file_label(rows[i].id) : process_label(rows[i].id)) << "</td><td class=\"num\">"
          << (known(s) ? bytes_text(s.read_bytes) : "") << "</td><td class=\"num\">"
          << (known(s) ? bytes_text(s.write_bytes) : "") << "</td><td class=\"num\">" << number(s.events)
          << "</td><td class=\"num\">" << (s.failed ? number(*s.failed) : "")
          << "</td><td style=\"width:120px\"><span class=\"meter\" style=\"width:"
          << fixed(std::clamp(share, 0.0, 1.0) * 100) << "%\"></span></td></tr>\n";
  }
  m_out << "</table>\n";
  if (rows.size() > shown) m_out << "<p class=\"note\">and " << rows.size() - shown << " more.</p>\n";
}

void Page::recent_events(SQLite::Database& db, QueryFilters filters, std::int64_t last_segment) {
  const Params params{{"limit", std::to_string(m_request.drill_rows)}};
  // The latest events are in the last segment with any, unless it holds
  // fewer than asked: looking there first spares reading the whole window.
  const Table start =
      run_sql(db, section(html_report_sql(), "segment_start").sql, {{"segment", std::to_string(last_segment)}});
  Table events;
  if (!start.rows.empty() && (!filters.since || integer(start.rows[0][0]) > *filters.since)) {
    QueryFilters narrowed = filters;
    narrowed.since = integer(start.rows[0][0]);
    events = run_statements(db, canned("recent").sections, narrowed, params).front();
  }
  if (events.rows.size() < m_request.drill_rows)
    events = run_statements(db, canned("recent").sections, filters, params).front();
  if (events.rows.empty()) {
    m_out << "<p class=\"note\">No raw events are kept for it in this window.</p>\n";
    return;
  }
  m_out << "<p class=\"note\">Latest events:</p>\n";
  table(events, "event");
}

void Page::file_drill_downs(SQLite::Database& db) {
  m_out << "<section id=\"files\">\n<h2>Files: who touched them</h2>\n";
  const std::size_t count = std::min({m_figures.top_files.size(), m_request.top, m_request.drill_downs});
  if (count == 0) m_out << "<p class=\"note\">None in this window.</p>\n";
  for (std::size_t i = 0; i < count; ++i) {
    const std::int64_t file_id = m_figures.top_files[i].id;
    m_out << "<article id=\"file-" << i + 1 << "\" data-path=\"" << html_escape(file_label(file_id)) << "\">\n<h3>"
          << html_escape(file_label(file_id)) << "</h3>\n";
    partner_table(partners(file_id, true), false);
    QueryFilters filters = m_request.filters;
    filters.file_id = file_id;
    recent_events(db, filters, m_figures.top_files[i].sums.last_segment);
    m_out << "</article>\n";
  }
  m_out << "</section>\n";
}

void Page::process_drill_downs(SQLite::Database& db) {
  m_out << "<section id=\"processes\">\n<h2>Processes: what they touched</h2>\n";
  const std::size_t count = std::min({m_figures.top_processes.size(), m_request.top, m_request.drill_downs});
  if (count == 0) m_out << "<p class=\"note\">None in this window.</p>\n";
  for (std::size_t i = 0; i < count; ++i) {
    const std::int64_t process_id = m_figures.top_processes[i].id;
    const auto found = m_figures.processes.find(process_id);
    m_out << "<article id=\"process-" << i + 1 << "\"";
    if (found != m_figures.processes.end())
      m_out << " data-process=\"" << html_escape(found->second.image) << "\" data-pid=\"" << found->second.pid << "\"";
    m_out << ">\n<h3>" << html_escape(process_label(process_id)) << "</h3>\n";
    if (found != m_figures.processes.end() && (!found->second.user.empty() || !found->second.started.empty()))
      m_out << "<p class=\"note\">" << (found->second.user.empty() ? "" : "user " + html_escape(found->second.user))
            << (found->second.started.empty() ? "" : " · started " + html_escape(found->second.started)) << "</p>\n";
    partner_table(partners(process_id, false), true);
    QueryFilters filters = m_request.filters;
    filters.process_id = process_id;
    recent_events(db, filters, m_figures.top_processes[i].sums.last_segment);
    m_out << "</article>\n";
  }
  m_out << "</section>\n";
}

void Page::unresolved() {
  m_out << "<section id=\"unresolved\">\n<h2>Unresolved names</h2>\n";
  if (m_figures.unresolved.empty()) {
    m_out << "<p class=\"note\">Every event's file has a name.</p>\n</section>\n";
    return;
  }
  m_out << "<p class=\"note\">" << number(m_figures.unresolved_events)
        << " events are on files whose name the source never gave (opened before the trace began and closed before "
           "its end, or a trace without its rundown), by process:</p>\n"
           "<table><tr><th>process</th><th class=\"num\">pid</th><th class=\"num\">events</th><th class=\"num\">"
           "file keys</th></tr>\n";
  for (const auto& row : m_figures.unresolved) {
    const auto found = m_figures.processes.find(row.process_id);
    const std::string image = found == m_figures.processes.end() ? "" : found->second.image;
    const std::string pid = found == m_figures.processes.end() ? "" : found->second.pid;
    m_out << "<tr data-process=\"" << html_escape(image) << "\" data-pid=\"" << pid << "\" data-events=\"" << row.events
          << "\" data-file-keys=\"" << row.file_keys << "\"><td class=\"path\">" << html_escape(image)
          << "</td><td class=\"num\">" << pid << "</td><td class=\"num\">" << number(row.events)
          << "</td><td class=\"num\">" << number(row.file_keys) << "</td></tr>\n";
  }
  m_out << "</table>\n</section>\n";
}

void Page::runs() {
  m_out << "<section id=\"runs\">\n<h2>Collector runs</h2>\n";
  if (m_figures.runs.rows.empty())
    m_out << "<p class=\"note\">No run covered this window.</p>\n";
  else
    table(m_figures.runs, "run");
  m_out << "</section>\n";
}

// A query result as an HTML table; each row carries its cells as data-*
// attributes named after the columns.
void Page::table(const Table& result, const std::string& data_name) {
  m_out << "<table data-table=\"" << html_escape(data_name) << "\"><tr>";
  std::vector<bool> numeric(result.columns.size(), true);
  for (const auto& row : result.rows)
    for (std::size_t c = 0; c < row.size(); ++c)
      if (row[c].type == Cell::Type::text) numeric[c] = false;
  for (std::size_t c = 0; c < result.columns.size(); ++c)
    m_out << "<th" << (numeric[c] ? " class=\"num\"" : "") << ">" << html_escape(result.columns[c]) << "</th>";
  m_out << "</tr>\n";
  for (const auto& row : result.rows) {
    m_out << "<tr>";
    for (std::size_t c = 0; c < row.size(); ++c) {
      const Cell& cell = row[c];
      const std::string& column = result.columns[c];
      std::string shown = cell.text;
      const bool bytes = column == "bytes" || column == "size";
      if (cell.type == Cell::Type::integer)
        shown = bytes                                   ? bytes_text(std::stoll(cell.text))
                : column == "pid" || column == "run_id" ? cell.text
                                                        : number(std::stoll(cell.text));
      m_out << "<td data-column=\"" << html_escape(column) << "\" data-value=\"" << html_escape(cell.text)
            << "\" class=\""
            << (numeric[c]                                ? "num"
                : column == "path" || column == "process" ? "path"
                                                          : "")
            << "\">" << html_escape(shown) << "</td>";
    }
    m_out << "</tr>\n";
  }
  m_out << "</table>\n";
}

}  // namespace

std::int64_t timeline_bucket_for(std::int64_t span_ns) {
  if (span_ns <= 6 * ns_per_hour) return ns_per_minute;
  if (span_ns <= 14 * 24 * ns_per_hour) return ns_per_hour;
  return 24 * ns_per_hour;
}

std::string html_escape(const std::string& text) {
  std::string escaped;
  escaped.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': escaped += "&amp;"; break;
      case '<': escaped += "&lt;"; break;
      case '>': escaped += "&gt;"; break;
      case '"': escaped += "&quot;"; break;
      case '\'': escaped += "&#39;"; break;
      default: escaped += c;
    }
  }
  return escaped;
}

std::string build_html_report(SQLite::Database& db, const HtmlReportRequest& request) {
  QueryFilters filters = request.filters;
  judge_path_breadth(db, filters);
  HtmlReportRequest judged = request;
  judged.filters = filters;
  Figures figures;
  read_pairs(db, filters, figures);
  add_up(filters, figures);
  read_time(db, judged, figures);
  return Page(figures, judged).write(db);
}

namespace {
std::string Page::write(SQLite::Database& db) {
  m_out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
           "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>etwaudit: "
        << html_escape(m_request.database) << "</title>\n<style>" << style << "</style>\n</head>\n<body>\n";
  heading();
  completeness();
  totals();
  timeline();
  ranking("top-files", m_figures.top_files, true);
  ranking("top-processes", m_figures.top_processes, false);
  file_drill_downs(db);
  process_drill_downs(db);
  unresolved();
  runs();
  m_out << "</body>\n</html>\n";
  return m_out.str();
}
}  // namespace

}  // namespace etwaudit
