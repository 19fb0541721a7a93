#include "store/checkpointer.h"

#include <SQLiteCpp/Statement.h>

#include <filesystem>

#include "core/utf8_path.h"
#include "store/database.h"

namespace etwaudit {
namespace {
// SQLite's default: checkpoint every 1000 pages.
constexpr int default_autocheckpoint_pages = 1000;
// While the Checkpointer runs. SQLite starts the WAL over only when a write
// transaction begins with the whole WAL copied, which a checkpoint on another
// thread never achieves against a busy writer; so the writer still checkpoints
// at this size, but finds nearly everything already copied and only finishes
// the job.
constexpr int writer_autocheckpoint_pages = 8192;  // 32 MiB
}  // namespace

Checkpointer::Checkpointer(SQLite::Database& writer, std::chrono::milliseconds interval, std::int64_t wal_limit)
    : m_writer(writer),
      m_connection(writer.getFilename(), SQLite::OPEN_READWRITE | SQLite::OPEN_NOMUTEX),
      m_interval(interval),
      m_wal_limit(wal_limit) {
  m_connection.exec("PRAGMA busy_timeout = 0");
  m_writer.exec("PRAGMA wal_autocheckpoint = " + std::to_string(writer_autocheckpoint_pages));
  // When the writer starts the WAL over, its first commit cuts the file back
  // to this size, at the cost of a truncate call (cut_back relies on it).
  m_writer.exec("PRAGMA journal_size_limit = " + std::to_string(wal_limit));
  m_thread = std::thread([this] { run(); });
}

Checkpointer::~Checkpointer() {
  {
    std::lock_guard lock(m_mutex);
    m_stop = true;
  }
  m_wakeup.notify_one();
  m_thread.join();
  try {
    m_writer.exec("PRAGMA wal_autocheckpoint = " + std::to_string(default_autocheckpoint_pages));
    m_writer.exec("PRAGMA journal_size_limit = " + std::to_string(wal_size_limit));
  } catch (...) {
    // Destructors never throw; the next open sets it again.
  }
}

void Checkpointer::run() {
  std::unique_lock lock(m_mutex);
  for (;;) {
    m_wakeup.wait_for(lock, m_interval, [this] { return m_stop || m_hurry; });
    if (m_stop) return;
    m_hurry = false;
    lock.unlock();
    checkpoint();
    lock.lock();
  }
}

void Checkpointer::checkpoint() {
  std::lock_guard working(m_working);
  try {
    // Returns (busy, frames in the WAL, frames copied back).
    SQLite::Statement passive(m_connection, "PRAGMA wal_checkpoint(PASSIVE)");
    const bool all_copied = passive.executeStep() && passive.getColumn(1).getInt64() >= 0 &&
                            passive.getColumn(1).getInt64() == passive.getColumn(2).getInt64();
    passive.reset();
    if (all_copied) m_copied_rounds.fetch_add(1, std::memory_order_release);
    if (all_copied && wal_over_limit()) {
      // Readers come and go all the time under query loops: wait a little
      // for the ones reading the WAL (new ones read the database file).
      m_connection.exec("PRAGMA busy_timeout = 200");
      try {
        m_connection.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      } catch (...) {
      }
      m_connection.exec("PRAGMA busy_timeout = 0");
    }
  } catch (...) {
    // Busy or a passing I/O error: the next round tries again.
  }
}

std::int64_t Checkpointer::wal_bytes() const {
  std::error_code error;
  const auto bytes = std::filesystem::file_size(utf8_path(m_connection.getFilename() + "-wal"), error);
  return error ? 0 : static_cast<std::int64_t>(bytes);
}

bool Checkpointer::wal_over_limit() const {
  return wal_bytes() > m_wal_limit;
}

void Checkpointer::cut_back() noexcept {
  const auto now = std::chrono::steady_clock::now();
  if (now - m_cut_failed < std::chrono::seconds(1)) return;
  const std::int64_t wal = wal_bytes();
  if (wal <= m_wal_limit) return;
  // Copying the WAL back is the bulk of the work: up to twice the limit, let
  // a round on the Checkpointer's thread copy it while this one goes on
  // writing. Once a round has found it all copied, the writer's next
  // transaction starts the WAL over and its commit cuts the file back to
  // wal_limit (journal_size_limit): a TRUNCATE here would copy what was
  // committed since and sync the database on the writer's time (70 ms or so
  // under a 200 MB cap).
  const std::uint64_t copied_rounds = m_copied_rounds.load(std::memory_order_acquire);
  if (wal <= 2 * m_wal_limit) {
    if (copied_rounds == m_copied_rounds_at_cut) {
      {
        std::lock_guard lock(m_mutex);
        m_hurry = true;
      }
      m_wakeup.notify_one();
    }
    m_copied_rounds_at_cut = copied_rounds;
    return;
  }
  // Past twice the limit the writer waits for a round in progress and cuts
  // the WAL itself.
  std::lock_guard working(m_working);
  if (!wal_over_limit()) return;
  try {
    m_connection.exec("PRAGMA wal_checkpoint(TRUNCATE)");  // busy_timeout 0: no waiting for readers
  } catch (...) {
  }
  m_copied_rounds_at_cut = copied_rounds;
  if (wal_over_limit()) m_cut_failed = now;
}

}  // namespace etwaudit
