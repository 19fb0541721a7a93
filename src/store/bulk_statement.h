// A prepared statement for the writer's per-event and per-activity-row loops.
//
// SQLiteCpp's Statement checks the result of every bind; in these loops that
// check costs more than the bind itself, and only a wrong index can fail it.
// BulkStatement binds through the sqlite3 handle and checks once, at step().
#pragma once

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Exception.h>
#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>

namespace etwaudit {

class BulkStatement {
 public:
  BulkStatement(SQLite::Database& db, const std::string& sql) : m_db(db.getHandle()) {
    sqlite3_stmt* statement = nullptr;
    const int rc = sqlite3_prepare_v3(m_db, sql.c_str(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                                      &statement, nullptr);
    if (rc != SQLITE_OK) throw SQLite::Exception(m_db, rc);
    m_statement.reset(statement);
  }

  void bind(int index, std::int64_t value) { sqlite3_bind_int64(m_statement.get(), index, value); }
  // NULL when the value is not present.
  void bind(int index, std::int64_t value, bool present) {
    if (present)
      sqlite3_bind_int64(m_statement.get(), index, value);
    else
      sqlite3_bind_null(m_statement.get(), index);
  }

  // Runs the statement to its end and resets it for the next rows; a failed
  // step throws with SQLite's message (the statement is reset either way).
  void exec() {
    const int rc = sqlite3_step(m_statement.get());
    sqlite3_reset(m_statement.get());
    if (rc != SQLITE_DONE) throw SQLite::Exception(m_db, rc);
  }
  void reset() noexcept { sqlite3_reset(m_statement.get()); }

 private:
  struct Finalize {
    void operator()(sqlite3_stmt* statement) const noexcept { sqlite3_finalize(statement); }
  };
  sqlite3* m_db;
  std::unique_ptr<sqlite3_stmt, Finalize> m_statement;
};

}  // namespace etwaudit
