#include "store/destinations.h"

#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

#include "core/error.h"
#include "core/time_format.h"

namespace etwaudit {

namespace {

// The name changes every destination has dealt with are needed no more.
void drop_dealt_name_changes(SQLite::Database& db) {
  db.exec(
      "DELETE FROM name_changes WHERE seq <= coalesce((SELECT min(names_through) FROM destinations), "
      "(SELECT max(seq) FROM name_changes))");
}

}  // namespace

std::string database_uuid(SQLite::Database& db) {
  SQLite::Statement query(db, "SELECT db_uuid FROM identity LIMIT 1");
  if (!query.executeStep()) throw Error("'" + db.getFilename() + "' has no identity (db_uuid)");
  return query.getColumn(0).getString();
}

DestinationState open_destination(SQLite::Database& db, const std::string& name) {
  {
    SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement insert(db,
                             "INSERT INTO destinations (name, created_at, names_through) "
                             "VALUES (?, ?, (SELECT coalesce(max(seq), 0) FROM name_changes)) ON CONFLICT DO NOTHING");
    insert.bind(1, name);
    insert.bind(2, static_cast<std::int64_t>(now_ns()));
    insert.exec();
    transaction.commit();
  }
  SQLite::Statement query(db, "SELECT shipped_through, rows_shipped, names_through FROM destinations WHERE name = ?");
  query.bind(1, name);
  DestinationState state;
  state.name = name;
  if (query.executeStep()) {
    state.shipped_through = query.getColumn(0).getInt64();
    state.rows_shipped = static_cast<std::uint64_t>(query.getColumn(1).getInt64());
    state.names_through = query.getColumn(2).getInt64();
  }
  return state;
}

void advance_destination(SQLite::Database& db, const std::string& name, std::int64_t through, std::uint64_t rows) {
  SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
  SQLite::Statement update(db,
                           "UPDATE destinations SET shipped_through = max(shipped_through, ?2), "
                           "rows_shipped = rows_shipped + ?3, last_success_at = ?4, last_error = NULL, "
                           "last_error_at = NULL WHERE name = ?1");
  update.bind(1, name);
  update.bind(2, through);
  update.bind(3, static_cast<std::int64_t>(rows));
  update.bind(4, static_cast<std::int64_t>(now_ns()));
  update.exec();
  transaction.commit();
}

std::vector<NameChange> name_changes_after(SQLite::Database& db, std::int64_t after) {
  SQLite::Statement query(db,
                          "SELECT seq, coalesce(file_id, 0), coalesce(process_id, 0) FROM name_changes WHERE seq > ? "
                          "ORDER BY seq");
  query.bind(1, after);
  std::vector<NameChange> changes;
  while (query.executeStep())
    changes.push_back({query.getColumn(0).getInt64(), query.getColumn(1).getInt64(), query.getColumn(2).getInt64()});
  return changes;
}

void advance_names(SQLite::Database& db, const std::string& name, std::int64_t seq) {
  SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
  SQLite::Statement update(db, "UPDATE destinations SET names_through = max(names_through, ?2) WHERE name = ?1");
  update.bind(1, name);
  update.bind(2, seq);
  update.exec();
  drop_dealt_name_changes(db);
  transaction.commit();
}

void forget_destination(SQLite::Database& db, const std::string& name) {
  SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
  SQLite::Statement remove(db, "DELETE FROM destinations WHERE name = ?");
  remove.bind(1, name);
  if (remove.exec() == 0) {
    std::string names;
    SQLite::Statement all(db, "SELECT name FROM destinations ORDER BY name");
    while (all.executeStep()) names += (names.empty() ? "" : ", ") + ("'" + all.getColumn(0).getString() + "'");
    throw Error("no destination '" + name + "' in '" + db.getFilename() + "' (" +
                (names.empty() ? std::string("it has none") : "it has " + names) + ")");
  }
  drop_dealt_name_changes(db);
  transaction.commit();
}

void record_destination_error(SQLite::Database& db, const std::string& name, const std::string& error) {
  SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
  SQLite::Statement update(db, "UPDATE destinations SET last_error = ?2, last_error_at = ?3 WHERE name = ?1");
  update.bind(1, name);
  update.bind(2, error);
  update.bind(3, static_cast<std::int64_t>(now_ns()));
  update.exec();
  transaction.commit();
}

}  // namespace etwaudit
