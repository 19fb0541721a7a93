#pragma once
// Who may read and change the files of a database a writer opens.
//
// A database holds the command line of every process and every file it
// touched, so a writer creates it for its own user only: mode 0600 on POSIX
// whatever the umask, and on Windows a protected DACL (SYSTEM and
// Administrators; the creating user too when not elevated). SQLite creates the
// -wal, -shm and -journal files with the database file's mode on POSIX (its
// unix VFS copies the mode and sets it past the umask); on Windows they would
// inherit the folder's ACL, so the writer gives them the database's DACL.
//
// Before it writes, the writer also refuses files it did not make and cannot
// trust: a symbolic link at the database path (it could point anywhere, such as
// a file a root collector would then overwrite), something other than a regular
// file, a file owned by another user (one planted in advance for a collector
// running as root), or one its group or everybody can write (anyone could change
// or forge the records). The same goes for a -wal, -shm or -journal left beside
// it; one readable by more users than the database is narrowed to the
// database's mode. A database's own mode is otherwise the user's choice (a
// 0640 database shared with a group stays so).

#include <string>

namespace etwaudit {

// Creates path as a new, empty file only the current user can open (see
// above). False when something already exists at path, which is never
// followed or changed. Throws std::system_error when the file cannot be
// created (missing folder, no permission).
bool create_private_file(const std::string& path);

// Throws Error, naming the file and the reason, when the database at path or
// its -wal, -shm or -journal is not safe to write to (see above), and narrows
// the mode of a side file readable by more users than the database. POSIX:
// owner and mode; Windows: only links (reparse points) are refused, access
// there is the folder's or the DACL's business.
void check_database_files(const std::string& path);

// Windows: gives path's -wal and -shm the database file's DACL when that DACL is
// protected (made by create_private_file, or set by hand), instead of the
// folder's inherited one. Call it once SQLite has created them. Throws Error
// when that fails. Nothing to do on POSIX.
void protect_side_files(const std::string& path);

}  // namespace etwaudit
