// Database files on POSIX: mode 0600 at creation; owner, type and mode
// checked before writing.

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>

#include "core/error.h"
#include "store/database_files.h"
#include "store/database_files_shared.h"

namespace etwaudit {

using database_files_detail::refuse;
using database_files_detail::side_suffixes;

namespace {

std::string user_name(uid_t uid) {
  struct passwd entry {};
  struct passwd* found = nullptr;
  char buffer[1024];
  std::string number = std::to_string(uid);
  if (getpwuid_r(uid, &entry, buffer, sizeof buffer, &found) == 0 && found)
    return found->pw_name + (" (" + number + ")");
  return "uid " + number;
}

std::string octal_mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// Refuses file (the database or one beside it) when it is not a regular file
// the effective user owns and only it can write.
void check_file(const std::string& database, const std::string& file, const struct stat& status) {
  if (S_ISLNK(status.st_mode))
    refuse(database, "'" + file + "' is a symbolic link: etwaudit writes only to the file itself (give its real path)");
  if (!S_ISREG(status.st_mode)) refuse(database, "'" + file + "' is not a regular file");
  if (status.st_uid != geteuid())
    refuse(database, "'" + file + "' belongs to " + user_name(status.st_uid) + ", not to " + user_name(geteuid()) +
                         " who runs etwaudit: a file another user made could have been planted there for it (move "
                         "it away, or chown it if it is yours)");
  const bool by_group = status.st_mode & S_IWGRP, by_others = status.st_mode & S_IWOTH;
  if (by_group || by_others)
    refuse(database, "'" + file + "' is writable by " +
                         (by_group && by_others ? "its group and every user"
                          : by_group            ? "its group"
                                                : "every user") +
                         " (mode " + octal_mode(status.st_mode) +
                         "), who could change or forge its records (remove that with chmod go-w)");
}

// Narrows side file to the database's permission bits. Opened without
// following links and compared with what lstat saw, so that chmod can only
// reach the file that was checked.
void narrow_mode(const std::string& database, const std::string& file, const struct stat& checked, mode_t allowed) {
  const mode_t wanted = checked.st_mode & allowed & 0777;
  int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  struct stat opened {};
  bool ok = fd >= 0 && ::fstat(fd, &opened) == 0 && opened.st_dev == checked.st_dev &&
            opened.st_ino == checked.st_ino && ::fchmod(fd, wanted) == 0;
  int error = errno;
  if (fd >= 0) ::close(fd);
  if (!ok)
    refuse(database,
           "'" + file + "' is readable by more users than the database (mode " + octal_mode(checked.st_mode) +
               ") and its mode cannot be narrowed to " + octal_mode(wanted) + ": " +
               (opened.st_ino && opened.st_ino != checked.st_ino ? "it was replaced meanwhile" : std::strerror(error)));
}

}  // namespace

bool create_private_file(const std::string& path) {
  // O_EXCL never follows a link at path (nor does O_NOFOLLOW): an existing
  // file, link or folder is left for check_database_files to judge.
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == EEXIST) return false;
    throw std::system_error(errno, std::generic_category());
  }
  // 0600 whatever the umask: a umask of 0200 would otherwise leave the owner
  // a file it cannot write.
  int result = ::fchmod(fd, 0600);
  int error = errno;
  ::close(fd);
  if (result != 0) {
    ::unlink(path.c_str());
    throw std::system_error(error, std::generic_category());
  }
  return true;
}

void check_database_files(const std::string& path) {
  struct stat database {};
  if (::lstat(path.c_str(), &database) != 0) refuse(path, std::strerror(errno));
  check_file(path, path, database);
  for (const char* suffix : side_suffixes) {
    const std::string file = path + suffix;
    struct stat side {};
    if (::lstat(file.c_str(), &side) != 0) {
      if (errno == ENOENT) continue;
      refuse(path, "cannot check '" + file + "': " + std::strerror(errno));
    }
    check_file(path, file, side);
    if (side.st_mode & 0777 & ~database.st_mode) narrow_mode(path, file, side, database.st_mode);
  }
}

void protect_side_files(const std::string&) {}

}  // namespace etwaudit
