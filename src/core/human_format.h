#pragma once
// Number formatting for people.

#include <cstdint>
#include <string>

namespace etwaudit {

// 1234567 -> "1,234,567"
std::string with_thousands(std::uint64_t value);
// 1536 -> "1.5 KiB"
std::string human_bytes(std::uint64_t bytes);

}  // namespace etwaudit
