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

#include <cstdint>
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
  // For a POSIX pattern that is a literal path and a last '*' ("/var/log/*"):
  // the literal, which every path it matches begins with (byte for byte,
  // but for the names with a backslash, which are matched without regard to
  // case). nullopt for any other pattern.
  std::optional<std::string> literal_prefix() const;

 private:
  explicit PathGlob(std::string pattern, bool whole_path) : m_pattern(std::move(pattern)), m_whole_path(whole_path) {}

  std::string m_pattern;
  bool m_whole_path;  // the pattern has a separator: match the whole path, else the last component
};

// True for "C:\...", "\\server\...", "\Device\..." and anything with a backslash.
bool is_windows_path(std::string_view path);

// The glob given to a command-line option (or argument); throws UsageError
// "OPTION 'PATTERN': why" when it is malformed.
PathGlob glob_argument(const std::string& option, const std::string& pattern);

// A process as --process, --include-process and --exclude-process take it:
// a number is a pid, anything else a glob over the executable's path.
class ProcessPattern {
 public:
  // Throws UsageError naming option when the glob is malformed.
  static ProcessPattern parse(const std::string& option, const std::string& pattern);
  // nullopt when the pattern cannot tell (a glob, and the image is unknown).
  std::optional<bool> matches(std::uint32_t pid, std::string_view image) const;

 private:
  std::optional<std::uint32_t> m_pid;
  std::optional<PathGlob> m_glob;
};

}  // namespace etwaudit
