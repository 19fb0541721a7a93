#include "query/read_only_guard.h"

#include <sqlite3.h>

#include <iterator>
#include <string>

namespace etwaudit {
namespace {

// Pragmas that only read, with or without an argument naming an object.
constexpr const char* reading_pragmas[] = {
    "table_info",   "table_xinfo",   "index_list",      "index_info",    "index_xinfo",    "foreign_key_list",
    "table_list",   "user_version",  "schema_version",  "page_size",     "page_count",     "freelist_count",
    "journal_mode", "encoding",      "compile_options", "function_list", "pragma_list",    "collation_list",
    "module_list",  "database_list", "integrity_check", "quick_check",   "application_id", "data_version"};
// Of those, the ones whose argument names an object (setting the others takes an argument).
constexpr const char* pragmas_with_object_argument[] = {"table_info",      "table_xinfo", "index_list",
                                                        "index_info",      "index_xinfo", "foreign_key_list",
                                                        "integrity_check", "quick_check", "table_list"};

bool in(const char* const* list, std::size_t size, const char* name) {
  for (std::size_t i = 0; i < size; ++i)
    if (name && sqlite3_stricmp(list[i], name) == 0) return true;
  return false;
}

thread_local std::string g_refusal;  // why the guard refused the last statement

// The first refusal of a statement is the one to report: refusing CREATE TABLE
// also refuses the INSERT into sqlite_schema that would follow.
int refuse(std::string what) {
  if (g_refusal.empty()) g_refusal = std::move(what);
  return SQLITE_DENY;
}

int read_only_guard(void*, int action, const char* a, const char* b, const char*, const char*) {
  auto name = [](const char* text) { return std::string(text ? text : "?"); };
  switch (action) {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_RECURSIVE: return SQLITE_OK;
    case SQLITE_FUNCTION:
      if (b && sqlite3_stricmp(b, "load_extension") == 0) return refuse("load_extension() is refused");
      return SQLITE_OK;
    case SQLITE_PRAGMA: {
      const bool known = in(reading_pragmas, std::size(reading_pragmas), a);
      const bool object_argument = in(pragmas_with_object_argument, std::size(pragmas_with_object_argument), a);
      if (known && (!b || object_argument)) return SQLITE_OK;
      return refuse(b ? "PRAGMA " + name(a) + " = ... changes the database and is refused"
                      : "PRAGMA " + name(a) + " is refused (only pragmas that read are allowed)");
    }
    case SQLITE_INSERT:
    case SQLITE_UPDATE:
    case SQLITE_DELETE:
      // CREATE, DROP and ALTER show up first as changes to the schema table.
      if (a && (sqlite3_stricmp(a, "sqlite_master") == 0 || sqlite3_stricmp(a, "sqlite_temp_master") == 0))
        return refuse("statements that change the database are refused (CREATE, DROP, ALTER, ...)");
      if (action == SQLITE_INSERT) return refuse("INSERT into '" + name(a) + "' is refused");
      if (action == SQLITE_UPDATE) return refuse("UPDATE of '" + name(a) + "' is refused");
      return refuse("DELETE from '" + name(a) + "' is refused");
    // VACUUM (INTO a file, too) shows up as an ATTACH of its copy.
    case SQLITE_ATTACH: return refuse("ATTACH and VACUUM are refused");
    case SQLITE_DETACH: return refuse("DETACH is refused");
    case SQLITE_TRANSACTION:
    case SQLITE_SAVEPOINT: return refuse("transactions are refused");
    default: return refuse("statements that change the database are refused (CREATE, DROP, ALTER, ...)");
  }
}

}  // namespace

void install_read_only_guard(SQLite::Database& db) {
  sqlite3_set_authorizer(db.getHandle(), read_only_guard, nullptr);
}

std::string take_refusal() {
  std::string refusal;
  refusal.swap(g_refusal);
  return refusal;
}

}  // namespace etwaudit
