#pragma once
// What a piece of SQL names, read as SQLite's tokenizer would, without
// preparing it: its words outside string literals and comments, and its
// parameters. Used to put the filter CTEs in front of a statement and to
// tell whether ad-hoc SQL reads what an option would change.

#include <cstddef>
#include <set>
#include <string>

namespace etwaudit {

struct SqlNames {
  std::set<std::string> words;       // identifiers and keywords, lower-case, without their quotes
  std::set<std::string> parameters;  // ":name", "@name", "$name" as written (the name lower-case)
};

SqlNames sql_names(const std::string& sql);

// Where the first word of sql at or after from starts, past spaces and
// comments (sql.size() when there is none).
std::size_t first_sql_word(const std::string& sql, std::size_t from = 0);

// The word (letters, digits, _) at sql[at], upper-cased; empty if none.
std::string sql_word_at(const std::string& sql, std::size_t at);

}  // namespace etwaudit
