#include "core/closest_name.h"

#include <algorithm>
#include <tuple>

namespace etwaudit {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // d[i][j]: from a's first i characters to b's first j.
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);  // two letters swapped
    }
  return d[a.size()][b.size()];
}

namespace {

std::size_t common_start(std::string_view a, std::string_view b) {
  std::size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

}  // namespace

std::optional<std::string> closest_name(std::string_view name, const std::vector<std::string>& candidates) {
  // Nearest first; of two as near, the one that begins like name ("limt":
  // limit, not list), then the one nearest in length.
  auto score = [&](const std::string& candidate) {
    std::size_t distance = edit_distance(name, candidate);
    if (!name.empty() && candidate.rfind(name, 0) == 0) distance = std::min<std::size_t>(distance, 1);  // its start
    const std::size_t length_gap =
        candidate.size() > name.size() ? candidate.size() - name.size() : name.size() - candidate.size();
    return std::make_tuple(distance, SIZE_MAX - common_start(name, candidate), length_gap);
  };
  const std::string* best = nullptr;
  for (const std::string& candidate : candidates)
    if (!best || score(candidate) < score(*best)) best = &candidate;
  if (!best || std::get<0>(score(*best)) > std::max<std::size_t>(1, name.size() / 3)) return std::nullopt;
  return *best;
}

}  // namespace etwaudit
