#pragma once
// The real .etl traces the tests read, in ETWAUDIT_ETL_FIXTURES (outside the
// repository; CMake's default is ../shared/fixtures/etl; the environment
// variable of that name, when set, wins, so that tools/test.sh can check that
// a plain clone without them passes). A test that needs one asks
// etl_fixture(name) for its path: when the trace is not there, the test says
// why and reports itself skipped (exit code 77, which ctest shows as
// "Skipped") instead of failing.

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

namespace etwaudit::test {

inline constexpr int skip_exit_code = 77;

inline std::string etl_fixture(const std::string& name) {
  const char* folder = std::getenv("ETWAUDIT_ETL_FIXTURES");
  const std::string path = std::string(folder && *folder ? folder : ETWAUDIT_ETL_FIXTURES) + "/" + name;
  if (!std::filesystem::is_regular_file(path)) {
    std::cout << "skipped: this test reads the real trace " << path
              << ", which is not there (configure with -DETWAUDIT_ETL_FIXTURES=FOLDER)" << std::endl;
    std::exit(skip_exit_code);
  }
  return path;
}

inline std::string perfview_trace() {
  return etl_fixture("perfview-net452-x64-win10.etl");
}
inline std::string windows7_trace() {
  return etl_fixture("tx-process-win7.etl");
}

}  // namespace etwaudit::test
