#pragma once
// What the POSIX and Windows parts of database_files share (the files
// themselves: database_files_posix.cpp, database_files_win32.cpp).

#include <string>

#include "core/error.h"

namespace etwaudit::database_files_detail {

// The files SQLite keeps beside a database, by suffix.
inline constexpr const char* side_suffixes[] = {"-wal", "-shm", "-journal"};

[[noreturn]] inline void refuse(const std::string& database, const std::string& reason) {
  throw Error("cannot open database '" + database + "': " + reason);
}

}  // namespace etwaudit::database_files_detail
