#pragma once
// etwaudit report --html: one self-contained HTML file with charts.
//
// The page needs nothing but itself: no script, no font or style sheet from
// the network; the charts are inline SVG drawn here, so it reads the same in
// any browser, offline, and in print. Its figures come from the same SQL as
// `etwaudit query` with the same filters (the canned reports timeline,
// summary, gaps and recent, and sql/html-report.sql for the per-file and
// per-process sums), and every chart element carries its exact figures in
// data-* attributes, so that a test can compare a rendered page with the
// query output.
//
// Sections, in order: how complete the picture is (coverage, gaps, lost and
// dropped events, unresolved names, pruned detail), the totals, activity
// over time (events and bytes per bucket stacked by operation, over a band
// of collector coverage with gaps and loss marked), top files and top
// processes (bars linking to their drill-downs), one drill-down per top file
// (its processes, its latest events) and per top process (its files, its
// latest events), unresolved names by process, and the collector runs.

#include <SQLiteCpp/Database.h>

#include <cstdint>
#include <optional>
#include <string>

#include "query/filters.h"

namespace etwaudit {

struct HtmlReportRequest {
  std::string database;                // the database's path, shown in the heading
  QueryFilters filters;                // as etwaudit query takes them
  std::optional<std::int64_t> bucket;  // timeline bucket in ns (1m, 1h or 1d); none: chosen by the span
  std::size_t top = 15;                // files and processes in the bar charts
  std::size_t drill_downs = 10;        // files and processes with a drill-down section
  std::size_t drill_rows = 10;         // rows in each drill-down table
  std::int64_t generated_at = 0;       // ns since epoch, shown in the heading
};

// The timeline bucket for data spanning span_ns: 1 minute up to 6 hours,
// 1 hour up to 14 days, 1 day beyond (at most a few hundred bars).
std::int64_t timeline_bucket_for(std::int64_t span_ns);

// Text for HTML content and attribute values: & < > " ' escaped.
std::string html_escape(const std::string& text);

// Runs the queries on db (prepared by prepare_read_connection) and returns
// the page. Throws Error as run_statements does.
std::string build_html_report(SQLite::Database& db, const HtmlReportRequest& request);

}  // namespace etwaudit
