#pragma once
// PathGlob: shell-style patterns for paths and process images.
//
//   *       any run of characters, separators included
//   ?       one character
//   [abc]   one of a, b, c; [a-z] a range; [!abc] anything else
//
// A pattern without a path separator is matched against the last component
// ("*.docx", "notepad.exe"); one with a separator against the whole path
// ("C:\Users\*\notes.txt", "/var/log/*"). Windows paths (a drive letter, a
// backslash or \\server) are matched without regard to ASCII case, and with /
// and \ as the same separator; POSIX paths exactly.

#include <optional>
#include <string>
#include <string_view>

namespace etwaudit {

class PathGlob {
 public:
  // nullopt when the pattern is malformed; error then says why.
  static std::optional<PathGlob> compile(std::string_view pattern, std::string& error);

  bool matches(std::string_view path) const;
  const std::string& pattern() const { return m_pattern; }

 private:
  explicit PathGlob(std::string pattern, bool whole_path) : m_pattern(std::move(pattern)), m_whole_path(whole_path) {}

  std::string m_pattern;
  bool m_whole_path;  // the pattern has a separator: match the whole path, else the last component
};

// True for "C:\...", "\\server\...", "\Device\..." and anything with a backslash.
bool is_windows_path(std::string_view path);

}  // namespace etwaudit
