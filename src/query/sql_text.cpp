#include "query/sql_text.h"

#include <cctype>

namespace etwaudit {
namespace {

bool is_word_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  return std::isalnum(u) || c == '_' || u >= 0x80;  // SQLite takes any non-ASCII byte in a name
}

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// The end of a comment starting at i, or i when none starts there.
std::size_t skip_comment(const std::string& sql, std::size_t i) {
  if (sql.compare(i, 2, "--") == 0) {
    const std::size_t end = sql.find('\n', i);
    return end == std::string::npos ? sql.size() : end + 1;
  }
  if (sql.compare(i, 2, "/*") == 0) {
    const std::size_t end = sql.find("*/", i + 2);
    return end == std::string::npos ? sql.size() : end + 2;  // unclosed: to the end, as SQLite reads it
  }
  return i;
}

// The end of text quoted by quote from i (a doubled quote is one inside it).
std::size_t skip_quoted(const std::string& sql, std::size_t i, char quote) {
  for (std::size_t j = i + 1; j < sql.size(); ++j) {
    if (sql[j] != quote) continue;
    if (j + 1 < sql.size() && sql[j + 1] == quote && quote != ']') {
      ++j;
      continue;
    }
    return j + 1;
  }
  return sql.size();
}

}  // namespace

SqlNames sql_names(const std::string& sql) {
  SqlNames names;
  std::size_t i = 0;
  while (i < sql.size()) {
    const char c = sql[i];
    if (const std::size_t end = skip_comment(sql, i); end != i) {
      i = end;
    } else if (c == '\'') {
      i = skip_quoted(sql, i, '\'');
    } else if (c == '"' || c == '`' || c == '[') {
      const char close = c == '[' ? ']' : c;
      const std::size_t end = skip_quoted(sql, i, close);
      const std::size_t stop = end > i + 1 && sql[end - 1] == close ? end - 1 : end;  // unclosed: to the end
      std::string name = sql.substr(i + 1, stop - i - 1);
      const std::string doubled(2, c);
      for (std::size_t at = name.find(doubled); c != '[' && at != std::string::npos; at = name.find(doubled, at + 1))
        name.erase(at, 1);
      names.words.insert(lower(name));
      i = end;
    } else if ((c == ':' || c == '@' || c == '$') && i + 1 < sql.size() && is_word_char(sql[i + 1])) {
      std::size_t end = i + 1;
      while (end < sql.size() && is_word_char(sql[end])) ++end;
      names.parameters.insert(c + lower(sql.substr(i + 1, end - i - 1)));
      i = end;
    } else if (is_word_char(c)) {
      std::size_t end = i;
      while (end < sql.size() && is_word_char(sql[end])) ++end;
      if (!std::isdigit(static_cast<unsigned char>(c))) names.words.insert(lower(sql.substr(i, end - i)));
      i = end;
    } else {
      ++i;
    }
  }
  return names;
}

std::size_t first_sql_word(const std::string& sql, std::size_t from) {
  std::size_t i = from;
  while (i < sql.size()) {
    if (std::isspace(static_cast<unsigned char>(sql[i]))) {
      ++i;
    } else if (const std::size_t end = skip_comment(sql, i); end != i) {
      i = end;
    } else {
      break;
    }
  }
  return i;
}

std::string sql_word_at(const std::string& sql, std::size_t at) {
  std::string word;
  for (std::size_t i = at; i < sql.size() && is_word_char(sql[i]); ++i)
    word += static_cast<char>(std::toupper(static_cast<unsigned char>(sql[i])));
  return word;
}

}  // namespace etwaudit
