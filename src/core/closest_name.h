#pragma once
// The name a user most likely meant: for "did you mean" after a mistyped
// command, report or option.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace etwaudit {

// Single-character insertions, deletions, substitutions and swaps of two
// neighbours from a to b.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to name, when it is near enough to be a typo (at
// most a third of its letters differ, and at least one may) or name is the
// start of it; nullopt otherwise.
std::optional<std::string> closest_name(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace etwaudit
