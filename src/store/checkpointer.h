#pragma once
// Checkpointer: moves the WAL into the database file on a thread of its own.
//
// With SQLite's automatic checkpoints the writer copies the WAL back into the
// database inside a commit every few MiB, and the collector stalls meanwhile.
// While a Checkpointer runs, a second connection runs PASSIVE checkpoints a few
// times a second: they copy what no reader still needs and never wait for the
// writer. The writer's own automatic checkpoint stays on at a larger size, to
// let SQLite start the WAL over (see checkpointer.cpp); by then there is little
// left for it to copy.
//
// A reader that holds a snapshot for minutes keeps every later commit in the
// WAL, which grows meanwhile. Once a checkpoint has copied all of it (the
// reader let go) and the file is larger than wal_limit, the Checkpointer
// truncates it (a TRUNCATE checkpoint: with nothing left to copy it holds the
// write lock only for a moment, and it gives up at once when a reader or the
// writer is busy, to try again at the next round).

#include <SQLiteCpp/Database.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "store/database.h"

namespace etwaudit {

class Checkpointer {
 public:
  // writer is the write connection whose automatic checkpoints are relaxed for
  // the Checkpointer's lifetime.
  explicit Checkpointer(SQLite::Database& writer, std::chrono::milliseconds interval = std::chrono::milliseconds(200),
                        std::int64_t wal_limit = wal_size_limit);
  ~Checkpointer();
  Checkpointer(const Checkpointer&) = delete;
  Checkpointer& operator=(const Checkpointer&) = delete;

  // On the writer's thread, between its transactions: a WAL grown past
  // wal_limit goes back to wal_limit once a round on the Checkpointer's
  // thread has copied it back (this asks for one at once): the writer then
  // starts it over, and its next commit cuts the file (journal_size_limit).
  // At twice wal_limit this cuts it to nothing itself, without waiting for
  // readers; a reader still in it makes that give up, and it is not tried
  // again for a second. (Under a small cap, see Collector::cut_wal.)
  void cut_back() noexcept;

 private:
  void run();
  void checkpoint();               // one round
  std::int64_t wal_bytes() const;  // size of the -wal file (0 when there is none)
  bool wal_over_limit() const;

  SQLite::Database& m_writer;
  SQLite::Database m_connection;  // the checkpointing connection
  std::chrono::milliseconds m_interval;
  std::int64_t m_wal_limit;                            // bytes
  std::mutex m_working;                                // held while checkpointing
  std::chrono::steady_clock::time_point m_cut_failed;  // cut_back's last failure (writer's thread)
  std::atomic<std::uint64_t> m_copied_rounds{0};       // rounds that found the WAL all copied back
  std::uint64_t m_copied_rounds_at_cut = 0;            // ...as cut_back last cut (writer's thread)
  std::mutex m_mutex;
  std::condition_variable m_wakeup;
  bool m_stop = false;   // guarded by m_mutex
  bool m_hurry = false;  // cut_back asks for a round now; guarded by m_mutex
  std::thread m_thread;  // started once the connections are set up
};

}  // namespace etwaudit
