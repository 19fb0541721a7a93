// WriterLock on Windows: LockFileEx on a byte SQLite never uses.

#include <windows.h>

#include "core/error.h"
#include "platform/win32.h"
#include "store/writer_lock.h"

namespace etwaudit {

namespace {
// Far beyond any byte SQLite reads, writes or locks.
constexpr DWORD lock_offset_high = 0x7fff0000;
}  // namespace

bool WriterLock::try_lock(const std::string& path) {
  unlock();
  HANDLE handle = CreateFileW(to_wide(path).c_str(), GENERIC_READ | GENERIC_WRITE,
                              FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr, OPEN_EXISTING,
                              FILE_ATTRIBUTE_NORMAL, nullptr);
  if (handle == INVALID_HANDLE_VALUE)
    throw Error("cannot open database '" + path + "' to lock it: error " + std::to_string(GetLastError()));
  OVERLAPPED where{};
  where.OffsetHigh = lock_offset_high;
  if (!LockFileEx(handle, LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &where)) {
    CloseHandle(handle);
    return false;
  }
  m_native = reinterpret_cast<std::intptr_t>(handle);
  return true;
}

void WriterLock::unlock() noexcept {
  if (m_native != none) {
    CloseHandle(reinterpret_cast<HANDLE>(m_native));  // releases the lock
    m_native = none;
  }
}

}  // namespace etwaudit
