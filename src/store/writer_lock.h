#pragma once
// WriterLock: at most one collector writes a database at a time.
//
// SQLite serialises transactions, but two collectors interleaving batches in
// one database would corrupt its segment bookkeeping and double the run
// records, so the collector holds an exclusive OS lock on the database file for
// as long as it runs (flock on POSIX, LockFileEx on a byte range SQLite never
// uses on Windows). The lock disappears with the process, so a crashed
// collector never leaves the database locked.

#include <cstdint>
#include <string>

namespace etwaudit {

class WriterLock {
 public:
  WriterLock() = default;
  ~WriterLock();
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;

  // Locks the existing file at path. False when another process holds the
  // lock; throws Error when the file cannot be opened.
  bool try_lock(const std::string& path);
  void unlock() noexcept;

 private:
  // POSIX: the descriptor holding the flock; Windows: the HANDLE of the
  // locked file (writer_lock_posix.cpp, writer_lock_win32.cpp).
  static constexpr std::intptr_t none = -1;
  std::intptr_t m_native = none;
};

}  // namespace etwaudit
