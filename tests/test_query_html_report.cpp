#include <catch2/catch.hpp>
#include <cstring>
#include <map>
#include <regex>

#include "query/html_report.h"
#include "report_fixture.h"
#include "store/retention.h"

using namespace etwaudit;
using etwaudit::test::at;
using etwaudit::test::ReportFixture;
using Rows = std::vector<std::string>;

namespace {

std::string unescape(std::string text) {
  const std::pair<const char*, const char*> entities[] = {
      {"&quot;", "\""}, {"&#39;", "'"}, {"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}};
  for (const auto& [entity, character] : entities)
    for (std::size_t at = text.find(entity); at != std::string::npos; at = text.find(entity, at + 1))
      text.replace(at, std::strlen(entity), character);
  return text;
}

using Attributes = std::map<std::string, std::string>;

// The attributes of every tag that starts with opening ("<g class=\"row\""),
// inside the element whose tag has marker (data-chart="top-files"), or anywhere.
std::vector<Attributes> tags(const std::string& html, const std::string& opening, const std::string& marker = {}) {
  std::size_t from = 0, to = html.size();
  if (!marker.empty()) {
    from = html.find(marker);
    REQUIRE(from != std::string::npos);
    const std::size_t tag_end = html.rfind('<', from);
    const std::string name = html.substr(tag_end + 1, html.find_first_of(" >", tag_end) - tag_end - 1);
    to = html.find("</" + name + ">", from);
  }
  std::vector<Attributes> found;
  static const std::regex attribute(R"re(([a-z][a-z-]*)="([^"]*)")re");
  for (std::size_t at = html.find(opening, from); at != std::string::npos && at < to; at = html.find(opening, at + 1)) {
    const std::string tag = html.substr(at, html.find('>', at) - at);
    Attributes attributes;
    for (std::sregex_iterator it(tag.begin(), tag.end(), attribute), end; it != end; ++it)
      attributes[(*it)[1]] = unescape((*it)[2]);
    found.push_back(attributes);
  }
  return found;
}

std::string page(ReportFixture& fixture, QueryFilters filters = {}) {
  HtmlReportRequest request;
  request.database = "fixture.db";
  request.filters = std::move(filters);
  request.generated_at = at("12:00:00");
  return build_html_report(fixture.db(), request);
}

// A ranking's rows as the report prints them: name|read|write|disk|events|partners|failed.
Rows ranking(const std::string& html, const std::string& chart, const char* name, const char* partners) {
  Rows rows;
  for (const auto& row : tags(html, "<g class=\"row\"", "data-chart=\"" + chart + "\"")) {
    const auto failed = row.find("data-failed");
    rows.push_back(row.at(name) + "|" + row.at("data-read-bytes") + "|" + row.at("data-write-bytes") + "|" +
                   row.at("data-disk-bytes") + "|" + row.at("data-events") + "|" + row.at(partners) + "|" +
                   (failed == row.end() ? "NULL" : failed->second));
  }
  return rows;
}

}  // namespace

TEST_CASE("HTML text is escaped in content and in attributes", "[html]") {
  CHECK(html_escape("Report, \"Q4\" <draft> & 'final'.docx") ==
        "Report, &quot;Q4&quot; &lt;draft&gt; &amp; &#39;final&#39;.docx");
  CHECK(html_escape("C:\\Users\\ada\\\xC3\x84gypten") == "C:\\Users\\ada\\\xC3\x84gypten");
}

TEST_CASE("the timeline's bucket follows the time the data spans", "[html]") {
  CHECK(timeline_bucket_for(0) == ns_per_minute);
  CHECK(timeline_bucket_for(6 * ns_per_hour) == ns_per_minute);
  CHECK(timeline_bucket_for(6 * ns_per_hour + 1) == ns_per_hour);
  CHECK(timeline_bucket_for(14 * 24 * ns_per_hour) == ns_per_hour);
  CHECK(timeline_bucket_for(14 * 24 * ns_per_hour + 1) == 24 * ns_per_hour);
}

TEST_CASE("the page's top files and processes are those of top-files and top-processes", "[html]") {
  ReportFixture fixture;
  const std::string html = page(fixture);
  CHECK(ranking(html, "top-files", "data-path", "data-processes") == fixture.rows("top-files"));
  Rows processes;
  for (const std::string& row : fixture.rows("top-processes")) {
    // process|pid|user|started|read|write|disk|events|files|failed -> process|read|...
    std::vector<std::string> cells;
    std::size_t start = 0;
    for (std::size_t bar; (bar = row.find('|', start)) != std::string::npos; start = bar + 1)
      cells.push_back(row.substr(start, bar - start));
    cells.push_back(row.substr(start));
    processes.push_back(cells[0] + "|" + cells[4] + "|" + cells[5] + "|" + cells[6] + "|" + cells[7] + "|" + cells[8] +
                        "|" + cells[9]);
  }
  CHECK(ranking(html, "top-processes", "data-process", "data-files") == processes);
  // The quotes and the comma of a name survive the page.
  CHECK(html.find("Report, &quot;Q4&quot;.docx") != std::string::npos);
  CHECK(html.find("Report, \"Q4\"") == std::string::npos);
}

TEST_CASE("the page's timeline adds up to the timeline report, bucket by bucket", "[html]") {
  ReportFixture fixture;
  const std::string html = page(fixture);  // an hour of data: minutes
  Rows bars;
  for (const auto& bar : tags(html, "<rect class=\"segment\"", "data-chart=\"timeline-events\""))
    bars.push_back(bar.at("data-bucket") + "|" + bar.at("data-op") + "|" + bar.at("data-events") + "|" +
                   (bar.count("data-bytes") ? bar.at("data-bytes") : "NULL"));
  CHECK(bars == fixture.rows("timeline", {}, {{"bucket", std::to_string(ns_per_minute)}}));
  // Bytes: the reads of 10:00, 10:01 and 11:00 and the writes of 10:00 and 11:00.
  CHECK(tags(html, "<rect class=\"segment\"", "data-chart=\"timeline-bytes\"").size() == 5);
}

TEST_CASE("the page shows coverage, gaps, losses and unresolved names as the reports count them", "[html]") {
  ReportFixture fixture;
  const std::string html = page(fixture);
  auto figure = [&](const std::string& name) {
    const std::string marker = "data-figure=\"" + name + "\"><span class=\"value\">";
    const auto start = html.find(marker);
    REQUIRE(start != std::string::npos);
    return html.substr(start + marker.size(), html.find('<', start + marker.size()) - start - marker.size());
  };
  // summary: 12 events, 2 runs, 1 gap of 3,535 s; unresolved: 1 event of WINWORD.EXE.
  CHECK(figure("events") == "12");
  CHECK(figure("runs") == "2");
  CHECK(figure("gaps") == "1");
  CHECK(figure("gap_seconds") == "3,535");
  CHECK(figure("lost") == "0");
  CHECK(figure("unresolved") == "1");
  CHECK(figure("processes") == "3");
  CHECK(figure("files") == "5");
  const auto gaps = tags(html, "<rect class=\"gap\"", "data-chart=\"coverage\"");
  REQUIRE(gaps.size() == 1);
  CHECK(gaps[0].at("data-from") == "2026-12-02T10:01:10.0000000Z");
  CHECK(gaps[0].at("data-until") == "2026-12-02T11:00:05.0000000Z");
  CHECK(tags(html, "<rect class=\"covered\"", "data-chart=\"coverage\"").size() == 2);
  CHECK(tags(html, "<path class=\"loss\"").empty());  // neither run lost anything
  const auto unresolved = tags(html, "<tr data-process", "id=\"unresolved\"");
  REQUIRE(unresolved.size() == 1);
  CHECK(unresolved[0].at("data-process") + "|" + unresolved[0].at("data-pid") + "|" + unresolved[0].at("data-events") +
            "|" + unresolved[0].at("data-file-keys") ==
        fixture.rows("unresolved").at(0));
}

TEST_CASE("each top file and process has a drill-down with its partners and its latest events", "[html]") {
  ReportFixture fixture;
  const std::string html = page(fixture);
  // notes.txt: notepad, 6 events; its latest events are those of recent --path.
  const auto notes = tags(html, "<tr data-partner", "data-path=\"C:\\Users\\ada\\notes.txt\">");
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].at("data-partner") == "C:\\Windows\\System32\\notepad.exe (pid 100)");
  CHECK(notes[0].at("data-events") == "5");
  QueryFilters notes_only;
  notes_only.path = "C:\\Users\\ada\\notes.txt";
  Rows latest;
  for (const auto& cell : tags(html, "<td data-column=\"time\"", "data-path=\"C:\\Users\\ada\\notes.txt\">"))
    latest.push_back(cell.at("data-value"));
  Rows expected;
  for (const std::string& row : fixture.rows("recent", notes_only)) expected.push_back(row.substr(0, row.find('|')));
  CHECK(latest == expected);
  // WINWORD.EXE, the first process: three files, by bytes read and written.
  const auto article = tags(html, "<article id=\"process-1\"");
  REQUIRE(article.size() == 1);
  CHECK(article[0].at("data-process") == "C:\\Program Files\\Office\\WINWORD.EXE");
  const auto word = tags(html, "<tr data-partner", "<article id=\"process-1\"");
  REQUIRE(word.size() == 3);
  CHECK(word[0].at("data-partner") == "C:\\Users\\ada\\Report, \"Q4\".docx");
  CHECK(word[1].at("data-partner") == "C:\\Users\\ada\\\xC3\x84gypten\\bild.jpg");
  CHECK(word[2].at("data-partner") == "<unknown>");
}

TEST_CASE("the page's filters are the query's: a process and a window narrow it", "[html]") {
  ReportFixture fixture;
  QueryFilters filters;
  filters.process = "WINWORD.EXE";
  filters.since = at("10:00:11");
  const std::string html = page(fixture, filters);
  CHECK(ranking(html, "top-files", "data-path", "data-processes") == fixture.rows("top-files", filters));
  CHECK(tags(html, "<g class=\"row\"", "data-chart=\"top-processes\"").size() == 1);
  CHECK(html.find("process WINWORD.EXE") != std::string::npos);

  QueryFilters empty;
  empty.since = at("10:30:00");
  empty.until = at("10:40:00");
  const std::string nothing = page(fixture, empty);
  CHECK(nothing.find("No events in this window.") != std::string::npos);
  CHECK(tags(nothing, "<g class=\"row\"").empty());
}

TEST_CASE("after pruning the page says since when detail is gone, and its rankings still count it all",
          "[html][retention]") {
  ReportFixture fixture;
  const Rows files_before = ranking(page(fixture), "top-files", "data-path", "data-processes");
  {
    WriteDatabase database(fixture.path());
    Pruner pruner(database.db());
    REQUIRE(pruner.prune(RetentionPolicy{30 * ns_per_minute, std::nullopt}, at("11:00:08")).segments == 4);  // hour 10
  }
  const std::string html = page(fixture);
  CHECK(ranking(html, "top-files", "data-path", "data-processes") == files_before);
  const auto note = tags(html, "<p class=\"note warn\" data-pruned-before");
  REQUIRE(note.size() == 1);
  CHECK(note[0].at("data-pruned-before") == std::to_string(at("10:01:10") + 1));
  // The drill-down of a file whose events were all pruned says so.
  const std::string marker = "data-path=\"C:\\Users\\ada\\Report, &quot;Q4&quot;.docx\">";
  const auto article = html.find(marker);
  REQUIRE(article != std::string::npos);
  CHECK(html.substr(article, html.find("</article>", article) - article).find("No raw events are kept") !=
        std::string::npos);
}

TEST_CASE("a page over fanotify's runs alone says its bytes are not recorded instead of 0 B", "[html]") {
  ReportFixture fixture;
  CHECK(page(fixture).find("not recorded") == std::string::npos);
  CHECK(page(fixture).find("have no sizes") == std::string::npos);
  ReportFixture unsized(true, etwaudit::test::FixtureSizes::none);  // as fanotify records them
  const std::string html = page(unsized);
  CHECK(tags(html, "<div class=\"figure", "id=\"totals\"").size() > 0);
  CHECK_THAT(html, Catch::Contains(">not recorded<") && Catch::Contains("These events have no sizes"));
  // The rankings go by events; no table shows 0 B for a size nobody measured.
  CHECK_THAT(html, Catch::Contains("By events"));
  CHECK(html.find(">0 B<") == std::string::npos);
  // Runs with sizes beside them: the known bytes count, the others are empty.
  ReportFixture mixed(true, etwaudit::test::FixtureSizes::first_run);
  const std::string both = page(mixed);
  CHECK(both.find("not recorded") == std::string::npos);
  CHECK_THAT(both, Catch::Contains("Some events have no sizes") && Catch::Contains("By bytes"));
  CHECK_THAT(both, Catch::Contains("data-figure=\"read_bytes\"><span class=\"value\">10 KiB<"));
}
