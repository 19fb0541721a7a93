#pragma once
// File names are UTF-8 everywhere in etwaudit (arguments, the database,
// messages). std::filesystem::path made from a std::string takes it in the
// ANSI code page on Windows, which turns C:\Users\Jürgen into another name;
// through char8_t it is UTF-8 on every platform. Every file etwaudit names
// is opened, tested or renamed through these.

#include <filesystem>
#include <string>
#include <string_view>

namespace etwaudit {

inline std::filesystem::path utf8_path(std::string_view name) {
  return std::filesystem::path(std::u8string(name.begin(), name.end()));
}

inline std::string utf8_name(const std::filesystem::path& path) {
  const std::u8string text = path.u8string();
  return std::string(text.begin(), text.end());
}

}  // namespace etwaudit
