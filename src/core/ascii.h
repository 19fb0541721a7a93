#pragma once
// Comparisons that ignore the case of ASCII letters only, as Windows paths
// and names are compared here: other bytes (UTF-8 included) must be equal.

#include <cstddef>
#include <string_view>

namespace etwaudit {

constexpr char ascii_lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

constexpr bool starts_with_ignoring_ascii_case(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (ascii_lower(text[i]) != ascii_lower(prefix[i])) return false;
  return true;
}

constexpr bool equal_ignoring_ascii_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && starts_with_ignoring_ascii_case(a, b);
}

}  // namespace etwaudit
