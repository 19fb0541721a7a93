// The whole import pipeline on real traces: reader, decoder, back-fill, store.

#include <SQLiteCpp/Database.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "etl_fixtures.h"
#include "pipeline/collection.h"
#include "sources/etl/etl_source.h"
#include "store/database.h"
#include "store/event_writer.h"
#include "temp_dir.h"

using namespace etwaudit;
using etwaudit::test::perfview_trace;
using etwaudit::test::TempDir;
using etwaudit::test::windows7_trace;

namespace {

struct Import {
  TempDir dir;
  std::string path = dir.file("audit.db");
  WriteDatabase database{path};
  Catalog catalog;
  RunStats stats;
  std::unique_ptr<EtlSource> source;
  CollectionResult result;

  explicit Import(const std::string& trace, const DeviceMap* device_map = nullptr) {
    source = std::make_unique<EtlSource>(trace, OnBadInput::stop);
    EventWriter writer(database.db(), catalog, SelfExclusion{}, device_map);
    writer.begin_run(source->description(), "");
    result = run_collection(*source, catalog, writer, stats, CollectionOptions{});
  }
  std::int64_t count(const std::string& sql) { return database.db().execAndGet(sql).getInt64(); }
};

}  // namespace

TEST_CASE("the PerfView trace imports with every disk I/O named after back-fill", "[import]") {
  Import import(perfview_trace());
  REQUIRE_FALSE(import.result.failed);
  CHECK(import.count("SELECT count(*) FROM events WHERE op = 10") == 1208);
  CHECK(import.count("SELECT count(*) FROM events WHERE op = 11") == 21);
  // All 1,229 have a name, although only a handful did when they were written.
  CHECK(import.count("SELECT count(*) FROM events e JOIN files f USING (file_id) "
                     "WHERE e.op IN (10, 11) AND f.path IS NOT NULL") == 1229);
  // Only a few had a name when the decoder delivered them (the rundown comes last).
  CHECK(import.source->decoder_stats().unresolved >= 1225);
  CHECK(import.count("SELECT unresolved FROM collector_runs") == 0);
  CHECK(import.source->decoder_stats().rundown_names == 3054);
  CHECK(import.count("SELECT rundown_names FROM v_runs") == 3054);  // the run record says so too
  CHECK(import.source->skipped_kinds().size() > 100);               // CLR, perfinfo, ... counted by kind
}

TEST_CASE("the PerfView trace's Kernel-File creates become 562 opens of 102 paths", "[import]") {
  Import import(perfview_trace());
  CHECK(import.count("SELECT count(*) FROM events WHERE op = 2") == 562);
  CHECK(import.count("SELECT count(DISTINCT f.path) FROM events e JOIN files f USING (file_id) WHERE e.op = 2") == 102);
}

TEST_CASE("imported times are UTC from the trace's clock, and the run covers them", "[import]") {
  Import import(perfview_trace());
  // The trace was recorded on 2020-07-29 shortly after 00:07 UTC.
  CHECK(import.count("SELECT min(coalesce(ts, id)) >= 1595981220000000000 AND "
                     "max(coalesce(ts, id)) < 1595984820000000000 FROM events") == 1);
  CHECK(import.count("SELECT first_event_at = (SELECT min(coalesce(ts, id)) FROM events) FROM collector_runs") == 1);
  CHECK(import.count("SELECT live FROM collector_runs") == 0);
}

TEST_CASE("a device map turns NT paths into drive and UNC paths, keeping the NT path", "[import]") {
  DeviceMap map;
  map.add("C:", "\\Device\\HarddiskVolume2");
  Import import(perfview_trace(), &map);
  CHECK(import.count("SELECT count(*) FROM files WHERE path LIKE '\\Device\\%'") == 0);
  CHECK(import.count(
            "SELECT count(*) FROM files WHERE path LIKE 'C:\\%' AND nt_path LIKE '\\Device\\HarddiskVolume2\\%'") >
        100);
  CHECK(import.count("SELECT count(*) FROM files WHERE path LIKE '\\\\%' AND nt_path LIKE '\\Device\\Mup\\%'") > 0);
}

TEST_CASE("importing the Windows 7 trace learns its four process starts with their images", "[import]") {
  Import import(windows7_trace());
  REQUIRE_FALSE(import.result.failed);
  std::vector<std::string> started;
  for (std::uint32_t id = 1; id < import.catalog.process_count(); ++id) {
    const ProcessInfo process = import.catalog.process(id);
    if (process.image.rfind("\\Device\\", 0) == 0) started.push_back(std::to_string(process.pid) + " " + process.image);
  }
  CHECK(
      started ==
      std::vector<std::string>{
          "5864 \\Device\\HarddiskVolume2\\Program Files (x86)\\Microsoft Visual Studio 10.0\\Common7\\IDE\\devenv.exe",
          "2880 \\Device\\HarddiskVolume2\\Program Files (x86)\\Microsoft Office\\Office14\\OUTLOOK.EXE",
          "700 \\Device\\HarddiskVolume2\\Windows\\SysWOW64\\SearchProtocolHost.exe",
          "6644 \\Device\\HarddiskVolume2\\Windows\\System32\\SearchFilterHost.exe"});
  CHECK(import.stats.written == 0);  // it holds no file activity
}

TEST_CASE("a file that is not a trace fails the run with the reader's message", "[import]") {
  TempDir dir;
  const auto bogus = dir.file("bogus.etl");
  { std::ofstream(bogus) << std::string(100000, 'x'); }
  Import import(bogus);
  CHECK(import.result.failed);
  CHECK_THAT(import.result.exit_reason, Catch::StartsWith("source error: cannot read ETL file"));
}
