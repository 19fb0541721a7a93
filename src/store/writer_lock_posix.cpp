// WriterLock on POSIX: flock on the database file.

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "store/writer_lock.h"

namespace etwaudit {

bool WriterLock::try_lock(const std::string& path) {
  unlock();
  // Opened read-only: flock does not need write access, and the descriptor
  // stays open until after SQLite closes the file (closing any descriptor of a
  // file drops the process's fcntl locks on it, SQLite's included).
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) throw Error("cannot open database '" + path + "' to lock it: " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return false;
  }
  m_native = fd;
  return true;
}

void WriterLock::unlock() noexcept {
  if (m_native != none) {
    ::close(static_cast<int>(m_native));
    m_native = none;
  }
}

}  // namespace etwaudit
