#include <catch2/catch.hpp>
#include <sstream>

#include "core/error.h"
#include "query/output.h"

using namespace etwaudit;

namespace {

Cell text(const std::string& value) {
  return {Cell::Type::text, value};
}
Cell integer(long long value) {
  return {Cell::Type::integer, std::to_string(value)};
}
Cell null() {
  return {};
}

// Cells that need escaping in every format.
Table awkward_table() {
  Table table;
  table.name = "files";
  table.columns = {"path", "size", "note"};
  table.rows = {{text("C:\\Users\\ada\\Report, \"Q4\".docx"), integer(1536), null()},
                {text("/home/ada/\xC3\x84gypten\nzwei Zeilen"), integer(0), text("a\tb")}};
  return table;
}

std::string render(const std::vector<Table>& tables, OutputFormat format) {
  std::ostringstream out;
  write_results(out, tables, format);
  return out.str();
}

}  // namespace

TEST_CASE("csv follows RFC 4180: quotes doubled, awkward fields quoted, CRLF, NULL empty", "[output]") {
  CHECK(render({awkward_table()}, OutputFormat::csv) ==
        "path,size,note\r\n"
        "\"C:\\Users\\ada\\Report, \"\"Q4\"\".docx\",1536,\r\n"
        "\"/home/ada/\xC3\x84gypten\nzwei Zeilen\",0,a\tb\r\n");
}

TEST_CASE("json is an array of objects with numbers as numbers and NULL as null", "[output]") {
  CHECK(render({awkward_table()}, OutputFormat::json) ==
        "[\n"
        "  {\n"
        "    \"path\": \"C:\\\\Users\\\\ada\\\\Report, \\\"Q4\\\".docx\",\n"
        "    \"size\": 1536,\n"
        "    \"note\": null\n"
        "  },\n"
        "  {\n"
        "    \"path\": \"/home/ada/\xC3\x84gypten\\nzwei Zeilen\",\n"
        "    \"size\": 0,\n"
        "    \"note\": \"a\\tb\"\n"
        "  }\n"
        "]\n");
}

TEST_CASE("jsonl writes one object per line", "[output]") {
  CHECK(render({awkward_table()}, OutputFormat::jsonl) ==
        "{\"path\":\"C:\\\\Users\\\\ada\\\\Report, \\\"Q4\\\".docx\",\"size\":1536,\"note\":null}\n"
        "{\"path\":\"/home/ada/\xC3\x84gypten\\nzwei Zeilen\",\"size\":0,\"note\":\"a\\tb\"}\n");
}

TEST_CASE("bytes that are not UTF-8 do not break json", "[output]") {
  Table table;
  table.columns = {"path"};
  table.rows = {{text("C:\\bad\xFF.txt")}};
  CHECK(render({table}, OutputFormat::jsonl) == "{\"path\":\"C:\\\\bad\xEF\xBF\xBD.txt\"}\n");
}

TEST_CASE("a report with several sections keeps them apart in every format", "[output]") {
  Table second;
  second.name = "totals";
  second.columns = {"events"};
  second.rows = {{integer(12)}};
  const std::vector<Table> both = {awkward_table(), second};
  CHECK_THAT(render(both, OutputFormat::json),
             Catch::StartsWith("{\n  \"files\": [") && Catch::Contains("\"totals\": [\n    {\n      \"events\": 12"));
  CHECK_THAT(render(both, OutputFormat::jsonl), Catch::EndsWith("{\"section\":\"totals\",\"events\":12}\n"));
  CHECK_THAT(render(both, OutputFormat::table), Catch::StartsWith("## files\n") && Catch::Contains("\n## totals\n"));
  CHECK_THAT(render(both, OutputFormat::csv), Catch::EndsWith("\r\n\r\nevents\r\n12\r\n"));
}

TEST_CASE("the table aligns columns, shows sizes for people and keeps lines whole", "[output]") {
  const std::string table = render({awkward_table()}, OutputFormat::table);
  CHECK(table ==
        "path                               size  note\n"
        "------------------------------  -------  ----\n"
        "C:\\Users\\ada\\Report, \"Q4\".docx  1.5 KiB\n"
        "/home/ada/\xC3\x84gypten zwei Zeilen       0 B  a b\n"
        "(2 rows)\n");
}

TEST_CASE("long paths are shortened in the middle, keeping the file name", "[output]") {
  const std::string path = "C:\\Program Files\\Microsoft SQL Server\\MSSQL16.MSSQLSERVER\\MSSQL\\Binn\\sqlservr.exe";
  const std::string shortened = shorten_path(path, 40);
  CHECK(shortened == "C:\\Program Files\\\u2026\\Binn\\sqlservr.exe");
  CHECK(shorten_path("C:\\short.txt", 40) == "C:\\short.txt");
  CHECK(shorten_path("/home/ada/a-file-name-that-is-far-too-long-to-show-whole.txt", 20) ==
        "/home/ada/\u2026whole.txt");
}

TEST_CASE("an unknown format is a usage error", "[output]") {
  CHECK(parse_output_format("csv") == OutputFormat::csv);
  CHECK_THROWS_AS(parse_output_format("xml"), UsageError);
}

TEST_CASE("a table shortens long paths only when asked (on a terminal), and keeps them whole otherwise", "[output]") {
  Table table;
  table.name = "events";
  table.columns = {"path", "command_line"};
  const std::string path = "C:\\Program Files\\Microsoft SQL Server\\MSSQL16.MSSQLSERVER\\MSSQL\\Binn\\sqlservr.exe";
  const std::string command = "/usr/bin/python3 /opt/tools/rotate-logs.py --keep 30 --compress --verbose /var/log/app";
  table.rows = {{text(path), text(command)}};
  std::ostringstream whole, shortened;
  write_results(whole, {table}, OutputFormat::table);
  write_results(shortened, {table}, OutputFormat::table, true);
  CHECK_THAT(whole.str(), Catch::Contains(path) && Catch::Contains(command));
  CHECK_THAT(shortened.str(), Catch::Contains("\u2026") && !Catch::Contains(path) && !Catch::Contains(command));
}

TEST_CASE("columns line up by the width a terminal gives each character: CJK and emoji take two", "[output]") {
  Table table;
  table.name = "files";
  table.columns = {"path", "events"};
  table.rows = {{text("/srv/\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E.txt"), integer(1)},  // 日本語: 6 columns
                {text("/srv/\xF0\x9F\x93\x81notes.txt"), integer(22)},                // 📁: 2 columns
                {text("/srv/Cafe\xCC\x81.txt"), integer(333)},                        // e + combining acute: 1
                {text("/srv/plain-name.txt"), integer(4444)}};
  const std::string out = render({table}, OutputFormat::table);
  // Every line of the table ends in the same column.
  std::istringstream lines(out);
  std::string line;
  std::vector<std::size_t> ends;
  while (std::getline(lines, line) && line.rfind("(", 0) != 0) {
    std::size_t columns = 0;
    for (std::size_t i = 0; i < line.size(); ++i) {
      const auto byte = static_cast<unsigned char>(line[i]);
      if ((byte & 0xC0) == 0x80) continue;
      columns += byte >= 0xE5 && byte < 0xF0 ? 2 : byte >= 0xF0 ? 2 : 1;  // this table's wide characters
      if (byte == 0xCC) columns -= 1;                                     // the combining accent
    }
    ends.push_back(columns);
  }
  REQUIRE(ends.size() == 6);
  for (std::size_t end : ends) CHECK(end == ends.front());
  // Shortened in the middle by columns, not characters.
  const std::string wide = "/srv/" + std::string(30, 'a') + "/\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E\xE6\x97\xA5" +
                           "\xE6\x9C\xAC\xE8\xAA\x9E\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E.txt";
  const std::string shortened = shorten_path(wide, 20);
  std::size_t columns = 0;
  for (char c : shortened) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte & 0xC0) != 0x80) columns += byte >= 0xE5 && byte < 0xF0 ? 2 : 1;
  }
  CHECK(columns <= 20);
  CHECK_THAT(shortened, Catch::EndsWith(".txt"));
}
