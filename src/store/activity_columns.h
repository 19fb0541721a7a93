#pragma once
// The activity table's per-operation columns (sql/0001_initial.sql): for each
// Op, the column counting its events and, where sizes are bytes moved, the
// column summing them. The writer fills them; the reports add them up.

#include <string>

#include "core/file_event.h"

namespace etwaudit {

struct ActivityColumns {
  Op op;              // the operation
  const char* count;  // column with its event count
  const char* bytes;  // column with its byte total; nullptr when sizes are not summed
};

inline constexpr ActivityColumns activity_columns[op_count] = {
    {Op::read, "reads", "read_bytes"},
    {Op::write, "writes", "write_bytes"},
    {Op::open, "opens", nullptr},
    {Op::close, "closes", nullptr},
    {Op::cleanup, "cleanups", nullptr},
    {Op::create, "creates", nullptr},
    {Op::remove, "deletes", nullptr},
    {Op::rename, "renames", nullptr},
    {Op::set_info, "set_infos", nullptr},
    {Op::flush, "flushes", nullptr},
    {Op::disk_read, "disk_reads", "disk_read_bytes"},
    {Op::disk_write, "disk_writes", "disk_write_bytes"},
    {Op::close_write, "close_writes", nullptr},
    {Op::overwrite, "overwrites", nullptr},
    {Op::paging_read, "paging_reads", "paging_read_bytes"},
    {Op::paging_write, "paging_writes", "paging_write_bytes"},
};

namespace detail {
constexpr bool activity_columns_in_op_order() {
  for (int i = 0; i < op_count; ++i)
    if (static_cast<int>(activity_columns[i].op) != i) return false;
  return true;
}
}  // namespace detail
static_assert(detail::activity_columns_in_op_order(), "activity_columns[i] must describe Op i");

// The per-operation columns as pieces of SQL, for statements that copy or add
// up activity and hour_totals rows.
struct OperationColumnsSql {
  std::string names;  // ", reads, read_bytes, writes, ...", each name after the prefix given
  std::string sums;   // ", reads = reads + excluded.reads, ..." (ON CONFLICT ... DO UPDATE SET)
  int count = 0;      // how many columns
};

inline OperationColumnsSql operation_columns_sql(const std::string& prefix = "") {
  OperationColumnsSql sql;
  for (const ActivityColumns& op : activity_columns) {
    for (const char* column : {op.count, op.bytes}) {
      if (!column) continue;
      sql.names += ", " + prefix + column;
      sql.sums += std::string(", ") + column + " = " + column + " + excluded." + column;
      ++sql.count;
    }
  }
  return sql;
}

}  // namespace etwaudit
