#include "store/writer_lock.h"

#include "core/error.h"

#ifdef _WIN32
#include <windows.h>
#else
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#endif

namespace etwaudit {

WriterLock::~WriterLock() {
  unlock();
}

#ifdef _WIN32

namespace {
// Far beyond any byte SQLite reads, writes or locks.
constexpr DWORD lock_offset_high = 0x7fff0000;
}  // namespace

bool WriterLock::try_lock(const std::string& path) {
  unlock();
  std::wstring wide(MultiByteToWideChar(CP_UTF8, 0, path.c_str(), -1, nullptr, 0), L'\0');
  MultiByteToWideChar(CP_UTF8, 0, path.c_str(), -1, wide.data(), static_cast<int>(wide.size()));
  HANDLE handle =
      CreateFileW(wide.c_str(), GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                  nullptr, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, nullptr);
  if (handle == INVALID_HANDLE_VALUE)
    throw Error("cannot open database '" + path + "' to lock it: error " + std::to_string(GetLastError()));
  OVERLAPPED where{};
  where.OffsetHigh = lock_offset_high;
  if (!LockFileEx(handle, LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &where)) {
    CloseHandle(handle);
    return false;
  }
  m_handle = handle;
  return true;
}

void WriterLock::unlock() noexcept {
  if (m_handle) {
    CloseHandle(static_cast<HANDLE>(m_handle));  // releases the lock
    m_handle = nullptr;
  }
}

#else

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
  m_fd = fd;
  return true;
}

void WriterLock::unlock() noexcept {
  if (m_fd >= 0) {
    ::close(m_fd);
    m_fd = -1;
  }
}

#endif

}  // namespace etwaudit
