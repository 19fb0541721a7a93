#pragma once
// Number formatting for people.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace etwaudit {

// 1234567 -> "1,234,567"
std::string with_thousands(std::uint64_t value);
// 1536 -> "1.5 KiB"
std::string human_bytes(std::uint64_t bytes);
// "2GB", "500MB", "1.5G", "64KiB", "4096" -> bytes; units of 1024 (K, M, G, T,
// with or without B or iB). nullopt for anything else, zero, or too large.
std::optional<std::uint64_t> parse_byte_size(std::string_view text);

}  // namespace etwaudit
