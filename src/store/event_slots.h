#pragma once
// The ring of event tables (sql/0009_event_slots.sql).
//
// Events are written into events_00 .. events_15, one slot after the other,
// so that retention can empty a whole table, which costs a tenth of deleting
// its rows one by one. SQL that reads events by id range goes to each slot's
// table itself: the view `events` in the inner loop of a join would be read
// whole.

#include <cstdint>
#include <string>

namespace etwaudit {

inline constexpr int event_slot_count = 16;

// The most rows a slot holds before the writer moves on, and the most that
// pruning leaves in one to be emptied at once: SQLite empties a table at about
// 0.05 µs a row, so about 50 ms of write lock.
inline constexpr std::int64_t slot_rows_limit = std::int64_t{1} << 20;

// "events_07".
std::string event_table(int slot);

// body once per slot, with "{events}" replaced by the slot's table and
// "{slot}" by its number, the copies joined by separator.
std::string for_each_slot(const std::string& body, const std::string& separator = "\n  UNION ALL\n");

}  // namespace etwaudit
