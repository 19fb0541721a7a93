#pragma once
// The guard of a read connection: an SQLite authorizer that lets statements
// read and refuses everything else (writes, schema changes, ATTACH and
// VACUUM, transactions, load_extension, pragmas that set), saying what it
// refused.

#include <SQLiteCpp/Database.h>

#include <string>

namespace etwaudit {

void install_read_only_guard(SQLite::Database& db);
// Why the guard refused the last statement on this thread (and forgets it);
// empty when it refused nothing.
std::string take_refusal();

}  // namespace etwaudit
