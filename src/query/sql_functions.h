#pragma once
// The SQL functions the reports and the filters use, on a read connection:
//   path_match(pattern, path)            1 when the glob matches (Windows paths ignore case)
//   process_match(pattern, pid, image)   --process: a pid, or a glob over the image
//   iso_time(ns)                         "2026-12-02T10:15:30.1234567Z"

#include <SQLiteCpp/Database.h>

namespace etwaudit {

void register_sql_functions(SQLite::Database& db);

}  // namespace etwaudit
