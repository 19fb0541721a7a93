#pragma once
// Writing a Table for people: aligned columns, numbers to the right.

#include <iosfwd>

#include "query/report.h"

namespace etwaudit {

void write_table(std::ostream& out, const Table& table);

}  // namespace etwaudit
