#include "core/human_format.h"

#include <cctype>
#include <cstdio>
#include <utility>

namespace etwaudit {

std::string with_thousands(std::uint64_t value) {
  std::string digits = std::to_string(value);
  std::string result;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) result += ',';
    result += digits[i];
  }
  return result;
}

std::string human_bytes(std::uint64_t bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 5) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, value < 10 ? "%.1f %s" : "%.0f %s", value, units[unit]);
  return text;
}

}  // namespace etwaudit

namespace etwaudit {

std::optional<std::uint64_t> parse_byte_size(std::string_view text) {
  // The number: digits with at most one decimal point.
  std::size_t end = 0;
  bool point = false;
  while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) || (text[end] == '.' && !point))) {
    point |= text[end] == '.';
    ++end;
  }
  if (end == 0 || (end == 1 && point) || end > 20) return std::nullopt;
  const double number = std::stod(std::string(text.substr(0, end)));
  std::string unit(text.substr(end));
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double scale = 0;
  for (const auto& [names, factor] :
       {std::pair{"", 1.0}, {"B", 1.0}, {"K", 0x1p10}, {"M", 0x1p20}, {"G", 0x1p30}, {"T", 0x1p40}}) {
    const std::string name = names;
    if (unit == name || (!name.empty() && name != "B" && (unit == name + "B" || unit == name + "IB"))) scale = factor;
  }
  if (scale == 0) return std::nullopt;
  const double bytes = number * scale;
  if (bytes < 1 || bytes >= 0x1p63) return std::nullopt;
  return static_cast<std::uint64_t>(bytes);
}

}  // namespace etwaudit
