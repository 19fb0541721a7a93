#include "query/sql_functions.h"

#include <sqlite3.h>

#include <optional>
#include <string>
#include <string_view>

#include "core/error.h"
#include "core/glob.h"
#include "core/time_format.h"

namespace etwaudit {
namespace {

const char* text_argument(sqlite3_value* value) {
  return reinterpret_cast<const char*>(sqlite3_value_text(value));
}

// The whole text of an argument, NUL bytes included ("" for NULL): a pattern
// is checked and matched as the same bytes.
std::string_view text_bytes(sqlite3_value* value) {
  const char* text = text_argument(value);
  if (!text) return {};
  return {text, static_cast<std::size_t>(sqlite3_value_bytes(value))};
}

// What make() compiles from a statement's constant pattern argument, kept by
// SQLite from row to row. SQLite may drop it at any time (at once, when the
// argument is not constant), so the row at hand uses the copy in local.
// nullptr, with the error reported, when make() throws UsageError.
template <typename T, typename Make>
const T* compiled_pattern(sqlite3_context* context, std::optional<T>& local, Make make) {
  if (auto* kept = static_cast<const T*>(sqlite3_get_auxdata(context, 0))) return kept;
  try {
    local.emplace(make());
  } catch (const UsageError& e) {
    sqlite3_result_error(context, e.what(), -1);
    return nullptr;
  }
  sqlite3_set_auxdata(context, 0, new T(*local), [](void* p) { delete static_cast<T*>(p); });
  return &*local;
}

// path_match(pattern, path): 1 when the glob matches, 0 otherwise (or path NULL).
void path_match(sqlite3_context* context, int, sqlite3_value** argv) {
  std::optional<PathGlob> local;
  const PathGlob* glob = compiled_pattern(context, local, [&] {
    std::string error;
    auto compiled = PathGlob::compile(text_bytes(argv[0]), error);
    if (!compiled) throw UsageError("bad pattern: " + error);
    return std::move(*compiled);
  });
  if (!glob) return;
  const bool has_path = sqlite3_value_type(argv[1]) != SQLITE_NULL;
  sqlite3_result_int(context, has_path && glob->matches(text_bytes(argv[1])) ? 1 : 0);
}

// process_match(pattern, pid, image): the pattern as --process takes it, a
// pid or a glob over the image.
void process_match(sqlite3_context* context, int, sqlite3_value** argv) {
  std::optional<ProcessPattern> local;
  const ProcessPattern* pattern = compiled_pattern(
      context, local, [&] { return ProcessPattern::parse("bad pattern", std::string(text_bytes(argv[0]))); });
  if (!pattern) return;
  const auto pid = static_cast<std::uint32_t>(sqlite3_value_int64(argv[1]));
  sqlite3_result_int(context, pattern->matches(pid, text_bytes(argv[2])).value_or(false) ? 1 : 0);
}

// iso_time(ns): "2026-12-02T10:15:30.1234567Z"; NULL stays NULL.
void iso_time(sqlite3_context* context, int, sqlite3_value** argv) {
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL) {
    sqlite3_result_null(context);
    return;
  }
  std::string text = format_iso8601(sqlite3_value_int64(argv[0]));
  sqlite3_result_text(context, text.c_str(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
}

}  // namespace

void register_sql_functions(SQLite::Database& db) {
  db.createFunction("path_match", 2, true, nullptr, path_match);
  db.createFunction("process_match", 3, true, nullptr, process_match);
  db.createFunction("iso_time", 1, true, nullptr, iso_time);
}

}  // namespace etwaudit
