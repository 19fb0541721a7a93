#include "core/time_format.h"

#include <chrono>
#include <cstdio>
#include <limits>

namespace etwaudit {
namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
constexpr std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

struct CivilDate {
  std::int64_t year;
  unsigned month;
  unsigned day;
};

constexpr CivilDate civil_from_days(std::int64_t z) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  return {static_cast<std::int64_t>(yoe) + era * 400 + (m <= 2), m, d};
}

class Cursor {
 public:
  explicit Cursor(std::string_view text) : m_text(text) {}
  bool digits(int count, int& value) {
    value = 0;
    for (int i = 0; i < count; ++i) {
      if (m_pos >= m_text.size() || m_text[m_pos] < '0' || m_text[m_pos] > '9') return false;
      value = value * 10 + (m_text[m_pos++] - '0');
    }
    return true;
  }
  bool accept(char c) {
    if (m_pos < m_text.size() && m_text[m_pos] == c) {
      ++m_pos;
      return true;
    }
    return false;
  }
  bool at_digit() const { return m_pos < m_text.size() && m_text[m_pos] >= '0' && m_text[m_pos] <= '9'; }
  bool at_end() const { return m_pos == m_text.size(); }

 private:
  std::string_view m_text;
  std::size_t m_pos = 0;
};

bool is_leap(int year) {
  return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
}

int days_in_month(int year, int month) {
  static constexpr int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && is_leap(year) ? 29 : days[month - 1];
}

}  // namespace

std::optional<std::int64_t> parse_iso8601(std::string_view text) {
  Cursor in(text);
  int year, month, day, hour, minute, second;
  if (!in.digits(4, year) || !in.accept('-') || !in.digits(2, month) || !in.accept('-') || !in.digits(2, day))
    return std::nullopt;
  if (!in.accept('T') && !in.accept('t') && !in.accept(' ')) return std::nullopt;
  if (!in.digits(2, hour) || !in.accept(':') || !in.digits(2, minute) || !in.accept(':') || !in.digits(2, second))
    return std::nullopt;
  if (month < 1 || month > 12 || day < 1 || day > days_in_month(year, month) || hour > 23 || minute > 59 || second > 60)
    return std::nullopt;
  std::int64_t fraction_ns = 0;
  if (in.accept('.') || in.accept(',')) {
    if (!in.at_digit()) return std::nullopt;
    std::int64_t scale = ns_per_second;
    while (in.at_digit()) {
      int digit;
      in.digits(1, digit);
      if (scale == 1) return std::nullopt;  // more than 9 digits
      scale /= 10;
      fraction_ns += digit * scale;
    }
  }
  std::int64_t offset_seconds = 0;
  if (in.accept('Z') || in.accept('z')) {
  } else {
    const bool plus = in.accept('+');
    if (!plus && !in.accept('-')) return std::nullopt;
    int offset_hours, offset_minutes = 0;
    if (!in.digits(2, offset_hours)) return std::nullopt;
    if (in.accept(':')) {
      if (!in.digits(2, offset_minutes)) return std::nullopt;
    } else if (in.at_digit() && !in.digits(2, offset_minutes)) {
      return std::nullopt;
    }
    if (offset_hours > 23 || offset_minutes > 59) return std::nullopt;
    offset_seconds = (offset_hours * 3600 + offset_minutes * 60) * (plus ? 1 : -1);
  }
  if (!in.at_end()) return std::nullopt;
  const std::int64_t days = days_from_civil(year, month, day);
  const std::int64_t seconds = days * 86400 + hour * 3600 + minute * 60 + second - offset_seconds;
  // Four-digit years reach far past what 64 bits of ns hold (1677 to 2262):
  // such times are refused, not wrapped.
  constexpr std::int64_t max = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t min = std::numeric_limits<std::int64_t>::min();
  if (seconds > max / ns_per_second || seconds < min / ns_per_second - 1) return std::nullopt;
  if (seconds >= 0) {
    const std::int64_t whole = seconds * ns_per_second;
    if (fraction_ns > max - whole) return std::nullopt;
    return whole + fraction_ns;
  }
  // Before 1970 the last second is counted back from the next one, which is
  // in range even where this one alone is not.
  const std::int64_t next = (seconds + 1) * ns_per_second;
  const std::int64_t back = ns_per_second - fraction_ns;
  if (next < min + back) return std::nullopt;
  return next - back;
}

std::string format_iso8601(std::int64_t ns) {
  std::int64_t seconds = ns / ns_per_second;
  std::int64_t fraction = ns % ns_per_second;
  if (fraction < 0) {
    fraction += ns_per_second;
    --seconds;
  }
  std::int64_t days = seconds / 86400;
  std::int64_t second_of_day = seconds % 86400;
  if (second_of_day < 0) {
    second_of_day += 86400;
    --days;
  }
  const CivilDate date = civil_from_days(days);
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%04lld-%02u-%02uT%02d:%02d:%02d.%07lldZ", static_cast<long long>(date.year),
                date.month, date.day, static_cast<int>(second_of_day / 3600), static_cast<int>(second_of_day / 60 % 60),
                static_cast<int>(second_of_day % 60), static_cast<long long>(fraction / 100));
  return buffer;
}

std::string format_iso8601_at_offset(std::int64_t ns, std::int64_t offset_seconds) {
  std::int64_t local = 0;
  if (__builtin_add_overflow(ns, offset_seconds * ns_per_second, &local))
    return format_iso8601(ns);  // at the ends of time
  std::string text = format_iso8601(local);
  text.pop_back();  // Z
  const std::int64_t minutes = (offset_seconds < 0 ? -offset_seconds : offset_seconds) / 60;
  char offset[16];
  std::snprintf(offset, sizeof offset, "%c%02d:%02d", offset_seconds < 0 ? '-' : '+', static_cast<int>(minutes / 60),
                static_cast<int>(minutes % 60));
  return text + offset;
}

namespace {

// A wall-clock date and time of day, without a zone.
struct CivilTime {
  int year = 1970, month = 1, day = 1, hour = 0, minute = 0, second = 0;
  std::int64_t fraction_ns = 0;
};

// The civil time's ns since 1970 as if it were UTC; nullopt out of range.
std::optional<std::int64_t> ns_as_if_utc(const CivilTime& t) {
  const std::int64_t seconds =
      days_from_civil(t.year, t.month, t.day) * 86400 + t.hour * 3600 + t.minute * 60 + t.second;
  if (seconds > std::numeric_limits<std::int64_t>::max() / ns_per_second - 1 ||
      seconds < std::numeric_limits<std::int64_t>::min() / ns_per_second + 1)
    return std::nullopt;
  return seconds * ns_per_second + t.fraction_ns;
}

// The instant a local civil time names: its offset is the one in force then
// (looked up twice, for a time near a change of offset).
std::optional<std::int64_t> local_to_utc(const CivilTime& t, const UtcOffsetAt& offset_at) {
  const auto as_utc = ns_as_if_utc(t);
  if (!as_utc) return std::nullopt;
  std::int64_t guess = 0, time = 0;
  if (__builtin_sub_overflow(*as_utc, offset_at(*as_utc) * ns_per_second, &guess) ||
      __builtin_sub_overflow(*as_utc, offset_at(guess) * ns_per_second, &time))
    return std::nullopt;  // beyond what 64 bits of ns hold
  return time;
}

// The local date of an instant.
CivilTime local_date(std::int64_t ns, const UtcOffsetAt& offset_at) {
  std::int64_t local = ns;
  if (__builtin_add_overflow(ns, offset_at(ns) * ns_per_second, &local)) local = ns;
  const CivilDate date = civil_from_days(floor_div(local, 86400 * ns_per_second));
  CivilTime t;
  t.year = static_cast<int>(date.year);
  t.month = static_cast<int>(date.month);
  t.day = static_cast<int>(date.day);
  return t;
}

// "HH:MM[:SS[.fraction]]" into t; false when in holds something else.
bool read_time_of_day(Cursor& in, CivilTime& t) {
  if (!in.digits(2, t.hour) || !in.accept(':') || !in.digits(2, t.minute)) return false;
  if (in.accept(':')) {
    if (!in.digits(2, t.second)) return false;
    if (in.accept('.') || in.accept(',')) {
      if (!in.at_digit()) return false;
      std::int64_t scale = ns_per_second;
      while (in.at_digit()) {
        int digit;
        in.digits(1, digit);
        if (scale == 1) return false;
        scale /= 10;
        t.fraction_ns += digit * scale;
      }
    }
  }
  return t.hour <= 23 && t.minute <= 59 && t.second <= 60;
}

// A local date, a date and time, or a time of day (today); nullopt for other text.
std::optional<CivilTime> local_civil_time(std::string_view text, std::int64_t now, const UtcOffsetAt& offset_at) {
  CivilTime t;
  Cursor in(text);
  if (text.size() >= 10 && text[4] == '-') {
    if (!in.digits(4, t.year) || !in.accept('-') || !in.digits(2, t.month) || !in.accept('-') || !in.digits(2, t.day))
      return std::nullopt;
    if (t.month < 1 || t.month > 12 || t.day < 1 || t.day > days_in_month(t.year, t.month)) return std::nullopt;
    if (in.at_end()) return t;
    if (!in.accept('T') && !in.accept('t') && !in.accept(' ')) return std::nullopt;
  } else {
    t = local_date(now, offset_at);
  }
  if (!read_time_of_day(in, t) || !in.at_end()) return std::nullopt;
  return t;
}

}  // namespace

std::optional<std::int64_t> parse_time_point(std::string_view text, std::int64_t now, const UtcOffsetAt& offset_at) {
  if (text == "now") return now;
  const int days = text == "today" ? 0 : text == "yesterday" ? -1 : text == "tomorrow" ? 1 : 2;
  if (days != 2) {
    CivilTime midnight = local_date(now, offset_at);
    const std::int64_t day = days_from_civil(midnight.year, midnight.month, midnight.day) + days;
    const CivilDate date = civil_from_days(day);
    midnight.year = static_cast<int>(date.year);
    midnight.month = static_cast<int>(date.month);
    midnight.day = static_cast<int>(date.day);
    return local_to_utc(midnight, offset_at);
  }
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) {
    const auto span = parse_duration(text.substr(1));
    std::int64_t time = 0;
    if (!span ||
        (text.front() == '-' ? __builtin_sub_overflow(now, *span, &time) : __builtin_add_overflow(now, *span, &time)))
      return std::nullopt;
    return time;
  }
  if (const auto back = parse_duration(text)) {
    std::int64_t time = 0;
    if (__builtin_sub_overflow(now, *back, &time)) return std::nullopt;
    return time;
  }
  if (const auto absolute = parse_iso8601(text)) return absolute;
  if (const auto local = local_civil_time(text, now, offset_at)) return local_to_utc(*local, offset_at);
  return std::nullopt;
}

std::int64_t unix_ns_from_filetime(std::uint64_t filetime) {
  constexpr std::uint64_t largest = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) / 100;
  if (filetime <= filetime_unix_epoch || filetime - filetime_unix_epoch > largest) return 0;
  return static_cast<std::int64_t>(filetime - filetime_unix_epoch) * 100;
}

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace etwaudit

namespace etwaudit {

std::optional<std::int64_t> parse_duration(std::string_view text) {
  if (text.empty()) return std::nullopt;
  constexpr std::int64_t max = std::numeric_limits<std::int64_t>::max();
  std::int64_t total = 0;
  while (!text.empty()) {  // a number and its unit, again and again
    std::size_t digits = 0;
    std::int64_t value = 0;
    while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') {
      if (digits == 9) return std::nullopt;
      value = value * 10 + (text[digits++] - '0');
    }
    if (digits == 0) return std::nullopt;
    text.remove_prefix(digits);
    std::int64_t unit = 0;
    if (text.rfind("ms", 0) == 0) {
      unit = 1000000;
      text.remove_prefix(2);
    } else if (!text.empty()) {
      switch (text.front()) {
        case 's': unit = ns_per_second; break;
        case 'm': unit = ns_per_minute; break;
        case 'h': unit = ns_per_hour; break;
        case 'd': unit = 24 * ns_per_hour; break;
        default: return std::nullopt;
      }
      text.remove_prefix(1);
    }
    if (unit == 0) return std::nullopt;  // a number without its unit
    // 9 digits of days is more ns than 64 bits hold.
    if (value > max / unit || value * unit > max - total) return std::nullopt;
    total += value * unit;
  }
  if (total == 0) return std::nullopt;
  return total;
}

bool is_bare_number(std::string_view text) {
  return !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos;
}

}  // namespace etwaudit
