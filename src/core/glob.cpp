#include "core/glob.h"

#include <charconv>

#include "core/ascii.h"
#include "core/error.h"

namespace etwaudit {
namespace {

bool is_separator(char c) {
  return c == '/' || c == '\\';
}

char fold(char c, bool ignore_case) {
  if (!ignore_case) return c;
  if (c == '/') return '\\';
  return ascii_lower(c);
}

// Length in bytes of the UTF-8 character starting at text[i].
std::size_t char_length(std::string_view text, std::size_t i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  std::size_t length = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
  return i + length <= text.size() ? length : 1;
}

// Matches the class starting at pattern[p] == '[' against c. Sets end to the
// index after the closing ']'. The pattern was validated by compile().
bool class_matches(std::string_view pattern, std::size_t p, char c, bool ignore_case, std::size_t& end) {
  std::size_t i = p + 1;
  bool negate = false;
  if (i < pattern.size() && (pattern[i] == '!' || pattern[i] == '^')) {
    negate = true;
    ++i;
  }
  bool matched = false;
  bool first = true;
  const char folded = fold(c, ignore_case);
  while (i < pattern.size() && (pattern[i] != ']' || first)) {
    first = false;
    char low = fold(pattern[i], ignore_case);
    if (i + 2 < pattern.size() && pattern[i + 1] == '-' && pattern[i + 2] != ']') {
      char high = fold(pattern[i + 2], ignore_case);
      if (folded >= low && folded <= high) matched = true;
      i += 3;
    } else {
      if (folded == low) matched = true;
      ++i;
    }
  }
  end = i + 1;
  return matched != negate;
}

bool wildcard_match(std::string_view pattern, std::string_view text, bool ignore_case) {
  std::size_t p = 0, t = 0;
  std::size_t star_p = std::string_view::npos, star_t = 0;
  while (t < text.size()) {
    if (p < pattern.size()) {
      const char pc = pattern[p];
      if (pc == '*') {
        star_p = ++p;
        star_t = t;
        continue;
      }
      if (pc == '?') {
        ++p;
        t += char_length(text, t);
        continue;
      }
      if (pc == '[') {
        std::size_t end = 0;
        if (class_matches(pattern, p, text[t], ignore_case, end)) {
          p = end;
          ++t;
          continue;
        }
      } else if (fold(pc, ignore_case) == fold(text[t], ignore_case)) {
        ++p;
        ++t;
        continue;
      }
    }
    if (star_p == std::string_view::npos) return false;
    p = star_p;
    t = ++star_t;
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace

bool is_windows_path(std::string_view path) {
  if (path.size() >= 2 && path[1] == ':' && ((path[0] >= 'A' && path[0] <= 'Z') || (path[0] >= 'a' && path[0] <= 'z')))
    return true;
  return path.find('\\') != std::string_view::npos;
}

std::optional<PathGlob> PathGlob::compile(std::string_view pattern, std::string& error) {
  if (pattern.empty()) {
    error = "the pattern is empty";
    return std::nullopt;
  }
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '[') continue;
    std::size_t j = i + 1;
    if (j < pattern.size() && (pattern[j] == '!' || pattern[j] == '^')) ++j;
    if (j < pattern.size() && pattern[j] == ']') ++j;  // a leading ] is a member
    while (j < pattern.size() && pattern[j] != ']') ++j;
    if (j >= pattern.size()) {
      error = "'[' at position " + std::to_string(i + 1) + " is never closed with ']'";
      return std::nullopt;
    }
    i = j;
  }
  bool whole_path = false;
  for (char c : pattern) whole_path = whole_path || is_separator(c);
  return PathGlob(std::string(pattern), whole_path);
}

bool PathGlob::matches(std::string_view path) const {
  const bool ignore_case = is_windows_path(path);
  std::string_view subject = path;
  if (!m_whole_path) {
    const auto last = path.find_last_of(ignore_case ? "\\/" : "/");
    if (last != std::string_view::npos) subject = path.substr(last + 1);
  }
  return wildcard_match(m_pattern, subject, ignore_case);
}

std::optional<std::string> PathGlob::literal_prefix() const {
  if (!m_whole_path || m_pattern.front() != '/' || m_pattern.back() != '*' || is_windows_path(m_pattern))
    return std::nullopt;
  std::string literal = m_pattern.substr(0, m_pattern.size() - 1);
  if (literal.find_first_of("*?[") != std::string::npos) return std::nullopt;
  return literal;
}

PathGlob glob_argument(const std::string& option, const std::string& pattern) {
  std::string why;
  auto glob = PathGlob::compile(pattern, why);
  if (!glob) throw UsageError(option + " '" + pattern + "': " + why);
  return std::move(*glob);
}

ProcessPattern ProcessPattern::parse(const std::string& option, const std::string& pattern) {
  ProcessPattern result;
  std::uint32_t pid = 0;
  const auto [end, error] = std::from_chars(pattern.data(), pattern.data() + pattern.size(), pid);
  if (!pattern.empty() && error == std::errc() && end == pattern.data() + pattern.size())
    result.m_pid = pid;
  else
    result.m_glob = glob_argument(option, pattern);
  return result;
}

std::optional<bool> ProcessPattern::matches(std::uint32_t pid, std::string_view image) const {
  if (m_pid) return pid == *m_pid;
  if (image.empty()) return std::nullopt;
  return m_glob->matches(image);
}

}  // namespace etwaudit
